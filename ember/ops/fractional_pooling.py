"""Fractional max pooling (Graham, 2014) over 2 or 3 spatial dims: each plane's windows start
at pseudo-random, increasing offsets drawn from one uniform sample per plane and dim, so the
output size need not divide the input size. One op with two outputs (values, flat indices),
as PyTorch's FractionalMaxPool2DBackward0 / 3D."""
import numpy as np

from ..backends import array_module
from .registry import PUBLIC, defop, dispatch


def window_starts(xp, samples, in_size, out_size, pool):
    """Per plane, the `out_size` window starts along one dim from its samples u in [0, 1):
    start_i = int((i + u) * alpha) - int(u * alpha) with alpha = (in - pool) / (out - 1),
    the last window ending at the input's end.

    NOTE: computed in the samples' dtype (the input's), as PyTorch's kernel does: float32
    rounding decides where a window starts."""
    t = samples.dtype.type
    starts = xp.empty((samples.shape[0], out_size), dtype=xp.int64)
    if out_size > 1:
        alpha = t(in_size - pool) / t(out_size - 1)
        steps = xp.arange(out_size - 1).astype(samples.dtype)
        first = ((steps[None, :] + samples[:, None]) * alpha).astype(xp.int64)
        starts[:, :-1] = first - (samples * alpha).astype(xp.int64)[:, None]
    starts[:, -1] = in_size - pool
    return starts


def _forward(x, samples, kernel, out_shape, dims_order):
    """x: (N, C, *S) or (C, *S); samples: (>=N, C, d); returns values (N, C, *O) (or
    (C, *O)) and the flat indices of the maxima within each plane."""
    xp = array_module(x)
    d = len(kernel)
    lead = x.shape[:-d]
    n, c = (1,) + lead if len(lead) == 1 else lead
    spatial = x.shape[-d:]
    planes = x.reshape((n * c,) + spatial)
    u = samples[:n].reshape(n * c, d)
    index, offsets = [xp.arange(n * c).reshape((-1,) + (1,) * (2 * d))], []
    for j in range(d):
        starts = window_starts(xp, u[:, dims_order[j]], spatial[j], out_shape[j], kernel[j])
        offsets.append(starts)
        shape = [n * c] + [out_shape[j] if m == j else 1 for m in range(d)] + \
            [kernel[j] if m == j else 1 for m in range(d)]
        window = starts[:, :, None] + xp.arange(kernel[j])[None, None, :]
        index.append(window.reshape(shape))
    windows = planes[tuple(index)].reshape((n * c,) + tuple(out_shape) + (-1,))
    # NOTE: argmax returns the first NaN when there is one, as PyTorch's scan picks NaN, and
    # the first of equal maxima in row-major window order otherwise
    best = xp.argmax(windows, axis=-1)
    values = xp.take_along_axis(windows, best[..., None], axis=-1)[..., 0]
    within = xp.unravel_index(best, tuple(kernel))
    flat = xp.zeros(best.shape, dtype=xp.int64)
    for j in range(d):
        grid = offsets[j].reshape([n * c] + [out_shape[j] if m == j else 1 for m in range(d)])
        flat = flat * spatial[j] + (grid + within[j])
    full = lead + tuple(out_shape)
    return values.reshape(full), flat.reshape(full)


def _make(name, node, dims_order):
    op = defop(name, node=node, save=(), save_output=True, num_outputs=2)(
        lambda x, samples, kernel, out_shape: _forward(x, samples, kernel, out_shape,
                                                       dims_order))

    @op.defvjp
    def _vjp(ctx, g, _g_indices):
        shape = ctx.in_meta[0][0]
        d = len(ctx.params["kernel"])
        planes = int(np.prod(shape[:-d]))
        indices = ctx.outputs[1].reshape(planes, -1)
        grad = g.new_zeros((planes, int(np.prod(shape[-d:]))))
        grad = PUBLIC["scatter_add"](grad, 1, indices, g.reshape(planes, -1))
        return grad.reshape(shape), None
    return op


# 2d samples hold (width, height); 3d samples hold (time, height, width)
_POOL2D = _make("fractional_max_pool2d", "FractionalMaxPool2DBackward0", (1, 0))
_POOL3D = _make("fractional_max_pool3d", "FractionalMaxPool3DBackward0", (0, 1, 2))


def fractional_max_pool(input, kernel, out_shape, samples):
    """(values, indices) for `input` (N, C, *S) or (C, *S), arguments checked."""
    op = _POOL2D if len(kernel) == 2 else _POOL3D
    return dispatch(op, (input, samples), {"kernel": tuple(kernel),
                                           "out_shape": tuple(out_shape)}, input.dtype)

