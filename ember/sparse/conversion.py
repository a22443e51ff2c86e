"""Dense <-> sparse conversions, and the sparse methods every Tensor has (a dense tensor
answers them as PyTorch's strided tensors do: sparse_dim() is 0, indices() raises)."""
import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from ..backends import array_module
from ..ops.registry import defop
from ._graph import record
from .compressed import BLOCK_LAYOUTS, LAYOUT_NAMES
from .constructors import to_compressed
from .coo import make_coo
from .ops import sparse_mask

__all__ = ["to_sparse", "dense_to_coo", "install_dense_methods"]


@defop("to_sparse", node="ToSparseBackward0", save=())
def _to_sparse(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_to_sparse.defvjp
def _to_sparse_vjp(ctx, g):
    return g.to_dense() if g.layout is not _constants.strided else g


def dense_to_coo(x, sparse_dim=None):
    """The coalesced COO form of a dense tensor: coordinates of the nonzero entries (of the
    nonzero slices over the first `sparse_dim` dims, for a hybrid tensor)."""
    n = x.dim()
    sd = n if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, "
                           f"but {sd} is given")
    a = x._data
    xp = array_module(a)
    if n == 0:   # (a 0-d tensor: one entry with no coordinates)
        out = make_coo(_wrap(xp.zeros((0, 1), np.int64), dt.int64, x._device),
                       _wrap(a.reshape(1), x.dtype, x._device), (), True)
        return record(_to_sparse, (x,), out)
    if sd == 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                           "self.dim()>0")
    lead = a.reshape(a.shape[:sd] + (-1,)) if sd < n else a
    nonzero = lead != 0 if sd == n else (lead != 0).any(axis=-1)
    idx = xp.stack(xp.nonzero(nonzero)).astype(np.int64).reshape(sd, -1)
    values = a[tuple(idx)]
    out = make_coo(_wrap(idx, dt.int64, x._device), _wrap(values, x.dtype, x._device),
                   x.shape, True)
    return record(_to_sparse, (x,), out)


def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse(sparse_dim) or to_sparse(layout=..., blocksize=..., dense_dim=...)."""
    sparse_dim = args[0] if args else None
    if layout is None or layout is _constants.sparse_coo:
        if self.is_sparse:
            if sparse_dim is not None and sparse_dim != self.sparse_dim():
                raise RuntimeError("to_sparse: conversion from Sparse to Sparse with "
                                   "sparse_dim argument !=self.sparse_dim() is not supported")
            return self
        if self.layout is not _constants.strided:   # (a compressed tensor)
            if sparse_dim not in (None, 2):
                raise RuntimeError(f"sparse_compressed_to_sparse: conversion from "
                                   f"{_layout_name(self)} to Sparse with sparse_dim argument "
                                   "!=2 is not supported")
            return self.to_sparse_coo()
        return dense_to_coo(self, sparse_dim)
    if layout is _constants.strided:
        raise RuntimeError("to_sparse: expected a sparse layout, got Strided")
    given = "with" if layout not in BLOCK_LAYOUTS else "without"
    if (blocksize is None) == (layout in BLOCK_LAYOUTS):
        raise RuntimeError(f"dense_to_sparse: conversion from {_layout_name(self)} to "
                           f"{LAYOUT_NAMES[layout]} {given} blocksize argument given is not "
                           "supported")
    return to_compressed(self, layout, blocksize, dense_dim)


def _layout_name(t):
    return LAYOUT_NAMES[t.layout]


def _expects(name, kind):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {kind} layout but got {_layout_name(self)}")
    method.__name__ = name
    return method


def _dense_nnz(self):
    raise NotImplementedError("Could not run 'aten::_nnz' with arguments from the 'CPU' "
                              "backend: it is defined for sparse tensors only")


def _to_compressed(layout, blocked):
    def method(self, *args, **kwargs):
        if blocked:
            return to_compressed(self, layout, *args, **kwargs)
        return to_compressed(self, layout, None, *args, **kwargs)
    method.__name__ = f"to_{str(layout).split('.')[-1]}"
    return method


def _to_dense(self, dtype=None, *, masked_grad=None):
    return self if dtype is None or dtype is self.dtype else self.to(dtype)


def _sparse_mask(self, mask):
    return sparse_mask(self, mask)


_COO = "sparse coordinate tensor"
_ROW = "sparse row compressed tensor"
_COLUMN = "sparse column compressed tensor"

DENSE_METHODS = {
    "to_sparse": to_sparse,
    "to_sparse_coo": lambda self: to_sparse(self),
    "to_sparse_csr": _to_compressed(_constants.sparse_csr, False),
    "to_sparse_csc": _to_compressed(_constants.sparse_csc, False),
    "to_sparse_bsr": _to_compressed(_constants.sparse_bsr, True),
    "to_sparse_bsc": _to_compressed(_constants.sparse_bsc, True),
    "to_dense": _to_dense,
    "sparse_mask": _sparse_mask,
    "sparse_dim": lambda self: 0,
    "dense_dim": lambda self: self._data.ndim,
    "_nnz": _dense_nnz,
    "indices": _expects("indices", _COO),
    "_indices": _expects("_indices", _COO),
    "coalesce": _expects("coalesce", _COO),
    "values": _expects("values", "sparse tensor"),
    "_values": _expects("_values", "sparse tensor"),
    "crow_indices": _expects("crow_indices", _ROW),
    "col_indices": _expects("col_indices", _ROW),
    "ccol_indices": _expects("ccol_indices", _COLUMN),
    "row_indices": _expects("row_indices", _COLUMN),
}


def install_dense_methods():
    for name, fn in DENSE_METHODS.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)
