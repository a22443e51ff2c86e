"""Flat-index ops and index queries: take, put / put_ (flat indices into the whole tensor)
and nonzero, argwhere, count_nonzero."""
import builtins

import numpy as np

from .. import _dtype as dt
from .._inplace import bump_version
from .._scalars import type_name
from .._tensor import Tensor, _wrap, write_out
from ..autograd.grad_mode import state
from ..backends import array_module, numpy_backend
from ._dims import reduce_dims
from .inplace import apply_inplace
from .registry import METHODS, check_tensor, defop, dispatch, export


# ---------------------------------------------------------------------- take / put
def _check_long(index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type_name(index)}")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                           f"{dt.type_name(index.dtype)}")


def _check_flat_bounds(xp, index, numel):
    if index.size and numel == 0 or (index.size and (
            builtins.bool((index < -numel).any()) or builtins.bool((index >= numel).any()))):
        bad = index[(index < -numel) | (index >= numel)].reshape(-1)[0]
        raise IndexError(f"out of range: tried to access index {builtins.int(bad)} on a tensor "
                         f"of {numel} elements.")


@defop("take", save=())
def _take(a, index):
    return a.reshape(-1)[index]


@_take.defvjp
def _take_vjp(ctx, g):
    zeros = g.new_zeros(ctx.in_meta[0][0])
    return dispatch(_put, (zeros, g), {"index": ctx.params["index"], "accumulate": True})


@export
def take(input, index):
    _check_long(index, "take")
    _check_flat_bounds(None, index._data, input._data.size)
    return dispatch(_take, (input,), {"index": index._data})


@defop("put", save=())
def _put(a, v, index, accumulate):
    out = a.copy()
    _put_flat(out, index, v, accumulate)
    return out


def _put_flat(out, index, v, accumulate):
    flat = out.reshape(-1)  # a view: `out` is contiguous
    v = v.reshape(-1) if hasattr(v, "reshape") else v
    if accumulate:
        numpy_backend.scatter_add(flat, index.reshape(-1), v)
    else:
        flat[index.reshape(-1)] = v


@_put.defvjp
def _put_vjp_flat(ctx, g):
    p = ctx.params
    ga = gv = None
    if ctx.edges[0] is not None:
        ga = g if p["accumulate"] else dispatch(_put, (g, 0), p)
    if ctx.edges[1] is not None:
        gv = dispatch(_take, (g,), {"index": p["index"]}).reshape(ctx.in_meta[0][1])
    return ga, gv


def _check_put(self, index, source):
    _check_long(index, "put_")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {dt.type_name(self.dtype)} and source.dtype = "
                           f"{dt.type_name(source.dtype)}")
    if source._data.size != index._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {index._data.size}")
    _check_flat_bounds(None, index._data, self._data.size)


@export
def put(input, index, source, accumulate=False):
    _check_put(input, index, source)
    return dispatch(_put, (input, source), {"index": index._data,
                                            "accumulate": builtins.bool(accumulate)})


def put_(self, index, source, accumulate=False):
    _check_put(self, index, source)
    if state.enabled and (self._requires_grad or source._requires_grad):
        return apply_inplace(self, put, (index, source, accumulate), {})
    if self._data.flags.c_contiguous:
        _put_flat(self._data, index._data, source._data, accumulate)
    else:
        self._data[...] = _put(self._data, source._data, index._data, accumulate)
    bump_version(self)
    return self


METHODS["put_"] = put_


# ---------------------------------------------------------------------- nonzero
@export
def nonzero(input, *, out=None, as_tuple=False):
    check_tensor("nonzero", input)
    a = input._data
    xp = array_module(a)
    if as_tuple:
        if a.ndim == 0:
            return (_wrap(xp.zeros(builtins.int(builtins.bool(a)), dtype=np.int64), dt.int64,
                          input._device),)
        return tuple(_wrap(i.astype(np.int64, copy=False), dt.int64, input._device)
                     for i in xp.nonzero(a))
    r = _wrap(xp.argwhere(a).astype(np.int64, copy=False), dt.int64, input._device)
    return r if out is None else write_out(r, out)


@export
def argwhere(input):
    check_tensor("argwhere", input)
    return nonzero(input)


@export
def count_nonzero(input, dim=None):
    check_tensor("count_nonzero", input)
    xp = array_module(input._data)
    dims = dim if dim is None or isinstance(dim, (tuple, list)) else (dim,)
    dims = None if dims is None else reduce_dims(dims, input._data.ndim)
    if not input._data.ndim:
        dims = None   # (dim 0 or -1 of a 0-d tensor is the tensor itself)
    return _wrap(xp.asarray(xp.count_nonzero(input._data, axis=dims), dtype=np.int64),
                 dt.int64, input._device)
