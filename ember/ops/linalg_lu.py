"""LU factorization and what is built on it: linalg.lu_factor(_ex), linalg.lu, torch.lu_unpack,
linalg.lu_solve and the deprecated torch.lu / torch.lu_solve. Forwards run LAPACK's getrf and
getrs (ops/_lapack.py) so that pivots are LAPACK's 1-based int32 ones, as PyTorch's; VJPs are
written in ember ops, so they differentiate again. The LDL factorization is in linalg_ldl.py.
"""
import warnings

import numpy as np

from .. import _runtime_settings
from .. import _dtype as dt
from .._creation import _C_NAMES as C_NAMES
from .._scalars import type_name
from .._tensor import Tensor, write_out
from ..backends import array_module
from . import _lapack
from .linalg_primitives import const, embed, extract, mh, return_type, tril, triu
from .linalg_solve import solve_triangular_matrix
from .matmul import matmul
from .registry import check_tensor, defop, dispatch, export

LUFactor = return_type("linalg_lu_factor", ("LU", "pivots"))
LUFactorEx = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
LUResult = return_type("linalg_lu", ("P", "L", "U"))
LUUnpack = return_type("lu_unpack", ("P", "L", "U"))
LUWithInfo = return_type("_lu_with_info", ("LU", "pivots", "info"))
# with out=, PyTorch returns these under the names of its _out overloads
LUFactorOut = return_type("linalg_lu_factor_out", ("LU", "pivots"))
LUFactorExOut = return_type("linalg_lu_factor_ex_out", ("LU", "pivots", "info"))
LUResultOut = return_type("linalg_lu_out", ("P", "L", "U"))
LUUnpackOut = return_type("lu_unpack_out", ("P", "L", "U"))


def check_lu_input(name, A, arg="A"):
    """PyTorch's checks before an LU factorization: a tensor of >= 2 dims of a LAPACK dtype."""
    check_tensor(name.replace("torch.", "").replace(".", "_"), A, arg)
    shape = A._data.shape
    if len(shape) < 2:
        label = "torch.lu_factor" if name != "linalg.lu" else name
        raise RuntimeError(f"{label}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(shape)} instead")
    if A.dtype.category < dt.FLOATING or A.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{dt.type_name(A.dtype)}'")


def _no_pivot(pivot):
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


# ---------------------------------------------------------------------- the factorization
def _getrf(a):
    """(LU, 1-based int32 pivots, int32 info) of every matrix in the batch `a`."""
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    src = _lapack.host(a)
    lu = src.copy()
    pivots = np.zeros(batch + (min(m, n),), np.int32)
    info = np.zeros(batch, np.int32)
    if a.size:
        getrf = _lapack.routine("getrf", src.dtype)
        for idx in _lapack.batch_indices(batch):
            lu[idx], piv, info[idx] = getrf(src[idx])
            pivots[idx] = piv + 1   # SciPy's wrapper makes them 0-based; LAPACK's are 1-based
    return _lapack.back(a, lu), _lapack.back(a, pivots), _lapack.back(a, info)


def _unpack_arrays(lu, pivots, unpack_data=True, unpack_pivots=True):
    """P, L, U as backend arrays (empty (0,) arrays for the parts not asked for)."""
    xp = array_module(lu)
    m, n = lu.shape[-2:]
    k = min(m, n)
    empty = xp.zeros((0,), lu.dtype)
    L = U = P = empty
    if unpack_data:
        L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
        U = xp.triu(lu[..., :k, :])
    if unpack_pivots:
        batch = np.broadcast_shapes(lu.shape[:-2], pivots.shape[:-1])
        P = _lapack.permutation_matrix(xp.broadcast_to(pivots, batch + pivots.shape[-1:]), m,
                                       lu.dtype)
    return P, L, U


@defop("linalg_lu_factor_ex", node="LinalgLuFactorExBackward0", save=(), save_output=True,
       num_outputs=3, conj_ready=True)
def _lu_factor(a):
    return _getrf(a)


@_lu_factor.defvjp
def _lu_factor_vjp(ctx, g_lu, g_pivots, g_info):
    LU, pivots = ctx.outputs[:2]
    P, L, U = _lu_parts(LU, pivots)
    m, n = LU._data.shape[-2:]
    k = min(m, n)
    gL = extract(tril(g_lu, -1), (0, 0), (m, k))
    gU = extract(triu(g_lu), (0, 0), (k, n))
    return lu_backward(P, L, U, gL, gU)


