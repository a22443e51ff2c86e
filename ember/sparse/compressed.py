"""Sparse compressed tensors: the CSR, CSC, BSR and BSC layouts, batched and hybrid.

One class holds all four: compressed indices (*batch, ncompressed + 1), plain indices (*batch,
nnz) and values (*batch, nnz, *blocksize, *dense); CSR/BSR compress rows, CSC/BSC columns,
and the blocked layouts store a (rows, cols) block per entry. The plain 2-D CSR matrix is the
subclass in csr.py, which adds products and autograd; the others convert, densify and print.

NOTE: PyTorch checks a compressed tensor's invariants only when asked (check_invariants=True,
or check_sparse_tensor_invariants enabled), so it builds tensors it cannot compute with. ember
builds the same tensors, and checks them on first use instead (`valid`): a densifying or a
product on a broken tensor raises the invariant's RuntimeError where PyTorch reads garbage.
"""
import numpy as np

from .. import _constants as C
from .._dtype import type_name
from .._tensor import Tensor, _wrap, wrap_as
from ..backends import array_module
from ._no_elements import NoElements
from ._printing import sparse_repr

__all__ = ["SparseCompressedTensor", "make_compressed", "valid", "validate", "dimensions",
           "LAYOUT_NAMES"]

ROW_LAYOUTS = (C.sparse_csr, C.sparse_bsr)
BLOCK_LAYOUTS = (C.sparse_bsr, C.sparse_bsc)
COMPRESSED_LAYOUTS = (C.sparse_csr, C.sparse_csc, C.sparse_bsr, C.sparse_bsc)
# PyTorch's names: layout -> its upper-case name, compressed and plain index names
LAYOUT_NAMES = {C.sparse_csr: "SparseCsr", C.sparse_csc: "SparseCsc", C.sparse_bsr: "SparseBsr",
                C.sparse_bsc: "SparseBsc", C.sparse_coo: "Sparse", C.strided: "Strided"}
_ROW_NAMES = ("crow_indices", "col_indices")
_COLUMN_NAMES = ("ccol_indices", "row_indices")


def index_names(layout):
    return _ROW_NAMES if layout in ROW_LAYOUTS else _COLUMN_NAMES


class SparseCompressedTensor(Tensor):
    """A tensor of layout sparse_csr, sparse_csc, sparse_bsr or sparse_bsc."""

    __slots__ = ("_compressed", "_plain", "_cvalues", "_layout", "_checked")

    def __new__(cls, *args, **kwargs):
        raise TypeError("construct sparse compressed tensors with ember.sparse_compressed_"
                        "tensor")

    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse_csr(self):
        return self._layout is C.sparse_csr

    # ------------------------------------------------------------------ structure
    def _index(self, name, row):
        names = index_names(self._layout)
        if name in names:
            return self._compressed if name == names[0] else self._plain
        kind = "row" if row else "column"
        raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got "
                           f"{LAYOUT_NAMES[self._layout]}")

    def crow_indices(self):
        return self._index("crow_indices", True)

    def col_indices(self):
        return self._index("col_indices", True)

    def ccol_indices(self):
        return self._index("ccol_indices", False)

    def row_indices(self):
        return self._index("row_indices", False)

    def values(self):
        return self._cvalues

    def _batch_dim(self):
        return max(self._compressed._data.ndim - 1, 0)

    def _nnz(self):
        v = self._cvalues._data
        return v.shape[self._batch_dim()] if v.ndim > self._batch_dim() else 0

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        block = 2 if self._layout in BLOCK_LAYOUTS else 0
        return self._cvalues._data.ndim - self._batch_dim() - block - 1

    # ------------------------------------------------------------------ conversions
    def to_dense(self, dtype=None, *, masked_grad=None):
        out = _wrap(dense_array(valid(self)), self.dtype, self._device)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        from .conversion import to_sparse  # (cycle: conversion imports this module)
        return to_sparse(self, *args, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def to_sparse_coo(self):
        from .conversion import dense_to_coo  # (cycle: conversion imports this module)
        return dense_to_coo(self.to_dense(), 2 + self._batch_dim())

    def _relayout(self, layout, blocksize=None, dense_dim=None):
        if layout is self._layout and blocksize is None:
            return self
        from .constructors import dense_to_compressed  # (cycle: it imports this module)
        return dense_to_compressed(self.to_dense(), layout, blocksize,
                                   self.dense_dim() if dense_dim is None else dense_dim)

    def to_sparse_csr(self, dense_dim=None):
        return self._relayout(C.sparse_csr, dense_dim=dense_dim)

    def to_sparse_csc(self, dense_dim=None):
        return self._relayout(C.sparse_csc, dense_dim=dense_dim)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        return self._relayout(C.sparse_bsr, blocksize, dense_dim)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        return self._relayout(C.sparse_bsc, blocksize, dense_dim)

    def detach(self):
        return make_compressed(self._layout, self._compressed, self._plain,
                               self._cvalues.detach(), self.shape)

    def to(self, *args, **kwargs):
        values = self._cvalues.to(*args, **kwargs)
        if values is self._cvalues:
            return self
        device = values.device
        return make_compressed(self._layout, self._compressed.to(device),
                               self._plain.to(device), values, self.shape)

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {LAYOUT_NAMES[self._layout]} layout tensor to numpy. "
                        "Use Tensor.to_dense() first.")

    def __repr__(self, *, tensor_contents=None):
        compressed, plain = index_names(self._layout)
        return sparse_repr(self, ((compressed, self._compressed), (plain, self._plain),
                                  ("values", self._cvalues)), force_newline=False)

    __str__ = __repr__


