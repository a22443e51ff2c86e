"""Linear solves: linalg.solve (A X = B, or X A = B), the triangular solves
(linalg.solve_triangular and the deprecated triangular_solve) and cholesky_solve. Forward on
xp.linalg; each VJP is another solve with the adjoint, so it differentiates again."""
import numpy as np

from .. import _dtype as dt
from ..backends import array_module, numpy_backend
from ._promote import broadcast_error
from .linalg_checks import check_linear_solve, check_matrix, linalg_error, singular_error
from .linalg_primitives import mh, return_type, tril, triu
from .matmul import matmul
from .registry import defop, dispatch


# ---------------------------------------------------------------------- solve
def _batches_broadcast(xp, a, b):
    """a (..., n, n) and b (..., n, k) with their batch dimensions broadcast to one shape:
    NumPy's solve broadcasts them itself, CuPy's requires them equal."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:])


@defop("linalg_solve", node="LinalgSolveExBackward0", save_output=True)
def _solve(a, b):
    xp = array_module(a, b)
    a, b = _batches_broadcast(xp, a, b)
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.solve(a, b)
    except linalg_error(xp):
        raise singular_error("linalg.solve", a) from None


@_solve.defvjp
def _solve_vjp(ctx, g):
    a = ctx.inputs[0]
    gb = solve_matrix(mh(a), g)
    ga = -matmul(gb, mh(ctx.output)) if ctx.edges[0] is not None else None
    return ga, gb


def solve_matrix(A, B):
    return dispatch(_solve, (A, B))


def solve(A, B, *, left=True, out=None):
    check_matrix("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {dt.type_name(A.dtype)} and B of type "
                           f"{dt.type_name(B.dtype)} instead")
    sa, sb = A._data.shape, B._data.shape
    vector = B._data.ndim == 1 or (B._data.ndim == len(sa) - 1 and sb == sa[:-1])
    if vector:
        B = B.unsqueeze(-1)
    elif B._data.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if not left:
        A, B = A.mT, B.mT
    n = B._data.shape[-2]
    if n != sa[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({sa[-2]}x{sa[-1]} and "
                           f"{sb[-2] if len(sb) > 1 else sb[0]}x{sb[-1] if len(sb) > 1 else 1})")
    X = solve_matrix(A, B)
    if not left:
        X = X.mT
    return X.squeeze(-1) if vector else X


# ---------------------------------------------------------------------- triangular solves
@defop("linalg_solve_triangular", node="LinalgSolveTriangularBackward0", save_output=True)
def _solve_triangular(a, b, upper, unitriangular):
    xp = array_module(a, b)
    n = a.shape[-1]
    mask = xp.tri(n, n, -1 if unitriangular else 0, dtype=bool)
    t = xp.where(mask.T if upper else mask, a, 0)
    if unitriangular:
        t = t + xp.eye(n, dtype=a.dtype)
    t, b = _batches_broadcast(xp, t, b)
    with np.errstate(all="ignore"):
        try:
            with numpy_backend.linalg_raises(t):
                return xp.linalg.solve(t, b)
        except linalg_error(xp):
            # a zero on the diagonal: LAPACK's trtrs would divide by it; so do we
            return xp.matmul(_tri_inverse(xp, t), b)


def _tri_inverse(xp, t):
    # NOTE: reached only for singular triangular matrices: back-substitution with inf/nan
    with np.errstate(all="ignore"):
        return xp.linalg.pinv(t) * xp.inf


@_solve_triangular.defvjp
def _solve_triangular_vjp(ctx, g):
    a = ctx.inputs[0]
    upper, unit = ctx.params["upper"], ctx.params["unitriangular"]
    gb = solve_triangular_matrix(mh(a), g, not upper, unit)
    ga = None
    if ctx.edges[0] is not None:
        ga = -matmul(gb, mh(ctx.output))
        k = -1 if unit else 0
        ga = triu(ga, -k) if upper else tril(ga, k)
    return ga, gb


def solve_triangular_matrix(A, B, upper, unitriangular=False):
    return dispatch(_solve_triangular, (A, B), {"upper": upper,
                                                "unitriangular": unitriangular})


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    check_matrix("linalg.solve_triangular", A)
    if B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    if A.dtype is not B.dtype:   # (PyTorch's kernel copies B into A's dtype)
        B = B.to(A.dtype)
    sa, sb = A._data.shape, B._data.shape
    if (sa[-1] != sb[-2]) if left else (sa[-2] != sb[-1]):
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({sa[-2]}x{sa[-1]} and "
                           f"{sb[-2]}x{sb[-1]})")
    try:
        array_module(A._data).broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise broadcast_error(sa[:-2], sb[:-2]) from None
    if left:
        return solve_triangular_matrix(A, B, upper, unitriangular)
    return solve_triangular_matrix(A.mT, B.mT, not upper, unitriangular).mT


TriangularSolve = return_type("triangular_solve", ("solution", "cloned_coefficient"))


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated): solves A X = b; returns (X, A.clone())."""
    check_linear_solve("triangular_solve", b, A, (
        "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {} "
        "dimensions instead",
        "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {} "
        "dimensions instead"))
    M = A.mT if transpose else A
    X = solve_triangular_matrix(M, b, upper != transpose, unitriangular)
    return TriangularSolve((X, A.clone()))


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solves A X = B given A's Cholesky factor L (or U when upper)."""
    check_linear_solve("cholesky_solve", B, L, (
        "b should have at least 2 dimensions, but has {} dimensions instead",
        "u should have at least 2 dimensions, but has {} dimensions instead"))
    if upper:
        L = mh(L)
    Y = solve_triangular_matrix(L, B, False)
    return solve_triangular_matrix(mh(L), Y, True)


# NOTE: these VJPs are written in PyTorch's complex convention (conjugate transposes), so the
# engine must not conjugate around them (see registry.Op).
for _op in (_solve, _solve_triangular):
    _op.conj_ready = True
