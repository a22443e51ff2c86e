"""Convolution as three bilinear primitives, each the VJP of the others.

With <y, conv(x, w)> = sum y[n,o,p] x[n,c,s*p+d*k-pad] w[o,c,k] one trilinear form:
  convolution(x, w)            -> y   (im2col + batched GEMM)
  convolution_transpose(y, w)  -> x   (GEMM + col2im: the adjoint in x, also conv_transpose)
  convolution_weight(x, y)     -> w   (GEMM against im2col(x): the adjoint in w)
so every VJP is one of the three and double backward needs nothing more. im2col/col2im
(F.unfold/F.fold) are the same kernels with a unit GEMM.

Params everywhere: stride, dilation (tuples), padding (((lo, hi), ...) pairs: 'same' may be
asymmetric), groups. The forward caches im2col(x) when asked, so the weight gradient skips
recomputing it.
"""
from collections import OrderedDict

from ..backends import array_module
from ..backends import conv_kernels as K
from .registry import defop, dispatch

_CACHE = OrderedDict()       # id(x array) -> (x array, key, cols)
_CACHE_BYTES = [0]
_CACHE_LIMIT = 256 << 20     # NOTE: bounded, so forwards without a backward cannot leak


def _cache_put(x, key, cols):
    nbytes = cols.nbytes
    if nbytes > _CACHE_LIMIT:
        return
    old = _CACHE.pop(id(x), None)
    if old is not None:
        _CACHE_BYTES[0] -= old[2].nbytes
    _CACHE[id(x)] = (x, key, cols)
    _CACHE_BYTES[0] += nbytes
    while _CACHE_BYTES[0] > _CACHE_LIMIT:
        _, (_, _, c) = _CACHE.popitem(last=False)
        _CACHE_BYTES[0] -= c.nbytes


def _cache_take(x, key):
    entry = _CACHE.get(id(x))
    # NOTE: identity of the array object, not just its id: a freed array's id can be reused.
    if entry is None or entry[0] is not x or entry[1] != key:
        return None
    del _CACHE[id(x)]
    _CACHE_BYTES[0] -= entry[2].nbytes
    return entry[2]


def _weight_matmul(xp, wm, cols):
    """wm (G, A, B) applied to every sample's columns (N, G, B, L): (N, G, A, L).

    NOTE: per-sample GEMMs read the weights once per sample, which dominates when positions
    are few (deep layers on small images: L of 1 to 16 against B of thousands); then fold
    the batch into one GEMM over N*L columns and regroup the (small) result."""
    n, groups, b, length = cols.shape
    a = wm.shape[1]
    if n == 1 or a * b <= length * (a + b):
        return xp.matmul(wm, cols)
    folded = cols.transpose(1, 2, 0, 3).reshape(groups, b, n * length)
    y = xp.matmul(wm, folded).reshape(groups, a, n, length)
    return y.transpose(2, 0, 1, 3)


def _unit(stride):
    return all(s == 1 for s in stride)


def _key(ksize, stride, padding, dilation, groups):
    return (ksize, stride, padding, dilation, groups)


# ---------------------------------------------------------------------- convolution
@defop("convolution", node="ConvolutionBackward0")
def _convolution(x, w, b, stride, padding, dilation, groups, cache=False):
    xp = array_module(x, w)
    ksize = w.shape[2:]
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    if _unit(stride):
        cols, out, ext = K.im2col_flat(xp, x, ksize, padding, dilation, groups)
        y = K.crop_ext(xp, xp.matmul(wm, cols), x.shape[0], out, ext)
    else:
        cols, out = K.im2col(xp, x, ksize, stride, padding, dilation, groups)
        y = _weight_matmul(xp, wm, cols).reshape((x.shape[0], w.shape[0]) + out)
    if b is not None:
        y += b.reshape((-1,) + (1,) * len(out))
    if cache:
        _cache_put(x, _key(ksize, stride, padding, dilation, groups), cols)
    return y


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


def conv_nd(x, w, b, stride, padding, dilation, groups, cache=False):
    """y = conv(x, w) + b on batched (N, C, *S) tensors (arguments already validated)."""
    return dispatch(_convolution, (x, w, b),
                    {"stride": stride, "padding": padding, "dilation": dilation,
                     "groups": groups, "cache": cache}, x.dtype)


# ---------------------------------------------------------------------- transpose
@defop("convolution_transpose", node="ConvolutionBackward0")
def _convolution_transpose(y, w, x_shape, stride, padding, dilation, groups):
    xp = array_module(y, w)
    n = y.shape[0]
    og = w.shape[0] // groups
    wm = w.reshape(groups, og, -1)
    x_shape = (n,) + tuple(x_shape[1:])
    if _unit(stride):
        pads = _flipped_padding(y.shape, x_shape, w.shape, padding, dilation, groups)
        if pads is not None:
            return _transpose_as_conv(xp, y, w, pads, dilation, groups)
        ext = K.flat_geometry(x_shape[2:], w.shape[2:], padding, dilation)[4]
        gy = K.extend(xp, y, ext).reshape(groups, og, -1)
        cols = xp.matmul(wm.swapaxes(-1, -2), gy)
        return K.col2im_flat(xp, cols, x_shape, w.shape[2:], padding, dilation, groups)
    gy = y.reshape(n, groups, og, -1)
    cols = _weight_matmul(xp, wm.swapaxes(-1, -2), gy)
    return K.col2im(xp, cols, (n,) + tuple(x_shape[1:]), w.shape[2:], stride, padding,
                    dilation, groups)


