"""The LDL^T (Bunch-Kaufman) factorization: linalg.ldl_factor(_ex) and linalg.ldl_solve, on
LAPACK's sytrf/hetrf and sytrs/hetrs (ops/_lapack.py), whose pivots PyTorch returns as they are
(1-based, negative for 2 x 2 blocks). PyTorch does not differentiate these; neither does ember,
and backward says so in PyTorch's words.
"""
import numpy as np

from .. import _dtype as dt
from . import _lapack
from .linalg_checks import square_check
from .linalg_primitives import return_type
from .linalg_lu import write_exact
from .registry import check_tensor, defop, dispatch

LDLFactor = return_type("linalg_ldl_factor", ("LD", "pivots"))
LDLFactorEx = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
LDLFactorOut = return_type("linalg_ldl_factor_out", ("LD", "pivots"))
LDLFactorExOut = return_type("linalg_ldl_factor_ex_out", ("LD", "pivots", "info"))


def _routine(kind, dtype, hermitian):
    # LAPACK's he* routines are for complex Hermitian matrices; real ones are symmetric ones
    complex_hermitian = hermitian and np.dtype(dtype).kind == "c"
    return _lapack.routine(("he" if complex_hermitian else "sy") + kind, dtype)


def _check_square(name, A, kernel):
    square_check(name, A)
    if A.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dt.type_name(A.dtype)}")
    if A.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.type_name(A.dtype)}'")


# ---------------------------------------------------------------------- ldl_factor
@defop("linalg_ldl_factor_ex", node="NotImplemented", save=(), num_outputs=3)
def _ldl_factor(a, hermitian):
    batch, n = a.shape[:-2], a.shape[-1]
    src = _lapack.host(a)
    ld = np.zeros_like(src)
    pivots = np.zeros(batch + (n,), np.int32)
    info = np.zeros(batch, np.int32)
    if a.size:
        sytrf = _routine("trf", src.dtype, hermitian)
        for idx in _lapack.batch_indices(batch):
            factor, pivots[idx], info[idx] = sytrf(src[idx], lower=1)
            # LAPACK leaves the strict upper triangle as it was; PyTorch returns zeros there
            ld[idx] = np.tril(factor)
    return _lapack.back(a, ld), _lapack.back(a, pivots), _lapack.back(a, info)


@_ldl_factor.defvjp
def _ldl_factor_vjp(ctx, *grads):
    raise RuntimeError("derivative for aten::linalg_ldl_factor_ex is not implemented")


def _factor(A, hermitian, function):
    check_tensor(function, A)
    _check_square("torch.linalg.ldl_factor_ex", A, "ldl_factor_kernel_cpu")
    return dispatch(_ldl_factor, (A,), {"hermitian": hermitian})


def _raise_on_info(name, info):
    flat = _lapack.host(info._data).reshape(-1)
    bad = flat[flat != 0]
    if bad.size:
        # NOTE: PyTorch reports a singular D this way (an internal assert of its own); the
        # words after the assert's preamble are the same here.
        raise RuntimeError(f"{name}: Unknown error code: {int(bad[0])}.")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    LD, pivots, info = _factor(A, hermitian, "linalg_ldl_factor_ex")
    if check_errors:
        _raise_on_info("torch.linalg.ldl_factor_ex", info)
    if out is None:
        return LDLFactorEx((LD, pivots, info))
    return LDLFactorExOut(write_exact((LD, pivots, info), out))


def ldl_factor(A, *, hermitian=False, out=None):
    LD, pivots, info = _factor(A, hermitian, "linalg_ldl_factor")
    _raise_on_info("torch.linalg.ldl_factor", info)
    if out is None:
        return LDLFactor((LD, pivots))
    return LDLFactorOut(write_exact((LD, pivots), out))


# ---------------------------------------------------------------------- ldl_solve
@defop("linalg_ldl_solve", node="NotImplemented", save=())
def _ldl_solve(ld, pivots, b, hermitian):
    n = ld.shape[-1]
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld_h = np.broadcast_to(_lapack.host(ld), batch + (n, n))
    piv_h = np.broadcast_to(_lapack.host(pivots).astype(np.int32), batch + (n,))
    b_h = np.broadcast_to(_lapack.host(b), batch + b.shape[-2:])
    x = np.empty(batch + b.shape[-2:], ld.dtype)
    if x.size:
        sytrs = _routine("trs", ld.dtype, hermitian)
        for idx in _lapack.batch_indices(batch):
            x[idx], _ = sytrs(ld_h[idx], piv_h[idx], b_h[idx], lower=1)
    return _lapack.back(ld, x)


@_ldl_solve.defvjp
def _ldl_solve_vjp(ctx, g):
    raise RuntimeError("derivative for aten::linalg_ldl_solve is not implemented")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    check_tensor("linalg_ldl_solve", LD, "LD")
    check_tensor("linalg_ldl_solve", pivots, "pivots", 2)
    check_tensor("linalg_ldl_solve", B, "B", 3)
    name = "torch.linalg.ldl_solve"
    _check_square(name, LD, "ldl_solve_kernel_cpu")
    # (PyTorch's order: B against LD, dtype then sizes; then the pivots' shape and dtype)
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{dt.type_name(B.dtype)} and A of type {dt.type_name(LD.dtype)} "
                           "instead.")
    if B._data.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B._data.ndim, 1)}, {max(B._data.ndim, 1) - 1}], but got -2)")
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._data.shape[-2]} by {B._data.shape[-1]}")
    if pivots._data.shape != LD._data.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots._data.shape)} instead")
    if pivots.dtype.category != dt.INTEGER:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{dt.type_name(pivots.dtype)}")
    X = dispatch(_ldl_solve, (LD, pivots, B), {"hermitian": hermitian})
    return X if out is None else write_exact((X,), (out,))[0]
