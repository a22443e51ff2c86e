"""max, min, amax, amin, aminmax, argmax, argmin.

Along a dim, max/min return (values, indices) and send the gradient to the chosen index;
without a dim they, like amax/amin, share it evenly among tied extremes, as PyTorch does.
NaN propagates: the first NaN along a dim is the max and the min.
"""
import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module
from . import return_types
from ._dims import wrap_dim
from ._elementwise import not_implemented
from ._reduce_ops import const, scatter_dim
from .reduction import dims_of, one_dim, expand_reduced, keep
from .registry import PUBLIC, check_tensor, defop, dispatch, export


def _empty_dim_error(name, dim, sep="()"):
    return IndexError(f"{name}{sep}: Expected reduction dim {dim} to have non-zero size.")


def _no_dim_error(name):
    return RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() "
                        "== 0. Specify the reduction dim with the 'dim' argument.")


def select_along(xp, a, dim, keepdim, pick):
    """(values, indices) of `pick` (argmax/argmin-like) along dim; 0-dim inputs allowed."""
    a1 = a.reshape(1) if a.ndim == 0 else a
    index = pick(a1, axis=dim, keepdims=True)
    values = xp.take_along_axis(a1, index, axis=dim)
    if a.ndim == 0:
        return values.reshape(()), index.reshape(()).astype(xp.int64)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index.astype(xp.int64)


def scatter_selected(ctx, g, index):
    """The VJP of picking `index` along ctx.params['dim']: g sent back to those positions."""
    shape = ctx.in_meta[0][0]
    if not shape:
        return g
    dim = ctx.params["dim"]
    if not ctx.params["keepdim"]:
        g = g.unsqueeze(dim)
        index = array_module(index).expand_dims(index, dim)
    return scatter_dim(g, index, dim, shape)


def _dim_vjp(ctx, g, _):
    return scatter_selected(ctx, g, ctx.outputs[1]._data)


@defop("max", node="MaxBackward0", save=(), save_output=True, num_outputs=2)
def _max_dim(a, dim, keepdim):
    xp = array_module(a)
    return select_along(xp, a, dim, keepdim, xp.argmax)


@defop("min", node="MinBackward0", save=(), save_output=True, num_outputs=2)
def _min_dim(a, dim, keepdim):
    xp = array_module(a)
    return select_along(xp, a, dim, keepdim, xp.argmin)


_max_dim.defvjp(_dim_vjp)
_min_dim.defvjp(_dim_vjp)


def evenly(x, out, dims, keepdim, nan_aware):
    """The constant weights that share a reduction's gradient among the inputs equal to its
    result (out, reduced over `dims`)."""
    a = x._data
    xp = array_module(a)
    r = keep(out._data, a.shape, dims, keepdim)
    hit = a == r
    if nan_aware:
        hit = xp.where(xp.isnan(r), xp.isnan(a), hit)
    with _quiet():
        return const(x, (hit / xp.sum(hit, axis=dims, keepdims=True)).astype(x.dtype.np))


def _quiet():
    return np.errstate(all="ignore")


def _even_vjp(nan_aware):
    def vjp(ctx, g):
        x = ctx.inputs[0]
        dims, keepdim = ctx.params["dims"], ctx.params["keepdim"]
        weights = evenly(x, ctx.output, dims, keepdim, nan_aware)
        return expand_reduced(g, x._data.shape, dims, keepdim) * weights
    return vjp


def _extreme(fn):
    def forward(a, dims, keepdim):
        return getattr(array_module(a), fn)(a, axis=dims, keepdims=keepdim)
    return forward


_max_all = defop("max_all", node="MaxBackward1", save=(0,), save_output=True)(_extreme("max"))
_min_all = defop("min_all", node="MinBackward1", save=(0,), save_output=True)(_extreme("min"))
_amax = defop("amax", save=(0,), save_output=True)(_extreme("max"))
_amin = defop("amin", save=(0,), save_output=True)(_extreme("min"))
_max_all.defvjp(_even_vjp(True))
_min_all.defvjp(_even_vjp(True))
_amax.defvjp(_even_vjp(False))
_amin.defvjp(_even_vjp(False))


def _check_nonempty(name, input, dims, sep="()"):
    shape = input._data.shape
    for d in dims:
        if shape[d] == 0:
            raise _empty_dim_error(name, d, sep)


