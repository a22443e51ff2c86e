"""Convolution and pooling kernels on arrays: im2col / col2im over strided windows.

Every function takes `xp` (numpy or cupy) and N-d spatial arguments as tuples
(`ksize`, `stride`, `dilation`; `padding` as ((lo, hi), ...) pairs). Arrays are
(N, C, *spatial). Strided im2col lays columns out (N, G, Cg * prod(ksize), L): per sample
and group, channel-major then kernel offsets (PyTorch's unfold order), L = prod(output
spatial), so that one batched GEMM against the (G, Og, Cg * prod(ksize)) weight gives NCHW
output with no transpose. The stride-1 path below folds the batch into the columns instead.
"""
import itertools

import numpy as np

from .numpy_backend import scatter_add


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
    nd = len(ksize)
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
    assert len(shape) == len(strides) and nd == len(x.shape) - 2
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


def im2col(xp, x, ksize, stride, padding, dilation, groups):
    """(N, G, Cg*K, L) columns of x (copied), and the output spatial shape."""
    n, c = x.shape[:2]
    out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi)
                in zip(x.shape[2:], ksize, stride, dilation, padding))
    xp_ = pad(xp, x, padding)
    win = windows(xp, xp_, ksize, stride, dilation, out, groups)
    kk = int(np.prod(ksize))
    cols = win.reshape(n, groups, (c // groups) * kk, int(np.prod(out)))
    return cols, out


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


def col2im(xp, cols, x_shape, ksize, stride, padding, dilation, groups):
    """The adjoint of im2col: sums columns (N, G, Cg*K, L) back into an x_shape array."""
    n, c = x_shape[:2]
    spatial = x_shape[2:]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    out = tuple(out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi)
                in zip(spatial, ksize, stride, dilation, padding))
    buf = xp.zeros((n, groups, c // groups) + padded, dtype=cols.dtype)
    g = cols.reshape((n, groups, c // groups) + tuple(ksize) + out)
    scatter_windows(xp, buf, g, ksize, stride, dilation, out)
    buf = buf.reshape((n, c) + padded)
    if any(lo or hi for lo, hi in padding):
        inner = tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))
        buf = xp.ascontiguousarray(buf[(Ellipsis,) + inner])
    return buf


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


# ---------------------------------------------------------------------- stride-1 fast path
# NOTE: with unit strides, flatten each padded plane and let output positions run over an
# "extended" grid whose trailing dims are the full padded sizes. A kernel offset is then one
# constant shift of the flat index, so im2col copies and col2im adds whole contiguous rows
# (Ho * Wp elements) instead of Wo-long pieces. The extra positions (wo >= Wo) read
# neighbouring data and are cropped from outputs; gradients entering there are zero.
# The planes are stored channel-major, (C, N, *padded), and columns are (G, Cg*K, N*L_ext):
# the batch runs along the GEMM's long side, so a convolution, its transpose and its weight
# gradient are each one GEMM per group (no per-sample products to sum, no narrow GEMMs on
# small images); the (N, C) swap rides on copies made anyway (padding in, cropping out).
def flat_geometry(spatial, ksize, padding, dilation):
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    out = tuple(p - d * (k - 1) for p, k, d in zip(padded, ksize, dilation))
    fstride = [1] * len(padded)
    for i in range(len(padded) - 2, -1, -1):
        fstride[i] = fstride[i + 1] * padded[i + 1]
    plane = fstride[0] * padded[0]
    ext = (out[0],) + padded[1:]
    tail = sum((k - 1) * d * f for k, d, f in zip(ksize[1:], dilation[1:], fstride[1:]))
    return padded, out, tuple(fstride), plane, ext, tail


def _inner(spatial, padding):
    return tuple(slice(lo, lo + s) for s, (lo, _) in zip(spatial, padding))


def im2col_flat(xp, x, ksize, padding, dilation, groups):
    """(G, Cg*K, N*L_ext) columns over the extended grid, the true output shape and ext."""
    n, c = x.shape[:2]
    padded, out, fs, plane, ext, tail = flat_geometry(x.shape[2:], ksize, padding, dilation)
    buf = xp.zeros(c * n * plane + tail, dtype=x.dtype)
    view = buf[:c * n * plane].reshape((c, n) + padded)
    view[(Ellipsis,) + _inner(x.shape[2:], padding)] = x.swapaxes(0, 1)
    isz = buf.itemsize
    l_ext = int(np.prod(ext))
    cg = c // groups
    shape = (groups, cg) + tuple(ksize) + (n, l_ext)
    strides = (cg * n * plane * isz, n * plane * isz) + tuple(
        d * f * isz for d, f in zip(dilation, fs)) + (plane * isz, isz)
    win = xp.lib.stride_tricks.as_strided(buf, shape, strides)
    cols = win.reshape(groups, cg * int(np.prod(ksize)), n * l_ext)
    return cols, out, ext


def crop_ext(xp, y, n, out, ext):
    """(C, N*L_ext) extended-grid values -> contiguous (N, C, *out)."""
    y = y.reshape((-1, n) + tuple(ext))
    crop = (slice(None), slice(None)) + tuple(slice(0, o) for o in out)
    return xp.ascontiguousarray(y[crop].swapaxes(0, 1))


def extend(xp, g, ext):
    """(N, C, *out) gradient -> (C, N*L_ext) with zeros at the extended positions."""
    n, c = g.shape[:2]
    res = xp.zeros((c, n) + tuple(ext), dtype=g.dtype)
    res[(Ellipsis,) + tuple(slice(0, o) for o in g.shape[2:])] = g.swapaxes(0, 1)
    return res.reshape(c, -1)


def col2im_flat(xp, cols, x_shape, ksize, padding, dilation, groups):
    """Adjoint of im2col_flat: (G, Cg*K, N*L_ext) columns summed into an x_shape array."""
    n, c = x_shape[:2]
    spatial = tuple(x_shape[2:])
    padded, out, fs, plane, ext, tail = flat_geometry(spatial, ksize, padding, dilation)
    buf = xp.zeros(c * n * plane + tail, dtype=cols.dtype)
    isz = buf.itemsize
    cg = c // groups
    l_ext = cols.shape[-1] // n
    g = cols.reshape((groups, cg) + tuple(ksize) + (n, l_ext))
    st = (cg * n * plane * isz, n * plane * isz, plane * isz, isz)
    for off in itertools.product(*(range(k) for k in ksize)):
        shift = sum(o * d * f for o, d, f in zip(off, dilation, fs))
        dst = xp.lib.stride_tricks.as_strided(buf[shift:], (groups, cg, n, l_ext), st)
        dst += g[(slice(None),) * 2 + off]
    res = buf[:c * n * plane].reshape((c, n) + padded)
    return xp.ascontiguousarray(res[(Ellipsis,) + _inner(spatial, padding)].swapaxes(0, 1))
