"""Sparse CSR matrices: compressed row pointers, column indices and values (2-D, no batch
or dense dims in ember).

Each CSR op goes through the COO form of the same matrix (`csr_to_coo`, recorded in the
graph), so products and densifying reuse ops.py and coo.py and their gradients.
"""
import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._tensor import Tensor, _wrap, wrap_as
from ..backends import array_module
from ..ops.registry import defop
from ._graph import record, values_at
from ._no_elements import NoElements
from ._printing import sparse_repr
from .coo import make_coo

__all__ = ["SparseCsrTensor", "sparse_csr_tensor", "dense_to_csr", "coo_to_csr", "csr_to_coo"]


class SparseCsrTensor(Tensor):
    """A 2-D tensor of layout sparse_csr."""

    __slots__ = ("_crow", "_col", "_csr_values")
    is_sparse_csr = True
    layout = _constants.sparse_csr

    def __new__(cls, *args, **kwargs):
        raise TypeError("construct sparse CSR tensors with ember.sparse_csr_tensor")

    def crow_indices(self):
        return self._crow

    def col_indices(self):
        return self._col

    def values(self):
        return self._csr_values

    def _nnz(self):
        return self._csr_values._data.shape[0]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def to_sparse_coo(self):
        return csr_to_coo(self)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        if layout is _constants.sparse_csr:
            return self
        return csr_to_coo(self)

    def to_sparse_csr(self, dense_dim=None):
        return self

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = csr_to_coo(self).to_dense()
        return out if dtype is None else out.to(dtype)

    def mm(self, other):
        return csr_to_coo(self).mm(other)

    matmul = __matmul__ = mm

    def __rmatmul__(self, other):
        return other @ csr_to_coo(self)

    def detach(self):
        return make_csr(self._crow, self._col, self._csr_values.detach(), self.shape)

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
        values = self._csr_values.to(*args, **kwargs)
        if values is self._csr_values:
            return self
        return make_csr(self._crow.to(values.device), self._col.to(values.device), values,
                        self.shape, values_grad=True)

    def double(self):
        return self.to(dt.float64)

    def float(self):
        return self.to(dt.float32)

    def numpy(self, *, force=False):
        raise TypeError("can't convert SparseCsr layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def __repr__(self, *, tensor_contents=None):
        return sparse_repr(self, (("crow_indices", self._crow), ("col_indices", self._col),
                                  ("values", self._csr_values)), force_newline=False)

    __str__ = __repr__


def make_csr(crow, col, values, size, values_grad=False):
    device = values._device
    layout = "SparseCsrCPU" if device.type == "cpu" else "SparseCsrCUDA"
    t = wrap_as(NoElements(size, values.dtype.np, layout), values.dtype, device,
                SparseCsrTensor)
    t._crow, t._col, t._csr_values = crow, col, values
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


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csr_tensor (2-D, no batch or dense dims in ember)."""
    from .._creation import as_tensor
    from .._device import placement
    values = values.to(dtype) if isinstance(values, Tensor) and dtype is not None else \
        values if isinstance(values, Tensor) else as_tensor(values, dtype=dtype)
    if device is not None:
        values = values.to(placement(device))
    crow = as_tensor(crow_indices.detach() if isinstance(crow_indices, Tensor)
                     else crow_indices)
    col = as_tensor(col_indices.detach() if isinstance(col_indices, Tensor) else col_indices)
    if crow.dim() != 1 or col.dim() != 1 or values.dim() != 1:
        raise NotImplementedError("ember supports 2-D sparse CSR tensors without batch or "
                                  "dense dimensions only")
    if crow.dtype not in (dt.int32, dt.int64) or col.dtype is not crow.dtype:
        raise RuntimeError("crow_indices and col_indices must have the same dtype, int32 or "
                           "int64")
    if col.shape[0] != values.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, "
                           f"but got col_indices.numel() = {col.shape[0]}, values.numel() = "
                           f"{values.shape[0]}")
    c, k = crow._data, col._data
    if c.shape[0] == 0 or int(c[0]) != 0 or int(c[-1]) != k.shape[0] or \
            (c.shape[0] > 1 and (np.diff(c) < 0).any()):
        raise RuntimeError("`crow_indices[0] == 0` and `crow_indices[-1] == nnz` and "
                           "crow_indices nondecreasing are not satisfied")
    if size is None:
        size = (c.shape[0] - 1, int(k.max()) + 1 if k.shape[0] else 0)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError("ember supports 2-D sparse CSR tensors only")
    if size[0] != c.shape[0] - 1:
        raise RuntimeError(f"crow_indices.size(-1) must be equal to size[0] + 1 (that is "
                           f"{size[0] + 1}), but got: {c.shape[0]}")
    if k.shape[0] and (int(k.min()) < 0 or int(k.max()) >= size[1]):
        raise RuntimeError(f"`0 <= col_indices < ncols` is not satisfied (ncols = {size[1]})")
    t = make_csr(crow.to(values.device), col.to(values.device), values, size,
                 values_grad=True)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---------------------------------------------------------------------- conversions
@defop("csr_to_coo", node="ToSparseBackward0", save=())
def _csr_to_coo(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_csr_to_coo.defvjp
def _csr_to_coo_vjp(ctx, g):
    # (a sparse gradient comes back in the CSR input's own layout, as PyTorch's)
    return coo_to_csr(g) if g.layout is _constants.sparse_coo else g


def csr_to_coo(x):
    indices = _coo_indices(x._crow._data, x._col._data)
    indices._device = x._device
    out = make_coo(indices, x._csr_values.detach(), x.shape, True)
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
    """A coalesced 2-D COO tensor's CSR form."""
    if x.dim() != 2 or x.dense_dim():
        raise NotImplementedError("ember supports 2-D sparse CSR tensors without batch or "
                                  "dense dimensions only")
    c = x.detach().coalesce()
    idx = c._sparse_indices._data
    xp = array_module(idx)
    counts = xp.bincount(idx[0], minlength=x.shape[0])
    crow = xp.concatenate([xp.zeros(1, np.int64), xp.cumsum(counts)]).astype(np.int64)
    out = make_csr(_wrap(crow, dt.int64, x._device), _wrap(idx[1].copy(), dt.int64, x._device),
                   c._sparse_values, x.shape)
    return record(_to_csr, (x,), out)


def dense_to_csr(x, dense_dim=None):
    if dense_dim:
        raise NotImplementedError("ember supports 2-D sparse CSR tensors without batch or "
                                  "dense dimensions only")
    if x.dim() != 2:
        raise NotImplementedError("ember supports 2-D sparse CSR tensors only (torch also "
                                  "builds batched ones)")
    from .conversion import dense_to_coo
    return coo_to_csr(dense_to_coo(x))


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """torch.sparse_compressed_tensor: CSR only in ember (CSC, BSR and BSC raise)."""
    if layout is not _constants.sparse_csr:
        name = "None" if layout is None else str(layout).split(".")[-1]
        raise NotImplementedError(f"ember does not support the {name} layout yet (only "
                                  "sparse_coo and sparse_csr)")
    return sparse_csr_tensor(compressed_indices, plain_indices, values, size, dtype=dtype,
                             device=device, requires_grad=requires_grad,
                             check_invariants=check_invariants)


def _unsupported_constructor(layout_name):
    def construct(*args, **kwargs):
        raise NotImplementedError(f"ember does not support the {layout_name} layout yet (only "
                                  "sparse_coo and sparse_csr)")
    construct.__name__ = f"{layout_name}_tensor"
    return construct


sparse_csc_tensor = _unsupported_constructor("sparse_csc")
sparse_bsr_tensor = _unsupported_constructor("sparse_bsr")
sparse_bsc_tensor = _unsupported_constructor("sparse_bsc")


def _as_coo(x):
    return csr_to_coo(x) if x.layout is _constants.sparse_csr else x
