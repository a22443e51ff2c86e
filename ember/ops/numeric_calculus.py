"""torch.gradient (finite-difference derivatives along dims), torch.histogramdd (a joint
histogram of D-dimensional points) and torch.segment_reduce (reductions over runs of rows).

gradient and segment_reduce are compositions of ember ops, so they differentiate with respect
to their input as PyTorch's do; histogramdd counts (no gradient, as in PyTorch)."""
import numpy as np

from .. import _dtype as dt
from .._creation import linspace
from ..autograd.grad_mode import no_grad
from ._dims import wrap_dim
from .registry import PUBLIC, check_tensor, export
from .return_types import histogramdd as _histogramdd_result

__all__ = ["gradient", "histogramdd", "segment_reduce"]


# ---------------------------------------------------------------------- gradient
def _coefficients(x, edge_order):
    """Weights (prev, here, next) of the second-order central difference at each interior
    point of coordinates `x`, and the one-sided weights at both ends: the Taylor expansions
    of non-uniform spacing (uniform spacing gives (f[i+1] - f[i-1]) / 2h)."""
    dl, dr = x[1:-1] - x[:-2], x[2:] - x[1:-1]
    interior = (-dr / (dl * (dl + dr)), (dr - dl) / (dl * dr), dl / (dr * (dl + dr)))
    if edge_order == 1:
        h0, hn = x[1] - x[0], x[-1] - x[-2]
        return interior, ((-1 / h0, 1 / h0, 0.0), (0.0, -1 / hn, 1 / hn))
    d1, d2 = x[1] - x[0], x[2] - x[1]
    left = (-(2 * d1 + d2) / (d1 * (d1 + d2)), (d1 + d2) / (d1 * d2), -d1 / (d2 * (d1 + d2)))
    d1, d2 = x[-2] - x[-3], x[-1] - x[-2]
    right = (d2 / (d1 * (d1 + d2)), -(d2 + d1) / (d1 * d2), (2 * d2 + d1) / (d2 * (d1 + d2)))
    return interior, (left, right)


def _along(f, d, start, stop):
    return f.narrow(d, start, stop - start)


def _one_gradient(f, d, coords, edge_order, uniform_step):
    n = f.shape[d]
    if uniform_step is not None:
        # NOTE: PyTorch's uniform formula, (f[i+1] - f[i-1]) / 2h, rounds differently
        # from the general weights; keep it for bit-closeness.
        interior = (_along(f, d, 2, n) - _along(f, d, 0, n - 2)) / (2 * uniform_step)
        coords = np.arange(n, dtype=np.float64) * uniform_step
        _, (left, right) = _coefficients(coords, edge_order)
    else:
        (a, b, c), (left, right) = _coefficients(coords, edge_order)
        shape = [1] * f.dim()
        shape[d] = n - 2

        def w(v):
            return f.new_tensor(np.asarray(v).reshape(shape))
        interior = _along(f, d, 0, n - 2) * w(a) + _along(f, d, 1, n - 1) * w(b) + \
            _along(f, d, 2, n) * w(c)
    first = _along(f, d, 0, 1) * left[0] + _along(f, d, 1, 2) * left[1] + \
        _along(f, d, 2, 3) * left[2] if n > 2 else \
        (_along(f, d, 1, 2) - _along(f, d, 0, 1)) * left[1]
    last = _along(f, d, n - 3, n - 2) * right[0] + _along(f, d, n - 2, n - 1) * right[1] + \
        _along(f, d, n - 1, n) * right[2] if n > 2 else \
        (_along(f, d, n - 1, n) - _along(f, d, n - 2, n - 1)) * right[2]
    return PUBLIC["cat"]([first, interior, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative estimate along each of `dim` (all dims by default): central
    differences inside, one-sided differences of order `edge_order` at the ends. `spacing`
    is one step for every dim, one step per dim, or one coordinate tensor per dim."""
    check_tensor("gradient", input)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = tuple(range(input.dim())) if dim is None else \
        ((dim,) if isinstance(dim, int) else tuple(dim))
    if spacing is None:   # (PyTorch's Scalar? spacing: None is the unit step)
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar "
                               f"or it's spacing and dim arguments to have the same length, "
                               f"but got a spacing argument of length {len(spacing)} and a "
                               f"dim argument of length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    if input.dtype is dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims = tuple(wrap_dim(d, input.dim()) for d in dims)
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else \
        input.to(dt.get_default_dtype())
    results = []
    for d, step in zip(dims, spacings):
        if hasattr(step, "numpy"):   # a coordinate tensor
            coords = step.detach().cpu().numpy().astype(np.float64)
            if step.dim() == 0:
                results.append(_one_gradient(f, d, None, edge_order, float(step)))
                continue
            results.append(_one_gradient(f, d, coords, edge_order, None))
        else:
            results.append(_one_gradient(f, d, None, edge_order, step))
    return tuple(results)


# ---------------------------------------------------------------------- histogramdd
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points in `input`'s last dim; `bins` is a count, a count per
    dim, or a tensor of edges per dim."""
    check_tensor("histogramdd", input)
    D = input.shape[-1]
    points = input.detach().reshape(-1, D)
    host = points.cpu().numpy()
    if isinstance(bins, int):
        bins = [bins] * D
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
    return _histogramdd_result((hist, tuple(e.to(input.device) for e in edges)))


# ---------------------------------------------------------------------- segment_reduce
_EMPTY = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf"),
          "mean": float("nan")}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduces consecutive runs of `data` along `axis` (run lengths from `lengths`, or
    boundaries from `offsets`), one result per run; empty runs give `initial` or the
    reduction's identity. Leading dims of lengths/offsets batch the runs."""
    check_tensor("segment_reduce", data)
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)   # PyTorch's aliases
    if reduce not in _EMPTY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    axis = axis % data.dim()
    with no_grad():
        if lengths is not None:
            lengths_host = lengths.cpu().numpy()
            bounds = np.concatenate([np.zeros(lengths_host.shape[:-1] + (1,), np.int64),
                                     np.cumsum(lengths_host, -1)], -1)
        else:
            bounds = offsets.cpu().numpy().astype(np.int64)
    if bounds.ndim != 1:
        raise NotImplementedError("ember does not support batched lengths/offsets in "
                                  "segment_reduce; pass 1-D lengths or offsets")
    if axis != 0:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")
    if not unsafe and lengths is not None:
        if (lengths_host < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if int(bounds[-1]) != data.shape[axis]:
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        run = data.narrow(axis, int(lo), int(hi - lo))
        if hi == lo:
            fill = _EMPTY[reduce] if initial is None else initial
            shape = list(data.shape)
            shape[axis] = 1
            pieces.append(data.new_full(shape, fill).squeeze(axis))
            continue
        if reduce == "sum":
            value = run.sum(axis)
        elif reduce == "prod":
            value = run.prod(axis)
        elif reduce == "mean":
            # NOTE: PyTorch's mean with `initial` adds it to the sum, not to the count
            value = run.mean(axis) if initial is None else \
                (run.sum(axis) + initial) / int(hi - lo)
        elif reduce == "max":
            value = run.amax(axis)
        else:
            value = run.amin(axis)
        if initial is not None and reduce != "mean":
            combine = {"sum": lambda v: v + initial, "prod": lambda v: v * initial,
                       "max": lambda v: v.clamp(min=initial),
                       "min": lambda v: v.clamp(max=initial)}[reduce]
            value = combine(value)
        pieces.append(value)
    return PUBLIC["stack"](pieces, axis)


for _name in __all__:
    export(globals()[_name], method=False)
