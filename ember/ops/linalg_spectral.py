"""Spectral linear algebra: eigh, eig, pinv (through the SVD), matrix_exp. Forward on
xp.linalg; VJPs are the standard formulas written in ember ops, so they differentiate again.
"""
from .. import _dtype as dt
from ..backends import array_module, numpy_backend
from .._tensor import Tensor
from .linalg_checks import check_matrix
from .linalg_primitives import diag_matrix, embed, extract, eye_like, mh, return_type
from .matmul import matmul
from .registry import defop, dispatch


# ---------------------------------------------------------------------- eigh / eig
EighResult = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
EigResult = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))


@defop("linalg_eigh", node="LinalgEighBackward0", save=(), save_output=True, num_outputs=2)
def _eigh(a, UPLO):
    w, v = array_module(a).linalg.eigh(a, UPLO=UPLO)
    return w, v


@_eigh.defvjp
def _eigh_vjp(ctx, gL, gV):
    L, V = ctx.outputs
    n = L._data.shape[-1]
    # gA = V (diag(gL) + (V^H gV) / (l_j - l_i)) V^H, off-diagonal quotient only
    E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye_like(L, n)
    off = 1 - eye_like(L, n)
    inner = diag_matrix(gL) + matmul(mh(V), gV) * off / E
    return matmul(matmul(V, inner), mh(V))


def eigh(A, UPLO="L", *, out=None):
    check_matrix("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(dispatch(_eigh, (A,), {"UPLO": UPLO}))


def eigvalsh(A, UPLO="L", *, out=None):
    return eigh(A, UPLO)[0]


@defop("linalg_eig", node="LinalgEigBackward0", num_outputs=2)
def _eig(a):
    xp = array_module(a)
    w, v = xp.linalg.eig(a)
    c = dt.from_numpy_dtype(a.dtype).to_complex().np
    return w.astype(c), v.astype(c)


def eig(A, *, out=None):
    check_matrix("linalg.eig", A)
    return EigResult(dispatch(_eig, (A,)))


def eigvals(A, *, out=None):
    check_matrix("linalg.eigvals", A)
    return dispatch(_eig, (A,))[0]


# ---------------------------------------------------------------------- pinv
def _cutoff(xp, s, atol, rtol, shape):
    """max(atol, rtol * largest singular value), with PyTorch's default rtol (none where atol
    is positive). atol and rtol are numbers or arrays, one per matrix of the batch (broadcast
    against its dims)."""
    if rtol is None:
        default = xp.finfo(s.dtype).eps * max(shape[-2:])
        rtol = default if atol is None else xp.where(xp.asarray(atol) > 0, 0.0, default)
    top = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,))
    atol = 0.0 if atol is None else xp.asarray(atol)[..., None]
    return xp.maximum(atol, xp.asarray(rtol)[..., None] * top)


@defop("linalg_pinv", node="LinalgPinvBackward0", save_output=True)
def _pinv(a, atol, rtol, hermitian):
    xp = array_module(a)
    if hermitian:
        w, v = xp.linalg.eigh(a)
        cut = _cutoff(xp, xp.abs(w), atol, rtol, a.shape)
        keep = xp.abs(w) > cut
        w_inv = xp.where(keep, 1 / xp.where(keep, w, 1), 0)
        return xp.matmul(v * w_inv[..., None, :], xp.conj(xp.swapaxes(v, -1, -2)))
    u, s, vh = xp.linalg.svd(a, full_matrices=False)
    cut = _cutoff(xp, s, atol, rtol, a.shape)
    keep = s > cut
    s_inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(s.dtype)
    return xp.matmul(xp.conj(xp.swapaxes(vh, -1, -2)) * s_inv[..., None, :],
                     xp.conj(xp.swapaxes(u, -1, -2)))


@_pinv.defvjp
def _pinv_vjp(ctx, g):
    # Golub & Pereyra: dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P
    A, P = ctx.inputs[0], ctx.output
    m, n = A._data.shape[-2:]
    Ph = mh(P)
    gA = -matmul(matmul(Ph, g), Ph)
    gh = mh(g)
    gA = gA + matmul(eye_like(A, m) - matmul(A, P), matmul(gh, matmul(P, Ph)))
    gA = gA + matmul(matmul(matmul(Ph, P), gh), eye_like(A, n) - matmul(P, A))
    return gA


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    if A._data.ndim < 2 or A.dtype not in (dt.float32, dt.float64, dt.complex64,
                                           dt.complex128):
        raise RuntimeError(f"linalg.pinv({_legacy_name(A.dtype)}{{{list(A._data.shape)}}}): "
                           "expected a tensor with 2 or more dimensions of float, double, "
                           "cfloat or cdouble types")
    # (tensor tolerances hold one value per matrix, broadcast against the batch)
    atol = atol._data if isinstance(atol, Tensor) else atol
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    return dispatch(_pinv, (A,), {"atol": atol, "rtol": rtol, "hermitian": hermitian},
                    A.dtype)


def _legacy_name(d):
    return {dt.float16: "Half", dt.bfloat16: "BFloat16"}.get(d, dt.type_name(d))


# ---------------------------------------------------------------------- matrix_exp
@defop("linalg_matrix_exp", node="LinalgMatrixExpBackward0", save=(0,))
def _matrix_exp(a):
    return numpy_backend.matrix_exp(a) if a.shape[-1] else a.copy()


@_matrix_exp.defvjp
def _matrix_exp_vjp(ctx, g):
    # exp([[A^H, G], [0, A^H]]) holds the adjoint of exp at A in its top-right block
    a = ctx.inputs[0]
    n = a._data.shape[-1]
    shape = a._data.shape[:-2] + (2 * n, 2 * n)
    ah = mh(a)
    block = embed(ah, shape, (0, 0)) + embed(g, shape, (0, n)) + embed(ah, shape, (n, n))
    return extract(matrix_exp(block), (0, n), (n, n))


def matrix_exp(A):
    check_matrix("linalg.matrix_exp", A)
    return dispatch(_matrix_exp, (A,), dtype=A.dtype)


# NOTE: written in PyTorch's complex convention already (see registry.Op and linalg_decomp).
for _op in (_eigh, _eig, _pinv, _matrix_exp):
    _op.conj_ready = True
