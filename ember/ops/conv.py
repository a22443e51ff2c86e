"""Convolution as three bilinear primitives, each the VJP of the others.

With <y, conv(x, w)> = sum y[n,o,p] x[n,c,s*p+d*k-pad] w[o,c,k] one trilinear form:
  convolution(x, w)            -> y   (im2col + GEMM)
  convolution_transpose(y, w)  -> x   (GEMM + col2im: the adjoint in x, also conv_transpose)
  convolution_weight(x, y)     -> w   (GEMM against im2col(x): the adjoint in w)
so every VJP is one of the three and double backward needs nothing more. im2col/col2im
(F.unfold/F.fold) are the same kernels with a unit GEMM.

Each primitive walks the batch's columns in the pieces the backend gives (see
backends/conv_kernels.py): a piece's columns are made, multiplied and dropped while they are
in cache, so the whole batch's columns (prod(ksize) times the input) never exist at once.

Params everywhere: stride, dilation (tuples), padding (((lo, hi), ...) pairs: 'same' may be
asymmetric), groups.
"""
import numpy as np

from ..backends import array_module
from ..backends import conv_kernels as K
from ..backends import matmul as products
from .registry import defop, dispatch


def _out_shape(spatial, ksize, stride, padding, dilation):
    return tuple(K.out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi)
                 in zip(spatial, ksize, stride, dilation, padding))


def _columns(a, j0, count):
    """The columns [j0, j0 + count) of a (N, G, R, L) array as (G, R, count): a view inside
    one sample, else (whole samples) a copy."""
    length = a.shape[-1]
    n0, l0 = divmod(j0, length)
    if l0 + count <= length:
        return a[n0, :, :, l0:l0 + count]
    nb = count // length
    return a[n0:n0 + nb].transpose(1, 2, 0, 3).reshape(a.shape[1], a.shape[2], count)


def _matmul_into(wm, cols, y, j0, count):
    """y's columns [j0, j0 + count) = wm @ cols, y (N, G, R, L). The product goes through
    backends.matmul (ember's tiles for float32), never NumPy's matmul: OpenBLAS's own threads
    would spin on the cores the thread team needs next."""
    length = y.shape[-1]
    n0, l0 = divmod(j0, length)
    res = products.matmul(wm, cols)
    if l0 + count <= length:
        y[n0, :, :, l0:l0 + count] = res
        return
    nb = count // length
    y[n0:n0 + nb] = res.reshape(res.shape[:2] + (nb, length)).transpose(2, 0, 1, 3)


# ---------------------------------------------------------------------- convolution
@defop("convolution", node="ConvolutionBackward0")
def _convolution(x, w, b, stride, padding, dilation, groups):
    y = _conv(array_module(x, w), x, w, stride, padding, dilation, groups)
    if b is not None:
        y += b.reshape((-1,) + (1,) * (y.ndim - 2))
    return y


def _conv(xp, x, w, stride, padding, dilation, groups):
    """conv(x, w) on arrays: im2col of a piece of the batch, one GEMM into y, next piece."""
    x = xp.ascontiguousarray(x)     # (once, not per piece)
    ksize = w.shape[2:]
    out = _out_shape(x.shape[2:], ksize, stride, padding, dilation)
    length = int(np.prod(out))
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    y = K.conv(x, wm, ksize, stride, padding, dilation, groups, out)
    if y is None:
        y = xp.empty((x.shape[0], groups, wm.shape[1], length), dtype=x.dtype)
        for j0, count in K.column_chunks(x, length, groups * wm.shape[2]):
            cols = K.im2col(xp, x, ksize, stride, padding, dilation, groups, out, j0, count)
            _matmul_into(wm, cols, y, j0, count)
    return y.reshape((x.shape[0], w.shape[0]) + out)


@_convolution.defvjp
def _convolution_vjp(ctx, g):
    x, w, _ = ctx.inputs
    p = ctx.params
    e = ctx.edges
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    gx = conv_transpose_nd(g, w, ctx.in_meta[0][0], *geo) if e[0] is not None else None
    gw = conv_weight_nd(x, g, ctx.in_meta[0][1], *geo) if e[1] is not None else None
    gb = g.sum([0] + list(range(2, g.ndim))) if e[2] is not None else None
    return gx, gw, gb


def conv_nd(x, w, b, stride, padding, dilation, groups):
    """y = conv(x, w) + b on batched (N, C, *S) tensors (arguments already validated)."""
    return dispatch(_convolution, (x, w, b),
                    {"stride": stride, "padding": padding, "dilation": dilation,
                     "groups": groups}, x.dtype)


