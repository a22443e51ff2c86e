"""Numerical calculus on samples: torch.gradient (finite-difference derivatives along dims),
diff (n-th forward differences), the trapezoid rules (trapezoid, trapz, cumulative_trapezoid)
and torch.segment_reduce (reductions over runs of rows).

All are compositions of ember ops, in the order PyTorch's own composites use, so they
differentiate with respect to their input as PyTorch's do."""
import numpy as np

from .. import _dtype as dt
from .._creation import zeros
from .._scalars import type_name
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._arguments import invalid_combination, number_arg
from ._dims import int_tuple, wrap_dim
from .registry import PUBLIC, check_tensor, export
from .shape import cat

__all__ = ["gradient", "segment_reduce"]


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
    dims = tuple(range(input.dim())) if dim is None else int_tuple(dim)
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


# ---------------------------------------------------------------------- diff
def _slices(t, dim):
    """t[..., :-1] and t[..., 1:] along `dim` (PyTorch's slice(dim, 0, -1) and slice(dim, 1))."""
    head = (slice(None),) * dim
    return t[head + (slice(None, -1),)], t[head + (slice(1, None),)]


@export
def diff(input, n=1, dim=-1, prepend=None, append=None):
    check_tensor("diff", input)
    n = int(n)   # (the parser took a Python or NumPy integer)
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, ndim)
    parts = [input]
    for arg, extra in (("prepend", prepend), ("append", append)):
        if extra is not None:
            if not isinstance(extra, Tensor):
                raise TypeError(f"diff(): argument '{arg}' must be Tensor, not "
                                f"{type_name(extra)}")
            if extra._data.ndim != ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension "
                                   "as input")
            parts.insert(0 if arg == "prepend" else len(parts), extra)
    x = cat(parts, dim) if len(parts) > 1 else input
    if n == 0:
        return x.clone()
    for _ in range(min(n, x._data.shape[dim])):
        left, right = _slices(x, dim)
        x = right.logical_xor(left) if x.dtype is dt.bool else right - left
    return x


# ---------------------------------------------------------------------- trapezoid rules
_TRAPEZOID = ("Tensor y, Tensor x, *, int dim = -1", "Tensor y, *, Number dx = 1, int dim = -1")
_TRAPZ = ("Tensor y, *, float dx = 1, int dim = -1", "Tensor y, Tensor x, *, int dim = -1")


def _spacing(name, y, x, dx, dim):
    """The spacing: a Python float, or x's steps as a tensor shaped to broadcast against
    y's slices along `dim`."""
    if x is None:
        dx = 1 if dx is None else number_arg(name, "dx", dx)
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
        raise invalid_combination(name, (y, x), signatures, {} if dx is None else {"dx": dx})
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
    _check_segment_args(reduce, lengths, indices, offsets)
    axis = axis % data.dim()
    bounds, lengths_host = _segment_bounds(lengths, offsets)
    _check_unbatched(bounds, axis)
    if not unsafe and lengths is not None:
        _check_lengths(lengths_host, bounds, data.shape[axis])
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        run = data.narrow(axis, int(lo), int(hi - lo))
        if hi == lo:
            pieces.append(_empty_run(data, axis, _EMPTY[reduce] if initial is None else initial))
        else:
            pieces.append(_reduce_run(run, reduce, axis, initial))
    return PUBLIC["stack"](pieces, axis)


def _check_segment_args(reduce, lengths, indices, offsets):
    """PyTorch's errors for an unknown reduction and for the ways of giving the runs."""
    if reduce not in _EMPTY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")


def _segment_bounds(lengths, offsets):
    """(bounds, lengths on the host): the runs' boundaries as an int64 host array (one more
    than the runs along the last axis); the host lengths are None when offsets gave them."""
    with no_grad():
        if lengths is None:
            return offsets.cpu().numpy().astype(np.int64), None
        lengths_host = lengths.cpu().numpy()
    bounds = np.concatenate([np.zeros(lengths_host.shape[:-1] + (1,), np.int64),
                             np.cumsum(lengths_host, -1)], -1)
    return bounds, lengths_host


def _check_unbatched(bounds, axis):
    """ember reduces one batch of runs, along the first axis of `data`."""
    if bounds.ndim != 1:
        raise NotImplementedError("ember does not support batched lengths/offsets in "
                                  "segment_reduce; pass 1-D lengths or offsets")
    if axis != 0:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                           f"lengths but got {axis}.")


def _check_lengths(lengths_host, bounds, size):
    """PyTorch's checks of `lengths` when not unsafe: none negative, summing to `size`."""
    if (lengths_host < 0).any():
        raise RuntimeError("lengths contains negative value!")
    if int(bounds[-1]) != size:
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                           "sum to data.size(lengths.dim()-1) when !unsafe.")


def _empty_run(data, axis, fill):
    """The result of an empty run: `fill` in the shape of `data` reduced along `axis`."""
    shape = list(data.shape)
    shape[axis] = 1
    return data.new_full(shape, fill).squeeze(axis)


def _reduce_run(run, reduce, axis, initial):
    """One non-empty run reduced along `axis`, `initial` folded in as PyTorch folds it."""
    if reduce == "sum":
        value = run.sum(axis)
        return value if initial is None else value + initial
    if reduce == "prod":
        value = run.prod(axis)
        return value if initial is None else value * initial
    if reduce == "mean":
        # NOTE: PyTorch's mean with `initial` adds it to the sum, not to the count
        return run.mean(axis) if initial is None else \
            (run.sum(axis) + initial) / run.shape[axis]
    if reduce == "max":
        value = run.amax(axis)
        return value if initial is None else value.clamp(min=initial)
    value = run.amin(axis)
    return value if initial is None else value.clamp(max=initial)


for _name in __all__:
    export(globals()[_name], method=False)
