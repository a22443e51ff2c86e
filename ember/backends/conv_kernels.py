"""Convolution kernels on arrays: im2col / col2im over strided, padded, dilated windows.

Every function takes N-d spatial arguments as tuples (`ksize`, `stride`, `dilation`, `out`
the output spatial shape; `padding` as ((lo, hi), ...) pairs). Arrays are (N, C, *spatial).

Columns: row r = (group, channel in the group, kernel offset), Cg * prod(ksize) rows per
group (PyTorch's unfold order); column j = (sample n, output position l), j = n * L + l with
L = prod(out), over the whole batch. `im2col` fills the columns [j0, j0 + count) as
(G, Cg*K, count); `col2im` adds such columns back.
Callers walk the batch in the pieces `column_chunks` gives: with the compiled kernels
(csrc/conv.c) pieces small enough to stay in cache between im2col and the GEMM that reads
them, else (NumPy reference, CuPy) one piece, the whole batch, in array-module code.
`conv` and `conv_weight` do the whole float32 convolution (or its weight gradient) in the
compiled layer, pieces, GEMM (csrc/gemm.c) and thread team included, where that beats
OpenBLAS; they return None elsewhere and the callers walk the pieces through BLAS.
"""
import functools
import itertools
import math

import numpy as np

from .cpu_kernels import compiled, note_fallback

# Bytes of columns per piece and thread (each core has its L2; with more threads the GEMMs
# are split among them, and fewer, larger calls synchronise OpenBLAS's threads less often).
# Measured on a 2 MiB L2 at 1 thread, whole resnet_blocks steps: 256 KiB-1 MiB 62-63 ms,
# 2 MiB 68 ms, the whole batch's columns at once 83 ms (the GEMMs read them back from
# memory).
CHUNK_BYTES = 1 << 20
# Bytes of columns per piece of the compiled float32 convolution (`conv`, `conv_weight`),
# which runs its own GEMM on each thread's pieces: half of a 2 MiB L2, so the columns are
# still in cache when the GEMM reads them.
PIECE_BYTES = 1 << 19


def out_size(size, k, s, d, lo, hi, ceil_mode=False):
    """Output length of one spatial dim (PyTorch's formula, incl. ceil_mode's rule that the
    last window must start inside the input or its left padding)."""
    span = size + lo + hi - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    if (out - 1) * s >= size + lo:
        out -= 1
    return out


def pad(xp, x, padding, value=0):
    """x with its spatial dims padded by `padding` ((lo, hi), ...) filled with `value`.

    NOTE: returns x itself (no copy) when there is nothing to pad."""
    if not any(lo or hi for lo, hi in padding):
        return x
    nd = len(padding)
    shape = x.shape[:-nd] + tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[-nd:], padding))
    buf = xp.full(shape, value, dtype=x.dtype) if value else xp.zeros(shape, dtype=x.dtype)
    inner = tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape[-nd:], padding))
    buf[(Ellipsis,) + inner] = x
    return buf


def windows(xp, x, ksize, stride, dilation, out, groups=None):
    """A strided view of the windows of padded x.

    groups=None: (N, C, *out, *ksize) (pooling); else (N, G, Cg, *ksize, *out) (im2col)."""
    st = x.strides
    sp = st[2:]
    win_st = tuple(s * d for s, d in zip(sp, dilation))
    out_st = tuple(s * t for s, t in zip(sp, stride))
    n, c = x.shape[:2]
    if groups is None:
        shape = (n, c) + tuple(out) + tuple(ksize)
        strides = st[:2] + out_st + win_st
    else:
        cg = c // groups
        shape = (n, groups, cg) + tuple(ksize) + tuple(out)
        strides = (st[0], st[1] * cg, st[1]) + win_st + out_st
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def geometry(shape, ksize, stride, padding, dilation, out, groups):
    """The compiled kernels' geometry: (N, C, D, H, W, kernel, stride, front padding,
    dilation, output sizes, groups), 1-d and 2-d windows with leading spatial sizes of 1."""
    return _geometry(tuple(shape), tuple(ksize), tuple(stride), tuple(lo for lo, _ in padding),
                     tuple(dilation), tuple(out), groups)


@functools.lru_cache(maxsize=256)   # (a conv op asks once per piece of its batch)
def _geometry(shape, ksize, stride, front, dilation, out, groups):
    fill = 3 - len(ksize)
    ones, zeros = (1,) * fill, (0,) * fill
    return shape[:2] + ones + shape[2:] + ones + ksize + ones + stride + zeros + front + \
        ones + dilation + ones + out + (groups,)


def kernel_ready(a):
    """Whether the compiled kernels take `a` (a non-empty float32/float64 NumPy array, made
    contiguous where needed); says once when the build is missing."""
    if compiled is None:
        note_fallback()
        return False
    return type(a) is np.ndarray and a.dtype in (np.float32, np.float64) and a.size > 0


