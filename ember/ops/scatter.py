"""Index-driven gathers and writes along one dim: gather, scatter (+ _add, _reduce),
index_select, index_add, index_copy, index_fill, take_along_dim, and the mask ops
masked_fill, masked_select, masked_scatter.

Writes whose indices repeat combine through the backend's `scatter_add`/`scatter_reduce`
kernels (ufunc.at), never through Python loops. Every VJP is written in these same ops, so
double backward works.
"""
import builtins

import numpy as np

from .. import _dtype as dt
from .._inplace import bump_version
from .._tensor import Tensor, _wrap, write_out
from .._scalars import number, type_name
from ..autograd.grad_mode import state
from ..backends import array_module, numpy_backend
from ._dims import wrap_dim
from .inplace import apply_inplace
from .registry import METHODS, defop, dispatch, export
from .indexing_views import _slice_backward

_INDEX = (dt.int64, dt.int32)


def _const(array, like):
    """A Tensor around an array the VJP needs as a constant (counts, masks)."""
    return _wrap(array, dt.from_numpy_dtype(array.dtype), like._device)


def _pad_to(g, shape):
    """g written into the leading corner of zeros of `shape` (src larger than index)."""
    if tuple(g._data.shape) == tuple(shape):
        return g
    key = tuple(slice(0, s) for s in g._data.shape) + (...,)
    return dispatch(_slice_backward, (g,), {"shape": tuple(shape), "key": key})


def _fill_inplace(fn):
    """`x.op_(...)`: write in place when autograd has nothing to record, else the generic
    out-of-place + commit protocol (which rewires the graph)."""
    def inplace(self, *args, **kwargs):
        if state.enabled and (self._requires_grad or any(
                isinstance(a, Tensor) and a._requires_grad for a in args + tuple(
                    kwargs.values()))):
            return apply_inplace(self, fn, args, kwargs)
        r = fn(self, *args, **kwargs)
        if r._data.shape != self._data.shape:
            raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                               f"broadcast shape {list(r._data.shape)}")
        self._data[...] = r._data
        bump_version(self)
        return self
    inplace.__name__ = fn.__name__ + "_"
    return inplace


# ---------------------------------------------------------------------- gather / scatter
def _coords(xp, index, dim):
    """Broadcastable coordinate arrays addressing `index`'s positions along `dim`."""
    n = index.ndim
    return tuple(index if d == dim else
                 xp.arange(index.shape[d]).reshape((-1,) + (1,) * (n - d - 1))
                 for d in range(n))


def _check_index_dtype(index, name):
    if index.dtype not in _INDEX:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


def _check_bounds(index, size, dim):
    # NOTE: gather, scatter and index_add reject negative indices, as PyTorch's do.
    if index.size:
        lo, hi = index.min(), index.max()
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"index {builtins.int(bad)} is out of bounds for dimension "
                               f"{dim} with size {size}")


def _gather_prepare(input, dim, index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type_name(index)}")
    shape, ishape = input._data.shape, index._data.shape
    d = wrap_dim(dim, len(shape))   # torch's order: the dim, the index dtype, the ranks
    _check_index_dtype(index, name)
    if len(ishape) != len(shape) and (len(ishape) > 1 or len(shape) > 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    for k, (i, s) in enumerate(zip(ishape, shape)):
        if k != d and i > s:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(ishape)} to be no larger than self {list(shape)} apart "
                               f"from dimension {d}")
    _check_bounds(index._data, shape[d] if shape else 1, d)
    return d


@defop("gather", save=())
def _gather(a, index, dim):
    if a.ndim == 0:
        return a.copy()
    xp = array_module(a)
    return a[_coords(xp, index, dim)]


@_gather.defvjp
def _gather_vjp(ctx, g):
    p = ctx.params
    return dispatch(_scatter_add, (g.new_zeros(ctx.in_meta[0][0]), g), p)


@export
def gather(input, dim, index, *, sparse_grad=False, out=None):
    if isinstance(index, Tensor) and index._data.size == 0 and isinstance(input, Tensor):
        # torch checks an empty index's dtype and shape not at all: only the dim is wrapped
        wrap_dim(dim, input._data.ndim)
        r = input.reshape(-1)[:0].reshape(index.shape)
        return r if out is None else write_out(r, out)
    d = _gather_prepare(input, dim, index, "gather")
    r = dispatch(_gather, (input,), {"index": index._data, "dim": d})
    return r if out is None else write_out(r, out)


def _scatter_write(a, src, index, dim, mode):
    out = a.copy()
    if a.ndim == 0:
        target, key = out.reshape(1), (index.reshape(-1),)
    else:
        target, key = out, _coords(array_module(a), index, dim)
    if hasattr(src, "shape") and src.ndim:
        src = src[tuple(slice(0, s) for s in index.shape)]
    elif hasattr(src, "shape"):
        src = src.reshape(())
    if mode is None:
        target[key] = src
    elif mode == "sum":
        numpy_backend.scatter_add(target, key, src)
    else:
        numpy_backend.scatter_reduce(target, key, src, mode)
    return out


