"""LAPACK on the host, one matrix at a time, for the factorizations whose raw results PyTorch
hands to the user as LAPACK returns them: LU pivots (getrf), Bunch-Kaufman pivots (sytrf,
hetrf), Householder reflectors (geqrf). NumPy's linalg does not expose these, so they come from
SciPy's wrappers; the same routines as PyTorch's CPU build, so pivots match.

NOTE: CuPy arrays are copied to the host and back: these factorizations are small-matrix work
in practice, and cuSOLVER's pivot conventions would not match PyTorch's CPU results anyway.
"""
import numpy as np

from ..backends import array_module


def routine(name, dtype):
    """SciPy's wrapper of LAPACK's `name` (without the s/d/c/z prefix) for `dtype`."""
    from scipy.linalg import lapack  # (deferred: loads scipy.linalg on first use)
    return lapack.get_lapack_funcs((name,), dtype=np.dtype(dtype))[0]


def host(a):
    """A backend array as a NumPy array (no copy on the CPU)."""
    return np.asarray(a.get() if hasattr(a, "get") else a)


def back(like, array):
    """`array` (NumPy) on the device of the backend array `like`."""
    xp = array_module(like)
    return array if xp is np else xp.asarray(array)


def batch_indices(batch_shape):
    """Every index of a batch shape, () for a single matrix."""
    return np.ndindex(*batch_shape)


def permutation(pivots, m):
    """The row permutation LAPACK's 1-based sequential swaps describe: A = P L U with
    P[perm[i], i] = 1, so (P^T A)[i] = A[perm[i]]. `pivots` is an array (..., k)."""
    xp = array_module(pivots)
    batch = pivots.shape[:-1]
    k = pivots.shape[-1]
    if m == 0 or 0 in batch:
        return xp.zeros(batch + (m,), xp.int64)
    perm = xp.broadcast_to(xp.arange(m), batch + (m,)).reshape(-1, m).copy()
    swaps = (pivots.reshape(-1, k) - 1).astype(xp.int64)
    rows = xp.arange(perm.shape[0])
    for i in range(k):
        j = swaps[:, i]
        at_i = perm[:, i].copy()
        perm[:, i] = perm[rows, j]
        perm[rows, j] = at_i
    return perm.reshape(batch + (m,))


def permutation_matrix(pivots, m, dtype):
    """P (..., m, m) of `dtype` from LAPACK pivots (see `permutation`)."""
    xp = array_module(pivots)
    perm = permutation(pivots, m)
    transposed = perm[..., :, None] == xp.arange(m)   # P^T[i, perm[i]] = 1
    return xp.swapaxes(transposed, -1, -2).astype(dtype)