def _lu_parts(LU, pivots):
    """P (a constant), L and U of a packed LU, the last two as functions of LU."""
    m, n = LU._data.shape[-2:]
    k = min(m, n)
    P = const(LU, _unpack_arrays(LU._data, pivots._data, unpack_data=False)[0])
    xp = array_module(LU._data)
    L = extract(tril(LU, -1), (0, 0), (m, k)) + const(LU, xp.eye(m, k))
    U = extract(triu(LU), (0, 0), (k, n))
    return P, L, U


def _left_inv_h(L, X):
    """L^-H X for a unit lower-triangular L."""
    return solve_triangular_matrix(mh(L), X, True, True)


def _right_inv_h(X, U):
    """X U^-H for an upper-triangular U."""
    return mh(solve_triangular_matrix(U, mh(X), True))


def _lu_square_backward(L, U, gL, gU):
    # A = L U with dL strictly lower and dU upper: L^-1 dA U^-1 = L^-1 dL + dU U^-1, so
    # gA = L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H
    phi = tril(matmul(mh(L), gL), -1) + triu(matmul(gU, mh(U)))
    return _right_inv_h(_left_inv_h(L, phi), U)


def lu_backward(P, L, U, gL, gU):
    """The gradient of A = P L U from those of L (m x k) and U (k x n), in ember ops."""
    m, n = L._data.shape[-2], U._data.shape[-1]
    if m == n:
        return matmul(P, _lu_square_backward(L, U, gL, gU))
    shape = L._data.shape[:-2] + (m, n)
    if m < n:
        # A = P L [U1 | U2]: U2 = L^-1 P^T A2 feeds back into L's gradient
        U1, U2 = extract(U, (0, 0), (m, m)), extract(U, (0, m), (m, n - m))
        gU1, gU2 = extract(gU, (0, 0), (m, m)), extract(gU, (0, m), (m, n - m))
        gL = gL - _left_inv_h(L, matmul(gU2, mh(U2)))
        left = _lu_square_backward(L, U1, gL, gU1)
        right = _left_inv_h(L, gU2)
        return matmul(P, embed(left, shape, (0, 0)) + embed(right, shape, (0, m)))
    # tall: P^T A = [L1 U; L2 U], and L2 = B2 U^-1 feeds back into U's gradient
    L1, L2 = extract(L, (0, 0), (n, n)), extract(L, (n, 0), (m - n, n))
    gL1, gL2 = extract(gL, (0, 0), (n, n)), extract(gL, (n, 0), (m - n, n))
    gB2 = _right_inv_h(gL2, U)
    gB1 = _lu_square_backward(L1, U, gL1, gU - matmul(mh(L2), gB2))
    return matmul(P, embed(gB1, shape, (0, 0)) + embed(gB2, shape, (n, 0)))


def _factor(name, A, pivot):
    check_lu_input(name, A)
    _no_pivot(pivot)
    return dispatch(_lu_factor, (A,))


def _singular_error(name, info):
    """PyTorch's error for the first matrix with a zero on U's diagonal, else None."""
    flat = _lapack.host(info).reshape(-1)
    bad = np.nonzero(flat > 0)[0]
    if not bad.size:
        return None
    b = int(bad[0])
    k = int(flat[b])
    prefix = f"(Batch element {b}): " if info.ndim else ""
    return RuntimeError(f"{name}: {prefix}U[{k},{k}] is zero and using it on lu_solve would "
                        "result in a division by zero. If you still want to perform the "
                        "factorization, consider calling linalg.lu(A, pivot) or "
                        "linalg.lu_factor_ex(A, pivot)")


def write_exact(results, out):
    """out= of the LAPACK-backed functions, whose out tensors must have the results' dtypes
    exactly (no casting, unlike elementwise ops)."""
    for r, o in zip(results, out):
        if o.dtype is not r.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {C_NAMES[r.dtype]}, but got "
                               f"{C_NAMES[o.dtype]} instead")
    return tuple(write_out(r, o) for r, o in zip(results, out))


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    LU, pivots, info = _factor("linalg.lu_factor_ex", A, pivot)
    if check_errors:
        error = _singular_error("torch.linalg.lu_factor_ex", info._data)
        if error is not None:
            raise error
    if out is None:
        return LUFactorEx((LU, pivots, info))
    return LUFactorExOut(write_exact((LU, pivots, info), out))


def lu_factor(A, *, pivot=True, out=None):
    LU, pivots, info = _factor("linalg.lu_factor", A, pivot)
    error = _singular_error("torch.linalg.lu_factor", info._data)
    if error is not None:
        raise error
    if out is None:
        return LUFactor((LU, pivots))
    return LUFactorOut(write_exact((LU, pivots), out))


# ---------------------------------------------------------------------- linalg.lu
@defop("linalg_lu", node="LinalgLuBackward0", save=(), save_output=True, num_outputs=3,
       conj_ready=True)
