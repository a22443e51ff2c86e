"""Image kernels on NumPy arrays shaped (..., C, H, W): what the tensor transforms run.

Arithmetic follows torchvision's tensor path step for step (float32 compute for integer
images, rounding only where torchvision rounds) so results agree with it.
"""
import math

import numpy as np

_FLOATS = (np.float16, np.float32, np.float64)


def is_float(a):
    return a.dtype.kind == "f" or a.dtype.name == "bfloat16"


def max_value(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return 1
    if dtype.kind in "iu":
        return int(np.iinfo(dtype).max)
    return 1.0


def compute_dtype(a, allowed=(np.float32, np.float64)):
    return a.dtype if a.dtype in [np.dtype(d) for d in allowed] else np.dtype(np.float32)


def cast_back(out, dtype):
    """torchvision's _cast_squeeze_out: round when going back to an integer dtype."""
    dtype = np.dtype(dtype)
    if out.dtype == dtype:
        return out
    if dtype.kind in "iub":
        out = np.round(out)
    return out.astype(dtype)


def to_dtype(a, dtype):
    """Float -> int casts truncate toward zero, as torch's `.to()` does."""
    return a.astype(dtype)


# ---------------------------------------------------------------- dtype conversion
def convert_image_dtype(a, dtype):
    dtype = np.dtype(dtype)
    if a.dtype == dtype:
        return a
    src_float, dst_float = is_float(a), dtype.kind == "f" or dtype.name == "bfloat16"
    if src_float and dst_float:
        return a.astype(dtype)
    if src_float:
        if (a.dtype == np.float32 and dtype in (np.int32, np.int64)) or \
                (a.dtype == np.float64 and dtype == np.int64):
            return None  # caller raises torch's message
        # NOTE: (max + 1 - eps) maps 1.0 to max while keeping bins equally wide
        return (a * a.dtype.type(max_value(dtype) + 1.0 - 1e-3)).astype(dtype)
    if dst_float:
        return (a.astype(dtype) / dtype.type(max_value(a.dtype))).astype(dtype)
    in_max, out_max = max_value(a.dtype), max_value(dtype)
    if in_max > out_max:
        factor = (in_max + 1) // (out_max + 1)
        return (a // factor).astype(dtype)
    factor = (out_max + 1) // (in_max + 1)
    return a.astype(dtype) * dtype.type(factor)


# ---------------------------------------------------------------- resize
def _aa_filter(name):
    if name == "bilinear":
        return 1.0, lambda x: np.clip(1.0 - np.abs(x), 0.0, None)

    def cubic(x, a=-0.5):
        x = np.abs(x)
        return np.where(x < 1.0, ((a + 2.0) * x - (a + 3.0)) * x * x + 1,
                        np.where(x < 2.0, (((x - 5) * x + 8) * x - 4) * a, 0.0))
    return 2.0, cubic


def _aa_weights(in_size, out_size, mode):
    """PIL-style separable filter (torch's antialiased interpolate): widen the kernel by the
    downscale factor so every input pixel contributes."""
    half, kernel = _aa_filter(mode)
    scale = in_size / out_size
    support = half * scale if scale >= 1.0 else half
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    center = scale * (np.arange(out_size) + 0.5)
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
    xmax = np.minimum((center + support + 0.5).astype(np.int64), in_size)
    cols = np.arange(in_size)
    w = kernel((cols[None, :] - center[:, None] + 0.5) * invscale)
    w = np.where((cols[None, :] >= xmin[:, None]) & (cols[None, :] < xmax[:, None]), w, 0.0)
    total = w.sum(axis=1, keepdims=True)
    return w / np.where(total == 0, 1.0, total)


def _plain_weights(in_size, out_size, mode):
    scale = in_size / out_size
    dst = np.arange(out_size)
    w = np.zeros((out_size, in_size))
    if mode in ("nearest", "nearest-exact"):
        offset = 0.5 if mode == "nearest-exact" else 0.0
        src = np.minimum(np.floor((dst + offset) * np.float32(scale)).astype(np.int64),
                         in_size - 1)
        w[dst, src] = 1.0
        return w
    src = scale * (dst + 0.5) - 0.5
    if mode == "bilinear":
        src = np.maximum(src, 0.0)
        i0 = src.astype(np.int64)
        i1 = np.minimum(i0 + 1, in_size - 1)
        l1 = src - i0
        np.add.at(w, (dst, i0), 1.0 - l1)
        np.add.at(w, (dst, i1), l1)
        return w
    # bicubic (a = -0.75), taps clamped at the border
    i0 = np.floor(src).astype(np.int64)
    t = src - i0
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    coeffs = (far(t + 1), near(t), near(1 - t), far(2 - t))
    for k, c in enumerate(coeffs):
        np.add.at(w, (dst, np.clip(i0 - 1 + k, 0, in_size - 1)), c)
    return w


def resize(a, size, mode, antialias):
    """a (..., C, H, W) -> (..., C, *size)."""
    (h, w), (oh, ow) = a.shape[-2:], size
    dtype = a.dtype
    x = a.astype(compute_dtype(a))
    aa = antialias and mode in ("bilinear", "bicubic")
    weights = _aa_weights if aa else _plain_weights
    wh, ww = weights(h, oh, mode), weights(w, ow, mode)
    out = np.einsum("oh,...hw,pw->...op", wh.astype(x.dtype), x, ww.astype(x.dtype),
                    optimize=True)
    if mode == "bicubic" and dtype == np.uint8:
        out = np.clip(out, 0, 255)
    return cast_back(out, dtype)


# ---------------------------------------------------------------- padding
def pad(a, left, top, right, bottom, fill, mode):
    """Negative padding crops; modes constant, edge, reflect, symmetric."""
    a = a[..., max(-top, 0):a.shape[-2] - max(-bottom, 0), max(-left, 0):a.shape[-1]
          - max(-right, 0)]
    widths = [(0, 0)] * (a.ndim - 2) + [(max(top, 0), max(bottom, 0)),
                                        (max(left, 0), max(right, 0))]
    if mode == "constant":
        return np.pad(a, widths, mode="constant", constant_values=fill)
    return np.pad(a, widths, mode=mode)


def crop(a, top, left, height, width):
    h, w = a.shape[-2:]
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        part = a[..., max(top, 0):bottom, max(left, 0):right]
        return pad(part, max(-left + min(0, right), 0), max(-top + min(0, bottom), 0),
                   max(right - max(w, left), 0), max(bottom - max(h, top), 0), 0, "constant")
    return a[..., top:bottom, left:right]


# ---------------------------------------------------------------- colour
def blend(a, b, ratio):
    bound = max_value(a.dtype)
    x = a if is_float(a) else a.astype(np.float32)
    y = b if is_float(b) else b.astype(np.float32)
    t = x.dtype.type
    out = t(ratio) * x + t(1.0 - ratio) * y.astype(x.dtype)
    return to_dtype(np.clip(out, 0, bound), a.dtype)


def rgb_to_grayscale(a, num_output_channels=1):
    if a.shape[-3] == 1:
        gray = a
    else:
        r, g, b = (a[..., i, :, :] for i in range(3))
        x = (r, g, b) if is_float(a) else tuple(c.astype(np.float32) for c in (r, g, b))
        t = x[0].dtype.type
        gray = to_dtype(t(0.2989) * x[0] + t(0.587) * x[1] + t(0.114) * x[2], a.dtype)
        gray = gray[..., None, :, :]
    if num_output_channels == 3:
        return np.broadcast_to(gray, gray.shape[:-3] + (3,) + gray.shape[-2:]).copy()
    return gray


def adjust_contrast(a, factor):
    dtype = a.dtype if is_float(a) else np.dtype(np.float32)
    gray = rgb_to_grayscale(a) if a.shape[-3] == 3 else a
    mean = gray.astype(dtype).mean(axis=(-3, -2, -1), keepdims=True, dtype=dtype)
    return blend(a, mean, factor)


def rgb2hsv(x):
    r, g, b = x[..., 0, :, :], x[..., 1, :, :], x[..., 2, :, :]
    maxc, minc = x.max(axis=-3), x.min(axis=-3)
    eqc = maxc == minc
    cr = maxc - minc
    s = cr / np.where(eqc, 1, maxc)
    div = np.where(eqc, 1, cr)
    rc, gc, bc = (maxc - r) / div, (maxc - g) / div, (maxc - b) / div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = np.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0).astype(x.dtype)
    return h, s, maxc


def hsv2rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int32) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    table = np.stack([np.stack(c, axis=0) for c in
                      ((v, q, p, p, t, v), (t, v, v, q, p, p), (p, p, t, v, v, q))], axis=0)
    pick = np.take_along_axis(table, i[None, None], axis=1)[:, 0]  # (3, ..., H, W)
    return np.moveaxis(pick, 0, -3).astype(v.dtype)