def make_compressed(layout, compressed, plain, values, size, cls=SparseCompressedTensor,
                    checked=False):
    """A compressed tensor around the three component tensors (no checks, no copy)."""
    device = values._device
    backend = "SparseCsrCPU" if device.type == "cpu" else "SparseCsrCUDA"
    t = wrap_as(NoElements(size, values.dtype.np, backend), values.dtype, device, cls)
    t._compressed, t._plain, t._cvalues, t._layout = compressed, plain, values, layout
    t._checked = checked
    return t


# ---------------------------------------------------------------------- invariants
def valid(t):
    """`t`, once its invariants are checked (see the module docstring)."""
    if not t._checked:
        validate(t._compressed, t._plain, t._cvalues, tuple(t.shape), t._layout)
        t._checked = True
    return t


def dimensions(compressed, plain, values, layout):
    """(batch, block, dense) dimensionalities of a compressed tensor's components, checked
    as PyTorch checks them (also when it infers the size)."""
    cname, pname = index_names(layout)
    batch = compressed.dim() - 1
    block = 2 if layout in BLOCK_LAYOUTS else 0
    if batch < 0:
        raise RuntimeError(f"{cname} must have dimensionality >= 1 but got {compressed.dim()}")
    if compressed.dim() != plain.dim():
        raise RuntimeError(f"{cname} and {pname} dimensionalities must be equal but got "
                           f"{compressed.dim()} and {plain.dim()}, respectively")
    dense = values.dim() - batch - block - 1
    if dense < 0:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block "
                           f"dimensionalities (={batch} + {block}) but got {values.dim()}")
    return batch, block, dense


def validate(compressed, plain, values, size, layout):
    """PyTorch's invariants of a sparse compressed tensor, checked in its order with its
    messages: dimensionalities, shapes, index dtypes, then the index values."""
    cname, pname = index_names(layout)
    row = layout in ROW_LAYOUTS
    for name, part in ((pname, plain), (cname, compressed), ("values", values)):
        if part.layout is not C.strided:
            raise RuntimeError(f"expected {name} to be a strided tensor but got "
                               f"{part.layout} tensor")
    batch, block, dense = dimensions(compressed, plain, values, layout)
    if len(size) != batch + 2 + dense:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense "
                           f"dimensionalities (={batch} + 2 + {dense}) but got {len(size)}")
    vshape = tuple(values.shape)
    blocksize = (max(1, vshape[batch + 1]), max(1, vshape[batch + 2])) if block else (1, 1)
    batches = [list(x[:batch]) for x in (size, compressed.shape, plain.shape, vshape)]
    if any(b != batches[0] for b in batches[1:]):
        raise RuntimeError(f"all batch dimensions of {cname} (={batches[1]}), {pname} "
                           f"(={batches[2]}), and values (={batches[3]}) must be equal to "
                           f"tensor batch dimensions (={batches[0]})")
    for i in range(block):
        if size[batch + i] % blocksize[i]:
            raise RuntimeError(f"tensor shape[{batch + i}] (={size[batch + i]}) must be "
                               f"divisible with blocksize[{i}] (={blocksize[i]}) as defined "
                               "by values shape")
    nrows, ncols = size[batch] // blocksize[0], size[batch + 1] // blocksize[1]
    ncompressed, nplain = (nrows, ncols) if row else (ncols, nrows)
    if compressed.shape[-1] != ncompressed + 1:
        what = ("row" if row else "column") + (" block" if block else "")
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what}s + 1 "
                           f"(={ncompressed + 1}), but got {compressed.shape[-1]}")
    nnz = vshape[batch]
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[{batch}], but got {plain.shape[-1]}")
    ctype, ptype = compressed.dtype, plain.dtype
    if ctype is not ptype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got "
                           f"{_scalar_name(ctype)} and {_scalar_name(ptype)}, respectively")
    if _scalar_name(ctype) not in ("Int", "Long"):
        raise RuntimeError(f"{cname} and {pname} dtype must be Int or Long, but got "
                           f"{_scalar_name(ctype)}")
    _check_indices(compressed._data, plain._data, cname, pname, row, nplain, nnz)
    if compressed._device != values._device or plain._device != compressed._device:
        raise RuntimeError(f"device of {cname} (={compressed.device}) must match device of "
                           f"values (={values.device})")


