"""Sparse matrix products: sparse @ dense (scipy.sparse on the CPU), dense @ sparse, sparse @
sparse, torch.sparse.mm/addmm, torch.spmm/hspmm. torch.sparse.mm gives the sparse factor a
sparse gradient (SparseAddmmBackward0), torch.mm a dense one (MmBackward0), as PyTorch."""
import numpy as np

from .. import _constants
from .. import _dtype as dt
from .._optional import require
from .._tensor import _wrap
from ..ops.registry import PUBLIC, defop, name_node
from ._graph import record
from .compressed import valid
from .coo import coalesce, linear_index, make_coo, zeros_coo
from .csr import _coo_indices, make_csr
from .ops import _is_sparse, _on_coordinates, _unrecorded, transpose
from .pointwise import values_of

__all__ = ["mm", "addmm", "spmm", "hspmm", "mm_any"]

def _scipy_matrix(x):
    sp = require("scipy.sparse", "sparse matrix products")
    idx, vals = x._sparse_indices._data, x._sparse_values._data
    if x._device.type != "cpu":
        raise NotImplementedError("ember does not support sparse matrix products on "
                                  f"{x._device.type} tensors yet")
    if x.dtype in (dt.float16, dt.bfloat16):   # (SciPy has no half types: float32, rounded once)
        vals = vals.astype(np.float32)
    return sp.csr_matrix((vals, (idx[0], idx[1])), shape=tuple(x.shape))


def _compute_array(t):
    """A dense factor's array in the dtype the product is computed in."""
    return t._data.astype(np.float32) if t.dtype in (dt.float16, dt.bfloat16) else t._data


def _check_mm(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {a.dim()}D, {b.dim()}D tensors")
    if _is_sparse(a) and a.dense_dim() or _is_sparse(b) and b.dense_dim():
        raise NotImplementedError("ember does not support products of hybrid sparse tensors")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {a.shape[1]}, "
                           f"got {b.shape[0]}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {dt.type_name(a.dtype)} but found "
                           f"{dt.type_name(b.dtype)}")


@defop("sparse_mm", node="SparseAddmmBackward0", save=(0, 1))
def _sparse_mm(a, b):
    _unrecorded()


@_sparse_mm.defvjp
def _sparse_mm_vjp(ctx, g):
    s, d = ctx.inputs
    e = ctx.edges
    gs = gd = None
    if e[0] is not None:
        # PyTorch's gradient of the sparse factor keeps its sparsity: (g @ d^T) at s's entries
        c = coalesce(s.detach())
        row, col = c._sparse_indices[0], c._sparse_indices[1]
        gs = _on_coordinates(s, (g.index_select(0, row) * d.index_select(0, col)).sum(1))
    if e[1] is not None:
        gd = sparse_dense_mm(transpose(s, 0, 1), g, _sparse_mm)
    return gs, gd


@defop("sparse_dense_mm", node="MmBackward0", save=(0, 1))
def _mm_dense_grad(a, b):
    _unrecorded()


@_mm_dense_grad.defvjp
def _mm_dense_grad_vjp(ctx, g):
    a, b = ctx.inputs
    e = ctx.edges
    ga = gb = None
    if e[0] is not None:   # (torch.mm gives the sparse factor a dense gradient)
        ga = _dense_product(g, b.t())
    if e[1] is not None:
        gb = _dense_product(a.t(), g)
    return ga, gb


def _dense_product(a, b):
    """a @ b where either factor may be sparse: through the ops below, else ember's mm."""
    if _is_sparse(a) or _is_sparse(b):
        return mm_any(a, b, _mm_dense_grad)
    return a.mm(b)


def sparse_dense_mm(s, d, op):
    """sparse (n, m) @ dense (m, p) -> dense (n, p), recorded as `op`."""
    _check_mm(s, d)
    m = _scipy_matrix(s)
    out = np.asarray(m @ _compute_array(d)).astype(d.dtype.np, copy=False).reshape(
        s.shape[0], d.shape[1])
    return record(op, (s, d), _wrap(out, d.dtype, d._device))


