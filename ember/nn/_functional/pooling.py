"""Max, average and power-average pooling (1d/2d/3d); the adaptive poolings and max
unpooling live beside it (adaptive_pooling, unpooling) and are re-exported here."""
import math

import numpy as np

from ... import _dtype as dt
from ...autograd.grad_mode import state
from ...backends.conv_kernels import out_size
from ...ops.pooling import avg_divisor, avg_pool_nd, max_pool_nd, max_pool_values_nd
from ...ops.rounding import abs as _abs, sign
from ..._signatures import Parser
from ..._signatures.table_torch import FUNCTIONS as _SIGNATURES
from ._pool_args import COUNT, FLOATS, int_list, ntuple, refuse_none
from .adaptive_pooling import *  # noqa: F401,F403
from .adaptive_pooling import __all__ as _ADAPTIVE
from .dispatch_helpers import boolean_dispatch
from .unpooling import *  # noqa: F401,F403
from .unpooling import __all__ as _UNPOOLING
from .unpooling import _max_unpool  # noqa: F401  (the MaxUnpool modules' entry)

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"] + _ADAPTIVE + _UNPOOLING


# ---------------------------------------------------------------------- max pooling
# NOTE: F.max_poolNd are torch's boolean dispatch on return_indices (its truth value is taken
# first: a tensor of several values is ambiguous), then torch.max_poolNd or
# max_poolNd_with_indices, C builtins whose parser checks every argument's type before the
# kernel checks the values, in the order reproduced below.
_MAX_POOL_PARSERS = {
    (nd, indices): Parser(f"max_pool{nd}d" + ("_with_indices" if indices else ""),
                          _SIGNATURES[f"max_pool{nd}d"])
    for nd in (1, 2, 3) for indices in (False, True)}
# dtypes torch's CPU kernels pool (others: NotImplementedError)
_POOL_DTYPES = {
    ("max", 2): FLOATS + (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64),
    ("avg", 2): FLOATS + (dt.int64,),
    ("avg", 3): (dt.float32, dt.float64, dt.int64)}
_POOL_DTYPES["max", 3] = _POOL_DTYPES["max", 2]


def _c_half(v):
    """v / 2 rounded toward zero, as the kernels' C arithmetic does."""
    return int(v / 2)


def _max_pool1d_sizes(input, kernel_size, stride, padding, dilation, ceil_mode):
    """torch.max_pool1d's own checks (its kernel without indices), in its order."""
    shape = list(input.shape)
    if not (input.dim() == 2 and all(shape) or input.dim() == 3 and all(shape[1:])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape}")
    k, s, p, d = (int_list(v, 1) for v in (kernel_size, stride, padding, dilation))
    for name, v, ok in (("kernel_size", k, len(k) == 1), ("stride", s, len(s) <= 1),
                        ("padding", p, len(p) == 1), ("dilation", d, len(d) == 1)):
        if not ok:
            kinds = ("None, an int, list of ints, or" if name == "stride" else
                     "an int, list of ints," if name == "padding" else "an int, list of ints or")
            raise RuntimeError(f"max_pool1d() {name} must be {kinds} tuple of ints of size 1 "
                               f"but got size {len(v)}")
    (k,), (p,), (d,) = k, p, d
    s = s[0] if s else k
    for name, v, ok in (("kernel_size", k, k > 0), ("stride", s, s > 0)):
        if not ok:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    o = out_size(shape[-1], k, s, d, p, p, ceil_mode)
    if o <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    if input.dtype not in FLOATS:
        raise NotImplementedError('"max_pool1d_impl" not implemented for '
                                  f"'{dt.type_name(input.dtype)}'")
    return (k,), (s,), (p,), (d,)


def _max_pool1d_with_indices_sizes(input, kernel_size, stride, padding, dilation):
    """torch.max_pool1d_with_indices' checks before it pools as 2-D: the rank, then one int
    per argument."""
    k, s, p, d = (int_list(v, 1) for v in (kernel_size, stride, padding, dilation))
    s = s or k
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "max_pool1d)")
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
        if len(v) != 1:
            raise RuntimeError(f"max_pool1d() argument '{name}' should contain one int (got "
                               f"{len(v)})")
    return k, s, p, d


