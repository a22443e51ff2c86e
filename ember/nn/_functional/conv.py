"""conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold: argument checks in PyTorch's words,
then the registry ops of ember/ops/conv.py on batched tensors."""
from collections.abc import Iterable

from ... import _dtype as dt
from ..._signatures import Parser
from ..._signatures.table_nn import FUNCTIONAL
from ...ops.conv import col2im_nd, conv_nd, conv_transpose_nd, im2col_nd

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold"]

_TYPE_NAMES = {dt.float32: "Float", dt.float64: "Double", dt.float16: "Half",
               dt.bfloat16: "BFloat16", dt.int64: "Long", dt.int32: "Int"}


def expand(value, n, name):
    """An int or a sequence as an n-tuple, PyTorch's error for a wrong length."""
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == n:
        return value
    if len(value) == 1:
        return value * n
    raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values "
                       "to match the convolution dimensions, but got "
                       f"{name}={list(value)}")


def _dims_str(vals):
    return " x ".join(map(str, vals))


def _prepare(input, weight, nd, name):
    dim = input.dim()
    if dim != nd + 2:
        if dim != nd + 1:
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                               f"to {name}, but got input of size: {list(input.shape)}")
        input = input.unsqueeze(0)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE_NAMES.get(input.dtype, input.dtype)} "
                           f"but found {_TYPE_NAMES.get(weight.dtype, weight.dtype)}")
    return input, dim == nd + 1


def _check_bias(input, weight, bias, out_channels):
    if bias is None:
        return
    if bias.dim() != 1 or bias.shape[0] != out_channels:
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {out_channels} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({dt.type_name(input.dtype)}) and bias type "
                           f"({dt.type_name(bias.dtype)}) should be the same")


def _geometry(stride, padding, dilation, groups, ksize, nd):
    stride = expand(stride, nd, "stride")
    dilation = expand(dilation, nd, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, ksize)]
            pads = tuple((t // 2, t - t // 2) for t in total)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = expand(padding, nd, "padding")
        if any(p < 0 for p in padding):
            raise RuntimeError("negative padding is not supported")
        pads = tuple((p, p) for p in padding)
    return stride, pads, dilation


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, name):
    x, unbatched = _prepare(input, weight, nd, name)
    w_shape = weight.shape
    ksize = w_shape[2:]
    stride, pads, dilation = _geometry(stride, padding, dilation, groups, ksize, nd)
    if w_shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(w_shape)}] instead")
    if x.shape[1] != w_shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w_shape)}, expected "
                           f"input{list(x.shape)} to have {w_shape[1] * groups} channels, but "
                           f"got {x.shape[1]} channels instead")
    padded = [s + lo + hi for s, (lo, hi) in zip(x.shape[2:], pads)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, ksize)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_dims_str(padded)}). "
                           f"Kernel size: ({_dims_str(eff)}). Kernel size can't be greater "
                           "than actual input size")
    _check_bias(x, weight, bias, w_shape[0])
    y = conv_nd(x, weight, bias, stride, pads, dilation, groups)
    return y.squeeze(0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# ---------------------------------------------------------------------- transposed
_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd, name):
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    x, unbatched = _prepare(input, weight, nd, name)
    w_shape = weight.shape
    ksize = w_shape[2:]
    stride, pads, dilation = _geometry(stride, padding, dilation, groups, ksize, nd)
    output_padding = expand(output_padding, nd, "output_padding")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        axes = _AXES[nd]
        parts = [f"output_padding_{a}: {v}" for a, v in zip(axes, output_padding)]
        parts += [f"stride_{a}: {v}" for a, v in zip(axes, stride)]
        parts += [f"dilation_{a}: {v}" for a, v in zip(axes, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    if x.shape[1] != w_shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w_shape)}, expected "
                           f"input{list(x.shape)} to have {w_shape[0]} channels, but got "
                           f"{x.shape[1]} channels instead")
    out_channels = w_shape[1] * groups
    _check_bias(x, weight, bias, out_channels)
    out = tuple((i - 1) * s - lo - hi + d * (k - 1) + op + 1 for i, s, (lo, hi), d, k, op
                in zip(x.shape[2:], stride, pads, dilation, ksize, output_padding))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({_dims_str(x.shape[2:])}). "
                           f"Calculated output size per channel: ({_dims_str(out)}). "
                           "Output size is too small")
    y = conv_transpose_nd(x, weight, (x.shape[0], out_channels) + out, stride, pads, dilation,
                          groups)
    if bias is not None:
        y = y + bias.reshape((-1,) + (1,) * nd)
    return y.squeeze(0) if unbatched else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


