"""Indexing and shape ops of sparse COO tensors: select and integer indexing, index_select,
unsqueeze, permute. Each moves coordinates (the values are kept, in PyTorch's entry order) and
records one node whose VJP is the op's adjoint on the dense gradient, masked to the input's
entries (PyTorch's sparse gradient layout)."""
import numbers

import numpy as np

from .. import _dtype as dt
from .._creation import zeros
from .._tensor import Tensor, _wrap
from ..ops.registry import defop
from ._graph import record
from .coo import make_coo
from .ops import sparse_mask

__all__ = ["select", "index_select", "unsqueeze", "permute", "getitem", "cat", "stack"]


@defop("sparse_reshape", node="SelectBackward0", save=(0,))
def _moved(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_moved.defvjp
def _moved_vjp(ctx, g):
    x = ctx.inputs[0]
    dense = g.to_dense() if g.layout is not Tensor.layout else g
    return sparse_mask(ctx.params["adjoint"](dense), x)


def _record(name, x, out, adjoint):
    return record(_moved.renamed(name), (x,), out, {"adjoint": adjoint})


def _result(x, idx, values, shape):
    """A sparse result (coalesced when it has at most one entry, as PyTorch marks it)."""
    return make_coo(_wrap(idx, dt.int64, x._device), values, tuple(shape),
                    idx.shape[1] <= 1)


def _dim(x, dim):
    n = x.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                         f"{n - 1}], but got {dim})")
    return dim % n


def select(x, dim, index, *, indexing=False):
    dim = _dim(x, dim)
    size = x.shape[dim]
    if not -size <= index < size:
        if indexing:   # (x[i]'s words differ from x.select's)
            raise IndexError(f"index {index} is out of bounds for dimension {dim} with size "
                             f"{size}")
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"[{', '.join(map(str, x.shape))}] at dimension {dim}")
    index %= size
    shape = list(x.shape)
    del shape[dim]
    sd = x.sparse_dim()
    values = x._sparse_values.detach()

    def adjoint(g):
        out = zeros(tuple(x.shape), dtype=g.dtype, device=g.device)
        at = _wrap(np.array([index], np.int64), dt.int64, g.device)
        return out.index_add(dim, at, g.unsqueeze(dim))

    if dim >= sd:   # a dense dim: the values' own select
        out = make_coo(x._sparse_indices, values.select(dim - sd + 1, index), shape,
                       x._coalesced)
        return _record("SelectBackward0", x, out, adjoint)
    idx = x._sparse_indices._data
    keep = idx[dim] == index
    picked = values._data[keep]
    if sd == 1:   # every sparse dim indexed: a dense result, repeated entries summed
        total = _wrap(np.asarray(picked.sum(axis=0)).astype(picked.dtype), x.dtype,
                      x._device)
        return _record("SelectBackward0", x, total, adjoint)
    out = _result(x, np.delete(idx[:, keep], dim, axis=0),
                  _wrap(picked, x.dtype, x._device), shape)
    return _record("SelectBackward0", x, out, adjoint)


def index_select(x, dim, index):
    dim = _dim(x, dim)
    if not isinstance(index, Tensor) or index.dim() > 1 or index.dtype not in (dt.int64,
                                                                                dt.int32):
        raise RuntimeError("index_select(): Expected a 1-D tensor of int64 or int32 indices")
    positions = index._data.reshape(-1).astype(np.int64)
    size = x.shape[dim]
    if positions.size and (positions.min() < -size or positions.max() >= size):
        raise IndexError("index out of range in self")
    positions = positions % size if size else positions
    sd = x.sparse_dim()
    shape = list(x.shape)
    shape[dim] = positions.size

    def adjoint(g):
        out = zeros(tuple(x.shape), dtype=g.dtype, device=g.device)
        return out.index_add(dim, _wrap(positions, dt.int64, g.device), g)

    values = x._sparse_values.detach()
    if dim >= sd:
        out = make_coo(x._sparse_indices, values.index_select(
            dim - sd + 1, _wrap(positions, dt.int64, x._device)), shape, x._coalesced)
        return _record("IndexSelectBackward0", x, out, adjoint)
    idx = x._sparse_indices._data
    # (PyTorch's order: by position in `index`, then by entry)
    columns, rows = [], []
    for k, r in enumerate(positions.tolist()):
        hit = np.nonzero(idx[dim] == r)[0]
        columns.append(hit)
        rows.append(np.full(hit.size, k, np.int64))
    take = np.concatenate(columns) if columns else np.zeros(0, np.int64)
    new_idx = idx[:, take].copy()
    new_idx[dim] = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    out = _result(x, new_idx, _wrap(values._data[take], x.dtype, x._device), shape)
    return _record("IndexSelectBackward0", x, out, adjoint)