def _dtype_check(x, name, dtypes):
    if x.dtype not in dtypes:
        kernel = "avg_pool3d_out_frame" if name == "avg_pool3d" else name
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dt.type_name(x.dtype)}'")


def _length_check(name, nd, k, s, p, d):
    """The kernels' first check: each int list has one value or one per spatial dim (stride
    may be empty: the kernel size)."""
    count = COUNT[nd]
    avg3d = name == "avg_pool3d"   # (its messages are worded apart)
    either = "" if avg3d else "either "
    if len(k) not in (1, nd):
        raise RuntimeError(f"{name}: kernel_size must {either}be a single int, or a tuple of "
                           f"{count} ints")
    if len(s) not in (0, 1, nd):
        raise RuntimeError(f"{name}: stride must {either}be omitted, a single int, or a tuple "
                           f"of {count} ints")
    if len(p) not in (1, nd):
        raise RuntimeError(f"{name}: padding must {either}be a single int, or a tuple of "
                           f"{count} ints")
    if len(d) not in (1, nd):
        raise RuntimeError(f"{name}: dilation must be either a single int, or a tuple of "
                           f"{count} ints")


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode, nd, kind,
                   divisor_override=None):
    """max_poolNd_with_indices' or avg_poolNd's checks (nd 2 or 3) in torch's order: the
    list lengths, the rank, the output size's padding rules, then the values; ksize, stride,
    ((lo, hi), ...) padding incl. ceil_mode's extra, dilation, output size."""
    name = f"{kind}_pool{nd}d"
    k, s, p, d = (int_list(v, nd) for v in (kernel_size, stride, padding, dilation))
    _length_check(name, nd, k, s, p, d)
    k, p, d = (v * nd if len(v) == 1 else v for v in (k, p, d))
    s = k if not s else s * nd if len(s) == 1 else s
    shape = list(x.shape)
    if (kind == "max" or nd == 3) and x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if x.dim() < 3:   # avg_pool2d reads the channel count first
        raise IndexError("Dimension specified as -3 but tensor has no dimensions" if not shape
                         else "Dimension out of range (expected to be in range of "
                         f"[{-x.dim()}, {x.dim() - 1}], but got -3)")
    spatial = tuple(shape[-nd:])
    for kk, ss, pp, dd in zip(k, s, p, d):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > _c_half(dd * (kk - 1) + 1):
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    out = tuple(out_size(n, kk, ss, dd, pp, pp, ceil_mode)
                for n, kk, ss, pp, dd in zip(spatial, k, s, p, d))
    letters = ("T", "H", "W")[3 - nd:]
    for what, v, prefix in (("kernel size", k, "k"), ("stride", s, "d"),
                            ("dilation", d, "dilation")):
        if any(e <= 0 for e in v):
            got = " ".join(f"{prefix}{c}: {e}" for c, e in zip(letters, v))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    non_batch = shape[1:] if x.dim() == nd + 2 else shape
    if nd == 2 and (x.dim() not in (3, 4) or not all(non_batch)):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{shape}")
    if not all(non_batch):
        where = "max_pool3d_with_indices_out_cpu_template" if kind == "max" else name
        raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension 0 "
                           "has length zero!")
    if kind == "avg" and nd == 3 and any(n < kk for n, kk in zip(spatial, k)):
        raise RuntimeError(f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) "
                           f"smaller than kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    if any(o <= 0 for o in out):
        sizes = "x".join(map(str, shape[-nd - 1:]))
        outs = "x".join(map(str, (shape[-nd - 1],) + out))
        raise RuntimeError(f"Given input size: ({sizes}). Calculated output size: ({outs}). "
                           "Output size is too small")
    _dtype_check(x, name, _POOL_DTYPES[kind, nd])
    pads = tuple((pp, max(pp, (o - 1) * ss + dd * (kk - 1) + 1 - n - pp))
                 for n, kk, ss, dd, pp, o in zip(spatial, k, s, d, p, out))
    return k, s, pads, d, out


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd, indices):
    """(values, indices), or the values alone when `indices` is False (then, with no
    gradient to compute, the argmax is skipped too)."""
    stride = [] if stride is None else stride
    parser = _MAX_POOL_PARSERS[nd, indices]
    parser.check((input, kernel_size, stride, padding, dilation, ceil_mode), {})
    refuse_none(parser.name, kernel_size=kernel_size, stride=stride, padding=padding,
                 dilation=dilation)
    if nd == 1:   # pooled as 2-D, over a unit height
        if indices:
            k, s, p, d = _max_pool1d_with_indices_sizes(input, kernel_size, stride, padding,
                                                        dilation)
        else:
            k, s, p, d = _max_pool1d_sizes(input, kernel_size, stride, padding, dilation,
                                           ceil_mode)
        r = _max_pool(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode,
                      2, indices)
        return (r[0].squeeze(-2), r[1].squeeze(-2)) if indices else r.squeeze(-2)
    ksize, stride, pads, dil, out = _pool_geometry(input, kernel_size, stride, padding,
                                                   dilation, ceil_mode, nd, "max")
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if not indices and not (state.enabled and x.requires_grad) and x.dtype is not dt.bool:
        values = max_pool_values_nd(x, ksize, stride, pads, dil, out)
        return values.squeeze(0) if unbatched else values
    values, found = max_pool_nd(x, ksize, stride, pads, dil, out)
    if unbatched:
        values, found = values.squeeze(0), found.squeeze(0)
    return (values, found) if indices else values


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    _ = input.is_cuda   # (torch's wrapper reads it first: a non-tensor fails here)
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3, True)