def dense_sparse_mm(d, s, op):
    """dense (n, m) @ sparse (m, p) -> dense (n, p), recorded as `op`."""
    _check_mm(d, s)
    m = _scipy_matrix(s)
    out = np.asarray((m.T @ _compute_array(d).T).T).astype(d.dtype.np, copy=False)
    return record(op, (d, s), _wrap(out.reshape(d.shape[0], s.shape[1]), d.dtype, d._device))


@defop("sparse_sparse_mm", node="SparseSparseMatmulBackward0", save=(0, 1))
def _sparse_sparse_mm(a, b):
    _unrecorded()


@_sparse_sparse_mm.defvjp
def _sparse_sparse_mm_vjp(ctx, g):
    """Each factor's gradient on its own (coalesced) entries, as PyTorch's: (g @ b^T) at a's
    entries and (a^T @ g) at b's. NOTE: written with the dense forms of g, a and b (ember
    ops, so double backward works), which costs their dense sizes in memory."""
    a, b = ctx.inputs
    e = ctx.edges
    g = g.to_dense() if g.layout is not _constants.strided else g
    ga = gb = None
    if e[0] is not None:
        rows, inner = coalesce(a.detach())._sparse_indices
        dense_b = b.detach().to_dense()
        ga = _on_coordinates(a, (g.index_select(0, rows) *
                                 dense_b.index_select(0, inner)).sum(1))
    if e[1] is not None:
        inner, cols = coalesce(b.detach())._sparse_indices
        dense_a = a.detach().to_dense()
        gb = _on_coordinates(b, (dense_a.t().index_select(0, inner) *
                                 g.t().index_select(0, cols)).sum(1))
    return ga, gb


def sparse_sparse_mm(a, b):
    """sparse @ sparse -> sparse (coalesced), SparseSparseMatmulBackward0."""
    _check_mm(a, b)
    m = (_scipy_matrix(a) @ _scipy_matrix(b)).tocoo()
    idx = np.stack([m.row, m.col]).astype(np.int64)
    key = linear_index(idx, tuple(a.shape[:1]) + tuple(b.shape[1:]))
    order = np.argsort(key, kind="stable")
    vals = m.data[order].astype(a.dtype.np, copy=False)
    out = make_coo(_wrap(idx[:, order], dt.int64, a._device), _wrap(vals, a.dtype, a._device),
                   (a.shape[0], b.shape[1]), True)
    return record(_sparse_sparse_mm, (a, b), out)


def mm_any(a, b, op):
    if _is_sparse(a) and _is_sparse(b):
        return sparse_sparse_mm(a, b)
    if _is_sparse(a):
        return sparse_dense_mm(a, b, op)
    return dense_sparse_mm(a, b, op)


def _as_coo(x):
    return x.to_sparse_coo() if x.layout is _constants.sparse_csr else x