def column_chunks(x, length, rows):
    """(j0, count) pieces of the N * length columns of x's im2col with `rows` rows: each
    piece lies in one sample or is made of whole samples."""
    n = x.shape[0]
    total = n * length
    if not total:
        return []
    if not kernel_ready(x):
        return [(0, total)]
    want = max(1, CHUNK_BYTES * compiled.get_num_threads() // (rows * x.itemsize))
    if length >= want:
        parts = -(-length // want)
        bounds = [length * i // parts for i in range(parts + 1)]
        return [(s * length + a, b - a) for s in range(n) for a, b in zip(bounds, bounds[1:])]
    per = max(1, want // length)
    return [(s * length, min(per, n - s) * length) for s in range(0, n, per)]


def conv(x, wm, ksize, stride, padding, dilation, groups, out):
    """y = wm (G, Og, Cg*K) times im2col(x), (N, G, Og, L), by the compiled kernel (float32:
    im2col and its own GEMM per piece of the batch, the pieces over the thread team), or None
    where it does not apply (other dtypes or array modules, no kernel for this CPU): the
    caller then walks the pieces itself through BLAS."""
    if not (kernel_ready(x) and x.dtype == np.float32 and wm.dtype == np.float32):
        return None
    x = np.ascontiguousarray(x)
    y = np.empty((x.shape[0], groups, wm.shape[1], int(np.prod(out))), dtype=np.float32)
    geo = geometry(x.shape, ksize, stride, padding, dilation, out, groups)
    return y if compiled.conv_forward(x, np.ascontiguousarray(wm), y, geo, PIECE_BYTES) \
        else None


def conv_flipped(y, w, padding, dilation, groups, out):
    """The unit-stride input gradient of a convolution with weights w (G*Og, Cg, *K) as a
    convolution of y (N, G*Og, *S) with w's kernel flipped and its in/out channels swapped
    (`padding` the flipped form's, see ops/conv.py's _flipped_padding), w read in place: an
    array (N, G*Cg, *out) by the compiled kernel (float32 images small enough that skipping
    the padding's products pays, finite weights), else None (the caller flips w itself)."""
    if not (kernel_ready(y) and y.dtype == np.float32 and type(w) is np.ndarray and
            w.dtype == np.float32):
        return None
    y = np.ascontiguousarray(y)
    ksize, ones = tuple(w.shape[2:]), (1,) * (w.ndim - 2)
    x = np.empty((y.shape[0], w.shape[1] * groups) + tuple(out), dtype=np.float32)
    geo = geometry(y.shape, ksize, ones, padding, dilation, out, groups)
    return x if compiled.conv_input(y, np.ascontiguousarray(w), x, geo, PIECE_BYTES) else None


def conv_weight(x, gy, w_shape, stride, padding, dilation, groups):
    """The weight gradient (w_shape) of the convolution of x for the output gradient gy by the
    compiled kernel (float32; gy's positions are the windows), or None where it does not
    apply (see `conv`)."""
    if not (kernel_ready(x) and x.dtype == np.float32 and type(gy) is np.ndarray and
            gy.dtype == np.float32):
        return None
    x = np.ascontiguousarray(x)
    gw = np.empty(w_shape, dtype=np.float32)
    geo = geometry(x.shape, tuple(w_shape[2:]), stride, padding, dilation, gy.shape[2:], groups)
    return gw if compiled.conv_weight(x, np.ascontiguousarray(gy), gw, geo, PIECE_BYTES) \
        else None


def im2col(xp, x, ksize, stride, padding, dilation, groups, out, j0, count):
    """Columns [j0, j0 + count) of im2col(x): (G, Cg*K, count)."""
    rows = x.shape[1] * math.prod(ksize)
    if kernel_ready(x):
        x = np.ascontiguousarray(x)
        cols = np.empty((groups, rows // groups, count), dtype=x.dtype)
        compiled.im2col(x, cols, geometry(x.shape, ksize, stride, padding, dilation, out,
                                          groups), j0, count)
        return cols
    length = int(np.prod(out))
    n0, n1 = j0 // length, -(-(j0 + count) // length)
    nd = len(ksize)
    win = windows(xp, pad(xp, x[n0:n1], padding), ksize, stride, dilation, out, groups)
    # (N, G, Cg, *ksize, *out) -> (G, Cg, *ksize, N, *out): one copy, by the reshape
    order = (1, 2) + tuple(range(3, 3 + nd)) + (0,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = win.transpose(order).reshape(groups, rows // groups, (n1 - n0) * length)
    return xp.ascontiguousarray(cols[..., j0 - n0 * length:j0 - n0 * length + count])


def col2im(xp, cols, x, ksize, stride, padding, dilation, groups, out, j0):
    """The adjoint of im2col: x += the columns (G, Cg*K, count) from j0 on (in place)."""
    count = cols.shape[-1]
    if kernel_ready(x) and x.flags.c_contiguous and cols.dtype == x.dtype:
        compiled.col2im(np.ascontiguousarray(cols), x, geometry(
            x.shape, ksize, stride, padding, dilation, out, groups), j0, count)
        return x
    length = int(np.prod(out))
    n0, n1 = j0 // length, -(-(j0 + count) // length)
    nb, nd = n1 - n0, len(ksize)
    cg = x.shape[1] // groups
    full = xp.zeros((groups, cg * int(np.prod(ksize)), nb * length), dtype=cols.dtype)
    full[..., j0 - n0 * length:j0 - n0 * length + count] = cols
    g = full.reshape((groups, cg) + tuple(ksize) + (nb,) + tuple(out))
    g = g.transpose((2 + nd, 0, 1) + tuple(range(2, 2 + nd)) + tuple(range(3 + nd, 3 + 2 * nd)))
    spatial = x.shape[2:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    buf = xp.zeros((nb, groups, cg) + padded, dtype=cols.dtype)
    scatter_windows(xp, buf, g, ksize, stride, dilation, out)
    inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
    x[n0:n1] += buf.reshape((nb, x.shape[1]) + padded)[(Ellipsis,) + inner]
    return x


def scatter_windows(xp, buf, g, ksize, stride, dilation, out):
    """buf[..., window positions] += g, g shaped buf.shape[:k] + ksize + out: one strided
    add per kernel offset (a loop over offsets, never over pixels)."""
    nd = len(ksize)
    lead = g.ndim - 2 * nd
    head = (slice(None),) * lead
    for off in itertools.product(*(range(k) for k in ksize)):
        sl = tuple(slice(o * d, o * d + t * (m - 1) + 1, t)
                   for o, d, t, m in zip(off, dilation, stride, out))
        buf[head + sl] += g[head + off]
    return buf
