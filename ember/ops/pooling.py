"""Pooling primitives: max pooling (values + flat indices), its scatter backward, average
pooling and its adjoint, adaptive max pooling. Arrays are batched (N, C, *spatial); the
nn.functional layer validates arguments, handles unbatched inputs and computes geometry.

Max-pool indices are PyTorch's: flat positions in each (n, c) plane of the unpadded input.
Params: ksize, stride, dilation tuples; padding ((lo, hi), ...) where hi includes the
extra right padding ceil_mode needs; out the output spatial shape.
"""
import numpy as np

from .. import _dtype as dt
from .._tensor import _wrap
from ..backends import array_module
from ..backends import pool_kernels as P
from .registry import defop, dispatch


def _plane_index(xp, offsets, out, ksize_map, spatial):
    """Flat input index of each window's arg: sum_d pos_d * stride_d, where pos_d comes from
    `ksize_map(d, o_d, off_d)` with o_d broadcast along output dim d."""
    nd = len(out)
    index = None
    step = 1
    for d in range(nd - 1, -1, -1):
        shape = [1] * nd
        shape[d] = out[d]
        o = xp.arange(out[d]).reshape(shape)
        pos = ksize_map(d, o, offsets[d])
        index = pos * step if index is None else index + pos * step
        step *= spatial[d]
    return index


# ---------------------------------------------------------------------- max pooling
@defop("max_pool", node="MaxPool2DWithIndicesBackward0", save=(), num_outputs=2)
def _max_pool(x, ksize, stride, padding, dilation, out, overlap, saved):
    values, index = P.max_pool(array_module(x), x, ksize, stride, padding, dilation, out)
    saved.append(index)
    return values, index


# NOTE: the indices reach the VJP through the `saved` list in params, not save_output:
# saving the values would forbid in-place ops on them (relu_ after a pool), as PyTorch allows.
@_max_pool.defvjp
def _max_pool_vjp(ctx, g, _gi):
    p = ctx.params
    indices = _wrap(p["saved"][0], dt.int64, ctx.device)
    return (max_pool_backward(g, indices, ctx.in_meta[0][0], p["overlap"]),)


@defop("max_pool_values", save=())
def _max_pool_values(x, ksize, stride, padding, dilation, out):
    return P.max_pool(array_module(x), x, ksize, stride, padding, dilation, out, False)[0]


def max_pool_values_nd(x, ksize, stride, padding, dilation, out):
    """The values of max_pool_nd, for callers that need no indices and no gradient."""
    return dispatch(_max_pool_values, (x,), {"ksize": ksize, "stride": stride,
                                             "padding": padding, "dilation": dilation,
                                             "out": out}, x.dtype)


def max_pool_nd(x, ksize, stride, padding, dilation, out):
    """(values, indices) of max pooling a batched tensor."""
    overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(ksize, stride, dilation))
    return dispatch(_max_pool, (x,), {"ksize": ksize, "stride": stride, "padding": padding,
                                      "dilation": dilation, "out": out,
                                      "overlap": overlap, "saved": []}, x.dtype)


@defop("max_pool_backward", node="MaxPool2DWithIndicesBackwardBackward0", save=(1,))
def _max_pool_backward(g, indices, in_shape, overlap):
    return P.max_pool_backward(array_module(g), g, indices, in_shape, overlap)


@_max_pool_backward.defvjp
def _max_pool_backward_vjp(ctx, gg):
    _, indices = ctx.inputs
    n, c = indices.shape[:2]
    picked = gg.reshape(n, c, -1).gather(2, indices.reshape(n, c, -1))
    return picked.reshape(indices.shape), None


def max_pool_backward(g, indices, in_shape, overlap=True):
    """Scatter-add g into the positions `indices` of an in_shape array."""
    return dispatch(_max_pool_backward, (g, indices),
                    {"in_shape": tuple(in_shape), "overlap": overlap}, g.dtype)


