"""Shape manipulation: joining (cat, stack, *stack, atleast_*d), reordering (flip, roll,
rot90) and repetition (repeat, tile, repeat_interleave). Splits are in splitting.py, grids in
grids.py, triangles and diagonals in matrix_structure.py.

Ops that make copies (cat, flip, roll, repeat) differentiate through views and reductions.
"""
import builtins

import numpy as np

from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Size, Tensor, _wrap, write_out
from ..backends import array_module
from ._dims import distinct_dims, wrap_dim
from .index_ops import index_select
from .indexing_views import narrow, select
from .registry import check_elements, check_tensor, check_tensor_list, defop, dispatch, export
from .views import clone, expand, reshape, shape_arg


def _tensor_list(tensors, name):
    return check_tensor_list(name, tensors)


def _common_dtype(tensors):
    d = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not d:
            return dt.result_type_of(tuple(tensors))
    return d


# ---------------------------------------------------------------------- cat / stack
@defop("cat", save=())
def _cat(*arrays, dim):
    return array_module(*arrays).concatenate(arrays, axis=dim)


@_cat.defvjp
def _cat_vjp(ctx, g):
    dim, grads, offset = ctx.params["dim"], [], 0
    for shape, edge in zip(ctx.in_meta[0], ctx.edges):
        size = shape[dim]
        grads.append(narrow(g, dim, offset, size) if edge is not None else None)
        offset += size
    return tuple(grads)


@export(aliases=("concat", "concatenate"))
def cat(tensors, dim=0, *, out=None):
    check_tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    result = _common_dtype(tensors)
    # NOTE: PyTorch still skips legacy empty 1-D tensors, whatever their partners' shapes.
    kept = [t for t in tensors if t._data.shape != (0,)]
    if not kept:
        r = _wrap(array_module(tensors[0]._data).zeros((0,), dtype=result.np), result,
                  tensors[0]._device)
        return r if out is None else write_out(r, out)
    first = kept[0]._data.shape
    d = wrap_dim(dim, len(first))
    for i, t in enumerate(tensors):
        shape = t._data.shape
        if shape == (0,):
            continue
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{len(first)} and {len(shape)}")
        for k, (a, b) in enumerate(zip(first, shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number "
                                   f"{i} in the list.")
    try:
        arrays = [t._data if t.dtype is result else t._data.astype(result.np) for t in kept]
        r = dispatch(_cat, tuple(kept), {"dim": d}, result, arrays)
    except NotImplementedError:   # (a sparse tensor refuses dense kernels: ember/sparse)
        r = _sparse_list_op("cat", tensors, d)
    return r if out is None else write_out(r, out)


def _sparse_list_op(name, tensors, dim):
    """cat/stack of sparse tensors, else the NotImplementedError being handled."""
    if not any(t.layout is not Tensor.layout for t in tensors):
        raise   # noqa: PLE0704  (called from an except block: re-raises its exception)
    from ..sparse import shape as sparse_shape  # (cycle: ember.sparse imports ops)
    return getattr(sparse_shape, name)(tensors, dim)


@defop("stack", save=())
def _stack(*arrays, dim):
    return array_module(*arrays).stack(arrays, axis=dim)


@_stack.defvjp
def _stack_vjp(ctx, g):
    dim = ctx.params["dim"]
    return tuple(select(g, dim, i) if e is not None else None
                 for i, e in enumerate(ctx.edges))


@export
def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._data.shape
    for i, t in enumerate(tensors):
        if t._data.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(t._data.shape)} at entry "
                               f"{i}")
    d = wrap_dim(dim, len(first) + 1)
    result = _common_dtype(tensors)
    try:
        arrays = [t._data if t.dtype is result else t._data.astype(result.np) for t in tensors]
        r = dispatch(_stack, tuple(tensors), {"dim": d}, result, arrays)
    except NotImplementedError:
        r = _sparse_list_op("stack", tensors, d)
    return r if out is None else write_out(r, out)


@export(method=False)
def hstack(tensors, *, out=None):
    tensors = atleast_1d(_non_empty(_tensor_list(tensors, "hstack"), "hstack"))
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1, out=out)


