"""Histograms: histc (equal bins over [min, max]), bincount (counts of integer values),
histogram (bins given as a count or as edges, optionally weighted and normalised) and
histogramdd (the joint histogram of D-dimensional points). Counting has no gradient, as in
PyTorch."""
import math

import numpy as np

from .. import _dtype as dt
from .._creation import linspace, tensor
from .._scalars import as_double
from .._tensor import Tensor, _wrap, write_out
from ..autograd.grad_mode import no_grad
from ..backends import array_module
from . import return_types
from ._arguments import invalid_combination
from ._elementwise import CPP_NAMES, check_tensor, defpointwise, not_implemented
from ._promote import compute_dtype
from .registry import dispatch, export


@export
def histc(input, bins=100, min=0, max=0, *, out=None):
    check_tensor("histc", input)
    # (PyTorch's order: the bins, the range, then the dtype's kernel)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = float(as_double(min)), float(as_double(max))
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if input.dtype.category != dt.FLOATING:
        raise not_implemented("histogram_cpu", input.dtype)
    a = input._data
    xp = array_module(a)
    acc = compute_dtype(input.dtype).np
    a = a.astype(acc, copy=False)
    if lo == hi and a.size:   # (the data's range, NaN and infinities included)
        lo, hi = float(a.min()), float(a.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    keep_ = (a >= lo) & (a <= hi)
    v = a[keep_]
    idx = ((v - lo) * bins / (hi - lo)).astype(xp.int64)
    idx = xp.minimum(idx, bins - 1)
    counts = xp.bincount(idx, minlength=bins).astype(input.dtype.np)
    r = _wrap(counts, input.dtype, input._device)
    return r if out is None else write_out(r, out)


@export
def bincount(input, weights=None, minlength=0):
    check_tensor("bincount", input)
    a = input._data
    if input.dtype.category != dt.INTEGER:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{dt.type_name(input.dtype)}'")
    xp = array_module(a)
    if a.ndim != 1 or (a.size and int(a.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        r = xp.bincount(a, minlength=minlength).astype(xp.int64)
        return _wrap(r, dt.int64, input._device)
    if weights._data.shape != a.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    result = weights.dtype if weights.dtype in (dt.float32, dt.float64) else dt.float64
    r = xp.bincount(a, weights=weights._data.astype(xp.float64), minlength=minlength)
    return _wrap(r.astype(result.np), result, input._device)


_HISTOGRAM = ("Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
              "tuple of Tensors out = None",
              "Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = "
              "None, bool density = False, tuple of Tensors out = None")


@defpointwise("histogram", node="NotImplemented", num_outputs=2)
def _histogram(a, edges, weight, density):
    xp = array_module(a)
    a = a.reshape(-1)
    last = edges.shape[0] - 1
    # Bin i holds edges[i] <= v < edges[i + 1]; the last bin also holds its right edge.
    keep = (a >= edges[0]) & (a <= edges[last])
    index = xp.minimum(xp.searchsorted(edges, a[keep], side="right") - 1, last - 1)
    w = None if weight is None else weight.reshape(-1)[keep].astype(xp.float64)
    hist = xp.bincount(index, weights=w, minlength=last).astype(a.dtype)
    if density:
        hist = hist / hist.sum() / xp.diff(edges)
    return hist, edges.copy()


@_histogram.defvjp
def _histogram_vjp(ctx, *grads):
    raise RuntimeError("derivative for aten::histogram is not implemented")


@export
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    tensor_bins = isinstance(bins, Tensor)
    int_bins = isinstance(bins, (int, np.integer)) and not isinstance(bins, bool)
    if not isinstance(input, Tensor) or not (tensor_bins or int_bins) or \
            (weight is not None and not isinstance(weight, Tensor)) or \
            (range is not None and (tensor_bins or not isinstance(range, (tuple, list)))):
        raise invalid_combination("histogram", (input, bins), _HISTOGRAM)
    if int_bins:
        bins = int(bins)   # (a NumPy integer is an int to PyTorch's parser)
    d = input.dtype
    if tensor_bins:
        if bins.dtype is not d:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype {CPP_NAMES[d]} and "
                               f"bins for dimension 0 with dtype {CPP_NAMES[bins.dtype]}")
        if bins._data.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins._data.ndim} dimensions in the bins tensor for "
                               "dimension 0")
    count = bins.numel() - 1 if tensor_bins else bins
    if count <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                           "dimension 0")
    if range is not None and len(range) != 2:
        raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should "
                           f"have 2 elements, but got {len(range)}")
    if d not in (dt.float32, dt.float64):   # (before the weight's checks, as in PyTorch)
        raise not_implemented("histogram_cpu" if tensor_bins else "histogramdd", d)
    if weight is not None:
        if weight.dtype is not d:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({CPP_NAMES[d]}), and weight({CPP_NAMES[weight.dtype]})")
        if weight.numel() != input.numel():
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape [{input.numel()}, 1] "
                               f"and weight with shape [{weight.numel()}]")
    edges = bins if tensor_bins else _linear_edges(input, count, range)
    r = dispatch(_histogram, (input, edges, weight), {"density": bool(density)})
    r = return_types.histogram(r)
    return r if out is None else return_types.histogram(map(write_out, r, out))


def _linear_edges(input, count, range):
    """`count` + 1 evenly spaced edges (PyTorch's linspace in the input's dtype) over `range`,
    or over the input's [min, max] (widened by 0.5 each way when these are equal)."""
    if range is not None:   # (of 2 elements: histogram checked)
        lo, hi = float(range[0]), float(range[1])
    elif input.numel():
        with no_grad():
            lo, hi = (float(v) for v in input.aminmax())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not "
                           "finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                           f"max {hi:g} for dimension 0")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    # NOTE: PyTorch's linspace rounds start + step * i once (a fused multiply-add): the edges
    # are computed wider and rounded once, so values on an edge land in PyTorch's bin.
    d = input.dtype.np
    wide = np.float64 if d == np.float32 else np.longdouble
    start, end = np.asarray(lo, d), np.asarray(hi, d)
    step = wide((end - start) / np.asarray(count, d))
    i = np.arange(count + 1)
    edges = np.where(i < (count + 1) // 2, wide(start) + step * i, wide(end) - step * (count - i))
    return tensor(edges.astype(d), device=input.device)


@export(method=False)
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points in `input`'s last dim; `bins` is a count, a count per
    dim, or a tensor of edges per dim."""
    check_tensor("histogramdd", input)
    if input.dtype not in (dt.float32, dt.float64):
        raise not_implemented("histogramdd", input.dtype)
    D = input.shape[-1]
    points = input.detach().reshape(-1, D)
    host = points.cpu().numpy()
    if isinstance(bins, int):
        bins = [bins] * D
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = []
    for k, b in enumerate(bins):
        if hasattr(b, "numpy"):
            edges.append(b.detach().to(input.dtype))
            continue
        if range is not None:
            lo, hi = range[2 * k], range[2 * k + 1]
        elif host.shape[0]:
            lo, hi = float(host[:, k].min()), float(host[:, k].max())
        else:
            lo, hi = 0.0, 0.0
        if lo == hi:   # as numpy and PyTorch: widen a degenerate range
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(linspace(lo, hi, int(b) + 1, dtype=input.dtype))
    w = None if weight is None else weight.detach().reshape(-1).cpu().numpy()
    counts, _ = np.histogramdd(host.astype(np.float64), bins=[e.cpu().numpy() for e in edges],
                               weights=w, density=density)
    hist = input.new_tensor(counts.astype(input.dtype.np))
    return return_types.histogramdd((hist, tuple(e.to(input.device) for e in edges)))