def _lu(a):
    lu, pivots, _ = _getrf(a)
    return _unpack_arrays(lu, pivots)


@_lu.defvjp
def _lu_vjp(ctx, gP, gL, gU):
    P, L, U = ctx.outputs
    return lu_backward(P.detach(), L, U, gL, gU)


def lu(A, *, pivot=True, out=None):
    check_lu_input("linalg.lu", A)
    _no_pivot(pivot)
    P, L, U = dispatch(_lu, (A,))
    # P is not differentiable (PyTorch's P does not require grad)
    if out is None:
        return LUResult((P.detach(), L, U))
    return LUResultOut(write_exact((P.detach(), L, U), out))


# ---------------------------------------------------------------------- lu_unpack
@defop("lu_unpack", node="LuUnpackBackward0", save=(), num_outputs=3, conj_ready=True)
def _lu_unpack(lu, pivots, unpack_data, unpack_pivots):
    return _unpack_arrays(lu, pivots, unpack_data, unpack_pivots)


@_lu_unpack.defvjp
def _lu_unpack_vjp(ctx, gP, gL, gU):
    if not ctx.params["unpack_data"]:
        return None, None
    shape = ctx.in_meta[0][0]
    return embed(tril(gL, -1), shape, (0, 0)) + embed(triu(gU), shape, (0, 0)), None


@export(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    check_tensor("lu_unpack", LU_data, "LU_data")
    check_tensor("lu_unpack", LU_pivots, "LU_pivots", 2)
    shape = LU_data._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(shape)} instead")
    if unpack_pivots:
        _check_unpack_pivots(LU_data, LU_pivots)
    P, L, U = dispatch(_lu_unpack, (LU_data, LU_pivots),
                       {"unpack_data": unpack_data, "unpack_pivots": unpack_pivots})
    if out is None:
        return LUUnpack((P.detach(), L, U))
    return LUUnpackOut(tuple(write_out(r, o) for r, o in zip((P.detach(), L, U), out)))


def _check_unpack_pivots(LU, pivots):
    if pivots.dtype is not dt.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    m, n = LU._data.shape[-2:]
    k = min(m, n)
    # (fewer pivots than min(m, n) are applied as given, as PyTorch does)
    if pivots._data.ndim == 0 or pivots._data.shape[-1] > k:
        raise RuntimeError(f"torch.lu_unpack: Expected LU_pivots.shape[-1] <= {k}, but got "
                           f"{list(pivots._data.shape)}")
    p = pivots._data
    if p.size and (int(p.min()) < 1 or int(p.max()) > m):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")


# ---------------------------------------------------------------------- lu_solve
def _getrs(lu, pivots, b, trans):
    """X with op(A) X = B for A = P L U given by (lu, pivots); op is trans 0/1/2 = N/T/C.
    The batch dims of (lu, pivots) and b broadcast."""
    n = lu.shape[-1]
    batch = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    lu_h = np.broadcast_to(_lapack.host(lu), batch + (n, n))
    piv_h = np.broadcast_to(_lapack.host(pivots), batch + (n,))
    b_h = np.broadcast_to(_lapack.host(b), batch + b.shape[-2:])
    x = np.empty(batch + b.shape[-2:], lu.dtype)
    if x.size == 0:
        return _lapack.back(lu, x)
    getrs = _lapack.routine("getrs", lu.dtype)
    for idx in _lapack.batch_indices(batch):
        x[idx], _ = getrs(lu_h[idx], piv_h[idx] - 1, b_h[idx], trans=trans)
    return _lapack.back(lu, x)


@defop("linalg_lu_solve", node="LinalgLuSolveBackward0", save_output=True, conj_ready=True)
def _lu_solve(lu, pivots, b, adjoint):
    trans = (2 if np.iscomplexobj(lu) else 1) if adjoint else 0
    return _getrs(lu, pivots, b, trans)


@_lu_solve.defvjp
def _lu_solve_vjp(ctx, gX):
    LU, pivots, _ = ctx.inputs
    adjoint = ctx.params["adjoint"]
    X = ctx.output
    gB = lu_solve_matrix(LU, pivots, gX, not adjoint)
    gLU = None
    if ctx.edges[0] is not None:
        # A X = B: dX = -A^-1 dA X, so gA = -gB X^H (and -X gB^H for A^H X = B); through
        # A = P L U this is gLU = -(tril(P^T H U^H, -1) + triu(L^H P^T H)) with H = gB X^H
        H = matmul(X, mh(gB)) if adjoint else matmul(gB, mh(X))
        P, L, U = _lu_parts(LU, pivots)
        PtH = matmul(P.mT, H)
        gLU = -(tril(matmul(PtH, mh(U)), -1) + triu(matmul(mh(L), PtH)))
    return gLU, None, gB


