"""Operand preparation shared by pointwise ops: result dtype, compute arrays, errors."""
import builtins

import numpy as np

from .. import _dtype as dt
from .._creation import as_tensor
from .._scalars import number
from .._tensor import Tensor

_LOW_PRECISION = (dt.float16, dt.bfloat16)


def result_dtype(a, b):
    """PyTorch's result dtype of a binary op, with fast paths for the common cases."""
    if type(a) is Tensor:
        if type(b) is Tensor:
            if a.dtype is b.dtype:
                return a.dtype
        elif type(b) is builtins.float:
            if a.dtype.category >= dt.FLOATING:
                return a.dtype
        elif type(b) is builtins.int and a.dtype.category >= dt.INTEGER:
            return a.dtype
    return dt.result_type_of((number(a), number(b)))


def result_type_of(operands):
    """PyTorch's result dtype of tensors and numbers, NumPy scalars read as PyTorch reads
    them (see ember/_scalars.py)."""
    return dt.result_type_of([number(x) for x in operands])


def tensor_operands(a, b):
    """(a, b) with a NumPy array operand made a tensor on the other's device and a NumPy
    scalar read as the Python number PyTorch reads from it.

    NOTE: PyTorch's operators hand an array operand to NumPy, which computes and wraps the
    result, so the result dtype follows NumPy's rules (float32 tensor * int64 array is
    float64; a 0-d float64 array counts fully). Both operands are cast to that dtype here,
    giving the same dtype and values, with autograd kept."""
    if a.__class__ in _PLAIN and b.__class__ in _PLAIN:   # (the common case: one lookup each)
        return a, b
    if isinstance(a, _NUMPY):
        if type(a) is np.ndarray and isinstance(b, Tensor):
            b, a = _as_numpy_would(b, a)
        else:
            a = number(a)
    if isinstance(b, _NUMPY):
        if type(b) is np.ndarray and isinstance(a, Tensor):
            a, b = _as_numpy_would(a, b)
        else:
            b = number(b)
    return a, b


_NUMPY = (np.ndarray, np.generic)
_PLAIN = frozenset((Tensor, builtins.int, builtins.float, builtins.bool, builtins.complex))


def _as_numpy_would(t, array):
    common = dt.from_numpy_dtype(np.result_type(t.dtype.np, array.dtype))
    return t.to(common), as_tensor(array, dtype=common, device=t._device)


def compute_dtype(dtype):
    """float16/bfloat16 math runs in float32 and rounds once, as PyTorch's CPU kernels do."""
    return dt.float32 if dtype in _LOW_PRECISION else dtype


def operand_array(x, compute):
    """x's array in the compute dtype; Python scalars stay scalars (weakly typed in NumPy),
    except integers, which wrap into the compute dtype's range as PyTorch's casts do."""
    if isinstance(x, Tensor):
        a = x._data
        return a if a.dtype == compute.np else a.astype(compute.np)
    x = number(x)
    # (NumPy scalars, not 0-d arrays, where a Python number will not do: CuPy takes those
    # as scalars and refuses a NumPy array)
    if compute.category == dt.INTEGER and type(x) is builtins.int:
        info = np.iinfo(compute.np)
        if not info.min <= x <= info.max:
            span = builtins.int(info.max) - builtins.int(info.min) + 1
            x = (x - builtins.int(info.min)) % span + builtins.int(info.min)
        return np.asarray(x, compute.np)[()]
    if compute is dt.bool:
        return np.bool_(x)
    return x


def broadcast_error(shape_a, shape_b):
    """PyTorch's message for shapes that do not broadcast (dimension counted from the left
    of the broadcast result)."""
    n = max(len(shape_a), len(shape_b))
    a = (1,) * (n - len(shape_a)) + tuple(shape_a)
    b = (1,) * (n - len(shape_b)) + tuple(shape_b)
    for i in range(n - 1, -1, -1):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            return RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor "
                                f"b ({b[i]}) at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(shape_a)} and {list(shape_b)} are not broadcastable")


def shape_of(x):
    return x._data.shape if isinstance(x, Tensor) else ()
