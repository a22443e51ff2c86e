"""Conv1d/2d/3d, ConvTranspose1d/2d/3d, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d."""
import math

from ... import _dtype as dt
from ..._creation import empty
from ...ops.padding import pad_nd
from .. import init
from .._functional import conv as F
from ..parameter import Parameter, UninitializedParameter
from ._parameters import set_parameters
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, n)
        if padding_mode not in _PADDING_MODES:
            raise ValueError("padding_mode must be one of {'replicate', 'zeros', 'circular', "
                             f"'reflect'}}, but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed = dilation, transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        if isinstance(padding, str):
            total = [d * (k - 1) for d, k in zip(dilation, kernel_size)]
            self._pads = tuple((0, 0) if padding == "valid" else (t // 2, t - t // 2)
                               for t in total)
        else:
            self._pads = tuple((p, p) for p in padding)
        if transposed:
            shape = (in_channels, out_channels // groups) + kernel_size
        else:
            shape = (out_channels, in_channels // groups) + kernel_size
        kw = {"device": device, "dtype": dtype}
        set_parameters(self, weight=Parameter(empty(shape, **kw)),
                       bias=Parameter(empty(out_channels, **kw)) if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)) == U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            for k in self.weight.shape[2:]:
                fan_in *= k
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            input = pad_nd(input, self._pads, self.padding_mode)
            return F._conv(input, weight, bias, self.stride, 0, self.dilation, self.groups,
                           self._nd, f"conv{self._nd}d")
        return F._conv(input, weight, bias, self.stride, self.padding, self.dilation,
                       self.groups, self._nd, f"conv{self._nd}d")

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _nd = 1


class Conv2d(_Conv):
    _nd = 2


class Conv3d(_Conv):
    _nd = 3


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return self.output_padding
        nd = num_spatial_dims
        lead = 2 if input.dim() == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {lead + nd} elements (got {len(output_size)})")
        mins, maxs = [], []
        for d in range(nd):
            dil = dilation[d] if dilation is not None else 1
            lo = ((input.shape[d + lead] - 1) * stride[d] - 2 * padding[d]
                  + dil * (kernel_size[d] - 1) + 1)
            mins.append(lo)
            maxs.append(lo + stride[d] - 1)
        for d in range(nd):
            if not mins[d] <= output_size[d] <= maxs[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {mins} to {maxs} (for an input of "
                                 f"{input.shape[2:]})")
        return tuple(output_size[d] - mins[d] for d in range(nd))

    def forward(self, input, output_size=None):
        nd = self._nd
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, nd, self.dilation)
        return F._conv_transpose(input, self.weight, self.bias, self.stride, self.padding,
                                 output_padding, self.groups, self.dilation, nd,
                                 f"conv_transpose{nd}d")


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3


# ---------------------------------------------------------------------- lazy
class _LazyConvMixin(LazyModuleMixin):
    def _lazy_init(self, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                   padding_mode, dtype, output_padding=None):
        # Built as PyTorch does: a 0-channel conv (the lazy reset_parameters draws nothing
        # then, keeping the RNG stream aligned), whose parameters then become uninitialized.
        if output_padding is None:
            self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding, dilation,
                                        groups, bias, padding_mode, dtype=dtype)
        else:
            self.cls_to_become.__init__(self, 0, 0, kernel_size, stride, padding,
                                        output_padding, groups, bias, dilation, padding_mode,
                                        dtype=dtype)
        self.out_channels = out_channels
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        self._lazy_dtype = dtype or dt.get_default_dtype()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        nd = self._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                               f"to {self.__class__.__name__}, but got input of size: "
                               f"{input.shape}")
        self.in_channels = input.shape[1] if input.dim() == nd + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            self.weight.materialize((self.in_channels, self.out_channels // self.groups)
                                    + self.kernel_size)
        else:
            self.weight.materialize((self.out_channels, self.in_channels // self.groups)
                                    + self.kernel_size)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        self._lazy_init(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                        padding_mode, dtype, output_padding)


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
