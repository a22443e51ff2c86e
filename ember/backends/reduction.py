"""Reductions behind named functions: `sum` and `mean` of an array, over some of its dims.

A sum over every element of a large contiguous float32 or float64 array runs compiled
(csrc/reduction.c): spread over the thread team, its additions in an order fixed by the
array's length alone, so the bits are the same at every thread count and on every CPU (they
differ from NumPy's pairwise sum in the last places; both accumulate in the array's type, as
PyTorch does). Everything else (sums over some dims, small arrays, other dtypes or
accumulation types, CuPy, no build, EMBER_KERNELS=numpy) is NumPy's, the reference.
"""
import numpy as np

from . import array_module
from .cpu_kernels import compiled

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Elements from which the compiled sum beats NumPy's on one thread (measured: 64K float32
# elements 4 us against 12; below, the call's fixed cost eats the gain).
_MIN_ELEMENTS = 1 << 16


def _whole(a, dims, acc):
    """Whether the compiled kernel sums `a` over `dims` (None: all) accumulating in `acc`."""
    return (compiled is not None and type(a) is np.ndarray and a.size >= _MIN_ELEMENTS
            and a.dtype in _FLOATS and (acc is None or np.dtype(acc) == a.dtype)
            and a.flags.c_contiguous
            and (dims is None or len(set(dims)) == a.ndim))


def _shaped(value, a, keepdim):
    """A reduction's result `value` as NumPy gives it: a scalar of a's dtype, or an array of
    ones in every dim with keepdim."""
    r = a.dtype.type(value)
    return np.full((1,) * a.ndim, r) if keepdim else r


def sum(a, dims=None, keepdim=False, acc=None):
    """The sum of array `a` over `dims` (None: all) in dtype `acc`, as NumPy's sum."""
    if _whole(a, dims, acc):
        return _shaped(compiled.sum(a), a, keepdim)
    return array_module(a).sum(a, axis=dims, keepdims=keepdim, dtype=acc)


def mean(a, dims=None, keepdim=False, acc=None):
    """The mean of non-empty array `a` over `dims` (None: all) in dtype `acc`, as NumPy's
    mean: the sum in `acc`, divided in double and rounded back."""
    if _whole(a, dims, acc):
        return _shaped(compiled.sum(a) / a.size, a, keepdim)
    return array_module(a).mean(a, axis=dims, keepdims=keepdim, dtype=acc)
