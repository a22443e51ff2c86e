"""Matrix decompositions and what they give: inv, det, slogdet, cholesky, qr, svd (solves are
in linalg_solve.py; eigh, eig, pinv and matrix_exp in linalg_spectral.py). Forward on
xp.linalg (NumPy's works on batches); VJPs are the standard formulas written in ember ops, so
they differentiate again.
"""
import numpy as np

from .. import _dtype as dt
from .._tensor import _wrap
from ..backends import array_module, numpy_backend
from .linalg_checks import (LinAlgError, batch_prefix, check_matrix, first_zero_pivot,
                            info_zeros, linalg_error, singular_error)
from .linalg_primitives import (const, diag_matrix, diagonal, embed, extract, eye_like, mh,
                                return_type, tril)
from .linalg_solve import solve_triangular_matrix
from .matmul import matmul
from .registry import defop, dispatch
from .complex import conj


# ---------------------------------------------------------------------- inv
@defop("linalg_inv", node="LinalgInvExBackward0", save=(), save_output=True)
def _inv(a):
    xp = array_module(a)
    if a.shape[-1] == 0:
        return a.copy()
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.inv(a)
    except linalg_error(xp):
        raise singular_error("linalg.inv", a) from None


@_inv.defvjp
def _inv_vjp(ctx, g):
    ih = mh(ctx.output)
    return -matmul(matmul(ih, g), ih)


def inv(A, *, out=None):
    check_matrix("linalg.inv", A)
    return dispatch(_inv, (A,), dtype=A.dtype)


InvEx = return_type("linalg_inv_ex", ("inverse", "info"))


def inv_ex(A, *, check_errors=False):
    check_matrix("linalg.inv", A)
    xp = array_module(A._data)
    try:
        return InvEx((inv(A), info_zeros(A)))
    except LinAlgError:
        if check_errors:
            raise
    # NOTE: a singular matrix gives info = the zero pivot and an inf/nan 'inverse' (torch's
    # LAPACK result differs in which entries are inf; callers should only read info).
    a = A._data
    info = xp.zeros(a.shape[:-2], dtype=xp.int32)
    b, k = first_zero_pivot(a)
    info.reshape(-1)[b] = k
    with_nan = xp.full(a.shape, xp.nan, dtype=a.dtype)
    return InvEx((const(A, with_nan), _wrap(info, dt.int32, A._device)))


# ---------------------------------------------------------------------- det / slogdet
@defop("linalg_det", node="LinalgDetBackward0", save_output=True)
def _det(a):
    return array_module(a).linalg.det(a)


@_det.defvjp
def _det_vjp(ctx, g):
    a = ctx.inputs[0]
    d = ctx.output
    d = conj(d)
    return (g * d).unsqueeze(-1).unsqueeze(-1) * mh(inv(a))


def det(A):
    check_matrix("linalg.det", A)
    return dispatch(_det, (A,), dtype=A.dtype)


SlogdetResult = return_type("linalg_slogdet", ("sign", "logabsdet"))
SlogdetLegacy = return_type("slogdet", ("sign", "logabsdet"))


@defop("linalg_slogdet", node="LinalgSlogdetBackward0", num_outputs=2, save_output=True)
def _slogdet(a):
    sign, logabs = array_module(a).linalg.slogdet(a)
    return sign, logabs


@_slogdet.defvjp
def _slogdet_vjp(ctx, g_sign, g_logabs):
    # d log det A = tr(A^-1 dA) = d log|det| + i d(angle of the sign): the gradient of log det
    # is g_logabs, plus i times the sign's angle gradient for complex A (a real sign, +-1, has
    # none), and A's gradient is that times A^-H
    a = ctx.inputs[0]
    g = g_logabs
    if g_sign is not None and a.dtype.is_complex:
        angle_grad = (g_sign.conj() * ctx.outputs[0]).imag
        g = (angle_grad * -1j) if g is None else g - 1j * angle_grad
    return g.unsqueeze(-1).unsqueeze(-1) * mh(inv(a))


def slogdet(A, *, out=None):
    check_matrix("linalg.slogdet", A)
    sign, logabs = dispatch(_slogdet, (A,))
    return SlogdetResult((sign, logabs))