def _flipped_padding(y_shape, x_shape, w_shape, padding, dilation, groups):
    """Padding for computing a unit-stride transpose as a convolution of y with the flipped
    kernel, or None when the GEMM + col2im form is cheaper (or the padding would be negative).

    x[i] = sum_k y[i + lo - d*k] w[k] = sum_k' ypad[i + d*k'] w[K-1-k'], ypad = y padded by
    lo' = d*(K-1) - lo in front and hi' = X - Y + lo behind. The im2col copy of y (Og*K rows
    over the extended x grid) replaces col2im's strided adds (Cg*K rows over the y grid):
    NOTE: an add costs about twice a copy, so take the conv form while its columns are at
    most twice as many."""
    pads = []
    span_x, span_y = x_shape[2], y_shape[2]
    for i, (xs, ys, k, d, (lo, hi)) in enumerate(zip(x_shape[2:], y_shape[2:], w_shape[2:],
                                                      dilation, padding)):
        lo2, hi2 = d * (k - 1) - lo, xs - ys + lo
        if lo2 < 0 or hi2 < 0:
            return None
        pads.append((lo2, hi2))
        if i:
            span_x *= xs + d * (k - 1)
            span_y *= xs + lo + hi
    og, cg = w_shape[0] // groups, w_shape[1]
    return tuple(pads) if og * span_x <= 2 * cg * span_y else None


def _transpose_as_conv(xp, y, w, pads, dilation, groups):
    """The unit-stride transpose as conv(y, flipped w with in/out channels swapped)."""
    og, cg = w.shape[0] // groups, w.shape[1]
    nd = w.ndim - 2
    flip = (slice(None),) * 3 + (slice(None, None, -1),) * nd
    wf = w.reshape((groups, og, cg) + w.shape[2:])[flip].swapaxes(1, 2)
    wm = xp.ascontiguousarray(wf).reshape(groups, cg, -1)
    cols, out, ext = K.im2col_flat(xp, y, w.shape[2:], pads, dilation, groups)
    return K.crop_ext(xp, xp.matmul(wm, cols), y.shape[0], out, ext)


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
    xp = array_module(x, y)
    ksize = tuple(w_shape[2:])
    cols = _cache_take(x, _key(ksize, stride, padding, dilation, groups))
    n = x.shape[0]
    og = w_shape[0] // groups
    if _unit(stride):   # channel-major columns: one GEMM over every sample's positions
        if cols is None:
            cols = K.im2col_flat(xp, x, ksize, padding, dilation, groups)[0]
        ext = K.flat_geometry(x.shape[2:], ksize, padding, dilation)[4]
        gy = K.extend(xp, y, ext).reshape(groups, og, -1)
        return xp.matmul(gy, cols.swapaxes(-1, -2)).reshape(w_shape)
    if cols is None:
        cols, _ = K.im2col(xp, x, ksize, stride, padding, dilation, groups)
    gy = y.reshape(n, groups, og, -1)
    ck, length = cols.shape[-2], cols.shape[-1]
    if n == 1:
        gw = xp.matmul(gy[0], cols[0].swapaxes(-1, -2))
    elif og * ck > length * (og + ck):
        # NOTE: per-sample products would be N (Og x CK) blocks summed afterwards, larger than
        # the operands when positions are few (deep layers on small images): fold the batch
        # into the contraction instead, one GEMM over N*L after regrouping both operands.
        gy = gy.transpose(1, 2, 0, 3).reshape(groups, og, n * length)
        cols = cols.transpose(1, 2, 0, 3).reshape(groups, ck, n * length)
        gw = xp.matmul(gy, cols.swapaxes(-1, -2))
    else:
        gw = xp.matmul(gy, cols.swapaxes(-1, -2)).sum(0)
    return gw.reshape(w_shape)


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
    cols, _ = K.im2col(array_module(x), x, ksize, stride, padding, dilation, 1)
    return cols.reshape(cols.shape[0], cols.shape[2], cols.shape[3])


@_im2col.defvjp
def _im2col_vjp(ctx, g):
    p = ctx.params
    return col2im_nd(g, ctx.in_meta[0][0], p["ksize"], p["stride"], p["padding"],
                     p["dilation"])


@defop("col2im", node="Col2ImBackward0", save=())
def _col2im(cols, x_shape, ksize, stride, padding, dilation):
    n, k, l_ = cols.shape
    return K.col2im(array_module(cols), cols.reshape(n, 1, k, l_), (n,) + tuple(x_shape[1:]),
                    ksize, stride, padding, dilation, 1)


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
