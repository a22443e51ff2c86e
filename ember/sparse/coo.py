"""Sparse COO tensors: coordinates (sparse_dim x nnz int64) and values (nnz x dense dims).

`SparseCooTensor` is a Tensor subclass (isinstance works; autograd sees it like any tensor)
whose `_data` is a `NoElements` stand-in of the dense shape: the numbers live in
`_sparse_indices` and `_sparse_values`. Construction, coalescing, densifying and the repr are
here; products, reductions and arithmetic in ops.py.
"""
import copy
import functools

import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._creation import as_tensor, zeros
from .._device import placement
from .._tensor import Tensor, _wrap, wrap_as
from ..backends import array_module
from .._signatures import Parser
from ..ops.registry import defop
from ._graph import record, values_at
from ._no_elements import NoElements, unsupported
from ._printing import sparse_repr

__all__ = ["SparseCooTensor", "make_coo", "sparse_coo_tensor", "coalesce", "to_dense"]


class SparseCooTensor(Tensor):
    """A tensor of layout sparse_coo (see the module docstring)."""

    __slots__ = ("_sparse_indices", "_sparse_values", "_coalesced")
    is_sparse = True
    layout = _constants.sparse_coo

    def __new__(cls, *args, **kwargs):
        raise TypeError("construct sparse COO tensors with ember.sparse_coo_tensor")

    # ------------------------------------------------------------------ structure
    def sparse_dim(self):
        return self._sparse_indices._data.shape[0]

    def dense_dim(self):
        return self._sparse_values._data.ndim - 1

    def _nnz(self):
        return self._sparse_values._data.shape[0]

    def is_coalesced(self):
        return self._coalesced

    def _coalesced_(self, coalesced):
        self._coalesced = bool(coalesced)
        return self

    def _indices(self):
        return self._sparse_indices

    def _values(self):
        return self._sparse_values

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._sparse_indices

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        if self._requires_grad:   # (differentiable, ValuesBackward0; _values() is not)
            from .pointwise import values_of  # (cycle: pointwise imports this module)
            return values_of(self)
        return self._sparse_values

    def coalesce(self):
        return coalesce(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = to_dense(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        from .conversion import to_sparse  # (cycle: conversion imports this module)
        return to_sparse(self, *args, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def to_sparse_coo(self):
        return self

    def to_sparse_csr(self, dense_dim=None):
        from .csr import coo_to_csr  # (cycle: csr imports this module)
        return coo_to_csr(self)

    # ------------------------------------------------------------------ conversions
    def detach(self):
        return make_coo(self._sparse_indices, self._sparse_values.detach(), self.shape,
                        self._coalesced)

    def clone(self, *, memory_format=None):
        out = make_coo(self._sparse_indices.clone(), self._sparse_values.detach().clone(),
                       self.shape, self._coalesced)
        return record(_clone, (self,), out)

    def to(self, *args, **kwargs):
        values = self._sparse_values.detach().to(*args, **kwargs)
        if values._data is self._sparse_values._data and values.dtype is self.dtype and \
                values._device == self._device:
            return self
        out = make_coo(self._sparse_indices.to(values.device), values, self.shape,
                       self._coalesced)
        return record(_to_copy, (self,), out, {"dtype": self.dtype, "device": self._device})

    def double(self):
        return self.to(dt.float64)

    def float(self):
        return self.to(dt.float32)

    def half(self):
        return self.to(dt.float16)

    def bfloat16(self):
        return self.to(dt.bfloat16)

    def int(self):
        return self.to(dt.int32)

    def long(self):
        return self.to(dt.int64)

    def short(self):
        return self.to(dt.int16)

    def char(self):
        return self.to(dt.int8)

    def byte(self):
        return self.to(dt.uint8)

    def bool(self):
        return self.to(dt.bool)

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    data_ptr = tolist

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               "to Scalar")
        return self.to_dense().item()

    def view(self, *shape):
        raise unsupported("aten::view", self._data.backend)

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def __repr__(self, *, tensor_contents=None):
        return sparse_repr(self, (("indices", self._sparse_indices),
                                  ("values", self._sparse_values)), force_newline=True)

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self._sparse_indices, self._sparse_values, tuple(self.shape),
                           self._coalesced, self._requires_grad))

    def __deepcopy__(self, memo):
        new = make_coo(copy.deepcopy(self._sparse_indices, memo),
                       copy.deepcopy(self._sparse_values.detach(), memo), self.shape,
                       self._coalesced)
        new._requires_grad = self._requires_grad
        return new


def _rebuild(indices, values, size, coalesced, requires_grad):
    t = make_coo(indices, values, size, coalesced)
    t._requires_grad = requires_grad
    return t


