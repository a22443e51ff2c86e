"""ember.linalg: torch.linalg's functions (the ops live in ember/ops/linalg*.py)."""
from .ops.linalg_primitives import diagonal as _diagonal
from .ops.linalg import linalg_cross as cross  # noqa: F401
from .ops.linalg import multi_dot, vecdot  # noqa: F401
from .ops.linalg_checks import LinAlgError, info_zeros  # noqa: F401  (LinAlgError: public)
from .ops.linalg_decomp import (cholesky, cholesky_ex, det, inv, inv_ex, qr,  # noqa: F401
                                slogdet, svd, svdvals)
from .ops.linalg_solve import solve, solve_triangular  # noqa: F401
from .ops.linalg_spectral import eig, eigh, eigvals, eigvalsh, matrix_exp, pinv  # noqa: F401
from .ops.linalg_norms import (lstsq, matrix_norm, matrix_power, matrix_rank, norm,  # noqa
                               vector_norm)
from .ops.matmul import matmul  # noqa: F401


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of A's (dim1, dim2) matrices (a copy, not a view)."""
    return _diagonal(A, offset, dim1, dim2)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    return _SolveEx((solve(A, B, left=left), info_zeros(A)))


from .ops.linalg_primitives import return_type as _rt  # noqa: E402

_SolveEx = _rt("linalg_solve_ex", ("result", "info"))

from .ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve  # noqa: E402,F401
from .ops.linalg_householder import householder_product  # noqa: E402,F401
from .ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve  # noqa: E402,F401
from .ops.linalg_tensor import cond, tensorinv, tensorsolve, vander  # noqa: E402,F401