def adjust_hue(a, factor):
    if a.shape[-3] == 1:
        return a
    x = convert_image_dtype(a, np.float32)
    h, s, v = rgb2hsv(x)
    h = np.mod(h + np.float32(factor), np.float32(1.0))
    return convert_image_dtype(hsv2rgb(h, s, v), a.dtype)


def invert(a):
    if a.dtype == np.bool_:
        return ~a
    return (a.dtype.type(max_value(a.dtype)) - a).astype(a.dtype)


def posterize(a, bits):
    return a & np.uint8((0xFF << (8 - bits)) & 0xFF)


def solarize(a, threshold):
    return np.where(a >= threshold, invert(a), a)


def conv_same(a, kernel):
    """Depthwise 'valid' correlation of (..., H, W) with a (kh, kw) kernel."""
    kh, kw = kernel.shape
    windows = np.lib.stride_tricks.sliding_window_view(a, (kh, kw), axis=(-2, -1))
    return np.einsum("...ij,ij->...", windows, kernel.astype(a.dtype), optimize=True)


def adjust_sharpness(a, factor):
    if a.shape[-1] <= 2 or a.shape[-2] <= 2:
        return a
    dtype = compute_dtype(a)
    kernel = np.ones((3, 3), dtype=dtype)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    blurred = cast_back(conv_same(a.astype(dtype), kernel), a.dtype)
    degenerate = a.copy()
    degenerate[..., 1:-1, 1:-1] = blurred
    return blend(a, degenerate, factor)


