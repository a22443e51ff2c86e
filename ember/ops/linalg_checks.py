"""Checks and errors shared by the torch.linalg families: PyTorch's argument checks for a
(batch of) matrix input and for the operands of a square solve, and its LinAlgError messages
for a singular or non-positive-definite matrix."""
import warnings

import numpy as np

from .. import _dtype as dt
from .._tensor import _wrap
from ..backends import array_module
from ._elementwise import not_implemented
from ._promote import broadcast_error
from .registry import check_tensor


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
    if d.category < dt.FLOATING:
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


def square_check(name, A):
    """PyTorch's squareCheckInputs: a (batch of) square matrix; returns A's shape."""
    shape = A._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")
    return shape


def batch_prefix(a, index):
    return f"(Batch element {index}): " if a.ndim > 2 else ""


def first_zero_pivot(a):
    """(batch index, 1-based pivot) of the first matrix whose LU has a zero pivot."""
    # NOTE: error path only; SciPy's LU names the pivot LAPACK reports (CPU arrays).
    from scipy.linalg import lu_factor
    host = np.asarray(a.get() if hasattr(a, "get") else a)
    mats = host.reshape((-1,) + host.shape[-2:])
    for b, m in enumerate(mats):
        if not np.isfinite(m).all():
            continue
        with np.errstate(all="ignore"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lu, _ = lu_factor(m, check_finite=False)
        zeros = np.nonzero(np.diagonal(lu) == 0)[0]
        if zeros.size:
            return b, int(zeros[0]) + 1
    return 0, m.shape[-1]


def singular_error(name, a):
    b, k = first_zero_pivot(a)
    prefix = batch_prefix(a, b)
    if name == "linalg.solve":
        return LinAlgError(f"torch.linalg.solve: {prefix}The solver failed because the input "
                           "matrix is singular.")
    return LinAlgError(f"{name}: {prefix}The diagonal element {k} is zero, the inversion "
                       "could not be completed because the input matrix is singular.")


def linalg_error(xp):
    return xp.linalg.LinAlgError


def info_zeros(A):
    xp = array_module(A._data)
    return _wrap(xp.zeros(A._data.shape[:-2], dtype=xp.int32), dt.int32, A._device)


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
        raise broadcast_error(sa[:-2], sb[:-2]) from None
    check_lapack_dtype(name + "_cpu", A)


def check_lapack_dtype(kernel, A):
    """PyTorch's LAPACK kernels exist for float32/64 and complex64/128 only."""
    if A.dtype.category < dt.FLOATING or A.dtype.itemsize < 4:
        raise not_implemented(kernel, A.dtype)