def _max_min(name, all_op, dim_op):
    def reduce(input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Tensor):  # max(a, b): the elementwise binary form
            return PUBLIC["maximum" if name == "max" else "minimum"](input, dim, out=out)
        check_tensor(name, input)
        complex_input = input.dtype.category == dt.COMPLEX
        if dim is None:
            if input._data.size == 0:
                raise _no_dim_error(name)
            if complex_input:
                raise not_implemented(f"{name}_all", input.dtype)
            dims = tuple(range(input._data.ndim))
            r = dispatch(all_op, (input,), {"dims": dims, "keepdim": False}, input.dtype)
            return r if out is None else write_out(r, out)
        n = input._data.ndim
        d = one_dim(dim, n)
        if n:
            _check_nonempty(name, input, (d,))
        if complex_input:
            raise RuntimeError(f"{name}(): does not support complex input")
        values, indices = dispatch(dim_op, (input,), {"dim": d, "keepdim": keepdim},
                                   input.dtype)
        if out is not None:
            write_out(values, out[0])
            write_out(indices, out[1])
            values, indices = out
        return getattr(return_types, name)((values, indices))
    reduce.__name__ = name
    return reduce


max = export(_max_min("max", _max_all, _max_dim))
min = export(_max_min("min", _min_all, _min_dim))


def _amax_amin(name, op):
    def reduce(input, dim=(), keepdim=False, *, out=None):
        check_tensor(name, input)
        a = input._data
        dims = dims_of(dim, a.ndim)
        if a.size == 0 and (dim is None or (isinstance(dim, (tuple, list)) and not dim)):
            raise _no_dim_error(name)
        _check_nonempty(name, input, dims)
        if input.dtype.category == dt.COMPLEX:
            raise not_implemented(f"{name[1:]}_values_cpu", input.dtype)
        r = dispatch(op, (input,), {"dims": dims, "keepdim": keepdim}, input.dtype)
        return r if out is None else write_out(r, out)
    reduce.__name__ = name
    return reduce


amax = export(_amax_amin("amax", _amax))
amin = export(_amax_amin("amin", _amin))


@defop("aminmax", save=(0,), save_output=True, num_outputs=2)
def _aminmax(a, dims, keepdim):
    xp = array_module(a)
    return xp.min(a, axis=dims, keepdims=keepdim), xp.max(a, axis=dims, keepdims=keepdim)


@_aminmax.defvjp
def _aminmax_vjp(ctx, gmin, gmax):
    x = ctx.inputs[0]
    dims, keepdim = ctx.params["dims"], ctx.params["keepdim"]
    lo, hi = ctx.outputs
    shape = x._data.shape
    return (expand_reduced(gmin, shape, dims, keepdim) * evenly(x, lo, dims, keepdim, False) +
            expand_reduced(gmax, shape, dims, keepdim) * evenly(x, hi, dims, keepdim, False))


@export
def aminmax(input, *, dim=None, keepdim=False, out=None):
    check_tensor("aminmax", input)
    a = input._data
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(a.ndim))
    else:
        d = wrap_dim(dim, a.ndim)
        dims = (d,) if a.ndim else ()
        _check_nonempty("aminmax", input, dims, sep="")
    if input.dtype.category == dt.COMPLEX:
        raise not_implemented("aminmax_cpu", input.dtype)
    lo, hi = dispatch(_aminmax, (input,), {"dims": dims, "keepdim": keepdim}, input.dtype)
    hi.dtype = input.dtype
    if out is not None:
        lo, hi = write_out(lo, out[0]), write_out(hi, out[1])
    return return_types.aminmax((lo, hi))


def _arg(name, fn):
    def reduce(input, dim=None, keepdim=False, *, out=None):
        check_tensor(name, input)
        a = input._data
        if input.dtype is dt.bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if input.dtype.is_complex:   # (before the dim, as torch checks)
            raise RuntimeError(f"{name}(): does not support complex input")
        xp = array_module(a)
        if dim is None:
            if a.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            r = getattr(xp, fn)(a.reshape(-1))
            r = xp.asarray(r, dtype=xp.int64)
            if keepdim:
                r = r.reshape((1,) * a.ndim)
        else:
            d = one_dim(dim, a.ndim)
            if a.ndim and a.shape[d] == 0:
                raise _empty_dim_error(name, d)
            r = select_along(xp, a, d, keepdim, getattr(xp, fn))[1]
        r = _wrap(r, dt.int64, input._device)
        return r if out is None else write_out(r, out)
    reduce.__name__ = name
    return reduce


argmax = export(_arg("argmax", "argmax"))
argmin = export(_arg("argmin", "argmin"))