def mm(mat1, mat2):
    """torch.sparse.mm: the sparse factor's gradient is sparse (SparseAddmmBackward0)."""
    mat1, mat2 = _as_coo(mat1), _as_coo(mat2)
    if _is_sparse(mat1) and not _is_sparse(mat2):
        return sparse_dense_mm(mat1, mat2, _sparse_mm)
    return mm_any(mat1, mat2, _mm_dense_grad)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2), mat1 sparse, mat dense."""
    product = mm(mat1, mat2)
    out = (mat * beta if beta != 1 else mat) + (product * alpha if alpha != 1 else product)
    return name_node(out, "SparseAddmmBackward0")



# ---------------------------------------------------------------------- torch.spmm, hspmm
def spmm(input, mat2):
    """torch.spmm: torch.mm (sparse or dense factors, a dense result for sparse @ dense)."""
    if input.layout is _constants.strided and mat2.layout is _constants.strided:
        return input.mm(mat2)
    return mm_any(_as_coo(input), _as_coo(mat2), _mm_dense_grad)


def hspmm(mat1, mat2):
    """torch.hspmm: sparse @ dense as a hybrid COO tensor whose rows are mat1's nonempty
    rows (one sparse dim, one dense dim)."""
    mat1 = _as_coo(mat1)
    if not _is_sparse(mat1):
        raise NotImplementedError("Could not run 'aten::hspmm' with arguments from the 'CPU' "
                                  "backend: its first argument must be sparse")
    if mat2.layout is not _constants.strided:
        raise RuntimeError("addmm_sparse_dense: expected strided result tensor, got tensor "
                           "with layout Sparse")
    rows = np.unique(mat1._sparse_indices._data[0])
    product = sparse_dense_mm(mat1, mat2, _sparse_mm)
    keep = _wrap(rows.astype(np.int64), dt.int64, mat1._device)
    return make_coo(keep.unsqueeze(0), product.index_select(0, keep),
                    (mat1.shape[0], mat2.shape[1]), False, values_grad=True)   # (as PyTorch)


# ---------------------------------------------------------------------- torch.sparse extras
def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """torch.sparse.sampled_addmm: beta * input + alpha * (mat1 @ mat2), computed only at the
    entries of the CSR matrix `input` (a CSR result on its pattern)."""
    if input.layout is not _constants.sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected self to be sparse CSR, got {input.layout}")
    if out is not None:
        raise NotImplementedError("ember does not support out= for sparse.sampled_addmm")
    rows, cols = _coo_indices(valid(input)._compressed._data, input._plain._data)._data
    product = mat1 @ mat2
    picked = product[_wrap(rows, dt.int64, input._device), _wrap(cols, dt.int64,
                                                                  input._device)]
    values = input._cvalues * beta + picked * alpha
    return make_csr(input._compressed, input._plain, values, input.shape, values_grad=True)


def spsolve(input, other, *, left=True):
    """torch.sparse.spsolve: PyTorch's CPU build has no kernel for it either."""
    raise NotImplementedError("Could not run 'aten::_spsolve' with arguments from the "
                              "'SparseCsrCPU' backend: ember does not support spsolve")


def sspaddmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sspaddmm: beta * input + alpha * (mat1 @ mat2) as an uncoalesced sparse tensor:
    input's entries, then the product's rows where mat1 has entries (every column)."""
    mat1 = _as_coo(mat1)
    _check_sspaddmm(input, mat1, mat2)
    c = coalesce(mat1.detach())
    rows = _wrap(np.unique(c._sparse_indices._data[0]), dt.int64, mat1._device)
    product = sparse_dense_mm(mat1, mat2, _sparse_mm).index_select(0, rows)
    n_cols = mat2.shape[1]
    block_idx = np.stack([np.repeat(rows._data, n_cols),
                          np.tile(np.arange(n_cols, dtype=np.int64), rows._data.shape[0])])
    base = values_of(input) if input._coalesced else input._sparse_values
    values = _cat([base * beta, (product * alpha).reshape(-1)])
    indices = np.concatenate([input._sparse_indices._data, block_idx], axis=1)
    return make_coo(_wrap(indices, dt.int64, mat1._device), values,
                    (mat1.shape[0], n_cols), False, values_grad=True)


def _check_sspaddmm(input, mat1, mat2):
    if not _is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    for name, t, want in (("mat1", mat1, "sparse"), ("mat2", mat2, "strided")):
        layout = "Sparse" if _is_sparse(t) else "Strided"
        if layout.lower() != want:
            raise RuntimeError(f"sspaddmm: expected '{name}' to have {want} layout, got "
                               f"'{name}' with layout {layout}")
    if mat2.dim() != 2:
        raise RuntimeError(f"sspaddmm: Argument #3: matrices expected, got {mat2.dim()}D "
                           "tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")


def smm(input, mat):
    """torch.smm: sparse @ dense as a sparse tensor (sspaddmm with no addend)."""
    if not _is_sparse(input):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    _check_sspaddmm(input, input, mat)
    return sspaddmm(zeros_coo((input.shape[0], mat.shape[1]), mat.dtype, mat._device),
                    input, mat, beta=0.0)


def _cat(tensors):
    return PUBLIC["cat"](tensors)