@defop("scatter", save=())
def _scatter(a, src, index, dim, mode=None):
    return _scatter_write(a, src, index, dim, mode)


@_scatter.defvjp
def _scatter_vjp(ctx, g):
    p = ctx.params
    if p.get("mode") is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    ga = gs = None
    if ctx.edges[0] is not None:
        ga = dispatch(_scatter_value, (g, 0), p)
    if len(ctx.edges) > 1 and ctx.edges[1] is not None:
        gs = _pad_to(dispatch(_gather, (g,), {"index": p["index"], "dim": p["dim"]}),
                     ctx.in_meta[0][1])
    return ga, gs


_scatter_value = defop("scatter_value", node="ScatterBackward1", save=())(_scatter.forward)
_scatter_value.defvjp(_scatter_vjp)


@defop("scatter_add", save=())
def _scatter_add(a, src, index, dim):
    return _scatter_write(a, src, index, dim, "sum")


@_scatter_add.defvjp
def _scatter_add_vjp(ctx, g):
    p = ctx.params
    gs = None
    if ctx.edges[1] is not None:
        gs = _pad_to(dispatch(_gather, (g,), p), ctx.in_meta[0][1])
    return g, gs


def _check_scatter_sizes(shape, ishape, sshape, d):
    """torch's scatter_shape_check, then its kernel's rank check of src. A 0-d tensor counts
    as one element of one dim (ensure_nonempty_size); src is read at each of the index's
    dims, so a src of fewer dims fails reading one (IndexError)."""
    if max(len(ishape), 1) != max(len(shape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    ishape1 = ishape or (1,)
    wrong = any(i > s for k, (i, s) in enumerate(zip(ishape1, shape or (1,))) if k != d)
    for k, i in enumerate(ishape1):
        if wrong:
            break
        if sshape and k >= len(sshape):
            n = len(sshape)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {k})")
        wrong = i > (sshape[k] if sshape else 1)
    if wrong:
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self "
                           f"{list(shape)} apart from dimension {d} and to be no larger "
                           f"size than src {list(sshape)}")
    if max(len(ishape), 1) != max(len(sshape), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src "
                           "tensor")


def _scatter_prepare(input, dim, index, src, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type_name(index)}")
    shape, ishape = input._data.shape, index._data.shape
    d = wrap_dim(dim, len(shape))   # (torch wraps the dim before it checks the index)
    # NOTE: torch checks an empty index's dtype, shape and bounds not at all (the callers
    # then return the input's values)
    empty = index._data.size == 0
    if not empty:
        _check_index_dtype(index, "scatter" if name != "scatter_add" else name)
    if isinstance(src, Tensor):
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
        if empty:
            return d, index._data, src
        _check_scatter_sizes(shape, ishape, src._data.shape, d)
    if not empty:
        _check_bounds(index._data, shape[d] if shape else 1, d)
    # a 0-d index or src is the one-element tensor of one dim it stands for (PyTorch's
    # ensure_nonempty_size), so the kernels and VJPs see operands of the input's rank
    if isinstance(src, Tensor) and src._data.ndim == 0 and shape:
        src = src.reshape(1)
    return d, index._data.reshape(1) if index._data.ndim == 0 else index._data, src


_REDUCE_NAMES = {"add": "sum", "multiply": "prod"}


@export
def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    if src is None:
        src = value
    d, index_array, src = _scatter_prepare(input, dim, index, src, "scatter")
    if index_array.size == 0:
        return input.clone() if out is None else write_out(input, out)
    params = {"index": index_array, "dim": d}
    if reduce is not None:
        if reduce not in _REDUCE_NAMES:
            raise RuntimeError("reduce argument must be either add or multiply.")
        params["mode"] = _REDUCE_NAMES[reduce]
    if isinstance(src, Tensor):
        r = dispatch(_scatter, (input, src), params)
    else:
        r = dispatch(_scatter_value, (input, number(src)), params)
    return r if out is None else write_out(r, out)


@export
def scatter_add(input, dim, index, src, *, out=None):
    d, index_array, src = _scatter_prepare(input, dim, index, src, "scatter_add")
    if index_array.size == 0:
        return input.clone() if out is None else write_out(input, out)
    r = dispatch(_scatter_add, (input, src), {"index": index_array, "dim": d})
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- scatter_reduce
_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_identity(dtype, reduce):
    if reduce in _IDENTITY:
        return _IDENTITY[reduce]
    if dtype.kind == "f" or dtype.kind == "V":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_counts(a, index, dim, include_self):
    """How many values meet at each position of `a` (at least 1, for the mean)."""
    xp = array_module(a)
    count = xp.full(a.shape, 1 if include_self else 0, dtype=np.int64)
    _scatter_write_into(count, xp.ones(index.shape, dtype=np.int64), index, dim)
    return xp.maximum(count, 1)


def _scatter_write_into(target, src, index, dim):
    key = (index.reshape(-1),) if target.ndim == 0 else \
        _coords(array_module(target), index, dim)
    t = target.reshape(1) if target.ndim == 0 else target
    numpy_backend.scatter_add(t, key, src.reshape(()) if target.ndim == 0 else src)


