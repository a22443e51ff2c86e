"""torch.linalg functions composed from the others: cond (through singular values, or a norm of
A times the same norm of its inverse), tensorinv and tensorsolve (inv and solve on a reshaped
tensor), vander (a cumulative product). All are ember ops end to end, so they differentiate
without VJPs of their own."""
import math
import operator

from .. import _dtype as dt
from .._creation import ones, zeros
from .._tensor import write_out
from ..backends import array_module
from ._dims import wrap_dim
from .cumulative import cumprod
from .linalg_checks import LinAlgError, check_matrix
from .linalg_decomp import inv, svdvals
from .linalg_primitives import const
from .linalg_solve import solve
from .linalg_lu import lu_factor_ex, lu_solve
from .linalg_norms import matrix_norm
from .registry import check_tensor
from .select import where
from .shape import cat

_INF = math.inf
_SVD_ORDS = (None, 2, -2)
_NORM_ORDS = ("fro", "nuc", _INF, -_INF, 1, -1)


def _prod(sizes):
    return math.prod(sizes)


# ---------------------------------------------------------------------- cond
def cond(A, p=None, *, out=None):
    check_tensor("linalg_cond", A)
    svd_based = not isinstance(p, str) and p in _SVD_ORDS
    if svd_based:
        if A._data.ndim < 2:
            raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
        check_matrix("linalg.svd", A, square=False)
    else:
        label = f"linalg.cond(ord={p})"
        if A._data.ndim < 2:
            raise RuntimeError(f"{label}: The input tensor A must have at least 2 dimensions.")
        if p not in _NORM_ORDS:
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        m, n = A._data.shape[-2:]
        if m != n:
            raise RuntimeError(f"{label}: A must be batches of square matrices, but they are "
                               f"{m} by {n} matrices")
        check_matrix("linalg.inv", A)
    real = A.dtype.to_real()
    if A._data.size == 0 or A._data.shape[-1] == 0:
        r = zeros(A._data.shape[:-2], dtype=real, device=A.device)
    elif svd_based:
        S = svdvals(A)          # descending: cond_2 = s_max / s_min, cond_-2 its inverse
        r = S[..., -1] / S[..., 0] if p == -2 else S[..., 0] / S[..., -1]
    elif p == "nuc":
        # the inverse's singular values are 1 / s: no inverse needed (nor its failure)
        S = svdvals(A)
        r = S.sum(-1) * (1 / S).sum(-1)
    else:
        r = _cond_by_inverse(A, p)
    return r if out is None else write_out(r, out)


def _cond_by_inverse(A, p):
    """norm(A, p) * norm(A^-1, p), inf for the matrices LU finds singular."""
    LU, pivots, info = lu_factor_ex(A)
    xp = array_module(A._data)
    n = A._data.shape[-1]
    eye = const(A, xp.broadcast_to(xp.eye(n), A._data.shape))
    r = matrix_norm(A, p) * matrix_norm(lu_solve(LU, pivots, eye), p)
    singular = info._data != 0
    if singular.any():
        # NOTE: getrs divides by the zero pivot; the inf/nan it makes never reaches the result
        r = where(const(info, singular).to(dt.bool), const(r, xp.full(r._data.shape, xp.inf)), r)
    return r


# ---------------------------------------------------------------------- tensorinv / tensorsolve
def tensorinv(A, ind=2, *, out=None):
    check_tensor("linalg_tensorinv", A)
    if not isinstance(ind, int) or isinstance(ind, bool):
        raise TypeError(f"linalg_tensorinv(): argument 'ind' (position 2) must be int, not "
                        f"{type(ind).__name__}")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    if ind > len(shape):   # (PyTorch slices the sizes at ind first)
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {len(shape)}")
    rows, cols = _prod(shape[:ind]), _prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    try:
        r = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    except LinAlgError as e:
        # PyTorch's tensorinv goes through torch.inverse, whose message says 'inv:'
        raise LinAlgError(str(e).replace("linalg.inv: ", "inv: ", 1)) from None
    return r if out is None else write_out(r, out)


def tensorsolve(A, B, dims=None, *, out=None):
    check_tensor("linalg_tensorsolve", A)
    check_tensor("linalg_tensorsolve", B, "other", 2)
    ndim = A._data.ndim
    if dims is not None:
        moved = [wrap_dim(d, ndim) for d in dims]
        rest = [d for d in range(ndim) if d not in moved]
        A = A.permute(rest + moved)
    shape = A._data.shape
    result_shape = shape[B._data.ndim:]
    cols, rhs = _prod(result_shape), B._data.size
    if cols != rhs:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rhs}")
    r = solve(A.reshape(rhs, cols), B.reshape(rhs)).reshape(result_shape)
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- vander
def vander(x, *, N=None):
    check_tensor("linalg_vander", x, "x")
    if N is not None:
        N = operator.index(N)   # (the parser took a NumPy integer or 0-d integer tensor)
    d = x.dtype
    if d is dt.bool or d in (dt.float16, dt.bfloat16):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {dt.type_name(d)}")
    shape = x._data.shape
    if N is None:
        N = shape[-1] if shape else 1
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    if d.category == dt.INTEGER:
        x = x.to(dt.int64)    # integer powers in int64, as PyTorch's
    first = ones(shape + (1,), dtype=x.dtype, device=x.device)
    powers = cumprod(x.unsqueeze(-1).expand(*shape, N - 1), -1)
    return cat([first, powers], -1)


# PyTorch's N is keyword-only, and its TypeErrors name the function linalg_vander
vander.__name__ = vander.__qualname__ = "linalg_vander"