def autocontrast(a):
    bound = max_value(a.dtype)
    dtype = a.dtype if is_float(a) else np.dtype(np.float32)
    lo = a.min(axis=(-2, -1), keepdims=True).astype(dtype)
    hi = a.max(axis=(-2, -1), keepdims=True).astype(dtype)
    with np.errstate(divide="ignore"):
        scale = dtype.type(bound) / (hi - lo)
    flat = ~np.isfinite(scale)
    lo = np.where(flat, 0, lo).astype(dtype)
    scale = np.where(flat, 1, scale).astype(dtype)
    return to_dtype(np.clip((a.astype(dtype) - lo) * scale, 0, bound), a.dtype)


def equalize(a):
    """Histogram equalisation per channel of a uint8 image (PIL's lookup-table recipe)."""
    flat = a.reshape(-1, a.shape[-2] * a.shape[-1]).astype(np.int64)
    n = flat.shape[0]
    hist = np.zeros((n, 256), dtype=np.int64)
    np.add.at(hist, (np.arange(n)[:, None], flat), 1)
    last = 255 - np.argmax(hist[:, ::-1] > 0, axis=1)     # the highest occupied bin
    step = (hist.sum(axis=1) - hist[np.arange(n), last]) // 255
    safe = np.maximum(step, 1)[:, None]
    lut = (np.cumsum(hist, axis=1) + (step // 2)[:, None]) // safe
    lut = np.clip(np.concatenate([np.zeros((n, 1), np.int64), lut[:, :-1]], axis=1), 0, 255)
    out = np.take_along_axis(lut, flat, axis=1)
    out = np.where(step[:, None] == 0, flat, out)
    return out.astype(np.uint8).reshape(a.shape)


# ---------------------------------------------------------------- blur
def gaussian_kernel1d(size, sigma, dtype):
    half = (size - 1) * 0.5
    x = np.linspace(-half, half, size).astype(dtype)
    pdf = np.exp(dtype.type(-0.5) * (x / dtype.type(sigma)) ** 2)
    return pdf / pdf.sum()


def gaussian_blur(a, kernel_size, sigma):
    dtype = compute_dtype(a)
    kx = gaussian_kernel1d(kernel_size[0], sigma[0], dtype)
    ky = gaussian_kernel1d(kernel_size[1], sigma[1], dtype)
    x = a.astype(dtype)
    px, py = kernel_size[0] // 2, kernel_size[1] // 2
    x = pad(x, px, py, px, py, 0, "reflect")
    out = conv_same(x, np.outer(ky, kx))
    return cast_back(out, a.dtype)


# ---------------------------------------------------------------- geometry
def affine_grid(theta, w, h, ow, oh):
    """Sampling grid in [-1, 1] coordinates for an inverse affine `theta` (2x3, pixels
    relative to the image centre), as torchvision builds it (half-pixel centres)."""
    dtype = theta.dtype
    xs = np.linspace(-ow * 0.5 + 0.5, ow * 0.5 + 0.5 - 1, ow).astype(dtype)
    ys = np.linspace(-oh * 0.5 + 0.5, oh * 0.5 + 0.5 - 1, oh).astype(dtype)
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((1, 1), dtype)),
                    axis=-1)
    scaled = theta.T / np.array([0.5 * w, 0.5 * h], dtype=dtype)
    return base.reshape(-1, 3) @ scaled      # (oh*ow, 2)