def logdet(A):
    check_matrix("linalg.logdet", A)
    sign, logabs = slogdet(A)
    if A.dtype.is_complex:   # log(sign) + log|det|: the complex logarithm of the determinant
        return sign.log() + logabs
    xp = array_module(sign._data)
    # log(sign): 0 for positive determinants, nan for negative ones (as PyTorch's logdet)
    with_nan = xp.where(sign._data.real < 0, xp.nan, 0).astype(logabs.dtype.np)
    return logabs + const(logabs, with_nan) if (sign._data.real < 0).any() else logabs


# ---------------------------------------------------------------------- cholesky
@defop("linalg_cholesky", node="LinalgCholeskyExBackward0", save=(), save_output=True)
def _cholesky(a):
    xp = array_module(a)
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.cholesky(a)
    except linalg_error(xp):
        raise _not_pd(a) from None


def _not_pd(a):
    host = np.asarray(a.get() if hasattr(a, "get") else a)
    mats = host.reshape((-1,) + host.shape[-2:])
    for b, m in enumerate(mats):
        try:
            np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            # the leading minor that fails: the smallest k whose top-left block is not PD
            order = next(k for k in range(1, m.shape[-1] + 1)
                         if not _is_pd(m[:k, :k]))
            return LinAlgError(
                f"linalg.cholesky: {batch_prefix(host, b)}The factorization could not be "
                "completed because the input is not positive-definite (the leading minor of "
                f"order {order} is not positive-definite).")
    return LinAlgError("linalg.cholesky: The factorization could not be completed because "
                       "the input is not positive-definite.")


def _is_pd(m):
    try:
        np.linalg.cholesky(m)
        return True
    except np.linalg.LinAlgError:
        return False


@_cholesky.defvjp
def _cholesky_vjp(ctx, g):
    # Murray (2016): S = L^-H phi(L^H gL) L^-1, gA = (S + S^H) / 2, phi = tril, half diagonal
    L = ctx.output
    n = L._data.shape[-1]
    P = matmul(mh(L), g)
    P = tril(P) - 0.5 * diag_matrix(diagonal(P)) if n else P
    Y = solve_triangular_matrix(mh(L), P, True)            # L^-H P
    S = mh(solve_triangular_matrix(mh(L), mh(Y), True))    # L^-H P L^-1
    return 0.5 * (S + mh(S))


def cholesky(A, *, upper=False, out=None):
    check_matrix("linalg.cholesky", A)
    L = dispatch(_cholesky, (A,))
    return mh(L) if upper else L


CholeskyEx = return_type("linalg_cholesky_ex", ("L", "info"))


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    try:
        return CholeskyEx((cholesky(A, upper=upper), info_zeros(A)))
    except LinAlgError as e:
        if check_errors:
            raise
        order = int(str(e).split("order ")[1].split(" ")[0]) if "order " in str(e) else 1
        info = info_zeros(A)
        info._data.reshape(-1)[_batch_of(e)] = order
        xp = array_module(A._data)
        return CholeskyEx((const(A, xp.full(A._data.shape, xp.nan, A.dtype.np)), info))


def _batch_of(e):
    text = str(e)
    return int(text.split("Batch element ")[1].split(")")[0]) if "Batch element" in text else 0


# ---------------------------------------------------------------------- qr
QRResult = return_type("linalg_qr", ("Q", "R"))
QRLegacy = return_type("qr", ("Q", "R"))


@defop("linalg_qr", node="LinalgQrBackward0", save=(), save_output=True, num_outputs=2)
def _qr(a, mode):
    xp = array_module(a)
    if mode == "r":
        return xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
    q, r = xp.linalg.qr(a, mode=mode)
    return q, r