def make_coo(indices, values, size, coalesced=False, values_grad=False):
    """A SparseCooTensor around `indices` and `values` (no checks, no copy). With
    `values_grad` it joins the graph through the values (SparseCooTensorWithDims...)."""
    device = values._device
    layout = "SparseCPU" if device.type == "cpu" else "SparseCUDA"
    t = wrap_as(NoElements(size, values.dtype.np, layout), values.dtype, device,
                SparseCooTensor)
    t._sparse_indices = indices
    t._sparse_values = values
    t._coalesced = coalesced
    if values_grad:
        record(_sparse_coo, (values,), t, {"indices": indices})
    return t


@defop("sparse_clone", node="CloneBackward0", save=())
def _clone(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_clone.defvjp
def _clone_vjp(ctx, g):
    return g


@defop("sparse_to_copy", node="ToCopyBackward0", save=())
def _to_copy(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_to_copy.defvjp
def _to_copy_vjp(ctx, g):
    p = ctx.params   # (the gradient goes back to the input's dtype and device)
    return g.to(dtype=p["dtype"], device=p["device"])


# ---------------------------------------------------------------------- construction
@defop("sparse_coo_tensor", node="SparseCooTensorWithDimsAndTensorsBackward0", save=())
def _sparse_coo(values, indices):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_sparse_coo.defvjp
def _sparse_coo_vjp(ctx, g):
    return values_at(g, ctx.params["indices"])


_OPTIONS = ("*, torch.dtype? dtype = None, torch.device? device = None, bool pin_memory = "
            "False, bool requires_grad = False, bool? check_invariants = None, bool? "
            "is_coalesced = None")
_PARSER = Parser("sparse_coo_tensor", (
    f"object? indices, object? values, {_OPTIONS}",
    f"object? indices, object? values, tuple of ints size, {_OPTIONS}",
    "tuple of ints size, *, torch.dtype? dtype = None, torch.device? device = None, bool "
    "requires_grad = False, bool? check_invariants = None"))


def _parsed(fn):
    """sparse_coo_tensor behind PyTorch's argument parser, with its size-only overload."""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        _PARSER.check(args, kwargs)
        if len(args) == 1 and "values" not in kwargs:
            return _no_entries(*args, **kwargs)
        return fn(*args, **kwargs)
    return checked


def _no_entries(size, *, dtype=None, device=None, requires_grad=False,
                check_invariants=None):
    """sparse_coo_tensor(size): a tensor of that size without entries."""
    t = zeros_coo(size, dtype or dt.get_default_dtype(), placement(device))
    return t.requires_grad_(True) if requires_grad else t


@_parsed
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """torch.sparse_coo_tensor: the tensor with `values` at the coordinates `indices`."""
    if isinstance(values, Tensor):
        if dtype is not None and dtype is not values.dtype:
            values = values.to(dtype)
    else:
        values = as_tensor(values, dtype=dtype)
    if device is not None:
        values = values.to(placement(device))
    # (PyTorch reads the indices as int64 data, not inferring their type)
    indices = indices.detach() if isinstance(indices, Tensor) else \
        as_tensor(indices, dtype=dt.int64)
    indices = indices.to(dtype=dt.int64, device=values.device)
    if indices.dim() != 2:
        if size is not None:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = "
                               f"{indices.shape[0] if indices.dim() else 1}, "
                               f"dense_dim = {max(values.dim() - 1, 0)}")
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1)   # (PyTorch accepts one scalar value for one coordinate)
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    idx = indices._data
    if size is None:
        top = idx.max(axis=1) + 1 if nnz else np.zeros(sparse_dim, np.int64)
        size = tuple(int(s) for s in top) + tuple(values.shape[1:])
    else:
        size = tuple(int(s) for s in size)
        if len(size) != sparse_dim + values.dim() - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {values.dim() - 1}")
        if tuple(values.shape[1:]) != size[sparse_dim:]:
            raise RuntimeError(f"values has incorrect size, expected "
                               f"{list((nnz,) + size[sparse_dim:])}, got "
                               f"{list(values.shape)}")
    _check_bounds(idx, size)
    # (PyTorch: at most one entry is coalesced; otherwise only when the caller says so)
    t = make_coo(indices, values, size, bool(is_coalesced) or nnz <= 1, values_grad=True)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_bounds(idx, size):
    """PyTorch checks coordinates only with check_invariants; ember always does, because its
    kernels index arrays with them (an out-of-range coordinate would be a NumPy error)."""
    if not idx.shape[1]:
        return
    low, high = idx.min(axis=1), idx.max(axis=1)
    for d in range(idx.shape[0]):
        if int(low[d]) < 0:
            raise RuntimeError(f"found negative index {int(low[d])} for dim {d}")
        if int(high[d]) >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {int(high[d])}")


# ---------------------------------------------------------------------- coalesce
def linear_index(idx, sparse_shape):
    """One int64 key per coordinate column, in row-major order of the sparse dims."""
    xp = array_module(idx)
    key = xp.zeros(idx.shape[1], dtype=np.int64)
    for d, n in enumerate(sparse_shape):
        key = key * n + idx[d]
    return key


