"""Square-matrix linear algebra: inv, det, slogdet, solve, triangular solves, cholesky, qr,
svd (eigh, eig, pinv and matrix_exp are in linalg_spectral.py). Forward on xp.linalg (NumPy's
works on batches); VJPs are the standard formulas written in ember ops, so they differentiate
again.
"""
from .. import _dtype as dt
from .._tensor import _wrap
from ..backends import array_module, numpy_backend
from .linalg import (conj, const, diag_matrix, diagonal, embed, extract, eye_like, mh, return_type,
                     tril, triu)
from .matmul import matmul
from .registry import check_tensor, defop, dispatch


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (torch.linalg.LinAlgError)."""


_LOW = (dt.float16, dt.bfloat16)
# kernels whose PyTorch message for an unsupported dtype names them ("lu_cpu" ...)
_KERNEL = {"linalg.det": "lu_cpu", "linalg.solve": "lu_cpu", "linalg.cholesky": "cholesky_cpu",
           "linalg.qr": "geqrf_cpu", "linalg.svd": "linalg_svd_cpu",
           "linalg.eigh": "linalg_eigh_cpu", "linalg.eig": "linalg_eig_out_cpu",
           "linalg.eigvals": "linalg_eig_out_cpu",
           "linalg.solve_triangular": "triangular_solve_cpu"}


# linalg functions whose first argument PyTorch's schema calls `self` (printed 'input').
_SELF_NAMED = {"linalg.cholesky", "linalg.cholesky_ex", "linalg.eig", "linalg.eigvals",
               "linalg.eigh", "linalg.eigvalsh", "linalg.matrix_exp", "linalg.matrix_power",
               "linalg.pinv", "linalg.ldl_factor"}


def check_matrix(name, A, square=True):
    """PyTorch's checks for a (batch of) matrix input: rank, dtype, squareness."""
    check_tensor(name.replace(".", "_"), A, "input" if name in _SELF_NAMED else "A")
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    d = A.dtype
    if d.category < 2:
        if name in ("linalg.eigh", "linalg.solve_triangular"):
            raise NotImplementedError(f'"{_KERNEL[name]}" not implemented for '
                                      f"'{dt.type_name(d)}'")
        if name in ("linalg.eig", "linalg.eigvals"):
            raise RuntimeError(f"Unknown Complex ScalarType for {dt.type_name(d)}")
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {dt.type_name(d)}")
    if d in _LOW:
        if name in _KERNEL:
            raise NotImplementedError(f'"{_KERNEL[name]}" not implemented for '
                                      f"'{dt.type_name(d)}'")
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{dt.type_name(d)}")
    if square and shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")


def _batch_prefix(a, index):
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def _first_zero_pivot(a):
    """(batch index, 1-based pivot) of the first matrix whose LU has a zero pivot."""
    # NOTE: error path only; SciPy's LU names the pivot LAPACK reports (CPU arrays).
    import numpy as np
    from scipy.linalg import lu_factor
    host = np.asarray(a.get() if hasattr(a, "get") else a)
    mats = host.reshape((-1,) + host.shape[-2:])
    for b, m in enumerate(mats):
        if not np.isfinite(m).all():
            continue
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lu, _ = lu_factor(m, check_finite=False)
        zeros = np.nonzero(np.diagonal(lu) == 0)[0]
        if zeros.size:
            return b, int(zeros[0]) + 1
    return 0, m.shape[-1]


def _singular(name, a):
    b, k = _first_zero_pivot(a)
    prefix = _batch_prefix(a, b)
    if name == "linalg.solve":
        return LinAlgError(f"torch.linalg.solve: {prefix}The solver failed because the input "
                           "matrix is singular.")
    return LinAlgError(f"{name}: {prefix}The diagonal element {k} is zero, the inversion "
                       "could not be completed because the input matrix is singular.")


def _linalg_error(xp):
    return xp.linalg.LinAlgError


# ---------------------------------------------------------------------- inv
@defop("linalg_inv", node="LinalgInvExBackward0", save=(), save_output=True)
def _inv(a):
    xp = array_module(a)
    if a.shape[-1] == 0:
        return a.copy()
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.inv(a)
    except _linalg_error(xp):
        raise _singular("linalg.inv", a) from None


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
        return InvEx((inv(A), _info_zeros(A)))
    except LinAlgError:
        if check_errors:
            raise
    # NOTE: a singular matrix gives info = the zero pivot and an inf/nan 'inverse' (torch's
    # LAPACK result differs in which entries are inf; callers should only read info).
    a = A._data
    info = xp.zeros(a.shape[:-2], dtype=xp.int32)
    b, k = _first_zero_pivot(a)
    info.reshape(-1)[b] = k
    with_nan = xp.full(a.shape, xp.nan, dtype=a.dtype)
    return InvEx((const(A, with_nan), _wrap(info, dt.int32, A._device)))


def _info_zeros(A):
    xp = array_module(A._data)
    return _wrap(xp.zeros(A._data.shape[:-2], dtype=xp.int32), dt.int32, A._device)


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


@defop("linalg_slogdet", node="LinalgSlogdetBackward0", num_outputs=2)
def _slogdet(a):
    sign, logabs = array_module(a).linalg.slogdet(a)
    return sign, logabs


@_slogdet.defvjp
def _slogdet_vjp(ctx, g_sign, g_logabs):
    a = ctx.inputs[0]
    return g_logabs.unsqueeze(-1).unsqueeze(-1) * mh(inv(a))


def slogdet(A, *, out=None):
    check_matrix("linalg.slogdet", A)
    sign, logabs = dispatch(_slogdet, (A,))
    return SlogdetResult((sign, logabs))