@export(method=False, aliases=("row_stack",))
def vstack(tensors, *, out=None):
    return cat(atleast_2d(_non_empty(_tensor_list(tensors, "vstack"), "vstack")), 0, out=out)


@export(method=False)
def dstack(tensors, *, out=None):
    return cat(atleast_3d(_non_empty(_tensor_list(tensors, "dstack"), "dstack")), 2, out=out)


@export(method=False)
def column_stack(tensors, *, out=None):
    tensors = _non_empty(_tensor_list(tensors, "column_stack"), "column_stack")
    cols = [reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in tensors]
    return cat(cols, 1, out=out)


def _non_empty(tensors, name):
    """torch's error for an empty list given to hstack, vstack, dstack, column_stack."""
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def _atleast(name, tensors, fn):
    if len(tensors) == 1:
        if isinstance(tensors[0], (list, tuple)):
            check_elements(tensors[0])
            return tuple(fn(t) for t in tensors[0])
        if not isinstance(tensors[0], Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type_name(tensors[0])}), but expected one of:\n"
                            " * (Tensor input)\n * (tuple of Tensors tensors)")
        return fn(tensors[0])
    check_elements(tensors)
    return tuple(fn(t) for t in tensors)


def _at_least_1d(t):
    return reshape(t, (1,)) if t._data.ndim == 0 else t


def _at_least_2d(t):
    n = t._data.ndim
    return reshape(t, (1, 1)) if n == 0 else (t.unsqueeze(0) if n == 1 else t)


def _at_least_3d(t):
    n = t._data.ndim
    if n == 0:
        return reshape(t, (1, 1, 1))
    if n == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if n == 2 else t


@export(method=False)
def atleast_1d(*tensors):
    return _atleast("atleast_1d", tensors, _at_least_1d)


@export(method=False)
def atleast_2d(*tensors):
    return _atleast("atleast_2d", tensors, _at_least_2d)


@export(method=False)
def atleast_3d(*tensors):
    return _atleast("atleast_3d", tensors, _at_least_3d)


# ---------------------------------------------------------------------- flip / roll / rot90
@defop("flip", save=())
def _flip(a, dims):
    xp = array_module(a)
    return xp.ascontiguousarray(xp.flip(a, axis=dims)) if dims else a.copy()


@_flip.defvjp
def _flip_vjp(ctx, g):
    return dispatch(_flip, (g,), ctx.params)


@export
def flip(input, *dims):
    check_tensor("flip", input)
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = dims[0]
    n = input._data.ndim
    ds = distinct_dims(dims, n)
    return dispatch(_flip, (input,), {"dims": ds if n else ()})


@export
def fliplr(input):
    check_tensor("fliplr", input)
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@export
def flipud(input):
    check_tensor("flipud", input)
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@defop("roll", save=())
def _roll(a, shifts, dims):
    xp = array_module(a)
    if dims is None:
        return xp.roll(a.reshape(-1), shifts).reshape(a.shape)
    return xp.roll(a, shifts, axis=dims)


@_roll.defvjp
def _roll_vjp(ctx, g):
    p = ctx.params
    return dispatch(_roll, (g,), {"shifts": tuple(-s for s in p["shifts"])
                                  if isinstance(p["shifts"], tuple) else -p["shifts"],
                                  "dims": p["dims"]})


@export
def roll(input, shifts, dims=None):
    if isinstance(shifts, (list, tuple)) and not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if isinstance(shifts, (list, tuple)):
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                                   "dims:0")
            shifts = shifts[0]
        return dispatch(_roll, (input,), {"shifts": builtins.int(shifts), "dims": None})
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else (shifts,)
    dims = tuple(dims) if isinstance(dims, (list, tuple)) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    n = input._data.ndim
    if input._data.size == 0:   # (PyTorch's kernel returns a copy before reading the dims)
        return dispatch(_roll, (input,), {"shifts": 0, "dims": None})
    dims = tuple(wrap_dim(d, n) for d in dims)
    if n == 0:
        return dispatch(_roll, (input,), {"shifts": 0, "dims": None})
    return dispatch(_roll, (input,), {"shifts": tuple(builtins.int(s) for s in shifts),
                                      "dims": dims})