def unsqueeze(x, dim):
    n = x.dim() + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                         f"{n - 1}], but got {dim})")
    dim %= n
    sd = x.sparse_dim()
    shape = list(x.shape)
    shape.insert(dim, 1)
    values = x._sparse_values.detach()
    if dim > sd:   # among the dense dims
        out = make_coo(x._sparse_indices, values.unsqueeze(dim - sd + 1), shape, x._coalesced)
    else:
        idx = np.insert(x._sparse_indices._data, dim, 0, axis=0)
        out = make_coo(_wrap(idx, dt.int64, x._device), values, shape,
                       idx.shape[1] <= 1)
    return _record("UnsqueezeBackward0", x, out, lambda g: g.squeeze(dim))


def permute(x, dims):
    dims = [_dim(x, d) for d in dims]
    if sorted(dims) != list(range(x.dim())):
        raise RuntimeError("permute(sparse_coo): dims must be a permutation of the tensor's "
                           "dimensions")
    sd = x.sparse_dim()
    if sorted(dims[:sd]) != list(range(sd)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed. Only transpositions within sparse "
                           "and dense dimensions are supported.")
    idx = x._sparse_indices._data[dims[:sd]]
    values = x._sparse_values.detach()
    if sd < x.dim():
        values = values.permute([0] + [d - sd + 1 for d in dims[sd:]])
    inverse = [dims.index(d) for d in range(len(dims))]
    out = make_coo(_wrap(idx, dt.int64, x._device), values,
                   [x.shape[d] for d in dims], idx.shape[1] <= 1)
    return _record("PermuteBackward0", x, out, lambda g: g.permute(inverse))


def getitem(x, key):
    """x[i], x[i, j], x[:, j]: integers and full slices only."""
    keys = key if isinstance(key, tuple) else (key,)
    out, dim = x, 0
    for k in keys:
        if isinstance(k, slice) and k == slice(None):
            dim += 1
        elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
            out = select(out, dim, int(k), indexing=True) if out.is_sparse else \
                out.select(dim, int(k))
        else:
            raise NotImplementedError("ember supports integer and ':' indices of sparse "
                                      f"tensors only (got {type(k).__name__})")
    return out


# ---------------------------------------------------------------------- cat, stack
@defop("sparse_cat", node="CatBackward0", save=None)
def _cat(*tensors):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_cat.defvjp
def _cat_vjp(ctx, g):
    dim, sizes = ctx.params["dim"], ctx.params["sizes"]
    dense = g.to_dense() if g.layout is not Tensor.layout else g
    grads, offset = [], 0
    for x, size, edge in zip(ctx.inputs, sizes, ctx.edges):
        if edge is not None:
            grads.append(sparse_mask(dense.narrow(dim, offset, size).contiguous(), x))
        else:
            grads.append(None)
        offset += size
    return tuple(grads)


def cat(tensors, dim=0):
    """torch.cat of sparse COO tensors along a sparse dim: coordinates shifted, entries
    concatenated in order (uncoalesced, as PyTorch's)."""
    for i, t in enumerate(tensors):
        if not (isinstance(t, Tensor) and t.is_sparse):
            raise RuntimeError("Concatenating sparse tensors, but a dense tensor was found at "
                               f"position {i}.")
    first = tensors[0]
    dim = _dim(first, dim)
    sd = first.sparse_dim()
    for i, t in enumerate(tensors):
        if t.sparse_dim() != sd or t.dense_dim() != first.dense_dim():
            raise RuntimeError("All tensors must have the same sparse_dim and dense_dim")
        if any(a != b for k, (a, b) in enumerate(zip(first.shape, t.shape)) if k != dim):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                               f"Expected size {first.shape} but got size {t.shape} for "
                               f"tensor number {i} in the list.")
    if dim >= sd:
        raise NotImplementedError("ember does not support concatenating sparse tensors along "
                                  "a dense dimension")
    result = dt.result_type(*tensors) if len(tensors) > 1 else first.dtype
    pieces, values, offset = [], [], 0
    for t in tensors:
        idx = t._sparse_indices._data.copy()
        idx[dim] += offset
        offset += t.shape[dim]
        pieces.append(idx)
        values.append(t._sparse_values._data.astype(result.np, copy=False))
    shape = list(first.shape)
    shape[dim] = offset
    out = _result(first, np.concatenate(pieces, axis=1),
                  _wrap(np.concatenate(values), result, first._device), shape)
    return record(_cat, tuple(tensors), out,
                  {"dim": dim, "sizes": [t.shape[dim] for t in tensors]})


def stack(tensors, dim=0):
    n = tensors[0].dim() + 1
    return cat([unsqueeze(t, dim) for t in tensors], dim % n if -n <= dim < n else dim)
