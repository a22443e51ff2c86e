"""Pooling kernels on arrays: max pooling with PyTorch's indices and its backward scatter,
average pooling and its adjoint.

Arguments as in conv_kernels.py: (N, C, *spatial) arrays, `ksize`, `stride`, `dilation`,
`out` tuples, `padding` ((lo, hi), ...) where hi includes the extra right padding ceil_mode
needs. Max-pool indices are PyTorch's: flat positions in each (n, c) plane of the unpadded
input. NumPy float32/float64 arrays go to the compiled kernels (csrc/conv.c), which follow
PyTorch's CPU loops (window clipped to the input, NaN kept, outputs in order); everything
else runs the reference below, in array-module code (also CuPy's path).
"""
import numpy as np

from .conv_kernels import geometry, pad, windows
from .cpu_kernels import compiled, note_fallback
from .numpy_backend import scatter_add


def _ready(a):
    """Whether the compiled kernels take `a` (a NumPy float32/float64 array)."""
    if compiled is None:
        note_fallback()
        return False
    return type(a) is np.ndarray and a.dtype in (np.float32, np.float64) and a.size > 0


def _lowest(dtype):
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _floating(dtype):
    return dtype.kind in "fc" or dtype.name == "bfloat16"


def _geometry(shape, ksize, stride, padding, dilation, out):
    return geometry(shape, ksize, stride, padding, dilation, out, 1)


# ---------------------------------------------------------------------- max pooling
def max_pool(xp, x, ksize, stride, padding, dilation, out, with_indices=True):
    """(values, indices) of max pooling; indices None when not `with_indices`."""
    if _ready(x):
        x = np.ascontiguousarray(x)
        values = np.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
        index = np.empty(values.shape, dtype=np.int64) if with_indices else None
        compiled.max_pool(x, values, index, _geometry(x.shape, ksize, stride, padding,
                                                      dilation, out))
        return values, index
    if not with_indices and x.dtype.kind != "b":
        return _max_pool_values(xp, x, ksize, stride, padding, dilation, out), None
    if _tiled(ksize, stride, padding, dilation) and x.dtype.kind != "b":
        return _max_pool_tiled(xp, x, ksize, out)
    n, c = x.shape[:2]
    xpad = pad(xp, x, padding, _lowest(x.dtype))
    win = windows(xp, xpad, ksize, stride, dilation, out)
    flat = win.reshape((n, c) + tuple(out) + (-1,))
    arg = flat.argmax(-1)
    values = xp.take_along_axis(flat, arg[..., None], -1)[..., 0]
    if _floating(values.dtype):
        nan = xp.isnan(values)
        if nan.any():  # NOTE: PyTorch's window scan keeps the last NaN, argmax the first
            last = flat.shape[-1] - 1 - xp.isnan(flat[..., ::-1]).argmax(-1)
            arg = xp.where(nan, last, arg)
    # flat index = window start (per output position) + offset of the arg inside the window
    spatial = x.shape[2:]
    fs = [int(np.prod(spatial[d + 1:])) for d in range(len(spatial))]
    table = np.zeros(1, dtype=np.int64)
    base = np.zeros((1,) * len(out), dtype=np.int64)
    for d in range(len(out)):
        table = (table[:, None] + np.arange(ksize[d]) * dilation[d] * fs[d]).ravel()
        shape = [1] * len(out)
        shape[d] = out[d]
        base = base + ((np.arange(out[d]) * stride[d] - padding[d][0]) * fs[d]).reshape(shape)
    return values, xp.asarray(base) + xp.asarray(table)[arg]


def _tiled(ksize, stride, padding, dilation):
    """Whether the windows tile the input (kernel == stride, no padding or dilation): the
    common MaxPool2d(2) case, pooled offset by offset without copying windows."""
    return (ksize == stride and all(d == 1 for d in dilation)
            and not any(lo or hi for lo, hi in padding) and int(np.prod(ksize)) <= 16)


def _max_pool_tiled(xp, x, ksize, out):
    """Values and plane indices for tiling windows: an elementwise max over the offsets' slices
    (NaN propagates), then the first offset equal to the max (PyTorch: the last NaN)."""
    spatial = x.shape[2:]
    fs = [int(np.prod(spatial[d + 1:])) for d in range(len(spatial))]
    offsets = []
    for off in np.ndindex(*ksize):
        sl = tuple(slice(o, o + k * m, k) for o, k, m in zip(off, ksize, out))
        offsets.append(((Ellipsis,) + sl, sum(o * f for o, f in zip(off, fs))))
    base = np.zeros((1,) * len(out), dtype=np.int64)
    for d in range(len(out)):
        shape = [1] * len(out)
        shape[d] = out[d]
        base = base + (np.arange(out[d]) * ksize[d] * fs[d]).reshape(shape)
    values = None
    for sl, _ in offsets:
        values = x[sl].copy() if values is None else xp.maximum(values, x[sl], out=values)
    index = xp.full(values.shape, offsets[-1][1], dtype=xp.int64)
    for sl, flat in offsets[-2::-1]:
        index = xp.where(x[sl] == values, flat, index)
    if _floating(values.dtype) and xp.isnan(values).any():
        for sl, flat in offsets:
            index = xp.where(xp.isnan(x[sl]), flat, index)
    index += xp.asarray(base)
    return values, index


