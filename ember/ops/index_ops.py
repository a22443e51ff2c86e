"""Index-vector ops along one dim: index_select, index_add, index_copy, index_fill, and
take_along_dim (a broadcasting gather); unravel_index (flat indices to coordinates)."""
import builtins
import collections.abc
import math

from .. import _dtype as dt
from .._scalars import type_name
from .._creation import tensor
from .._data import check_fill
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module, numpy_backend
from ._dims import wrap_dim
from .conversion import cast
from .registry import METHODS, defop, dispatch, export
from .scatter import _INDEX, _check_bounds, _fill_inplace, gather


# ---------------------------------------------------------------------- index_* along a dim
def _dim_key(dim, index):
    return (slice(None),) * dim + (index,)


def _vector_index(index, name, kind="add"):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not "
                        f"{type_name(index)}")
    if index._data.ndim > 1:   # (PyTorch checks the rank before the dtype)
        if kind == "select":
            raise IndexError(f"{name}(): Index is supposed to be a vector")
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {dt.type_name(index.dtype)} and size: "
                         f"{list(index._data.shape)}")
    if index.dtype not in _INDEX:
        if kind == "select":
            raise RuntimeError(f"{name}(): Expected dtype int32 or int64 for index")
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{dt.type_name(index.dtype)}")
    return index._data.reshape(-1)


def _check_source(input, d, index, source, name):
    shape, sshape = input._data.shape, source._data.shape
    n = index.shape[0]
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{name}(): self ({dt.type_name(input.dtype)}) and source "
                           f"({dt.type_name(source.dtype)}) must have the same scalar type")
    if d and d >= len(sshape):
        raise RuntimeError(f"{name}(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {len(sshape)}")
    ssize = sshape[d] if sshape else 1
    if n != ssize:
        raise RuntimeError(f"{name}(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ssize}), for dim: {d}")
    # (torch drops dim from each non-empty shape: a 0-d source fits only a 0-d or 1-d self)
    if tuple(s for k, s in enumerate(sshape) if k != d) != \
            tuple(s for k, s in enumerate(shape) if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(shape)} "
                           f"source.shape = {list(sshape)}")


def _target(a, src, index, dim):
    """A copy of `a`, the array and key to write at `index` along `dim`, and `src` shaped
    for that key (a 0-dim tensor is written through a 1-element view)."""
    out = a.copy()
    if a.ndim == 0:
        if hasattr(src, "reshape"):
            src = src.reshape(-1)
        return out, out.reshape(1), (index.reshape(-1),), src
    return out, out, _dim_key(dim, index), src


@defop("index_select", save=())
def _index_select(a, index, dim):
    xp = array_module(a)
    if a.ndim == 0:
        return a.reshape(1)[index].reshape(index.shape[:0] if index.ndim == 0 else (-1,))
    return xp.take(a, index, axis=dim)


@_index_select.defvjp
def _index_select_vjp(ctx, g):
    p = ctx.params
    return dispatch(_index_add, (g.new_zeros(ctx.in_meta[0][0]), g),
                    {"index": p["index"], "dim": p["dim"], "alpha": 1})


@export
def index_select(input, dim, index, *, out=None):
    d = wrap_dim(dim, input._data.ndim)   # (torch wraps the dim before it checks the index)
    idx = _vector_index(index, "index_select", "select")
    if input._data.ndim == 0 and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{idx.size} value(s)")
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    if input._data.ndim == 0:
        idx = index._data
    r = dispatch(_index_select, (input,), {"index": idx, "dim": d})
    return r if out is None else write_out(r, out)


@defop("index_add", save=())
def _index_add(a, src, index, dim, alpha):
    out, target, key, src = _target(a, src, index, dim)
    numpy_backend.scatter_add(target, key, src if alpha == 1 else src * alpha)
    return out


@_index_add.defvjp
def _index_add_vjp(ctx, g):
    p = ctx.params
    gs = None
    if ctx.edges[1] is not None:
        gs = dispatch(_index_select, (g,), {"index": p["index"], "dim": p["dim"]})
        if p["alpha"] != 1:
            gs = gs * p["alpha"]
        gs = gs.reshape(ctx.in_meta[0][1])
    return g, gs


def _dim_prepare(input, dim, index, source, name, kind="add"):
    d = wrap_dim(dim, input._data.ndim)
    idx = _vector_index(index, name, kind)
    if source is not None:
        _check_source(input, d, idx, source, name)
    size = input._data.shape[d] if input._data.ndim else 1
    _check_bounds(idx, size, d)
    return d, idx


@export
def index_add(input, dim, index, source, *, alpha=1, out=None):
    d, idx = _dim_prepare(input, dim, index, source, "index_add_")
    r = dispatch(_index_add, (input, source), {"index": idx, "dim": d, "alpha": alpha})
    return r if out is None else write_out(r, out)


