"""Resampling: interpolate / upsample (separable: one tap-table gather per spatial dim),
pixel_shuffle, pixel_unshuffle, channel_shuffle. grid_sample and affine_grid live in
grid.py.

Source indices and weights follow PyTorch's index formulas, computed in the precision
PyTorch computes them in (float32 scales for float32 inputs, float32 always for nearest)."""
import math
import warnings

import numpy as np

from ..._dtype import float64
from ...ops.nn_resample import interp_taps
from ...ops.registry import name_node
from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}
_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}
_CUBIC_A = -0.75


# ---------------------------------------------------------------------- tap tables
def _scale(n_in, n_out, scale, align_corners, ftype):
    """PyTorch's area_pixel_compute_scale: the source step per output step."""
    if align_corners:
        return ftype((n_in - 1) / (n_out - 1)) if n_out > 1 else ftype(0)
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(n_in) / ftype(n_out)


def _nearest_taps(n_in, n_out, scale, exact):
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst[None]
    if not exact and n_out == 2 * n_in:
        return (dst >> 1)[None]
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    if exact:
        # NOTE: (dst + 0.5) is a double in PyTorch; the product is rounded to float.
        src = ((dst + 0.5) * np.float64(s)).astype(np.float32)
    else:
        src = dst.astype(np.float32) * s
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)[None]


def _linear_taps(n_in, n_out, scale, align_corners, ftype):
    s = _scale(n_in, n_out, scale, align_corners, ftype)
    dst = np.arange(n_out, dtype=ftype)
    src = s * dst if align_corners else np.maximum(s * (dst + ftype(0.5)) - ftype(0.5), 0)
    i0 = src.astype(np.int64)
    lam1 = np.minimum(src - i0.astype(ftype), ftype(1))
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1]), np.stack([ftype(1) - lam1, lam1])


def _cubic_coeffs(t, a=_CUBIC_A):
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):   # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    one = t.dtype.type(1)
    return np.stack([far(t + one), near(t), near(one - t), far(one - t + one)])


def _cubic_taps(n_in, n_out, scale, align_corners, ftype):
    s = _scale(n_in, n_out, scale, align_corners, ftype)
    dst = np.arange(n_out, dtype=ftype)
    src = s * dst if align_corners else s * (dst + ftype(0.5)) - ftype(0.5)
    i = np.floor(src)
    t = (src - i).astype(ftype)
    idx = np.clip(i.astype(np.int64)[None] + np.arange(-1, 3)[:, None], 0, n_in - 1)
    return idx, _cubic_coeffs(t)


# ---------------------------------------------------------------------- interpolate
def _expand(name, value, dim, input):
    if isinstance(value, (list, tuple)):
        if len(value) != dim:
            what = "output size of" if name == "size" else "scale_factor of shape"
            other = "output size in (o1, o2, ...,oK)" if name == "size" else \
                "scale_factor in (s1, s2, ...,sK)"
            first = "output" if name == "size" else "scale_factor"
            raise ValueError(
                f"Input and {first} must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(input.shape[2:])} and {what} "
                f"{value}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                f"{other} format.")
        return list(value)
    return [value] * dim


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of an (N, C, d1, ..., dK) tensor, K in 1..3."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out_size, scales = [int(s) for s in _expand("size", size, dim, input)], [None] * dim
    elif scale_factor is not None:
        scales, out_size = [float(s) for s in _expand("scale", scale_factor, dim, input)], None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if out_size is None:
        # NOTE: floor(in * scale) in double, as PyTorch; the scale itself is kept unless
        # recompute_scale_factor asks for in/out instead.
        out_size = [int(math.floor(input.shape[i + 2] * scales[i])) for i in range(dim)]
        if recompute_scale_factor:
            scales = [None] * dim
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    _check_mode(input, mode)
    _check_sizes(input, out_size)
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by ember")
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, out_size)
    ftype = np.float64 if input.dtype is float64 else np.float32
    out = input
    for i in range(dim):
        n_in, n_out = input.shape[i + 2], out_size[i]
        if mode in ("nearest", "nearest-exact"):
            idx, w = _nearest_taps(n_in, n_out, scales[i], mode == "nearest-exact"), None
        elif mode == "bicubic":
            idx, w = _cubic_taps(n_in, n_out, scales[i], align_corners, ftype)
        else:
            idx, w = _linear_taps(n_in, n_out, scales[i], align_corners, ftype)
        if w is not None:
            w = w.astype(input.dtype.np)
        out = interp_taps(out, i + 2, idx, w)
    return name_node(out, f"Upsample{_NODE_MODES[mode]}{dim}DBackward0")


# PyTorch's upsample node names by mode (UpsampleBilinear2DBackward0 ...)
_NODE_MODES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
               "bilinear": "Bilinear", "bicubic": "Bicubic", "trilinear": "Trilinear"}


def _check_mode(input, mode):
    nd = input.dim()
    if mode in _MODES and 3 <= nd <= 5:
        want = _LINEAR.get(mode, 4 if mode == "bicubic" else nd)
        if want != nd:
            name = {3: "linear", 4: "bilinear", 5: "trilinear"}
            if mode == "bicubic":
                raise NotImplementedError(f"Got {nd}D input, but bicubic mode needs 4D input")
            raise NotImplementedError(f"Got {nd}D input, but {name[want]} mode needs {want}D "
                                      "input")
        return
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
        "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact "
        f"(got {mode})")


def _check_sizes(input, out_size):
    ins = input.shape[2:]
    if all(s > 0 for s in ins) and all(s > 0 for s in out_size):
        return
    names = _NAMES[len(ins)]
    a = ", ".join(f"{n}: {s}" for n, s in zip(names, ins))
    b = ", ".join(f"{n}: {s}" for n, s in zip(names, out_size))
    sep = " and output" if len(ins) == 1 else " output"
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({a})"
                       f"{sep} ({b})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------- shuffles
def _shuffle_factor(input, factor, name, what):
    """The checked factor of pixel_shuffle / pixel_unshuffle (input of 3 dims or more)."""
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    r = int(factor)
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")
    return r


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = _shuffle_factor(input, upscale_factor, "pixel_shuffle", "upscale_factor")
    c, h, w = input.shape[-3:]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but input.size(-3)="
                           f"{c} is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return name_node(x.reshape(lead + (c // (r * r), h * r, w * r)), "PixelShuffleBackward0")


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = _shuffle_factor(input, downscale_factor, "pixel_unshuffle", "downscale_factor")
    c, h, w = input.shape[-3:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    n = len(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return name_node(x.reshape(lead + (c * r * r, h // r, w // r)), "PixelUnshuffleBackward0")


def channel_shuffle(input, groups):
    """(N, C, *) with C = g k -> channels reordered as (k, g)."""
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    n, c = input.shape[:2]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    rest = tuple(input.shape[2:])
    x = input.reshape((n, g, c // g) + rest).transpose(1, 2)
    return name_node(x.reshape((n, c) + rest), "ChannelShuffleBackward0")


native_channel_shuffle = channel_shuffle