# ---------------------------------------------------------------------- transpose
@defop("convolution_transpose", node="ConvolutionBackward0")
def _convolution_transpose(y, w, x_shape, stride, padding, dilation, groups):
    """x (N,) + x_shape[1:] from y: the windows are y's positions (with output_padding x has
    trailing positions that no window reaches: they stay 0)."""
    xp = array_module(y, w)
    n = y.shape[0]
    og = w.shape[0] // groups
    x_shape = (n,) + tuple(x_shape[1:])
    pads = _flipped_padding(y.shape, x_shape, w.shape, padding, dilation) \
        if all(s == 1 for s in stride) else None
    if pads is not None:
        # the compiled kernel reads w flipped in place, whatever the cost test says below
        x = K.conv_flipped(y, w, pads, dilation, groups, x_shape[2:])
        if x is not None:
            return x
        if _flipped_pays(y.shape, x_shape, w.shape, groups):
            # x = conv(y, w flipped, in/out channels swapped): see _flipped_padding
            nd = w.ndim - 2
            flip = (slice(None),) * 3 + (slice(None, None, -1),) * nd
            wf = w.reshape((groups, og, w.shape[1]) + w.shape[2:])[flip].swapaxes(1, 2)
            wf = xp.ascontiguousarray(wf).reshape((groups * w.shape[1], og) + w.shape[2:])
            return _conv(xp, y, wf, stride, pads, dilation, groups)
    wm = w.reshape(groups, og, -1)
    out = tuple(y.shape[2:])
    length = int(np.prod(out))
    gy = y.reshape(n, groups, og, length)
    x = xp.zeros(x_shape, dtype=y.dtype)
    wt = wm.swapaxes(-1, -2)
    for j0, count in K.column_chunks(x, length, groups * wm.shape[2]):
        cols = products.matmul(wt, _columns(gy, j0, count))
        K.col2im(xp, cols, x, w.shape[2:], stride, padding, dilation, groups, out, j0)
    return x


def _flipped_padding(y_shape, x_shape, w_shape, padding, dilation):
    """Padding for computing a unit-stride transpose as a convolution of y with the flipped
    kernel, or None when it would be negative.

    x[i] = sum_k y[i + lo - d*k] w[k] = sum_k' ypad[i + d*k'] w[K-1-k'], ypad = y padded by
    lo' = d*(K-1) - lo in front and hi' = X - Y + lo behind."""
    pads = []
    for xs, ys, k, d, (lo, hi) in zip(x_shape[2:], y_shape[2:], w_shape[2:], dilation,
                                      padding):
        lo2, hi2 = d * (k - 1) - lo, xs - ys + lo
        if lo2 < 0 or hi2 < 0:
            return None
        pads.append((lo2, hi2))
    return tuple(pads)


def _flipped_pays(y_shape, x_shape, w_shape, groups):
    """Whether the flipped convolution beats GEMM + col2im on the NumPy path: the im2col copy
    of y (Og*K rows over x's positions) and a flipped copy of the weights replace col2im's
    adds (Cg*K rows over y's positions), and the GEMM takes the forward's shape. NOTE: an add
    costs about twice a copy, so take the conv form while it writes at most twice as many
    cells."""
    og, cg = w_shape[0] // groups, w_shape[1]
    kk, n = int(np.prod(w_shape[2:])), x_shape[0]
    span_x, span_y = int(np.prod(x_shape[2:])), int(np.prod(y_shape[2:]))
    # cells written: im2col's plus the flipped weights' copy, against col2im's adds
    conv_form = og * kk * n * span_x + w_shape[0] * cg * kk
    return conv_form <= 2 * cg * kk * n * span_y


@_convolution_transpose.defvjp
def _convolution_transpose_vjp(ctx, g):
    y, w = ctx.inputs
    p = ctx.params
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    gy = conv_nd(g, w, None, *geo) if ctx.edges[0] is not None else None
    gw = conv_weight_nd(g, y, ctx.in_meta[0][1], *geo) if ctx.edges[1] is not None else None
    return _crop_to(gy, ctx.in_meta[0][0]), gw


def _crop_to(t, shape):
    """t cut to `shape`: with output_padding (unit stride, dilation > 1) the transpose's
    output has trailing positions no window reaches, and the adjoint conv of its gradient
    yields one output per such position, beyond y's extent."""
    if t is None or tuple(t.shape) == tuple(shape):
        return t
    return t[(slice(None), slice(None)) + tuple(slice(0, s) for s in shape[2:])]


def conv_transpose_nd(y, w, x_shape, stride, padding, dilation, groups):
    """The adjoint of conv_nd in x: an array shaped (N,) + x_shape[1:]."""
    return dispatch(_convolution_transpose, (y, w),
                    {"x_shape": tuple(x_shape), "stride": stride, "padding": padding,
                     "dilation": dilation, "groups": groups}, y.dtype)


