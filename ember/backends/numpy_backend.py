"""NumPy-specific kernels used by ops through one named function each.

Where CuPy already has the operation with the semantics we need, a kernel passes a CuPy array
straight to CuPy's own method; otherwise the NumPy code below assumes an ndarray.
"""
import numpy as np


def identity(array):
    return array


def _xp(array):
    if isinstance(array, np.ndarray):
        return np
    import cupy
    return cupy


def scatter_add(target, index, values):
    """target[index] += values with repeated indices accumulating (np.add.at)."""
    _xp(target).add.at(target, index, values)
    return target


_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def scatter_reduce(target, index, values, reduce):
    """target[index] = reduce(target[index], values), repeated indices combining."""
    xp = _xp(target)
    getattr(xp, _UFUNCS[reduce]).at(target, index, values)
    return target


def diagonal_view(a, offset, dim1, dim2):
    """A writable view of a's (offset, dim1, dim2) diagonal, moved to the last dim (NumPy's
    own `diagonal` returns a read-only view)."""
    d = a.diagonal(offset, dim1, dim2)
    if isinstance(d, np.ndarray) and not d.flags.writeable and a.flags.writeable:
        d.flags.writeable = True
    return d


def sliding_windows(a, dim, size, step):
    """Tensor.unfold: windows of `size` every `step` along `dim`, as a new last dim (a view)."""
    if isinstance(a, np.ndarray):
        w = np.lib.stride_tricks.sliding_window_view(a, size, axis=dim,
                                                     writeable=a.flags.writeable)
    else:
        import cupy
        w = cupy.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
    if step != 1:
        w = w[(slice(None),) * dim + (slice(None, None, step),)]
    return w
