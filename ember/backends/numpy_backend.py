"""NumPy-specific kernels used by ops through one named function each.

Where CuPy already has the operation with the semantics we need, a kernel passes a CuPy array
straight to CuPy's own method; where CuPy lacks it (ufunc.at for some dtypes, accumulate for
most ufuncs, batched expm, raising linalg errors) the function says how it stands in.
"""
import contextlib

import numpy as np


def identity(array):
    return array


def scatter_add(target, index, values):
    """target[index] += values with repeated indices accumulating (np.add.at)."""
    if isinstance(target, np.ndarray):
        if _whole_rows(target, index, values):
            _scatter_add_rows(target, index, values)
        else:
            np.add.at(target, index, values)
        return target
    return _cupy_at("add", target, index, values)


def _whole_rows(target, index, values):
    """Is this rows of values added into rows of target (an embedding's gradient), large
    enough for the sorted path to pay off?"""
    return (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"
            and target.ndim >= 2 and isinstance(values, np.ndarray)
            and values.shape == index.shape + target.shape[1:] and values.size >= 4096)


def _scatter_add_rows(target, index, values):
    """Rows grouped by index (a stable sort), each group summed by one reduceat, then one
    fancy-index add with no repeats left: several times faster than np.add.at over rows."""
    if index.size and index.min() < 0:
        index = index + (index < 0) * target.shape[0]   # -1 and n-1 are the same row
    order = np.argsort(index, kind="stable")
    rows = index[order]
    starts = np.flatnonzero(np.concatenate(([True], rows[1:] != rows[:-1])))
    if starts.size == rows.size:
        target[index] += values
    else:
        target[rows[starts]] += np.add.reduceat(values[order], starts, axis=0)


_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def scatter_reduce(target, index, values, reduce):
    """target[index] = reduce(target[index], values), repeated indices combining."""
    name = _UFUNCS[reduce]
    if isinstance(target, np.ndarray):
        getattr(np, name).at(target, index, values)
        return target
    return _cupy_at(name, target, index, values)


# NOTE: CuPy's ufunc.at runs on CUDA atomics: add.at takes only these dtypes, maximum.at and
# minimum.at these, and multiply has no .at at all (TypeError / NotImplementedError otherwise).
_ATOMIC = {"add": ("int32", "uint32", "uint64", "float16", "float32", "float64"),
           "maximum": ("int32", "uint32", "uint64", "float32", "float64"),
           "minimum": ("int32", "uint32", "uint64", "float32", "float64")}
# Narrow dtypes reduce exactly in a wider one (integer sums wrap the same modulo 2**8/2**16;
# float16 / bfloat16 sums round once instead of per addition).
_WIDER = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
          "uint16": "uint32", "float16": "float32", "bfloat16": "float32"}


def _cupy_at(name, target, index, values):
    import cupy   # (optional: cupy)
    dtype = target.dtype.name
    atomic = _ATOMIC.get(name, ())
    ufunc = getattr(cupy, name)
    if dtype in atomic:
        ufunc.at(target, index, values)
    elif name == "add" and dtype == "int64":   # two's complement: int64 sums are uint64 sums
        ufunc.at(target.view(cupy.uint64), index,
                 cupy.asarray(values, dtype=cupy.int64).view(cupy.uint64))
    elif name == "add" and target.dtype.kind == "c":
        v = cupy.asarray(values, dtype=target.dtype)
        ufunc.at(target.real, index, v.real)
        ufunc.at(target.imag, index, v.imag)
    elif _WIDER.get(dtype) in atomic:
        wide = target.astype(_WIDER[dtype])
        ufunc.at(wide, index, cupy.asarray(values).astype(wide.dtype))
        target[...] = (wide != 0) if dtype == "bool" else wide.astype(target.dtype)
    else:
        scatter_in_rounds(cupy, ufunc, target, index, values)
    return target


def scatter_in_rounds(xp, ufunc, target, index, values):
    """ufunc.at(target, index, values) without atomics, for any dtype: the addressed positions
    are sorted (input order kept within a position, as ufunc.at applies them), then round r
    applies each position's r-th value with one fancy read-modify-write. One round per repeat
    of the most repeated position, never a loop over elements."""
    ids = xp.arange(target.size).reshape(target.shape)[index]
    if ids.size == 0:
        return target
    vals = xp.broadcast_to(xp.asarray(values, dtype=target.dtype), ids.shape).reshape(-1)
    ids = ids.reshape(-1)
    n = ids.size
    order = xp.argsort(ids * n + xp.arange(n))   # unique keys: the sort needn't be stable
    ids, vals = ids[order], vals[order]
    rank = xp.arange(n) - xp.searchsorted(ids, ids)   # position within its group
    flat = target.reshape(1) if target.ndim == 0 else target
    for r in range(int(rank.max()) + 1):
        pick = rank == r
        at = xp.unravel_index(ids[pick], flat.shape)
        flat[at] = ufunc(flat[at], vals[pick])
    return target


def accumulate(name, a, axis):
    """getattr(xp, name).accumulate(a, axis) (cumulative max, logaddexp, ...), dtype kept.

    CuPy's ufuncs accumulate only add and multiply; others go through `log_scan` (Hillis-Steele:
    step k combines each element with the one 2**k before it)."""
    if isinstance(a, np.ndarray):
        return getattr(np, name).accumulate(a, axis=axis)
    import cupy   # (optional: cupy)
    if name == "add":
        return cupy.cumsum(a, axis=axis, dtype=a.dtype)
    if name == "multiply":
        return cupy.cumprod(a, axis=axis, dtype=a.dtype)
    return log_scan(cupy, getattr(cupy, name), a, axis)


def log_scan(xp, ufunc, a, axis):
    """ufunc.accumulate for an associative ufunc in ceil(log2(n)) whole-array steps."""
    out = xp.moveaxis(a, axis, -1).copy()
    n, shift = out.shape[-1], 1
    while shift < n:
        # NOTE: the right side is a new array, so no element reads a value this step wrote
        out[..., shift:] = ufunc(out[..., shift:], out[..., :-shift])
        shift *= 2
    return xp.moveaxis(out, -1, axis)


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
        import cupy   # (optional: cupy)
        w = cupy.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
    if step != 1:
        w = w[(slice(None),) * dim + (slice(None, None, step),)]
    return w


_NO_CONTEXT = contextlib.nullcontext()


def linalg_raises(array):
    """A context in which xp.linalg raises xp.linalg.LinAlgError on a singular or
    non-positive-definite input: NumPy's always does; CuPy's only under
    cupyx.errstate(linalg='raise') (by default it returns nan/garbage silently)."""
    if isinstance(array, np.ndarray):
        return _NO_CONTEXT
    import cupyx   # (optional: cupy)
    return cupyx.errstate(linalg="raise")


def matrix_exp(a):
    """exp of each (..., n, n) matrix: SciPy's expm (batched) on NumPy; cupyx's expm takes one
    matrix at a time, so a batch loops over its matrices (never over elements)."""
    if isinstance(a, np.ndarray):
        from scipy.linalg import expm   # (deferred: scipy.linalg is slow to import)
        return expm(a)
    import cupy   # (optional: cupy)
    from cupyx.scipy.linalg import expm   # (optional: cupy)
    mats = a.reshape((-1,) + a.shape[-2:])
    if not len(mats):
        return a.copy()
    return cupy.stack([expm(m) for m in mats]).reshape(a.shape)