# ---------------------------------------------------------------------- adaptive max
def adaptive_bounds(size, out):
    """PyTorch's adaptive windows: start floor(i*in/out), end ceil((i+1)*in/out)."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    return start, end


@defop("adaptive_max_pool", node="AdaptiveMaxPool2DBackward0", save=(), num_outputs=2)
def _adaptive_max_pool(x, out, saved):
    xp = array_module(x)
    nd = len(out)
    spatial = x.shape[2:]
    idx = []
    for d in range(nd):
        start, end = adaptive_bounds(spatial[d], out[d])
        kmax = int((end - start).max())
        # NOTE: clamping repeats each window's last element; argmax keeps the first maximum,
        # so the repeats never change the chosen index.
        ix = np.minimum(start[:, None] + np.arange(kmax), end[:, None] - 1)
        idx.append(ix)
    index_arrays = []
    for d, ix in enumerate(idx):
        shape = [1] * (2 * nd)
        shape[2 * d], shape[2 * d + 1] = ix.shape
        index_arrays.append(xp.asarray(ix.reshape(shape)))
    win = x[(slice(None), slice(None)) + tuple(index_arrays)]   # (N, C, o1, k1, o2, k2..)
    perm = (0, 1) + tuple(2 + 2 * d for d in range(nd)) + tuple(3 + 2 * d for d in range(nd))
    ksize = tuple(ix.shape[1] for ix in idx)
    flat = win.transpose(perm).reshape(x.shape[:2] + tuple(out) + (-1,))
    arg = flat.argmax(-1)
    values = xp.take_along_axis(flat, arg[..., None], -1)[..., 0]
    offsets = xp.unravel_index(arg, ksize) if nd > 1 else (arg,)
    dev_idx = [xp.asarray(ix) for ix in idx]

    def position(d, o, off):
        return dev_idx[d][o, off]

    index = _plane_index(xp, offsets, out, position, spatial).astype(xp.int64, copy=False)
    saved.append(index)
    return values, index


@_adaptive_max_pool.defvjp
def _adaptive_max_pool_vjp(ctx, g, _gi):
    indices = _wrap(ctx.params["saved"][0], dt.int64, ctx.device)
    return (max_pool_backward(g, indices, ctx.in_meta[0][0], True),)


def adaptive_max_pool_nd(x, out):
    return dispatch(_adaptive_max_pool, (x,), {"out": tuple(out), "saved": []}, x.dtype)


# ---------------------------------------------------------------------- average pooling
def avg_divisor(spatial, ksize, stride, pads, out, count_include_pad, divisor_override,
                dtype):
    """The divisor of each output position (broadcastable to (*out)), as PyTorch counts it:
    the window clipped to the padded input, or to the input alone without count_include_pad."""
    if divisor_override:
        return divisor_override
    total = None
    nd = len(out)
    for d in range(nd):
        start = np.arange(out[d]) * stride[d] - pads[d]
        end = np.minimum(start + ksize[d], spatial[d] + pads[d])
        if count_include_pad:
            count = end - start
        else:
            count = np.minimum(end, spatial[d]) - np.maximum(start, 0)
        shape = [1] * nd
        shape[d] = out[d]
        count = count.reshape(shape)
        total = count if total is None else total * count
    return total.astype(dtype)  # NumPy: the kernels move it to the device


@defop("avg_pool", node="AvgPool2DBackward0", save=())
def _avg_pool(x, ksize, stride, padding, out, divisor):
    return P.avg_pool(array_module(x), x, ksize, stride, padding, out, divisor)


@_avg_pool.defvjp
def _avg_pool_vjp(ctx, g):
    p = ctx.params
    return avg_pool_backward(g, ctx.in_meta[0][0], p["ksize"], p["stride"], p["padding"],
                             p["out"], p["divisor"])


@defop("avg_pool_backward", node="AvgPool2DBackwardBackward0", save=())
def _avg_pool_backward(g, in_shape, ksize, stride, padding, out, divisor):
    return P.avg_pool_backward(array_module(g), g, in_shape, ksize, stride, padding, out,
                               divisor)


@_avg_pool_backward.defvjp
def _avg_pool_backward_vjp(ctx, gg):
    p = ctx.params
    return avg_pool_nd(gg, p["ksize"], p["stride"], p["padding"], p["out"], p["divisor"])


def avg_pool_nd(x, ksize, stride, padding, out, divisor):
    return dispatch(_avg_pool, (x,), {"ksize": ksize, "stride": stride, "padding": padding,
                                      "out": out, "divisor": divisor}, x.dtype)


def avg_pool_backward(g, in_shape, ksize, stride, padding, out, divisor):
    return dispatch(_avg_pool_backward, (g,),
                    {"in_shape": tuple(in_shape), "ksize": ksize, "stride": stride,
                     "padding": padding, "out": out, "divisor": divisor}, g.dtype)
