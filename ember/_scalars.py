"""How PyTorch reads a scalar given where it takes a Number, and how it names Python types.

PyTorch's argument parser accepts NumPy scalars wherever it accepts a Python number, but it
reads them by their C type, not by their NumPy dtype: integers as int, complex128 (a
subclass of Python's complex) as complex, and everything else, np.bool_ and complex64
included, through `float()`. `number` applies that reading once, so the promotion and
operand code downstream sees only Python numbers.
"""
import builtins

import numpy as np

# What PyTorch's THPUtils_checkScalar accepts from NumPy (not np.str_, np.datetime64, ...).
_NUMPY_NUMBERS = (np.number, np.bool_)


def number(x):
    """`x` as the Python number PyTorch reads from it; anything that is not a NumPy number
    comes back unchanged.

    NOTE: np.bool_(True) reads as 1.0 (so np.True_ * int_tensor is float32) and
    np.complex64(1+1j) as 1.0, with NumPy's ComplexWarning, exactly as in PyTorch.
    """
    if isinstance(x, _NUMPY_NUMBERS):
        if isinstance(x, np.integer):
            return builtins.int(x)
        if isinstance(x, builtins.complex):   # np.complex128 only
            return builtins.complex(x)
        return builtins.float(x)
    return x


def as_double(x):
    """A Number where PyTorch's kernel reads a double (clamp bounds, var's correction...):
    a complex converts only when its imaginary part is zero, as Scalar.toDouble does."""
    x = number(x)
    if isinstance(x, builtins.complex):
        if x.imag != 0:
            raise RuntimeError("value cannot be converted to type double without overflow")
        return x.real
    return x


def is_number(x):
    """Whether PyTorch's parser takes `x` for a Number (Python or NumPy; not a Tensor)."""
    return isinstance(x, (builtins.int, builtins.float, builtins.complex) + _NUMPY_NUMBERS)


def type_name(x):
    """The type name PyTorch's messages print for `x`: its type's tp_name, which is the bare
    name for builtins and classes defined in Python ('Tensor', 'list') and 'numpy.float32'
    for NumPy's scalars (C types that carry their module in the name)."""
    t = type(x)
    module = t.__module__
    if module == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{module}.{t.__name__}"


_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