@defop("scatter_reduce", save=None, save_output=True)
def _scatter_reduce(a, src, index, dim, reduce, include_self):
    xp = array_module(a)
    if not include_self:
        a = _scatter_write(a, _reduce_identity(a.dtype, reduce), index, dim, None)
    mode = "sum" if reduce == "mean" else reduce
    out = _scatter_write(a, src, index, dim, mode)
    if reduce == "mean":
        count = _scatter_counts(a, index, dim, include_self)
        out = out // count if out.dtype.kind in "iub" else (out / count).astype(out.dtype)
    return xp.asarray(out)


@_scatter_reduce.defvjp
def _scatter_reduce_vjp(ctx, g):
    p = ctx.params
    index, dim, reduce, include = p["index"], p["dim"], p["reduce"], p["include_self"]
    x, src = ctx.inputs
    gp = {"index": index, "dim": dim}
    xp = array_module(g._data)
    # Masks and counts are constants of the backward graph: computed on arrays.
    scattered = None if include else _const(
        _scatter_write(xp.zeros(g._data.shape, dtype=bool), True, index, dim, None), g)
    if reduce == "sum":
        ga = g if include else g.masked_fill(scattered, 0)
        gs = dispatch(_gather, (g,), gp)
    elif reduce == "mean":
        count = _const(_scatter_counts(x._data, index, dim, include).astype(g._data.dtype), g)
        ga = g / count if include else g.masked_fill(scattered, 0)
        gs = dispatch(_gather, (g / count,), gp)
    elif reduce in ("amax", "amin"):
        result = ctx.outputs[0]._data
        src_hit = _gather.forward(result, index, dim) == src._data[
            tuple(slice(0, s) for s in index.shape)]
        ties = _scatter_write(xp.zeros(result.shape, dtype=g._data.dtype),
                              src_hit.astype(g._data.dtype), index, dim, "sum")
        # NOTE: PyTorch counts a tying `self` element among the ties even when
        # include_self=False (and then gives it no gradient); we match it.
        self_hit = x._data == result
        ties = ties + self_hit
        share = g / _const(xp.maximum(ties, 1), g)
        ga = share.masked_fill(_const(~self_hit, g), 0)
        if not include:
            ga = ga.masked_fill(scattered, 0)
        gs = dispatch(_gather, (share,), gp).masked_fill(_const(~src_hit, g), 0)
    else:
        ga, gs = _prod_grads(x, src, g, gp, include, scattered)
    return ga, _pad_to(gs, ctx.in_meta[0][1])


def _prod_grads(x, src, g, gp, include, scattered):
    """d prod / d element = product of the other members of its group, computed without
    dividing by zero (groups holding one zero and groups holding several differ)."""
    index, dim = gp["index"], gp["dim"]
    xp = array_module(g._data)
    src = src[tuple(slice(0, s) for s in index.shape)] if src._data.ndim else src
    src_zero = src._data == 0
    x_zero = x._data == 0
    safe_src = src.masked_fill(_const(src_zero, g), 1)
    base = x.masked_fill(_const(x_zero, g) if include else scattered, 1)
    params = dict(gp, reduce="prod", include_self=True)
    prod_nonzero = dispatch(_scatter_reduce, (base, safe_src), params)
    zeros = _scatter_write(xp.zeros(g._data.shape, dtype=np.int64),
                           src_zero.astype(np.int64), index, dim, "sum")
    if include:
        zeros = zeros + x_zero
    no_zero, one_zero = zeros == 0, zeros == 1

    def others(value_safe, is_zero, pick, pick_array):
        # nonzero member: prod_nonzero / value when its group has no zero, else 0;
        # zero member: prod_nonzero when it is the group's only zero, else 0.
        pn = pick(prod_nonzero)
        nz = (pn / value_safe).masked_fill(_const(~pick_array(no_zero) | is_zero, g), 0)
        z = pn.masked_fill(_const(~pick_array(one_zero) | ~is_zero, g), 0)
        return nz + z

    def gather(t):
        return dispatch(_gather, (t,), gp)

    def gather_array(a):
        return _gather.forward(a, index, dim)

    gs = gather(g) * others(safe_src, src_zero, gather, gather_array)
    if include:
        ga = g * others(x.masked_fill(_const(x_zero, g), 1), x_zero, lambda t: t,
                        lambda a: a)
    else:
        ga = g.masked_fill(scattered, 0)
    return ga, gs


@export
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d, index_array, src = _scatter_prepare(input, dim, index, src, "scatter_reduce")
    if index_array.size == 0:
        return input.clone() if out is None else write_out(input, out)
    r = dispatch(_scatter_reduce, (input, src), {"index": index_array, "dim": d,
                                                 "reduce": reduce,
                                                 "include_self": builtins.bool(include_self)})
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- in-place variants
def _scatter_inplace(self, dim, index, src=None, *, value=None, reduce=None):
    return scatter(self, dim, index, src, value=value, reduce=reduce)


METHODS.update({
    "scatter_": _fill_inplace(_scatter_inplace),
    "scatter_add_": _fill_inplace(scatter_add),
    "scatter_reduce_": _fill_inplace(scatter_reduce),
})
