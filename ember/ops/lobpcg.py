"""torch.lobpcg: the k largest (or smallest) eigenpairs of a symmetric positive definite
(generalized) problem A x = lambda B x by Knyazev's Locally Optimal Block Preconditioned
Conjugate Gradient method.

Each iteration does Rayleigh-Ritz on the span of the current vectors X, their
(preconditioned) residuals W and the previous search directions P, B-orthonormalised by an
eigen-decomposition of the Gram matrix (dropping directions that became dependent, which
keeps the basic method stable without PyTorch's 'ortho' bookkeeping). The iteration runs on
detached values; the returned eigenvalues are the Rayleigh quotients x^T A x of the final
vectors, in ember ops, so their gradient with respect to A is x x^T, as PyTorch's."""
import numpy as np

from .. import _dtype as dt
from .._scalars import type_name
from ..autograd.grad_mode import no_grad
from .._tensor import Tensor
from .linalg_spectral import eigh
from .random_factories import randn
from .registry import PUBLIC, export

__all__ = ["lobpcg"]


def _b_orthonormal(S, B, drop):
    """A basis of span(S), B-orthonormal; directions with Gram eigenvalue below
    `drop` * the largest are dropped."""
    BS = S if B is None else B.matmul(S)
    gram = S.mT.matmul(BS)
    gram = (gram + gram.mT) / 2
    values, vectors = eigh(gram)
    keep = values > drop * values.max().clamp(min=0)
    values, vectors = values[keep], vectors[:, keep]
    return S.matmul(vectors / values.sqrt())


def _rayleigh_ritz(S, A, m, largest):
    small = S.mT.matmul(A.matmul(S))
    theta, C = eigh((small + small.mT) / 2)
    if largest:
        theta, C = theta.flip(0), C.flip(1)
    return theta[:m], C[:, :m], C


def _solve(A, k, B, X, m, iK, niter, tol, largest):
    rows = A.shape[-1]
    if X is None:
        X = randn(rows, m, dtype=A.dtype, device=A.device)
    drop = float(np.finfo(A.dtype.np).eps) * 10
    X = _b_orthonormal(X, B, drop)
    theta, C, _ = _rayleigh_ritz(X, A, m, largest)
    X = X.matmul(C)
    P = None
    norm_a = A.abs().max().clamp(min=1e-30)
    for _ in range(niter):
        BX = X if B is None else B.matmul(X)
        R = A.matmul(X) - BX * theta
        residual = R.norm(dim=0) / (norm_a * X.norm(dim=0)).clamp(min=1e-30)
        if bool((residual[:k] < tol).all()):
            break
        W = R if iK is None else iK.matmul(R)
        blocks = [X, W] if P is None else [X, W, P]
        S = _b_orthonormal(PUBLIC["cat"](blocks, 1), B, drop)
        if S.shape[1] <= m:
            break
        theta, C, _ = _rayleigh_ritz(S, A, m, largest)
        X_new = S.matmul(C)
        # the new search directions: the part of the update outside the old X
        P = X_new - X.matmul(X.mT.matmul(X_new if B is None else B.matmul(X_new)))
        X = X_new
    return X[:, :k]


def _symmetrised_checked(A, B):
    """PyTorch's first checks, in its order, so a call with several faults fails on the same
    one: its Python code reads A.requires_grad (then B's), symmetrises A and B when either
    requires grad, then checks shapes."""
    for M in (A, B):
        if M is not None and not isinstance(M, Tensor):
            raise AttributeError(f"'{type_name(M)}' object has no attribute 'requires_grad'")
        if M is A and A.requires_grad:
            break
    if A.requires_grad or (B is not None and B.requires_grad):
        # the gradient of a symmetric problem need not be symmetric: PyTorch solves for the
        # symmetric parts (and a non-square A broadcasts into a square one, or fails here)
        A = (A + A.mT) / 2
        B = None if B is None else (B + B.mT) / 2
    if len(A.shape) < 2:
        raise IndexError("tuple index out of range")
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    return A, B


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k eigenvalues and eigenvectors of A (largest first by default)."""
    A, B = _symmetrised_checked(A, B)
    # (PyTorch's tolerance table knows float32 and float64, where non-floats compute)
    work = A.dtype if A.dtype.category == dt.FLOATING else dt.float32
    if tol is None:
        tol = {dt.float32: 1.2e-07, dt.float64: 2.23e-16}[work] ** 0.5
    rows = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if rows < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={rows})"
                         f" is smaller than 3 x the number of requested eigenpairs (={n})")
    if method is None or method == "ortho":   # (the tuning dicts must at least be dicts)
        for params in (ortho_iparams, ortho_fparams, ortho_bparams):
            if params is not None:
                dict().update(params)
    if X is None and (type(n) is bool or not isinstance(n, (int, np.integer))):
        raise TypeError(f"randn(): argument 'size' failed to unpack the object at pos 2 with "
                        f"error \"type must be tuple of ints,but got {type_name(n)}\"")
    if tracker is not None:
        raise NotImplementedError("ember does not support lobpcg's tracker callback")
    largest = True if largest is None else largest
    niter = 1000 if niter is None else (1 << 62 if niter == -1 else niter)
    dense = A.to_dense() if getattr(A, "is_sparse", False) else A
    Bd = B.to_dense() if B is not None and getattr(B, "is_sparse", False) else B
    batch = dense.shape[:-2]
    flat = dense.reshape(-1, rows, rows)
    vectors = []
    with no_grad():
        for i in range(flat.shape[0]):
            Bi = None if Bd is None else Bd.reshape(-1, rows, rows)[i % max(
                Bd.reshape(-1, rows, rows).shape[0], 1)]
            Xi = None if X is None else X.reshape(-1, rows, X.shape[-1])[i]
            vectors.append(_solve(flat[i].detach(), k, Bi, Xi, n, iK, niter, tol, largest))
        V = PUBLIC["stack"](vectors).reshape(*batch, rows, k)
        if Bd is not None:   # B-normalise, so x^T A x is the generalized eigenvalue
            scale = (V * Bd.detach().matmul(V)).sum(-2, keepdim=True).sqrt()
            V = V / scale
    # the eigenvalues as Rayleigh quotients of the fixed vectors: differentiable in A
    E = (V * dense.matmul(V)).sum(-2)
    return E, V


export(lobpcg, method=False)
