"""Statistics and tables beyond the core: cov/corrcoef, the trapezoid rules, vander,
histogram, unravel_index. Composites of ember ops in the order PyTorch's own composites use
(dtypes, values and gradients follow), except histogram, a registry op without a gradient.
"""
import collections.abc
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._creation import ones, tensor, zeros, zeros_like
from .._tensor import Tensor, write_out
from ..autograd.grad_mode import no_grad
from ..backends import array_module
from . import return_types
from ._dims import wrap_dim
from ._elementwise import (CPP_NAMES, check_tensor,
                           defpointwise, not_implemented)
from .registry import dispatch, export
from .rounding import complex_from_parts
from .shape import cat
from .numeric_extras import _bad_call, _check_int, _number, _slices


# ---------------------------------------------------------------------- cov, corrcoef
def _check_weights(name, w, n, integral):
    if not isinstance(w, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(w).__name__}")
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w._data.ndim} dimensions")
    if w.dtype.category != (1 if integral else 2):
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{dt.type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not w.min().item() >= 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@export
def cov(input, *, correction=1, fweights=None, aweights=None):
    check_tensor("cov", input)
    _check_int("cov", "correction", correction)
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    if input.dtype is dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input._data.ndim < 2 else input
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    w_sum = tensor(n, device=x.device) if w is None else w.sum()
    if w is not None and not w_sum.item() != 0:
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = zeros_like(norm_factor)
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return (c / norm_factor).squeeze()


@export
def corrcoef(input):
    check_tensor("corrcoef", input)
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c   # nan for a covariance of nan, inf or 0; else 1
    d = c.diagonal()
    stddev = (d.real if d.dtype.category == 3 else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    # Rounding can leave values just outside [-1, 1]: clipped, as NumPy and PyTorch do.
    if c.dtype.category == 3:
        return complex_from_parts(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ---------------------------------------------------------------------- trapezoid rules
_TRAPEZOID = ("Tensor y, Tensor x, *, int dim = -1", "Tensor y, *, Number dx = 1, int dim = -1")
_TRAPZ = ("Tensor y, *, float dx = 1, int dim = -1", "Tensor y, Tensor x, *, int dim = -1")


def _spacing(name, y, x, dx, dim):
    """The spacing: a Python float, or x's steps as a tensor shaped to broadcast against
    y's slices along `dim`."""
    if x is None:
        dx = 1 if dx is None else _number(name, "dx", dx)
        if isinstance(dx, (bool, complex)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
        if y.dtype is dt.bool:
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not "
                               "supported")
        return float(dx)
    if y.dtype is dt.bool or x.dtype is dt.bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    ndim = y._data.ndim
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.view([x._data.shape[0] if d == dim else 1 for d in range(ndim)])
    elif x._data.ndim < ndim:
        x = x.view((1,) * (ndim - x._data.ndim) + tuple(x._data.shape))
    left, right = _slices(x, dim)
    return right - left


def _integrate(name, signatures, y, x, dx, dim, cumulative=False):
    check_tensor(name, y, "y")
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        raise _bad_call(name, (y, x), signatures, {} if dx is None else {"dx": dx})
    if y._data.ndim == 0:
        if cumulative and x is None:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, y._data.ndim)
    shape = y._data.shape
    if not cumulative and shape[dim] == 0:   # no samples: 0, as NumPy gives
        return zeros(shape[:dim] + shape[dim + 1:], dtype=y.dtype, device=y.device)
    dx = _spacing("trapezoid" if name == "trapz" else name, y, x, dx, dim)
    left, right = _slices(y, dim)
    if not isinstance(dx, float):
        area = (left + right) * dx
        return (area.cumsum(dim) if cumulative else area.sum(dim)) / 2.0
    if cumulative:
        return (dx / 2.0 * (left + right)).cumsum(dim)
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx


@export(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    return _integrate("trapezoid", _TRAPEZOID, y, x, dx, dim)


@export(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    return _integrate("trapz", _TRAPZ, y, x, dx, dim)


@export(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    return _integrate("cumulative_trapezoid", _TRAPEZOID, y, x, dx, dim, cumulative=True)


# ---------------------------------------------------------------------- vander, histogram
@export(method=False)
def vander(x, N=None, increasing=False):
    check_tensor("vander", x, "x")
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    length = x._data.shape[0]
    if N is None:
        N = length
    _check_int("vander", "N", N)
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    d = dt.promote_types(x.dtype, dt.int64)   # integers give int64, as cumprod's would
    columns = [ones(length, min(N, 1), dtype=d, device=x.device)]
    if N > 1:
        columns.append(x.to(d).unsqueeze(1).expand(length, N - 1).cumprod(1))
    r = cat(columns, 1) if len(columns) > 1 else columns[0]
    return r if increasing else r.flip(1)


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
    if not isinstance(input, Tensor) or not (tensor_bins or type(bins) is int) or \
            (weight is not None and not isinstance(weight, Tensor)) or \
            (range is not None and (tensor_bins or not isinstance(range, (tuple, list)))):
        raise _bad_call("histogram", (input, bins), _HISTOGRAM)
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
    if d not in (dt.float32, dt.float64):
        raise not_implemented("histogram_cpu" if tensor_bins else "histogramdd", d)
    edges = bins if tensor_bins else _linear_edges(input, count, range)
    r = dispatch(_histogram, (input, edges, weight), {"density": bool(density)})
    r = return_types.histogram(r)
    return r if out is None else return_types.histogram(map(write_out, r, out))


def _linear_edges(input, count, range):
    """`count` + 1 evenly spaced edges (PyTorch's linspace in the input's dtype) over `range`,
    or over the input's [min, max] (widened by 0.5 each way when these are equal)."""
    if range is not None:
        if len(range) != 2:
            raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should "
                               f"have 2 elements, but got {len(range)}")
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


# ---------------------------------------------------------------------- unravel_index
@export(method=False)
def unravel_index(indices, shape):
    # PyTorch's own is this composite: (indices // strides) % shape, split along the last dim.
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    elif not isinstance(shape, collections.abc.Sequence):
        raise TypeError("expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape)}")
    for size in shape:
        if not isinstance(size, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(size)}")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    device = indices.device
    coords = indices.unsqueeze(-1).floor_divide(tensor(strides, dtype=dt.int64, device=device))
    return (coords % tensor(shape, dtype=dt.int64, device=device)).unbind(-1)