# ---------------------------------------------------------------------- unfold / fold
def _pair(v):
    # torch's _pair: any iterable becomes a tuple (a tensor's rows, a str's letters), anything
    # else is repeated; the builtin's parser and its length checks judge the result
    return tuple(v) if isinstance(v, Iterable) else (v, v)


# the builtins F.unfold and F.fold hand their pairs to: their parsers and their sizes' names
_BUILTINS = {"im2col": ("unfold", ("kernel_size", "dilation", "padding", "stride")),
             "col2im": ("fold", ("output_size", "kernel_size", "dilation", "padding",
                                 "stride"))}
_PARSERS = {name: Parser(name, FUNCTIONAL[key][1]) for name, (key, _) in _BUILTINS.items()}
_POSITIVE = (("kernel_size", "kernel size", "kernel"), ("dilation", "dilation", "dilation"),
             ("stride", "stride", "stride"))


def _block_geometry(builtin, input, *sizes):
    """torch's F.unfold/F.fold up to their builtin's shape checks: _pair of each size, the
    builtin's parser, each size's length, then the kernel, dilation, stride and padding
    bounds. The sizes by name, as int pairs."""
    sizes = tuple(map(_pair, sizes))
    _PARSERS[builtin].check((input,) + sizes, {})
    names = _BUILTINS[builtin][1]
    for name, pair in zip(names, sizes):
        if len(pair) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pair)}")
    geometry = {name: tuple(int(v) for v in pair) for name, pair in zip(names, sizes)}
    for name, words, prefix in _POSITIVE:
        h, w = geometry[name]
        if h <= 0 or w <= 0:
            raise RuntimeError(f"{words} should be greater than zero, but got {prefix}_height: "
                               f"{h} {prefix}_width: {w}")
    h, w = geometry["padding"]
    if h < 0 or w < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {h} "
                           f"pad_width: {w}")
    return geometry


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding blocks of a (N, C, H, W) or (C, H, W) tensor as (N, C*kh*kw, L) columns."""
    g = _block_geometry("im2col", input, kernel_size, dilation, padding, stride)
    ksize, dilation, padding, stride = (g[k] for k in _BUILTINS["im2col"][1])
    dim = input.dim()
    # NOTE: torch reads sizes 1 and 2 first: an input under 3 dims is its IndexError
    planes = input.size(1) != 0 and input.size(2) != 0
    if not ((dim == 3 and input.size(0) and planes) or (dim == 4 and planes and input.size(3))):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    x = input if dim == 4 else input.unsqueeze(0)
    blocks = [(s + 2 * p - d * (k - 1) - 1) // t + 1 for s, p, d, k, t
              in zip(x.shape[2:], padding, dilation, ksize, stride)]
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size="
                           f"{ksize}, dilation={dilation}, padding={padding}, calculated shape "
                           f"of the array of sliding blocks as {tuple(blocks)}, but its "
                           "components must be at least one.")
    cols = im2col_nd(x, ksize, stride, tuple((p, p) for p in padding), dilation)
    return cols if dim == 4 else cols.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums sliding blocks (N, C*kh*kw, L) back into a (N, C, *output_size) tensor."""
    g = _block_geometry("col2im", input, output_size, kernel_size, dilation, padding, stride)
    size, ksize, dilation, padding, stride = (g[k] for k in _BUILTINS["col2im"][1])
    dim = input.dim()
    if not ((dim == 2 and input.size(0) and input.size(1)) or
            (dim == 3 and input.size(1) and input.size(2))):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    cols = input if dim == 3 else input.unsqueeze(0)
    kk = ksize[0] * ksize[1]
    if cols.shape[1] % kk:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={cols.shape[1]} and "
                           f"kernel_size={ksize}.")
    blocks = [(s + 2 * p - d * (k - 1) - 1) // t + 1 for s, p, d, k, t
              in zip(size, padding, dilation, ksize, stride)]
    given = (f"Given output_size={size}, kernel_size={ksize}, dilation={dilation}, "
             f"padding={padding}, stride={stride}")
    if cols.shape[2] != blocks[0] * blocks[1]:
        raise RuntimeError(f"{given}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={cols.shape[2]}.")
    if min(blocks) < 1:   # (two negative counts pass the product check above)
        raise RuntimeError(f"{given}, calculated shape of the array of sliding blocks as "
                           f"{tuple(blocks)}, which is too small (non-positive)")
    x_shape = (cols.shape[0], cols.shape[1] // kk) + size
    out = col2im_nd(cols, x_shape, ksize, stride, tuple((p, p) for p in padding), dilation)
    return out if dim == 3 else out.squeeze(0)