def _max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, False)


def _max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, False)


def _max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3, False)


max_pool1d = boolean_dispatch("return_indices", 6, False, max_pool1d_with_indices,
                              _max_pool1d, __name__, "max_pool1d")
max_pool2d = boolean_dispatch("return_indices", 6, False, max_pool2d_with_indices,
                              _max_pool2d, __name__, "max_pool2d")
max_pool3d = boolean_dispatch("return_indices", 6, False, max_pool3d_with_indices,
                              _max_pool3d, __name__, "max_pool3d")


# ---------------------------------------------------------------------- average pooling
def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd):
    refuse_none(f"avg_pool{nd}d", kernel_size=kernel_size, stride=stride, padding=padding)
    stride = () if stride is None else stride
    if nd == 1:   # pooled as 2-D, over a unit height, after its own checks
        k, s, p = (int_list(v, 1) for v in (kernel_size, stride, padding))
        s = s or k
        if input.dim() not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                               "tensor for argument #1 'self' (while checking arguments for "
                               "avg_pool1d)")
        for name, v in (("kernel_size", k), ("stride", s), ("padding", p)):
            if len(v) != 1:
                raise RuntimeError(f"avg_pool1d() argument '{name}' should contain one int "
                                   f"(got {len(v)})")
        return _avg_pool(input.unsqueeze(-2), (1,) + k, (1,) + s, (0,) + p, ceil_mode,
                         count_include_pad, None, 2).squeeze(-2)
    ksize, stride, pads, _, out = _pool_geometry(input, kernel_size, stride, padding, 1,
                                                 ceil_mode, nd, "avg", divisor_override)
    unbatched = input.dim() == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    pad = tuple(lo for lo, _ in pads)
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

# ---------------------------------------------------------------------- power-average
def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    """torch's Python wrappers, step by step (their errors are Python's: unpacking the
    kernel size, input.pow on a non-tensor): max pooling of |x| for an infinite norm, else
    (sum of x**p over each window) ** (1/p) through the public average pooling."""
    from .. import functional as F   # (cycle: nn.functional imports this module)
    sizes = (kernel_size,) if nd == 1 else ntuple(kernel_size, nd)
    if len(sizes) != nd:
        _unpack(sizes, nd)
    max_pool, avg_pool = ((F.max_pool1d, F.avg_pool1d), (F.max_pool2d, F.avg_pool2d),
                          (F.max_pool3d, F.avg_pool3d))[nd - 1]
    if isinstance(norm_type, (int, float)) and norm_type in (math.inf, -math.inf):
        if norm_type > 0:
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    count = sizes[0]
    for k in sizes[1:]:
        count = count * k
    return (sign(out) * F.relu(_abs(out))).mul(count).pow(1.0 / norm_type)


def _unpack(sizes, n):
    """Python's error for unpacking `sizes` into n names."""
    if len(sizes) > n:
        raise ValueError(f"too many values to unpack (expected {n})")
    raise ValueError(f"not enough values to unpack (expected {n}, got {len(sizes)})")


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)