def _max_pool_values(xp, x, ksize, stride, padding, dilation, out):
    """The maxima alone (inference): an elementwise max over one strided slice of the padded
    input per kernel offset, never the windows' copy and argmax the indices need."""
    xpad = pad(xp, x, padding, _lowest(x.dtype))
    values = None
    for off in np.ndindex(*ksize):
        sl = (Ellipsis,) + tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                                 for o, d, s, m in zip(off, dilation, stride, out))
        values = xpad[sl].copy() if values is None else xp.maximum(values, xpad[sl], out=values)
    return values


def max_pool_backward(xp, g, indices, in_shape, overlap=True):
    """An in_shape array: g scattered (added) at the plane positions `indices`."""
    planes = in_shape[0] * in_shape[1]
    if _ready(g) and type(indices) is np.ndarray and planes:
        gx = np.empty(in_shape, dtype=g.dtype)
        compiled.max_pool_backward(np.ascontiguousarray(g),
                                   np.ascontiguousarray(indices, dtype=np.int64), gx, planes)
        return gx
    plane = int(np.prod(in_shape[2:]))
    res = scatter_flat(xp, g.reshape(planes, -1), indices.reshape(planes, -1), plane, overlap)
    return res.reshape(in_shape)


def scatter_flat(xp, g, indices, n_positions, overlap):
    """out[b, indices[b, j]] += g[b, j] for (B, L) arrays into a (B, n_positions) array.

    Non-overlapping windows hit each position at most once, so plain assignment is exact;
    overlapping ones need an accumulating scatter (bincount on NumPy, atomics on CuPy)."""
    b = g.shape[0]
    flat = (indices + (xp.arange(b) * n_positions)[:, None]).ravel()
    if not overlap:
        # NOTE: one fancy assignment on the flat array: several times faster than
        # put_along_axis, which loops over the rows.
        res = xp.zeros(b * n_positions, dtype=g.dtype)
        res[flat] = g.ravel()
        return res.reshape(b, n_positions)
    if xp is np:
        res = np.bincount(flat, weights=g.ravel().astype(np.float64),
                          minlength=b * n_positions)
        return res.astype(g.dtype, copy=False).reshape(b, n_positions)
    res = xp.zeros(b * n_positions, dtype=g.dtype)
    scatter_add(res, flat, g.ravel())   # NOTE: not xp.add.at: CuPy's lacks some dtypes
    return res.reshape(b, n_positions)


# ---------------------------------------------------------------------- average pooling
def _on(xp, divisor):
    return divisor if isinstance(divisor, (int, float)) else xp.asarray(divisor)


def _divisor_array(divisor, out, dtype):
    """The divisor (a number or an array broadcastable to out) as one value per output
    position, for the compiled kernels."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(divisor, dtype=dtype), tuple(out)))


def avg_pool(xp, x, ksize, stride, padding, out, divisor):
    """Window sums / divisor (a number, or an array broadcastable to out: PyTorch's count)."""
    if _ready(x):
        x = np.ascontiguousarray(x)
        y = np.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
        compiled.avg_pool(x, y, _divisor_array(divisor, out, x.dtype),
                          _geometry(x.shape, ksize, stride, padding, (1,) * len(out), out))
        return y
    xpad = pad(xp, x, padding)
    win = windows(xp, xpad, ksize, stride, (1,) * len(ksize), out)
    acc = None
    for off in np.ndindex(*ksize):
        if acc is None:
            acc = win[(Ellipsis,) + off].copy()
        else:
            acc += win[(Ellipsis,) + off]
    if acc.dtype.kind in "iu":  # integer pooling truncates, as C++ integer division
        return (acc / _on(xp, divisor)).astype(acc.dtype)
    acc /= _on(xp, divisor)
    return acc


def avg_pool_backward(xp, g, in_shape, ksize, stride, padding, out, divisor):
    """The adjoint of avg_pool: an in_shape array."""
    if _ready(g):
        gx = np.empty(in_shape, dtype=g.dtype)
        compiled.avg_pool_backward(np.ascontiguousarray(g), gx,
                                   _divisor_array(divisor, out, g.dtype),
                                   _geometry(in_shape, ksize, stride, padding,
                                             (1,) * len(out), out))
        return gx
    g = g / _on(xp, divisor)  # NOTE: a new array: never divide the incoming gradient in place
    n, c = in_shape[:2]
    spatial = in_shape[2:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    buf = xp.zeros((n, c) + padded, dtype=g.dtype)
    view = windows(xp, buf, ksize, stride, (1,) * len(ksize), out)
    for off in np.ndindex(*ksize):
        # NOTE: a view of buf per offset; windows may overlap, so add offset by offset.
        view[(Ellipsis,) + off] += g
    if any(lo or hi for lo, hi in padding):
        inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
        buf = xp.ascontiguousarray(buf[(Ellipsis,) + inner])
    return buf
