"""Reductions behind named functions: `sum` and `mean` of an array, over some of its dims, and
`index_row_sum`, rows summed into the rows their indices name (an embedding's gradient).

A sum over every element of a large contiguous float32 or float64 array runs compiled
(csrc/reduction.c): spread over the thread team, its additions in an order fixed by the
array's length alone, so the bits are the same at every thread count and on every CPU (they
differ from NumPy's pairwise sum in the last places; both accumulate in the array's type, as
PyTorch does). So does a sum over its leading dims (a bias's gradient), in NumPy's own order
(row after row), so with NumPy's bits. Everything else (sums over some dims, small arrays,
other dtypes or accumulation types, CuPy, no build, EMBER_KERNELS=numpy) is NumPy's, the
reference.
`index_row_sum` adds each output row's rows in the order they come, on both paths (the same
bits, at every thread count: threads own output rows).
"""
import numpy as np

from . import array_module, numpy_backend
from .cpu_kernels import compiled, note_fallback

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


def _leading(a, dims, acc):
    """How many leading dims of `a` the compiled column sum sums over as `dims` asks (a
    bias's gradient: every dim but the last few), or 0 where NumPy sums."""
    k = len(dims) if dims is not None else 0
    return k if (0 < k < a.ndim and compiled is not None and type(a) is np.ndarray
                 and a.size >= _MIN_ELEMENTS and a.dtype in _FLOATS
                 and (acc is None or np.dtype(acc) == a.dtype) and a.flags.c_contiguous
                 and tuple(dims) == tuple(range(k))) else 0


def sum(a, dims=None, keepdim=False, acc=None):
    """The sum of array `a` over `dims` (None: all) in dtype `acc`, as NumPy's sum."""
    if _whole(a, dims, acc):
        return _shaped(compiled.sum(a), a, keepdim)
    lead = _leading(a, dims, acc)
    if lead:
        # (NumPy's order, row after row: the same bits, without its pass over the result
        # after every row)
        kept = a.shape[lead:]
        out = np.empty(kept, a.dtype)
        compiled.leading_sum(a, out, a.size // out.size, out.size)
        return out.reshape((1,) * lead + kept) if keepdim else out
    # (the array's method: NumPy's function is a Python wrapper around the same reduction)
    return a.sum(axis=dims, keepdims=keepdim, dtype=acc)


def mean(a, dims=None, keepdim=False, acc=None):
    """The mean of non-empty array `a` over `dims` (None: all) in dtype `acc`, as NumPy's
    mean: the sum in `acc`, divided in double and rounded back."""
    if _whole(a, dims, acc):
        return _shaped(compiled.sum(a) / a.size, a, keepdim)
    return a.mean(axis=dims, keepdims=keepdim, dtype=acc)


def index_row_sum(x, index, rows, skip=-1):
    """A (rows, D) array: row i of `x` (n, D) added to row index[i] (integers in [0, rows)),
    for i = 0, 1, ... in turn, from zeros; rows whose index is `skip` are left out (an
    embedding's padding row)."""
    if compiled is not None and type(x) is np.ndarray and x.dtype in _FLOATS and \
            type(index) is np.ndarray:
        out = np.empty((rows,) + x.shape[1:], x.dtype)
        compiled.index_row_sum(np.ascontiguousarray(x), np.ascontiguousarray(index, np.int64),
                               out, skip, rows, out[0].size if rows else 0)
        return out
    note_fallback()
    if skip >= 0:
        keep = index != skip
        x, index = x[keep], index[keep]
    out = array_module(x).zeros((rows,) + x.shape[1:], x.dtype)
    if type(out) is np.ndarray:
        np.add.at(out, index, x)   # (in turn: numpy_backend.scatter_add's sort sums pairwise)
        return out
    return numpy_backend.scatter_add(out, index, x)