@_qr.defvjp
def _qr_vjp(ctx, gQ, gR):
    Q, R = ctx.outputs
    mode = ctx.params["mode"]
    m, n = ctx.in_meta[0][0][-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if m < n:
        # A = [X | Y] with X = Q U square and Y = Q V: differentiate the square part, with
        # Y's dependence on Q folded into gQ
        U, V = extract(R, (0, 0), (m, m)), extract(R, (0, m), (m, n - m))
        gU, gV = extract(gR, (0, 0), (m, m)), extract(gR, (0, m), (m, n - m))
        gX = _qr_square_vjp(Q, U, gQ + matmul(matmul(Q, V), mh(gV)), gU)
        shape = ctx.in_meta[0][0]
        return embed(gX, shape, (0, 0)) + embed(matmul(Q, gV), shape, (0, m))
    return _qr_square_vjp(Q, R, gQ, gR)


def _qr_square_vjp(Q, R, gQ, gR):
    # M = R gR^H - gQ^H Q; gA = (gQ + Q copyltu(M)) R^-H, copyltu mirrors the lower triangle
    M = matmul(R, mh(gR)) - matmul(mh(gQ), Q)
    lower = tril(M, -1)
    sym = lower + mh(lower) + diag_matrix(diagonal(M))
    b = gQ + matmul(Q, sym)
    return mh(solve_triangular_matrix(R, mh(b), True))


def qr(A, mode="reduced", *, out=None):
    check_matrix("linalg.qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return QRResult(dispatch(_qr, (A,), {"mode": mode}))


# ---------------------------------------------------------------------- svd
SVDResult = return_type("linalg_svd", ("U", "S", "Vh"))
SVDLegacy = return_type("svd", ("U", "S", "V"))


@defop("linalg_svd", node="LinalgSvdBackward0", save=(), save_output=True, num_outputs=3)
def _svd(a, full_matrices):
    xp = array_module(a)
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


@_svd.defvjp
def _svd_vjp(ctx, gU, gS, gVh):
    U, S, Vh = ctx.outputs
    m, n = ctx.in_meta[0][0][-2:]
    k = min(m, n)
    if ctx.params["full_matrices"] and m != n:
        U, Vh = extract(U, (0, 0), (m, k)), extract(Vh, (0, 0), (k, n))
        gU, gVh = extract(gU, (0, 0), (m, k)), extract(gVh, (0, 0), (k, n))
    V, gV = mh(Vh), mh(gVh)
    # E_jk = s_k^2 - s_j^2 off the diagonal (1 on it, where skew(.) is zero anyway)
    s2 = S * S
    E = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye_like(S, k)
    skew_u = matmul(mh(U), gU)
    skew_u = skew_u - mh(skew_u)
    skew_v = matmul(mh(V), gV)
    skew_v = skew_v - mh(skew_v)
    inner = (skew_u / E) * S.unsqueeze(-2) + S.unsqueeze(-1) * (skew_v / E) + diag_matrix(gS)
    gA = matmul(matmul(U, inner), Vh)
    inv_s = 1 / S
    if m > k:  # the part of gU outside U's column space
        proj = gU - matmul(U, matmul(mh(U), gU))
        gA = gA + matmul(proj * inv_s.unsqueeze(-2), Vh)
    if n > k:
        proj = gV - matmul(V, matmul(Vh, gV))
        gA = gA + matmul(U * inv_s.unsqueeze(-2), mh(proj))
    return gA


def svd(A, full_matrices=True, *, driver=None, out=None):
    check_matrix("linalg.svd", A, square=False)
    return SVDResult(dispatch(_svd, (A,), {"full_matrices": full_matrices}))


def svdvals(A, *, driver=None, out=None):
    check_matrix("linalg.svd", A, square=False)
    return dispatch(_svd, (A,), {"full_matrices": False})[1]


def svd_legacy(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: returns V (not Vh); zero-filled U and V when compute_uv=False."""
    check_matrix("linalg.svd", input, square=False)
    U, S, Vh = dispatch(_svd, (input,), {"full_matrices": not some})
    if not compute_uv:
        xp = array_module(U._data)
        return SVDLegacy((const(U, xp.zeros_like(U._data)), S,
                          const(Vh, xp.zeros_like(Vh._data))))
    return SVDLegacy((U, S, mh(Vh)))


# NOTE: these VJPs are written in PyTorch's complex convention (conjugate transposes), so the
# engine must not conjugate around them (see registry.Op).
for _op in (_inv, _det, _slogdet, _cholesky, _qr, _svd):
    _op.conj_ready = True