@defop("index_copy", save=())
def _index_copy(a, src, index, dim):
    out, target, key, src = _target(a, src, index, dim)
    target[key] = src
    return out


def _overwritten_input_grad(ctx, g):
    """The input's gradient through an op that overwrites the indexed slices: `g` with those
    slices zeroed (None when the input needs none)."""
    return dispatch(_index_fill, (g, 0), ctx.params) if ctx.edges[0] is not None else None


@_index_copy.defvjp
def _index_copy_vjp(ctx, g):
    ga, gs = _overwritten_input_grad(ctx, g), None
    if ctx.edges[1] is not None:
        gs = dispatch(_index_select, (g,), ctx.params).reshape(ctx.in_meta[0][1])
    return ga, gs


@export
def index_copy(input, dim, index, source):
    # NOTE: PyTorch's order: the dim, the index's rank, the index count against a 0-d source
    # or the ranks, the dtypes, the slice shapes, then the index count against the source.
    d = wrap_dim(dim, input._data.ndim)
    if not input._data.ndim:
        d = 0   # (a 0-d tensor's dim -1 wraps to 0 in PyTorch)
    shape, sshape = input._data.shape, source._data.shape
    if index._data.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._data.ndim})")
    n = index._data.size
    if not sshape and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one "
                         f"element (got {n})")
    if sshape and shape and len(sshape) != len(shape):
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({len(sshape)}), "
                         f"destination dimensionality ({len(shape)})")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{dt.type_name(index.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {dt.type_name(input.dtype)} and (source) "
                           f"{dt.type_name(source.dtype)}")
    sliced = [list(s[:d] + s[d + 1:]) for s in (shape, sshape)]
    if sliced[0] != sliced[1]:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {sliced[0]} at dimension {d} and "
                           f"source slice shape: {sliced[1]} at dimension 0.")
    if sshape and n != sshape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({sshape[d]})")
    idx = index._data.reshape(-1)
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(f"index_copy_(): index {builtins.int(bad)} is out of bounds for "
                         f"dimension {d} with size {size}")
    return dispatch(_index_copy, (input, source), {"index": idx, "dim": d})


@defop("index_fill", save=())
def _index_fill(a, value, index, dim):
    out, target, key, _ = _target(a, None, index, dim)
    target[key] = value
    return out


@_index_fill.defvjp
def _index_fill_vjp(ctx, g):
    ga, gv = _overwritten_input_grad(ctx, g), None
    if ctx.edges[1] is not None:
        # NOTE: summed over the filled positions once each, however often an index repeats.
        gv = (g - dispatch(_index_fill, (g, 0), ctx.params)).sum()
    return ga, gv


@export
def index_fill(input, dim, index, value):
    # NOTE: PyTorch's order: a tensor value's rank, the dim, then the index's dtype and rank
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    d = wrap_dim(dim, input._data.ndim)
    if index.dtype is not dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if isinstance(value, Tensor):
        value = cast(value, input.dtype)
    else:
        value = check_fill(value, input.dtype, 2)   # (PyTorch's checked Scalar conversion)
    idx = index._data.reshape(-1)
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise IndexError(f"index {builtins.int(bad)} is out of bounds for dimension {d} with "
                         f"size {size}")
    return dispatch(_index_fill, (input, value), {"index": idx, "dim": d})


@export
def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        # NOTE: torch's flat form is a plain gather: int32 indices, no check of an empty
        # index, and a negative one is out of bounds
        r = gather(input.reshape(-1), 0, indices.reshape(-1))
        return r if out is None else write_out(r, out)
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dt.type_name(indices.dtype)}")
    n, m = input._data.ndim, indices._data.ndim
    if n != m:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {n} dimensions for input, and {m} "
                           "dimensions for indices")
    d = wrap_dim(dim, n)
    from .grids import broadcast_shapes  # (cycle: grids imports this module)
    ishape, xshape = list(input._data.shape), list(indices._data.shape)
    ishape[d] = xshape[d] = 1
    common = list(broadcast_shapes(ishape, xshape))
    indices = _wrap_negative(indices, input._data.shape[d])
    r = gather(input.expand(common[:d] + [input._data.shape[d]] + common[d + 1:]), d,
               indices.expand(common[:d] + [indices._data.shape[d]] + common[d + 1:]))
    return r if out is None else write_out(r, out)


def _wrap_negative(indices, size):
    """take_along_dim along a dim accepts negative indices (gather does not)."""
    a = indices._data
    if a.size and a.min() < 0:
        a = array_module(a).where(a < 0, a + size, a)
        return _wrap(a, indices.dtype, indices._device)
    return indices


METHODS.update({
    "index_add_": _fill_inplace(index_add),
    "index_copy_": _fill_inplace(index_copy),
    "index_fill_": _fill_inplace(index_fill),
})


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