# ---------------------------------------------------------------------- weight
@defop("convolution_weight", node="ConvolutionBackwardBackward0")
def _convolution_weight(x, y, w_shape, stride, padding, dilation, groups):
    """sum over positions of y (x) im2col(x); y may stop short of x's last windows (see
    _crop_to): the windows are y's positions."""
    gw = K.conv_weight(x, y, w_shape, stride, padding, dilation, groups)
    if gw is not None:
        return gw
    xp = array_module(x, y)
    ksize = tuple(w_shape[2:])
    out = tuple(y.shape[2:])
    length = int(np.prod(out))
    og = w_shape[0] // groups
    gy = y.reshape(x.shape[0], groups, og, length)
    x = xp.ascontiguousarray(x)     # (once, not per piece)
    # NOTE: cols @ gy^T (then one transpose of the small result) ran up to 1.5x faster than
    # gy @ cols^T through OpenBLAS on wide batches (its transposed operand is the long one);
    # with few columns (deep layers on small images) the transpose of a large weight
    # gradient costs more than the GEMM (15x at 512 channels on 1x1 images).
    wide = x.shape[0] * length >= 1024
    gw = None
    for j0, count in K.column_chunks(x, length, x.shape[1] * int(np.prod(ksize))):
        cols = K.im2col(xp, x, ksize, stride, padding, dilation, groups, out, j0, count)
        gyc = _columns(gy, j0, count)
        part = products.matmul(cols, gyc.swapaxes(-1, -2)) if wide else \
            products.matmul(gyc, cols.swapaxes(-1, -2))
        if gw is None:
            gw = part
        else:
            gw += part
    if gw is None:
        return xp.zeros(w_shape, dtype=x.dtype)
    return (xp.ascontiguousarray(gw.swapaxes(-1, -2)) if wide else gw).reshape(w_shape)


@_convolution_weight.defvjp
def _convolution_weight_vjp(ctx, g):
    x, y = ctx.inputs
    p = ctx.params
    geo = (p["stride"], p["padding"], p["dilation"], p["groups"])
    gx = conv_transpose_nd(y, g, ctx.in_meta[0][0], *geo) if ctx.edges[0] is not None \
        else None
    gy = conv_nd(x, g, None, *geo) if ctx.edges[1] is not None else None
    return gx, _crop_to(gy, ctx.in_meta[0][1])


def conv_weight_nd(x, y, w_shape, stride, padding, dilation, groups):
    """The adjoint of conv_nd in w."""
    return dispatch(_convolution_weight, (x, y),
                    {"w_shape": tuple(w_shape), "stride": stride, "padding": padding,
                     "dilation": dilation, "groups": groups}, x.dtype)


# ---------------------------------------------------------------------- im2col / col2im
@defop("im2col", node="Im2ColBackward0", save=())
def _im2col(x, ksize, stride, padding, dilation):
    xp = array_module(x)
    out = _out_shape(x.shape[2:], ksize, stride, padding, dilation)
    n, length = x.shape[0], int(np.prod(out))
    cols = K.im2col(xp, x, ksize, stride, padding, dilation, 1, out, 0, n * length)
    return xp.ascontiguousarray(cols.reshape(-1, n, length).swapaxes(0, 1))


@_im2col.defvjp
def _im2col_vjp(ctx, g):
    p = ctx.params
    return col2im_nd(g, ctx.in_meta[0][0], p["ksize"], p["stride"], p["padding"],
                     p["dilation"])


@defop("col2im", node="Col2ImBackward0", save=())
def _col2im(cols, x_shape, ksize, stride, padding, dilation):
    xp = array_module(cols)
    n, rows, length = cols.shape
    x = xp.zeros((n,) + tuple(x_shape[1:]), dtype=cols.dtype)
    out = _out_shape(x.shape[2:], ksize, stride, padding, dilation)
    flat = cols.swapaxes(0, 1).reshape(1, rows, n * length)
    return K.col2im(xp, flat, x, ksize, stride, padding, dilation, 1, out, 0)


@_col2im.defvjp
def _col2im_vjp(ctx, g):
    p = ctx.params
    return im2col_nd(g, p["ksize"], p["stride"], p["padding"], p["dilation"])


def im2col_nd(x, ksize, stride, padding, dilation):
    """F.unfold on a batched tensor: (N, C*prod(ksize), L)."""
    return dispatch(_im2col, (x,), {"ksize": tuple(ksize), "stride": stride,
                                     "padding": padding, "dilation": dilation}, x.dtype)


def col2im_nd(cols, x_shape, ksize, stride, padding, dilation):
    """F.fold on batched columns: an (N,) + x_shape[1:] tensor."""
    return dispatch(_col2im, (cols,), {"x_shape": tuple(x_shape), "ksize": tuple(ksize),
                                        "stride": stride, "padding": padding,
                                        "dilation": dilation}, cols.dtype)