def grid_sample(a, grid, oh, ow, mode):
    """a (N, C, H, W) sampled at grid (P, 2) with zero padding, align_corners=False."""
    n, c, h, w = a.shape
    ix = ((grid[:, 0] + 1) * w - 1) / 2
    iy = ((grid[:, 1] + 1) * h - 1) / 2
    if mode == "nearest":
        x0, y0 = np.rint(ix).astype(np.int64), np.rint(iy).astype(np.int64)
        corners = [(x0, y0, np.ones_like(ix))]
    else:
        x0, y0 = np.floor(ix).astype(np.int64), np.floor(iy).astype(np.int64)
        fx, fy = ix - x0, iy - y0
        corners = [(x0, y0, (1 - fx) * (1 - fy)), (x0 + 1, y0, fx * (1 - fy)),
                   (x0, y0 + 1, (1 - fx) * fy), (x0 + 1, y0 + 1, fx * fy)]
    out = np.zeros((n, c, ix.shape[0]), dtype=a.dtype)
    for xi, yi, wt in corners:
        inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        vals = a[:, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
        out += vals * np.where(inside, wt, 0).astype(a.dtype)
    return out.reshape(n, c, oh, ow)


def apply_grid(a, grid, oh, ow, mode, fill):
    shape, dtype = a.shape, a.dtype
    x = a.reshape((-1,) + shape[-3:]).astype(grid.dtype)
    if fill is not None:
        x = np.concatenate([x, np.ones_like(x[:, :1])], axis=1)
    x = grid_sample(x, grid, oh, ow, mode)
    if fill is not None:
        x, mask = x[:, :-1], x[:, -1:]
        fill_img = np.asarray(fill, dtype=x.dtype).reshape(1, -1, 1, 1)
        if mode == "nearest":
            x = np.where(mask < 0.5, fill_img, x)
        else:
            x = x * mask + (1.0 - mask) * fill_img
    return cast_back(x.reshape(shape[:-2] + (oh, ow)), dtype)


def affine_output_size(matrix, w, h):
    """Bounding box of the rotated image (for expand=True)."""
    pts = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                    [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]], dtype=np.float32)
    theta = np.array(matrix, dtype=np.float32).reshape(2, 3)
    new = pts @ theta.T
    half = np.array([w * 0.5, h * 0.5], dtype=np.float32)
    lo, hi = new.min(axis=0) + half, new.max(axis=0) + half
    # NOTE: torchvision trims float noise (1e-4) before ceil/floor so 90 degrees stays exact
    tol = np.float32(1e-4)
    size = np.ceil(np.trunc(hi / tol) * tol) - np.floor(np.trunc(lo / tol) * tol)
    return int(size[0]), int(size[1])


def affine(a, matrix, mode, fill, out_size=None):
    w, h = a.shape[-1], a.shape[-2]
    ow, oh = out_size or (w, h)
    dtype = a.dtype if is_float(a) else np.dtype(np.float32)
    theta = np.array(matrix, dtype=dtype).reshape(2, 3)
    grid = affine_grid(theta, w, h, ow, oh)
    return apply_grid(a, grid, oh, ow, mode, fill)


def perspective(a, coeffs, mode, fill):
    h, w = a.shape[-2:]
    dtype = a.dtype if is_float(a) else np.dtype(np.float32)
    c = np.array(coeffs, dtype=dtype)
    xs = np.arange(w, dtype=dtype) + dtype.type(0.5)
    ys = np.arange(h, dtype=dtype) + dtype.type(0.5)
    x, y = np.broadcast_arrays(xs[None, :], ys[:, None])
    x, y = x.reshape(-1), y.reshape(-1)
    den = c[6] * x + c[7] * y + 1.0
    gx = (c[0] * x + c[1] * y + c[2]) / den
    gy = (c[3] * x + c[4] * y + c[5]) / den
    grid = np.stack([gx / (0.5 * w) - 1.0, gy / (0.5 * h) - 1.0], axis=-1).astype(dtype)
    return apply_grid(a, grid, h, w, mode, fill)


def math_inverse_affine(center, angle, translate, scale, shear):
    """The inverse of rotate-scale-shear about `center` then translate: maps output pixels
    back to input pixels (torchvision's parametrisation)."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m