def coalesced_arrays(idx, vals, sparse_shape):
    """(indices, values) with coordinates sorted and duplicates summed."""
    xp = array_module(idx, vals)
    key = linear_index(idx, sparse_shape)
    uniq, first, inverse = xp.unique(key, return_index=True, return_inverse=True)
    out = xp.zeros((uniq.shape[0],) + vals.shape[1:], dtype=vals.dtype)
    xp.add.at(out, inverse.reshape(-1), vals)
    return idx[:, first], out


@defop("coalesce", node="CoalesceBackward0", save=())
def _coalesce(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_coalesce.defvjp
def _coalesce_vjp(ctx, g):
    return g   # (coalescing does not change the tensor it stands for)


def coalesce(x):
    if x._coalesced:
        return x
    values = x._sparse_values
    idx, vals = coalesced_arrays(x._sparse_indices._data, values._data,
                                 x.shape[:x.sparse_dim()])
    out = make_coo(_wrap(idx, dt.int64, x._device), _wrap(vals, values.dtype, x._device),
                   x.shape, True)
    return record(_coalesce, (x,), out)


# ---------------------------------------------------------------------- to_dense
@defop("to_dense", node="ToDenseBackward0", save=(0,))
def _to_dense(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_to_dense.defvjp
def _to_dense_vjp(ctx, g):
    from .ops import sparse_mask  # (cycle: ops imports this module)
    return sparse_mask(g, ctx.inputs[0])


def dense_array(x):
    """The dense array of a COO tensor (duplicates summed)."""
    idx, vals = x._sparse_indices._data, x._sparse_values._data
    xp = array_module(idx, vals)
    sd = idx.shape[0]
    sparse_shape = x.shape[:sd]
    flat = xp.zeros((int(np.prod(sparse_shape, dtype=np.int64)),) + vals.shape[1:],
                    dtype=vals.dtype)
    xp.add.at(flat, linear_index(idx, sparse_shape), vals)
    return flat.reshape(tuple(x.shape))


def to_dense(x):
    out = _wrap(dense_array(x), x.dtype, x._device)
    return record(_to_dense, (x,), out)


# ---------------------------------------------------------------------- empty tensors
def zeros_coo(size, dtype, device, sparse_dim=None):
    """A sparse tensor with no entries: `sparse_dim` (all dims by default) coordinate rows."""
    size = tuple(size)
    sd = len(size) if sparse_dim is None else sparse_dim
    indices = zeros((sd, 0), dtype=dt.int64, device=device)
    values = zeros((0,) + size[sd:], dtype=dtype, device=device)
    return make_coo(indices, values, size, True)


def sparse_like(name, input, dtype, device, requires_grad, value):
    """zeros_like / empty_like of a sparse tensor: no entries, its sparse and dense dims;
    a nonzero fill is PyTorch's refusal."""
    if value not in (0, None) or input.layout is not _constants.sparse_coo:
        raise unsupported("aten::fill_.Scalar", input._data.backend)
    out = zeros_coo(input.shape, dtype or input.dtype,
                    device if device is not None else input._device, input.sparse_dim())
    return out.requires_grad_(True) if requires_grad else out


def spdiags(diagonals, offsets, shape, layout=None):
    """torch.sparse.spdiags: row k of `diagonals` on the diagonal offsets[k], each value taken
    from its column (as SciPy's dia format); a COO result (or CSR with layout=)."""
    if diagonals.dim() != 2 or offsets.dim() != 1:
        raise RuntimeError("spdiags: expected 2-D diagonals and 1-D offsets")
    if diagonals.shape[0] != offsets.shape[0]:
        raise RuntimeError("Number of diagonals (" + str(diagonals.shape[0]) + ") does not match "
                           "the number of offsets (" + str(offsets.shape[0]) + ")")
    rows_n, cols_n = (int(s) for s in shape)
    xp = array_module(diagonals._data)
    coords, picks = [], []
    for k, o in enumerate(int(v) for v in offsets._data):
        first, last = max(0, o), min(cols_n, rows_n + o, diagonals.shape[1])
        cols = xp.arange(first, max(first, last), dtype=np.int64)
        coords.append(xp.stack([cols - o, cols]))
        picks.append(k * diagonals.shape[1] + cols)
    idx = xp.concatenate(coords, axis=1) if coords else xp.zeros((2, 0), np.int64)
    where = _wrap(xp.concatenate(picks) if picks else xp.zeros(0, np.int64), dt.int64,
                  diagonals._device)
    values = diagonals.reshape(-1).index_select(0, where)
    out = make_coo(_wrap(idx, dt.int64, diagonals._device), values, (rows_n, cols_n),
                   idx.shape[1] <= 1, values_grad=True)
    if layout is None or layout is _constants.sparse_coo:
        return out
    if layout is _constants.sparse_csr:
        return out.to_sparse_csr()
    raise NotImplementedError(f"ember does not support the {str(layout).split('.')[-1]} "
                              "layout yet (only sparse_coo and sparse_csr)")
