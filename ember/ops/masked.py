"""Mask ops: masked_fill, masked_select, masked_scatter (and their in-place forms)."""
import builtins

import numpy as np

from .. import _dtype as dt
from .._data import check_fill
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module
from ._promote import broadcast_error
from .conversion import cast
from .registry import METHODS, defop, dispatch, export
from .scatter import _fill_inplace


# ---------------------------------------------------------------------- masks
def _check_mask(mask, name, what="masked_fill_ only supports boolean masks, but got mask "
                                  "with dtype {}"):
    if mask.dtype is not dt.bool:
        names = {dt.uint8: "unsigned char", dt.float32: "float", dt.float64: "double",
                 dt.int64: "long int", dt.int32: "int"}
        raise RuntimeError(what.format(names.get(mask.dtype, dt.type_name(mask.dtype))))


@defop("masked_fill", save=())
def _masked_fill(a, value, mask):
    xp = array_module(a)
    return xp.where(mask, value, a).astype(a.dtype, copy=False)


def _masked_vjp(second_grad):
    """The VJP of an op writing its second operand into input's masked places: input's
    gradient is g with those places zeroed, the second's `second_grad(ctx, g, mask)`."""
    def vjp(ctx, g):
        mask = ctx.params["mask"]
        ga = gb = None
        if ctx.edges[0] is not None:
            ga = dispatch(_masked_fill, (g, 0), {"mask": mask})
        if ctx.edges[1] is not None:
            gb = second_grad(ctx, g, mask)
        return ga, gb
    return vjp


def _fill_value_grad(ctx, g, mask):
    """The value's gradient: g summed over the masked places."""
    keep = ~array_module(mask).broadcast_to(mask, g._data.shape)
    return dispatch(_masked_fill, (g, 0), {"mask": keep}).sum()


_masked_fill.defvjp(_masked_vjp(_fill_value_grad))


@export
def masked_fill(input, mask, value):
    _check_mask(mask, "masked_fill")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        value = cast(value, input.dtype)
    else:
        value = check_fill(value, input.dtype, 2)   # (PyTorch's checked Scalar conversion)
    try:
        return dispatch(_masked_fill, (input, value), {"mask": mask._data})
    except ValueError:
        raise broadcast_error(mask._data.shape, input._data.shape) from None


@defop("masked_select", save=())
def _masked_select(a, mask):
    xp = array_module(a)
    shape = xp.broadcast_shapes(a.shape, mask.shape)
    return xp.broadcast_to(a, shape)[xp.broadcast_to(mask, shape)]


@_masked_select.defvjp
def _masked_select_vjp(ctx, g):
    mask = ctx.params["mask"]
    xp = array_module(mask)
    shape = xp.broadcast_shapes(ctx.in_meta[0][0], mask.shape)
    return dispatch(_masked_select_backward, (g,), {"mask": mask, "shape": shape})


@defop("masked_select_backward", node="MaskedScatterBackward0", save=())
def _masked_select_backward(g, mask, shape):
    xp = array_module(g)
    out = xp.zeros(shape, dtype=g.dtype)
    out[xp.broadcast_to(mask, shape)] = g
    return out


@_masked_select_backward.defvjp
def _masked_select_backward_vjp(ctx, g):
    return dispatch(_masked_select, (g,), {"mask": ctx.params["mask"]})


@export
def masked_select(input, mask, *, out=None):
    if mask.dtype is not dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        r = dispatch(_masked_select, (input,), {"mask": mask._data})
    except ValueError:
        raise broadcast_error(input._data.shape, mask._data.shape) from None
    return r if out is None else write_out(r, out)


@defop("masked_scatter", save=())
def _masked_scatter(a, src, mask):
    xp = array_module(a)
    shape = xp.broadcast_shapes(a.shape, mask.shape)
    out = xp.array(xp.broadcast_to(a, shape))
    m = xp.broadcast_to(mask, shape)
    out[m] = src.reshape(-1)[:builtins.int(m.sum())]
    return out


def _scatter_source_grad(ctx, g, mask):
    return dispatch(_masked_scatter_source_grad, (g,), {"mask": mask,
                                                        "shape": ctx.in_meta[0][1]})


_masked_scatter.defvjp(_masked_vjp(_scatter_source_grad))


@defop("masked_scatter_source_grad", node="MaskedSelectBackward0", save=())
def _masked_scatter_source_grad(g, mask, shape):
    """The selected gradient in the first positions of a zero tensor of source's shape."""
    xp = array_module(g)
    picked = g[xp.broadcast_to(mask, g.shape)]
    out = xp.zeros(int(np.prod(shape)), dtype=g.dtype)
    out[:picked.size] = picked
    return out.reshape(shape)


@_masked_scatter_source_grad.defvjp
def _masked_scatter_source_grad_vjp(ctx, g):
    mask = ctx.params["mask"]
    xp = array_module(mask)
    shape = ctx.in_meta[0][0]
    zeros = _wrap(xp.zeros(shape, dtype=g._data.dtype), g.dtype, g._device)
    return dispatch(_masked_scatter, (zeros, g), {"mask": mask})


@export
def masked_scatter(input, mask, source):
    _check_mask(mask, "masked_scatter", "masked_scatter_ only supports boolean masks, but got "
                                        "mask with dtype {}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{dt.type_name(input.dtype)} and {dt.type_name(source.dtype)}")
    xp = array_module(mask._data)
    try:
        shape = xp.broadcast_shapes(input._data.shape, mask._data.shape)
    except ValueError:
        raise broadcast_error(input._data.shape, mask._data.shape) from None
    if builtins.int(xp.broadcast_to(mask._data, shape).sum()) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return dispatch(_masked_scatter, (input, source), {"mask": mask._data})


METHODS.update({
    "masked_fill_": _fill_inplace(masked_fill),
    "masked_scatter_": _fill_inplace(masked_scatter),
})