def logdet(A):
    check_matrix("linalg.logdet", A)
    sign, logabs = slogdet(A)
    xp = array_module(sign._data)
    # log(sign): 0 for positive determinants, nan for negative ones (as PyTorch's logdet)
    with_nan = xp.where(sign._data.real < 0, xp.nan, 0).astype(logabs.dtype.np)
    return logabs + const(logabs, with_nan) if (sign._data.real < 0).any() else logabs


# ---------------------------------------------------------------------- solve
@defop("linalg_solve", node="LinalgSolveExBackward0", save_output=True)
def _solve(a, b):
    xp = array_module(a, b)
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.solve(a, b)
    except _linalg_error(xp):
        raise _singular("linalg.solve", a) from None


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
    with _errstate(xp):
        try:
            with numpy_backend.linalg_raises(t):
                return xp.linalg.solve(t, b)
        except _linalg_error(xp):
            # a zero on the diagonal: LAPACK's trtrs would divide by it; so do we
            return xp.matmul(_tri_inverse(xp, t), b)


def _errstate(xp):
    import numpy as np
    return np.errstate(all="ignore")


def _tri_inverse(xp, t):
    # NOTE: reached only for singular triangular matrices: back-substitution with inf/nan
    with _errstate(xp):
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
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {dt.type_name(A.dtype)} and B of type "
                           f"{dt.type_name(B.dtype)} instead")
    sa, sb = A._data.shape, B._data.shape
    if (sa[-1] != sb[-2]) if left else (sa[-2] != sb[-1]):
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({sa[-2]}x{sa[-1]} and "
                           f"{sb[-2]}x{sb[-1]})")
    try:
        array_module(A._data).broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        from ._promote import broadcast_error
        raise broadcast_error(sa[:-2], sb[:-2]) from None
    if left:
        return solve_triangular_matrix(A, B, upper, unitriangular)
    return solve_triangular_matrix(A.mT, B.mT, not upper, unitriangular).mT


TriangularSolve = return_type("triangular_solve", ("solution", "cloned_coefficient"))


def check_linear_solve(name, b, A, rank_messages):
    """PyTorch's checks of the operands of a solve with a square A, in its order: ranks
    (each op words those its own way), dtypes, squareness, matching sizes, batch shapes."""
    for x, message in zip((b, A), rank_messages):
        if x._data.ndim < 2:
            raise RuntimeError(message.format(x._data.ndim))
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{dt.type_name(b.dtype)} and A of type {dt.type_name(A.dtype)} "
                           "instead.")
    sa, sb = A._data.shape, b._data.shape
    if sa[-1] != sa[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {sa[-2]} by "
                           f"{sa[-1]} matrices")
    if sa[-1] != sb[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {sa[-1]} "
                           f"by {sa[-1]} but each b matrix is {sb[-2]} by {sb[-1]}")
    try:
        array_module(A._data).broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        from ._promote import broadcast_error
        raise broadcast_error(sa[:-2], sb[:-2]) from None
    check_lapack_dtype(name + "_cpu", A)


def check_lapack_dtype(kernel, A):
    """PyTorch's LAPACK kernels exist for float32/64 and complex64/128 only."""
    if A.dtype.category < 2 or A.dtype.itemsize < 4:
        from ._elementwise import not_implemented
        raise not_implemented(kernel, A.dtype)


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


# ---------------------------------------------------------------------- cholesky
@defop("linalg_cholesky", node="LinalgCholeskyExBackward0", save=(), save_output=True)
def _cholesky(a):
    xp = array_module(a)
    try:
        with numpy_backend.linalg_raises(a):
            return xp.linalg.cholesky(a)
    except _linalg_error(xp):
        raise _not_pd(a) from None


def _not_pd(a):
    import numpy as np
    host = np.asarray(a.get() if hasattr(a, "get") else a)
    mats = host.reshape((-1,) + host.shape[-2:])
    for b, m in enumerate(mats):
        try:
            np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            # the leading minor that fails: the smallest k whose top-left block is not PD
            order = next(k for k in range(1, m.shape[-1] + 1)
                         if not _is_pd(np, m[:k, :k]))
            return LinAlgError(
                f"linalg.cholesky: {_batch_prefix(host, b)}The factorization could not be "
                "completed because the input is not positive-definite (the leading minor of "
                f"order {order} is not positive-definite).")
    return LinAlgError("linalg.cholesky: The factorization could not be completed because "
                       "the input is not positive-definite.")


def _is_pd(np, m):
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
        return CholeskyEx((cholesky(A, upper=upper), _info_zeros(A)))
    except LinAlgError as e:
        if check_errors:
            raise
        order = int(str(e).split("order ")[1].split(" ")[0]) if "order " in str(e) else 1
        info = _info_zeros(A)
        info._data.reshape(-1)[_batch_of(e)] = order
        xp = array_module(A._data)
        return CholeskyEx((const(A, xp.full(A._data.shape, xp.nan, A.dtype.np)), info))


def _batch_of(e):
    text = str(e)
    return int(text.split("Batch element ")[1].split(")")[0]) if "Batch element" in text else 0


def cholesky_solve(B, L, upper=False, *, out=None):
    """Solves A X = B given A's Cholesky factor L (or U when upper)."""
    check_linear_solve("cholesky_solve", B, L, (
        "b should have at least 2 dimensions, but has {} dimensions instead",
        "u should have at least 2 dimensions, but has {} dimensions instead"))
    if upper:
        L = mh(L)
    Y = solve_triangular_matrix(L, B, False)
    return solve_triangular_matrix(mh(L), Y, True)


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
for _op in (_inv, _det, _slogdet, _solve, _solve_triangular, _cholesky, _qr, _svd):
    _op.conj_ready = True
