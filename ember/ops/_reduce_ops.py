"""Private differentiable helpers shared by the reduction, statistics and sorting families.

Gradients of selection ops (max along a dim, sort, median, cummax...) route the incoming
gradient to the selected positions: `scatter_dim` and its adjoint `gather_dim` do that, each
the other's VJP, so double backward works. `exp_`, `log_` and `abs_pow` are the few
elementwise functions these VJPs need, kept here so the family does not depend on others.
"""
import math

from .._dtype import from_numpy_dtype
from .._tensor import _wrap
from ..backends import array_module
from .registry import defop, dispatch


def const(t, array):
    """A constant (non-differentiable) tensor on t's device."""
    return _wrap(array, from_numpy_dtype(array.dtype), t._device)


def linear_index(xp, index, dim, shape):
    """Flat positions in a C-ordered `shape` of `index` placed along `dim` (every other
    coordinate is the element's own position in `index`)."""
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    flat = index.astype(xp.int64) * strides[dim]
    for axis, n in enumerate(index.shape):
        if axis != dim and strides[axis] and n > 1:
            view = [1] * index.ndim
            view[axis] = n
            flat = flat + xp.arange(n, dtype=xp.int64).reshape(view) * strides[axis]
    return flat


def add_along_dim(xp, values, index, dim, shape):
    """zeros(shape) with `values` added at `index` along `dim`; repeated indices add up."""
    size = math.prod(shape)
    if values.size == 0 or size == 0:
        return xp.zeros(shape, dtype=values.dtype)
    flat = linear_index(xp, index, dim, shape).ravel()
    values = xp.broadcast_to(values, index.shape).ravel()
    if values.dtype.kind == "c":
        out = (xp.bincount(flat, values.real, size) + 1j * xp.bincount(flat, values.imag, size))
    else:
        out = xp.bincount(flat, values.astype(xp.float64), size)
    return out.astype(values.dtype).reshape(shape)


@defop("_scatter_dim", save=())
def _scatter_dim(g, index, dim, shape):
    return add_along_dim(array_module(g), g, index, dim, shape)


@_scatter_dim.defvjp
def _scatter_dim_vjp(ctx, g):
    p = ctx.params
    return gather_dim(g, p["index"], p["dim"])


@defop("_gather_dim", save=())
def _gather_dim(a, index, dim):
    return array_module(a).take_along_axis(a, index, axis=dim)


@_gather_dim.defvjp
def _gather_dim_vjp(ctx, g):
    p = ctx.params
    return scatter_dim(g, p["index"], p["dim"], ctx.in_meta[0][0])


def scatter_dim(g, index, dim, shape):
    """A tensor of `shape`, zero except g added at the positions `index` (an array) picks
    along `dim` (g and index have the same shape)."""
    if g._data.ndim == 0:
        g = g.reshape(index.shape)
    return dispatch(_scatter_dim, (g,), {"index": index, "dim": dim, "shape": tuple(shape)})


def gather_dim(a, index, dim):
    """a's elements at `index` (an array) along `dim` (take_along_axis), differentiably."""
    return dispatch(_gather_dim, (a,), {"index": index, "dim": dim})


@defop("_exp", node="ExpBackward0", save=(), save_output=True)
def _exp(a):
    return array_module(a).exp(a)


@_exp.defvjp
def _exp_vjp(ctx, g):
    return g * ctx.output


def exp_(a):
    return dispatch(_exp, (a,))


@defop("_log", node="LogBackward0", save=(0,))
def _log(a):
    return array_module(a).log(a)


@_log.defvjp
def _log_vjp(ctx, g):
    return g / ctx.inputs[0]


def log_(a):
    return dispatch(_log, (a,))


@defop("_abs_pow", node="PowBackward0", save=(0,))
def _abs_pow(a, p):
    return array_module(a).abs(a) ** p


@_abs_pow.defvjp
def _abs_pow_vjp(ctx, g):
    # d|x|^p = p sign(x) |x|^(p-1); zero at x == 0 (PyTorch's subgradient, also for p < 1)
    a = ctx.inputs[0]
    p = ctx.params["p"]
    xp = array_module(a._data)
    sign = const(a, xp.sign(a._data))
    if p == 1:
        return g * sign
    safe = a + const(a, (a._data == 0).astype(a._data.dtype))
    return g * (sign * p) * abs_pow(safe, p - 1)


def abs_pow(a, p):
    """|a| ** p for a Python number p."""
    return dispatch(_abs_pow, (a,), {"p": p})


def stable_argsort(xp, a, axis):
    """Indices that sort `a` along `axis`, ties in input order, NaN last (as PyTorch's).
    float16/bfloat16 are ordered through float32, which holds them exactly."""
    if a.dtype.itemsize == 2 and a.dtype.kind not in "iu":
        a = a.astype(xp.float32)
    if xp.__name__ == "numpy":
        return xp.argsort(a, axis=axis, kind="stable")
    return xp.argsort(a, axis=axis)  # CuPy's sort is stable


def nan_count(xp, a, axis):
    """How many NaNs each slice along `axis` holds (kept dims); zeros for exact dtypes."""
    if a.dtype.kind in "biu":
        return xp.zeros(a.shape[:axis] + (1,) + a.shape[axis + 1:], dtype=xp.int64)
    return xp.sum(xp.isnan(a), axis=axis, keepdims=True)
