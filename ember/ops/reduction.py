"""Core reductions: sum and mean (the rest of the family lives beside them)."""
from .. import _dtype as dt
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._dims import kept_shape, reduce_dims
from ._promote import compute_dtype
from .registry import defop, dispatch, export


def expand_reduced(g, input_shape, dims, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims of the input."""
    if not keepdim and g._data.shape != kept_shape(input_shape, dims):
        g = g.reshape(kept_shape(input_shape, dims))
    return g.expand(input_shape)


def sum_dtype(input, dtype):
    """Integer and bool sums accumulate in int64, as PyTorch's."""
    if dtype is not None:
        return dtype
    return dt.int64 if input.dtype.category < 2 else input.dtype


@defop("sum", save=())
def _sum(a, dims, keepdim, acc):
    return array_module(a).sum(a, axis=dims, keepdims=keepdim, dtype=acc)


@_sum.defvjp
def _sum_vjp(ctx, g):
    shape = ctx.in_meta[0][0]
    return expand_reduced(g, shape, ctx.params["dims"], ctx.params["keepdim"])


@export
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"sum(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dims = reduce_dims(dim, input._data.ndim)
    result = sum_dtype(input, dtype)
    acc = compute_dtype(result).np
    r = dispatch(_sum, (input,), {"dims": dims, "keepdim": keepdim, "acc": acc}, result)
    return r if out is None else write_out(r, out)


@defop("mean", save=())
def _mean(a, dims, keepdim, acc):
    return array_module(a).mean(a, axis=dims, keepdims=keepdim, dtype=acc)


@_mean.defvjp
def _mean_vjp(ctx, g):
    shape = ctx.in_meta[0][0]
    dims = ctx.params["dims"]
    count = 1
    for d in dims:
        count *= shape[d]
    return expand_reduced(g / count, shape, dims, ctx.params["keepdim"])


@export
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    result = dtype or input.dtype
    if result.category < 2:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dt.type_name(input.dtype)}")
    dims = reduce_dims(dim, input._data.ndim)
    r = dispatch(_mean, (input,), {"dims": dims, "keepdim": keepdim,
                                   "acc": compute_dtype(result).np}, result)
    return r if out is None else write_out(r, out)
