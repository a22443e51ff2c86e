"""Max, average, adaptive, power-average pooling and max unpooling (1d/2d/3d)."""
import numpy as np

import ember
from ... import _dtype as dt
from ...autograd.grad_mode import state
from ...backends.conv_kernels import out_size
from ...ops.pooling import adaptive_bounds, adaptive_max_pool_nd, avg_divisor, avg_pool_nd
from ...ops.pooling import max_pool_nd, max_pool_values_nd

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _tuple(v, n):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 else v


def _batched(input, nd, kind):
    """input as (N, C, *spatial), and whether it was unbatched; PyTorch's dimension errors."""
    dim = input.dim()
    if dim == nd + 2:
        return input, False
    if dim == nd + 1:
        return input.unsqueeze(0), True
    if kind == "avg1d":
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for avg_pool1d)")
    if kind == "max1d":
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                       "input")


def _geometry(x, kernel_size, stride, padding, dilation, ceil_mode, nd):
    """ksize, stride, ((lo, hi), ...) padding incl. ceil_mode's extra, dilation, out."""
    ksize = _tuple(kernel_size, nd)
    stride = ksize if stride is None or stride == [] or stride == () else _tuple(stride, nd)
    pad = _tuple(padding, nd)
    dil = _tuple(dilation, nd)
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(p < 0 for p in pad):
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad[0]}")
    if any(d <= 0 for d in dil):
        raise RuntimeError("dilation should be greater than zero, but got dilationH: "
                           f"{dil[0]} dilationW: {dil[-1]}")
    for k, p, d in zip(ksize, pad, dil):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    spatial = x.shape[2:]
    out = tuple(out_size(n, k, s, d, p, p, ceil_mode)
                for n, k, s, d, p in zip(spatial, ksize, stride, dil, pad))
    if any(o <= 0 for o in out):
        sizes = "x".join(map(str, (x.shape[1],) + tuple(spatial)))
        outs = "x".join(map(str, (x.shape[1],) + out))
        raise RuntimeError(f"Given input size: ({sizes}). Calculated output size: ({outs}). "
                           "Output size is too small")
    pads = tuple((p, max(p, (o - 1) * s + d * (k - 1) + 1 - n - p))
                 for n, k, s, d, p, o in zip(spatial, ksize, stride, dil, pad, out))
    return ksize, stride, pads, dil, out, pad


# ---------------------------------------------------------------------- max pooling
def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd, indices=True):
    """(values, indices), or the values alone when `indices` is False (then, with no
    gradient to compute, the argmax is skipped too)."""
    x, unbatched = _batched(input, nd, "max1d" if nd == 1 else "max")
    ksize, stride, pads, dil, out, _ = _geometry(x, kernel_size, stride, padding, dilation,
                                                 ceil_mode, nd)
    if not indices and not (state.enabled and x.requires_grad) and x.dtype is not dt.bool:
        values = max_pool_values_nd(x, ksize, stride, pads, dil, out)
        return values.squeeze(0) if unbatched else values
    values, found = max_pool_nd(x, ksize, stride, pads, dil, out)
    if unbatched:
        values, found = values.squeeze(0), found.squeeze(0)
    return (values, found) if indices else values


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3,
                     return_indices)


# ---------------------------------------------------------------------- average pooling
def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd):
    x, unbatched = _batched(input, nd, "avg1d" if nd == 1 else "avg")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    ksize, stride, pads, _, out, pad = _geometry(x, kernel_size, stride, padding, 1,
                                                 ceil_mode, nd)
    divisor = avg_divisor(x.shape[2:], ksize, stride, pad, out, count_include_pad,
                          divisor_override, x.dtype.np if x.dtype.is_floating_point
                          else np.float64)
    y = avg_pool_nd(x, ksize, stride, pads, out, divisor)
    return y.squeeze(0) if unbatched else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3)


# ---------------------------------------------------------------------- adaptive pooling
def _adaptive_sizes(input, output_size, nd, name):
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor "
                               f"for argument #1 'self' (while checking arguments for {name})")
        got = ": " if name.startswith("adaptive_max") else " "
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                           f"{got}{list(input.shape)}")
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    spatial = input.shape[-nd:]
    return tuple(s if o is None else int(o) for s, o in zip(spatial, sizes))


def _adaptive_avg(input, output_size, nd, name):
    out = _adaptive_sizes(input, output_size, nd, name)
    spatial = tuple(input.shape[-nd:])
    lead = tuple(input.shape[:-nd])
    if all(n % o == 0 for n, o in zip(spatial, out)) and all(o > 0 for o in out):
        # Equal windows: a reshape and one mean (global pooling is the common case).
        shape = lead
        for n, o in zip(spatial, out):
            shape += (o, n // o)
        dims = tuple(len(lead) + 2 * d + 1 for d in range(nd))
        return input.reshape(shape).mean(dims)
    # Windows of different sizes: the average is separable, one small matmul per dim.
    x = input
    for d, (n, o) in enumerate(zip(spatial, out)):
        start, end = adaptive_bounds(n, o)
        cols = np.arange(n)
        m = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None]
        mat = ember.tensor(m.T.astype(input.dtype.np), device=input.device)
        axis = len(lead) + d
        x = (x.transpose(axis, -1) @ mat).transpose(axis, -1)
    return x


def adaptive_avg_pool1d(input, output_size):
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max(input, output_size, nd, name):
    out = _adaptive_sizes(input, output_size, nd, name)
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    values, indices = adaptive_max_pool_nd(x, out)
    if unbatched:
        return values.squeeze(0), indices.squeeze(0)
    return values, indices


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    r = _adaptive_max(input, output_size, 1, "adaptive_max_pool1d")
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    r = _adaptive_max(input, output_size, 2, "adaptive_max_pool2d")
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    r = _adaptive_max(input, output_size, 3, "adaptive_max_pool3d")
    return r if return_indices else r[0]


# ---------------------------------------------------------------------- power-average
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    ksize = _tuple(kernel_size, nd)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    out = pool(input.pow(norm_type), ksize, stride, 0, ceil_mode)
    count = int(np.prod(ksize))
    return (ember.sign(out) * ember.relu(ember.abs(out))).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


# ---------------------------------------------------------------------- unpooling
def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    ksize = _tuple(kernel_size, nd)
    stride = ksize if stride is None else _tuple(stride, nd)
    pad = _tuple(padding, nd)
    spatial = tuple(input.shape[-nd:])
    default = [(n - 1) * s + k - 2 * p for n, s, k, p in zip(spatial, stride, ksize, pad)]
    if output_size is None:
        size = tuple(default)
    else:
        size = tuple(output_size)
        if len(size) == nd + 2 or (len(size) == nd + 1 and input.dim() == nd + 1):
            size = size[-nd:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < size[d] < hi:
                raise ValueError(f'invalid output_size "{size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
    lead = tuple(input.shape[:-nd])
    plane = int(np.prod(size))
    flat_idx = indices.reshape(lead + (-1,))
    if flat_idx.numel() and (int(flat_idx.max()) >= plane or int(flat_idx.min()) < 0):
        bad = int(flat_idx.max()) if int(flat_idx.max()) >= plane else int(flat_idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    out = ember.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(lead + (-1,)))
    return out.reshape(lead + size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