def _scalar_name(dtype):
    return type_name(dtype)


def _check_indices(c, p, cname, pname, row, nplain, nnz):
    """The index values: compressed rows start at 0, end at nnz and never decrease by more
    than the plain dimension; plain indices in range, sorted and distinct in each row."""
    xp = array_module(c)
    plain_dim = "ncols" if row else "nrows"
    c = c.reshape(-1, c.shape[-1]).astype(np.int64)
    p = p.reshape(-1, p.shape[-1]).astype(np.int64)
    if (c[:, 0] != 0).any():
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if (c[:, -1] != nnz).any():
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    steps = xp.diff(c, axis=1)
    if ((steps < 0) | (steps > nplain)).any():
        raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {plain_dim}` is "
                           "not satisfied.")
    if p.size and ((p < 0) | (p >= nplain)).any():
        raise RuntimeError(f"`0 <= {pname} < {plain_dim}` is not satisfied.")
    if p.shape[1] > 1:
        # a step up within a compressed row: the row of each plain index is where it lies
        # among the row starts
        starts = xp.zeros(p.shape, dtype=bool)
        for b in range(c.shape[0]):
            starts[b, c[b, :-1][c[b, :-1] < p.shape[1]]] = True
        if ((xp.diff(p, axis=1) <= 0) & ~starts[:, 1:]).any():
            dim = "nrows" if row else "ncols"
            raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all "
                               f"i = 1, ..., {dim} are sorted and distinct along the last "
                               "dimension values` is not satisfied.")


# ---------------------------------------------------------------------- densifying
def coordinates(compressed, plain):
    """(batch, compressed, plain) index arrays of every stored entry, batch-major."""
    xp = array_module(compressed)
    c = compressed.reshape(-1, compressed.shape[-1]).astype(np.int64)
    p = plain.reshape(-1, plain.shape[-1]).astype(np.int64)
    counts = xp.diff(c, axis=1)
    batch = xp.repeat(xp.arange(c.shape[0]), p.shape[1])
    outer = xp.concatenate([xp.repeat(xp.arange(c.shape[1] - 1), counts[b])
                            for b in range(c.shape[0])]) if c.shape[0] else \
        xp.zeros(0, np.int64)
    return batch, outer, p.reshape(-1)


def dense_array(t):
    """The dense array of a (valid) compressed tensor; duplicates are summed."""
    values = t._cvalues._data
    xp = array_module(values)
    size = tuple(t.shape)
    nb = t._batch_dim()
    block = t._layout in BLOCK_LAYOUTS
    br, bc = values.shape[nb + 1:nb + 3] if block else (1, 1)
    rows, cols = size[nb] // br, size[nb + 1] // bc
    dense = size[nb + 2:]
    nbatch = int(np.prod(size[:nb], dtype=np.int64))
    batch, outer, inner = coordinates(t._compressed._data, t._plain._data)
    r, c = (outer, inner) if t._layout in ROW_LAYOUTS else (inner, outer)
    blocks = values.reshape((-1, br, bc) + dense)
    out = xp.zeros((nbatch, rows, cols, br, bc) + dense, dtype=values.dtype)
    xp.add.at(out, (batch, r, c), blocks)
    # (batch, block row, row in block, block column, column in block, dense...)
    out = xp.moveaxis(out, 3, 2)
    return out.reshape(size)
