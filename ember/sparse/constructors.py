"""The sparse compressed constructors (sparse_compressed_tensor and its CSR, CSC, BSR and BSC
forms) and the dense -> compressed conversions (Tensor.to_sparse_csr/csc/bsr/bsc).

Each constructor goes through PyTorch's argument parser first, with the signatures of
PyTorch's own Python binding (indices and values are any objects, converted as tensor() does),
so a wrongly typed size or keyword is the parser's TypeError, as in PyTorch.
"""
import numpy as np

from .. import _constants as C
from .. import _dtype as dt
from .._creation import as_tensor
from .._device import placement
from .._signatures import Parser, checked
from .._tensor import Tensor, _wrap
from ..backends import array_module
from .compressed import (BLOCK_LAYOUTS, COMPRESSED_LAYOUTS, LAYOUT_NAMES, ROW_LAYOUTS,
                         SparseCompressedTensor, dimensions, index_names, make_compressed,
                         validate)
from .csr import dense_to_csr, make_csr

__all__ = ["sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_bsr_tensor", "sparse_bsc_tensor", "dense_to_compressed", "to_compressed"]

_OPTIONS = ("*, torch.dtype? dtype = None, torch.layout? layout = None, torch.device? device = "
            "None, bool pin_memory = False, bool requires_grad = False, bool? check_invariants "
            "= None")


def _parsed(name, cname, pname):
    """The constructor behind PyTorch's argument parser, with its binding's two overloads."""
    head = f"object? {cname}, object? {pname}, object? values"   # (None: tensor()'s error)
    parser = Parser(name, (f"{head}, tuple of ints size, {_OPTIONS}", f"{head}, {_OPTIONS}"))
    return lambda fn: checked(fn, parser, method=False)


def _values_tensor(values, dtype, device):
    """Values converted as PyTorch's binding converts them (tensor() of the data; a tensor
    keeps its graph and is cast or moved only when asked)."""
    if isinstance(values, Tensor):
        out = values if dtype is None or dtype is values.dtype else values.to(dtype)
    else:
        out = as_tensor(values, dtype=dtype)
    return out if device is None else out.to(placement(device))


def _index_tensor(indices, device):
    out = as_tensor(indices.detach() if isinstance(indices, Tensor) else indices)
    return out.to(device)


def _estimate_size(compressed, plain, values, layout):
    """The size PyTorch infers when none is given: the compressed dimension from the
    compressed indices' length, the plain one from the largest plain index."""
    batch, block, _ = dimensions(compressed, plain, values, layout)
    shape = tuple(values.shape)
    blocksize = (max(1, shape[batch + 1]), max(1, shape[batch + 2])) if block else (1, 1)
    ncompressed = max(compressed.shape[-1] - 1, 0)
    if plain.dtype.category != dt.INTEGER:   # (PyTorch dispatches on the integral dtypes only)
        raise NotImplementedError(f'"estimate_sparse_compressed_tensor_size" not implemented '
                                  f"for '{dt.type_name(plain.dtype)}'")
    nplain = int(plain._data.max()) + 1 if plain.numel() else 0
    rows, cols = (ncompressed, nplain) if layout in ROW_LAYOUTS else (nplain, ncompressed)
    return (tuple(compressed.shape[:batch]) + (rows * blocksize[0], cols * blocksize[1]) +
            shape[batch + 1 + block:])


