"""torch.svd_lowrank and torch.pca_lowrank: randomized low-rank SVD (Halko, Martinsson and
Tropp, 2009, algorithms 4.4 and 5.1). A Gaussian test matrix (drawn from the generator, so
seeded runs give PyTorch's numbers) sketches the range of A; `niter` subspace iterations
sharpen it; the small projected matrix is decomposed exactly. Written in ember ops, so the
factors are differentiable."""
import operator

from .. import _dtype as dt
from .linalg_decomp import qr, svd
from .random_factories import randn
from .registry import export

__all__ = ["svd_lowrank", "pca_lowrank"]


def _matrix_size(A):
    """(m, n) read off A.shape first, as PyTorch's Python code reads them: an object without
    a shape is its AttributeError, a NumPy scalar's empty shape its ValueError."""
    m, n = A.shape[-2:]
    return m, n


def _range_basis(A, q, niter, M):
    """An orthonormal basis Q (m x q) of the dominant range of A - M."""
    n = A.shape[-1]
    # NOTE: one sketch shared by every matrix of a batch, as PyTorch draws it, in A's dtype
    # if that is a floating or complex one, else float32 (and A's matmul with it then fails)
    dtype = A.dtype if A.dtype.category == dt.COMPLEX or A.dtype in (
        dt.float16, dt.float32, dt.float64) else dt.float32
    R = randn(n, operator.index(q), dtype=dtype, device=A.device)
    AH = A.mH

    def times(X):
        return A.matmul(X) if M is None else A.matmul(X) - M.matmul(X)

    def times_h(X):
        return AH.matmul(X) if M is None else AH.matmul(X) - M.mH.matmul(X)
    Q = qr(times(R)).Q
    for _ in range(niter):
        Q = qr(times_h(Q)).Q
        Q = qr(times(Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank q."""
    q = 6 if q is None else q
    m, n = _matrix_size(A)
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:   # sketch the smaller side: factor the conjugate transpose
        U, S, V = svd_lowrank(A.mH, q, niter, None if M is None else M.mH)
        return V, S, U
    Q = _range_basis(A, q, niter, M)
    B = Q.mH.matmul(A if M is None else A - M)
    U, S, Vh = svd(B, full_matrices=False)
    return Q.matmul(U), S, Vh.mH


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the (column-centred) data matrix A, its leading q principal directions
    in V."""
    m, n = _matrix_size(A)
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter)
    mean = A.mean(-2, keepdim=True)
    return svd_lowrank(A - mean, q, niter)


for _name in __all__:
    export(globals()[_name], method=False)