def lu_solve_matrix(LU, pivots, B, adjoint=False):
    """X with A X = B (A^H X = B when adjoint) for A given by its packed LU."""
    return dispatch(_lu_solve, (LU, pivots, B), {"adjoint": adjoint})


def _check_lu_solve(LU, pivots, B, left):
    check_tensor("linalg_lu_solve", LU, "LU")
    check_tensor("linalg_lu_solve", pivots, "pivots", 2)
    check_tensor("linalg_lu_solve", B, "B", 3)
    if LU.dtype.category < dt.FLOATING:
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex "
                           f"tensor as input. Got {dt.type_name(LU.dtype)}")
    if LU._data.ndim < 2:
        raise RuntimeError("torch.linalg.lu_solve: The input tensor A must have at least 2 "
                           "dimensions.")
    m, n = LU._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, but "
                           f"they are {m} by {n} matrices")
    if B._data.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    rows = B._data.shape[-2] if left else B._data.shape[-1]
    if rows != n:
        b1, b2 = B._data.shape[-2:]
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b1}x{b2})")
    if B.dtype is not LU.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {dt.type_name(LU.dtype)} and B of type "
                           f"{dt.type_name(B.dtype)} instead")
    if pivots.dtype is not dt.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    if pivots._data.shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if pivots._data.shape != LU._data.shape[:-1]:
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be "
                           f"the same, but got pivots with shape {list(pivots._data.shape)} "
                           f"instead")
    p = pivots._data
    if p.size and int(p.max()) > n:
        raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                           "LU.size(-2). Did you properly pass the result of lu_factor?")
    if p.size and int(p.min()) < 1:
        raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did "
                           "you properly pass the result of lu_factor?")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    _check_lu_solve(LU, pivots, B, left)
    if left:
        X = lu_solve_matrix(LU, pivots, B, adjoint)
    else:
        # X A = B  <=>  A^H X^H = B^H (and X A^H = B <=> A X^H = B^H)
        X = mh(lu_solve_matrix(LU, pivots, mh(B), not adjoint))
    return X if out is None else write_exact((X,), (out,))[0]


# ---------------------------------------------------------------------- deprecated forms
_warned = set()


def _warn_once(key, message, stacklevel):
    # PyTorch warns once per process (TORCH_WARN_ONCE), not once per call site
    if key not in _warned or _runtime_settings.is_warn_always_enabled():
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")

_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")


def _lu_with_info(A, pivot, get_infos):
    # (PyTorch's torch.lu: boolean_dispatch tests get_infos, then _lu_with_info's parser
    # checks A and pivot, then the kernel A's shape and dtype)
    bool(get_infos)
    if not isinstance(A, Tensor):
        raise TypeError(f"_lu_with_info(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(A)}")
    if type(pivot) is not bool:
        raise TypeError(f"_lu_with_info(): argument 'pivot' must be bool, not "
                        f"{type_name(pivot)}")
    _warn_once("lu", _LU_DEPRECATED, 3)
    check_lu_input("linalg.lu_factor_ex", A)
    _no_pivot(pivot)
    return dispatch(_lu_factor, (A,))


@export(name="lu", method=False)
def lu_legacy(A, pivot=True, get_infos=False, out=None):
    """torch.lu: (LU, pivots), or the named (LU, pivots, info) with get_infos."""
    LU, pivots, info = _lu_with_info(A, pivot, get_infos)
    if get_infos:
        return LUWithInfo((LU, pivots, info) if out is None else
                          write_exact((LU, pivots, info), out))
    return (LU, pivots) if out is None else write_exact((LU, pivots), out)


@export(name="lu", function=False)
def lu_method(self, pivot=True, get_infos=False):
    """Tensor.lu: a plain tuple (LU, pivots[, infos]), as PyTorch's method returns."""
    LU, pivots, info = _lu_with_info(self, pivot, get_infos)
    return (LU, pivots, info) if get_infos else (LU, pivots)


@export(name="lu_solve")
def lu_solve_legacy(input, LU_data, LU_pivots, *, out=None):
    """torch.lu_solve(b, LU_data, LU_pivots): linalg.lu_solve with its arguments reversed."""
    _warn_once("lu_solve", _LU_SOLVE_DEPRECATED, 2)
    check_tensor("lu_solve", input)
    check_tensor("lu_solve", LU_data, "LU_data", 2)
    check_tensor("lu_solve", LU_pivots, "LU_pivots", 3)
    return lu_solve(LU_data, LU_pivots, input, out=out)