@defop("rot90", save=())
def _rot90(a, k, dims):
    return array_module(a).ascontiguousarray(array_module(a).rot90(a, k, axes=dims))


@_rot90.defvjp
def _rot90_vjp(ctx, g):
    return dispatch(_rot90, (g,), {"k": -ctx.params["k"], "dims": ctx.params["dims"]})


@export
def rot90(input, k=1, dims=(0, 1)):
    check_tensor("rot90", input)
    dims = list(dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n), wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return dispatch(_rot90, (input,), {"k": k % 4, "dims": (d0, d1)})


# ---------------------------------------------------------------------- repeat / tile
@defop("repeat", save=())
def _repeat(a, reps):
    xp = array_module(a)
    lead = len(reps) - a.ndim
    return xp.tile(a.reshape((1,) * lead + a.shape), reps)


@_repeat.defvjp
def _repeat_vjp(ctx, g):
    reps = ctx.params["reps"]
    shape = ctx.in_meta[0][0]
    full = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split_shape = []
    for r, s in zip(reps, full):
        split_shape += [r, s]
    summed = g.reshape(split_shape).sum(tuple(range(0, 2 * len(reps), 2)))
    return summed.reshape(shape)


@export(function=False)
def repeat(self, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], Size):
        sizes = tuple(sizes[0])
    sizes = shape_arg(sizes, "repeat", "repeats")
    if len(sizes) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(sizes) - self._data.ndim) + tuple(self._data.shape)
    target = [r * s for r, s in zip(sizes, shape)]
    for n in target:   # (torch checks the result's sizes: -3 repeats of an empty dim are 0)
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{target}")
    return dispatch(_repeat, (self,), {"reps": tuple(max(r, 0) for r in sizes)})


@export
def tile(input, dims, *more):
    # Tensor.tile(2, 3) takes the dims unpacked, torch.tile(t, (2, 3)) as one sequence
    dims = shape_arg((dims,) if isinstance(dims, (list, tuple)) else (dims,) + more, "tile",
                     "dims")
    if len(dims) < input._data.ndim:
        dims = (1,) * (input._data.ndim - len(dims)) + dims
    return repeat(input, dims)


@export
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    check_tensor("repeat_interleave", input)
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        counts = input
        if counts.dtype not in (dt.int32, dt.int64):   # torch's kernel: int32/int64 only
            raise NotImplementedError("\"repeat_interleave_cpu\" not implemented for "
                                      f"'{dt.type_name(counts.dtype)}'")
        if counts._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats(counts._data)
        xp = array_module(counts._data)
        n = counts._data
        return _wrap(xp.repeat(xp.arange(n.shape[0], dtype=counts.dtype.np), n), counts.dtype,
                     counts._device)
    if dim is None:
        input = reshape(input, (-1,))
        d = 0
    else:
        d = wrap_dim(dim, input._data.ndim)
    if isinstance(repeats, Tensor) and repeats._data.ndim == 0:
        repeats = repeats.item()
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        if input._data.ndim == 0:
            input = reshape(input, (1,))
        shape = input._data.shape
        expanded = expand(input.unsqueeze(d + 1), shape[:d + 1] + (repeats,) + shape[d + 1:])
        # NOTE: always new memory, as PyTorch's (reshape alone may return a view of input).
        return reshape(clone(expanded), shape[:d] + (shape[d] * repeats,) + shape[d + 1:])
    size = input._data.shape[d] if input._data.ndim else 1
    r = repeats._data.reshape(-1)
    if repeats.dtype.category != dt.INTEGER:
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{dt.type_name(repeats.dtype)}'")
    if r.shape[0] != size and r.shape[0] != 1:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.shape[0]} and input.size(0) = {size}")
    _check_repeats(r)
    xp = array_module(r)
    index = xp.repeat(xp.arange(size, dtype=np.int64), xp.broadcast_to(r, (size,)))
    return index_select(input, d, _wrap(index, dt.int64, input._device))


def _check_repeats(r):
    if r.size and builtins.bool((r < 0).any()):
        raise RuntimeError("repeats can not be negative")