def _build(name, required, compressed, plain, values, size, dtype, layout, device,
           requires_grad, check_invariants):
    values = _values_tensor(values, dtype, device)
    compressed = _index_tensor(compressed, values.device)
    plain = _index_tensor(plain, values.device)
    if required is not None:
        layout = required if layout is None else layout
        if layout is not required:
            raise RuntimeError(f"{name}: layout must be {LAYOUT_NAMES[required]} but got "
                               f"{LAYOUT_NAMES[layout]}")
    elif layout not in COMPRESSED_LAYOUTS:
        got = "none" if layout is None else LAYOUT_NAMES[layout]
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor "
                           f"layout but got {got}")
    size = _estimate_size(compressed, plain, values, layout) if size is None else \
        tuple(int(s) for s in size)
    if any(s < 0 for s in size):   # (PyTorch's element count is computed unsigned)
        raise RuntimeError("numel: integer multiplication overflow")
    from . import check_sparse_tensor_invariants  # (cycle: ember.sparse imports this module)
    if check_invariants is None:
        check_invariants = check_sparse_tensor_invariants.is_enabled()
    if check_invariants:
        validate(compressed, plain, values, size, layout)
    if requires_grad and not (values.dtype.is_floating_point or values.dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    t = assemble(layout, compressed, plain, values, size, bool(check_invariants))
    if requires_grad:
        t.requires_grad_(True)
    return t


def assemble(layout, compressed, plain, values, size, checked):
    """The tensor of those components: a 2-D CSR matrix is a SparseCsrTensor (products,
    autograd through its values), any other compressed tensor a SparseCompressedTensor."""
    if layout is C.sparse_csr and compressed.dim() == 1 and values.dim() == 1 and \
            len(size) == 2:
        return make_csr(compressed, plain, values, size, values_grad=True, checked=checked)
    return make_compressed(layout, compressed, plain, values.detach(), size, checked=checked)


@_parsed("sparse_compressed_tensor", "compressed_indices", "plain_indices")
def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """torch.sparse_compressed_tensor: a CSR, CSC, BSR or BSC tensor, by `layout`."""
    return _build("sparse_compressed_tensor", None, compressed_indices, plain_indices, values,
                  size, dtype, layout, device, requires_grad, check_invariants)


_ROW, _COLUMN = index_names(C.sparse_csr), index_names(C.sparse_csc)


@_parsed("sparse_csr_tensor", *_ROW)
def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, layout=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csr_tensor: rows compressed (batched and hybrid ones too)."""
    return _build("sparse_csr_tensor", C.sparse_csr, crow_indices, col_indices, values, size,
                  dtype, layout, device, requires_grad, check_invariants)


@_parsed("sparse_csc_tensor", *_COLUMN)
def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, layout=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_csc_tensor: columns compressed."""
    return _build("sparse_csc_tensor", C.sparse_csc, ccol_indices, row_indices, values, size,
                  dtype, layout, device, requires_grad, check_invariants)


@_parsed("sparse_bsr_tensor", *_ROW)
def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, layout=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_bsr_tensor: rows of blocks compressed; values (nnz, rows, cols, ...)."""
    return _build("sparse_bsr_tensor", C.sparse_bsr, crow_indices, col_indices, values, size,
                  dtype, layout, device, requires_grad, check_invariants)


@_parsed("sparse_bsc_tensor", *_COLUMN)
def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, layout=None,
                      device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None):
    """torch.sparse_bsc_tensor: columns of blocks compressed."""
    return _build("sparse_bsc_tensor", C.sparse_bsc, ccol_indices, row_indices, values, size,
                  dtype, layout, device, requires_grad, check_invariants)


# ---------------------------------------------------------------------- dense -> compressed
def _blocksize(name, blocksize, layout):
    if layout not in BLOCK_LAYOUTS:
        return (1, 1)
    blocksize = (blocksize, blocksize) if isinstance(blocksize, int) else tuple(blocksize)
    if len(blocksize) != 2:
        raise RuntimeError(f"{name}: blocksize needs to be a tuple of size 2, but got "
                           f"{len(blocksize)}")
    if min(blocksize) <= 0:
        raise RuntimeError(f"{name}: blocksize needs to be positive, but got "
                           f"{list(blocksize)}")
    return tuple(int(b) for b in blocksize)


def dense_to_compressed(x, layout, blocksize=None, dense_dim=None):
    """A strided tensor in a compressed layout, with `dense_dim` trailing dense dims and the
    dims before the two sparse ones as batch dims (each batch with as many entries)."""
    short = str(layout).split("_")[-1]
    name = f"dense_to_sparse_{short}"
    n = x.dim()
    dense = 0 if dense_dim is None else int(dense_dim)
    if dense_dim is not None and not 0 <= dense <= n - 2:   # (before the rank, as torch)
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{n - 2}] range, but "
                           f"{dense} is given")
    if n < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(n, 1)}, {max(n, 1) - 1}], but got {n - 2})")
    br, bc = _blocksize(name, blocksize, layout)
    nb = n - 2 - dense
    size = tuple(x.shape)
    rows, cols = size[nb], size[nb + 1]
    if rows % br or cols % bc:
        raise RuntimeError(f"{name}: tensor sparse size ({rows},{cols}) must be divisible by "
                           f"given blocksize ({br},{bc})")
    if layout is C.sparse_csr and nb == 0 and dense == 0:
        return dense_to_csr(x)
    a = x.detach()._data
    xp = array_module(a)
    dshape = size[nb + 2:]
    nbatch = int(np.prod(size[:nb], dtype=np.int64))
    blocks = a.reshape((nbatch, rows // br, br, cols // bc, bc) + dshape)
    blocks = xp.moveaxis(blocks, 3, 2)   # (batch, block row, block column, br, bc, dense...)
    nonzero = (blocks != 0).reshape(blocks.shape[:3] + (-1,)).any(axis=-1)
    row = layout in ROW_LAYOUTS
    outer_mask = nonzero if row else xp.swapaxes(nonzero, 1, 2)
    counts = outer_mask.reshape(nbatch, -1).sum(axis=1)
    if nbatch and (counts != counts[0]).any():
        raise RuntimeError("Expect the same number of specified elements per batch.")
    nnz = int(counts[0]) if nbatch else 0
    b, outer, inner = xp.nonzero(outer_mask)
    r, c = (outer, inner) if row else (inner, outer)
    per_outer = xp.zeros((nbatch, outer_mask.shape[1]), dtype=np.int64)
    xp.add.at(per_outer, (b, outer), 1)
    compressed = xp.concatenate([xp.zeros((nbatch, 1), np.int64),
                                 xp.cumsum(per_outer, axis=1)], axis=1)
    vals = blocks[b, r, c]
    vshape = (nnz, br, bc) + dshape if layout in BLOCK_LAYOUTS else (nnz,) + dshape
    batch = size[:nb]
    out = make_compressed(
        layout, _wrap(compressed.reshape(batch + compressed.shape[1:]), dt.int64, x._device),
        _wrap(inner.astype(np.int64).reshape(batch + (nnz,)), dt.int64, x._device),
        _wrap(vals.reshape(batch + vshape), x.dtype, x._device), size, checked=True)
    return out


def to_compressed(self, layout, blocksize=None, dense_dim=None):
    """Tensor.to_sparse_csr/csc/bsr/bsc of any layout (a COO tensor through its dense form)."""
    if isinstance(self, SparseCompressedTensor):
        return self._relayout(layout, blocksize, dense_dim)
    if self.layout is C.sparse_coo:
        if dense_dim is None:
            dense_dim = self.dense_dim()
        self = self.to_dense()
    return dense_to_compressed(self, layout, blocksize, dense_dim)
