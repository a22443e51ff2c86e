"""Sparse CSR matrices: compressed row pointers, column indices and values, 2-D without batch
or dense dims (the other compressed tensors are compressed.py's; they convert and densify).

Each CSR op goes through the COO form of the same matrix (`csr_to_coo`, recorded in the
graph), so products and densifying reuse ops.py and coo.py and their gradients.
"""
import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._tensor import _wrap
from ..backends import array_module
from ..ops.registry import defop
from ._graph import record, values_at
from .compressed import SparseCompressedTensor, make_compressed, valid
from .coo import make_coo

__all__ = ["SparseCsrTensor", "dense_to_csr", "coo_to_csr", "csr_to_coo"]


class SparseCsrTensor(SparseCompressedTensor):
    """A 2-D tensor of layout sparse_csr without batch or dense dims."""

    __slots__ = ()

    def to_sparse_coo(self):
        return csr_to_coo(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = csr_to_coo(self).to_dense()
        return out if dtype is None else out.to(dtype)

    def mm(self, other):
        return csr_to_coo(self).mm(other)

    matmul = __matmul__ = mm

    def __rmatmul__(self, other):
        return other @ csr_to_coo(self)

    def detach(self):
        return make_csr(self._compressed, self._plain, self._cvalues.detach(), self.shape,
                        checked=self._checked)

    def add(self, other, *, alpha=1):
        """CSR + CSR -> CSR and dense + CSR -> dense, through the COO forms."""
        if other.layout is _constants.strided:
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        total = csr_to_coo(self).add(_as_coo(other), alpha=alpha)
        return coo_to_csr(total) if other.layout is _constants.sparse_csr else total

    __add__ = add

    def __radd__(self, other):
        return other + csr_to_coo(self)

    def to(self, *args, **kwargs):
        values = self._cvalues.to(*args, **kwargs)
        if values is self._cvalues:
            return self
        return make_csr(self._compressed.to(values.device), self._plain.to(values.device),
                        values, self.shape, values_grad=True, checked=self._checked)

    def double(self):
        return self.to(dt.float64)

    def float(self):
        return self.to(dt.float32)



def make_csr(crow, col, values, size, values_grad=False, checked=True):
    """A SparseCsrTensor (no checks, no copy); with `values_grad` it joins the graph through
    its values. `checked`: whether its invariants are known to hold (see compressed.py)."""
    t = make_compressed(_constants.sparse_csr, crow, col, values, size, SparseCsrTensor,
                        checked)
    if values_grad:
        record(_csr_from_values, (values,), t, {"indices": _coo_indices(crow._data, col._data)})
    return t


def _coo_indices(crow, col):
    xp = array_module(crow)
    rows = xp.repeat(xp.arange(crow.shape[0] - 1, dtype=np.int64), xp.diff(crow))
    return _wrap(xp.stack([rows, col.astype(np.int64)]), dt.int64)


@defop("sparse_csr_tensor", node="SparseCompressedTensorBackward0", save=())
def _csr_from_values(values):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_csr_from_values.defvjp
def _csr_from_values_vjp(ctx, g):
    if g.layout is _constants.sparse_csr:
        g = csr_to_coo(g)
    return values_at(g, ctx.params["indices"])


# ---------------------------------------------------------------------- conversions
@defop("csr_to_coo", node="ToSparseBackward0", save=())
def _csr_to_coo(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_csr_to_coo.defvjp
def _csr_to_coo_vjp(ctx, g):
    # (a sparse gradient comes back in the CSR input's own layout, as PyTorch's)
    return coo_to_csr(g) if g.layout is _constants.sparse_coo else g


def csr_to_coo(x):
    valid(x)
    indices = _coo_indices(x._compressed._data, x._plain._data)
    indices._device = x._device
    out = make_coo(indices, x._cvalues.detach(), x.shape, True)
    return record(_csr_to_coo, (x,), out)


@defop("to_sparse_csr", node="ToSparseCsrBackward0", save=())
def _to_csr(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_to_csr.defvjp
def _to_csr_vjp(ctx, g):
    if g.layout is _constants.sparse_csr:
        g = csr_to_coo(g)
    return g


def coo_to_csr(x):
    """A COO tensor's CSR form (a hybrid or batched one through its dense form)."""
    if x.dim() != 2 or x.dense_dim():
        from .constructors import to_compressed  # (cycle: constructors imports this module)
        return to_compressed(x, _constants.sparse_csr)
    c = x.detach().coalesce()
    idx = c._sparse_indices._data
    xp = array_module(idx)
    counts = xp.bincount(idx[0], minlength=x.shape[0])
    crow = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(counts)]).astype(np.int64)
    out = make_csr(_wrap(crow, dt.int64, x._device), _wrap(idx[1].copy(), dt.int64, x._device),
                   c._sparse_values, x.shape)
    return record(_to_csr, (x,), out)


def dense_to_csr(x):
    """A 2-D strided tensor's CSR form (through COO: ToSparseCsrBackward0 in the graph)."""
    from .conversion import dense_to_coo  # (cycle: conversion imports this module)
    return coo_to_csr(dense_to_coo(x))


def _as_coo(x):
    return csr_to_coo(x) if x.layout is _constants.sparse_csr else x
