"""Module construction helpers: skip_init (a module without running its initialisers) and
the conversion of convolution weights to another memory format (channels_last)."""
import inspect

from ..._constants import channels_last, channels_last_3d, contiguous_format
from ..._random import default_generator
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module

__all__ = ["skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]


def skip_init(module_cls, *args, **kwargs):
    """`module_cls(*args, **kwargs)` whose parameters are left uninitialised: their values
    are unspecified, and the random stream is left as it was (PyTorch builds the module on
    the meta device, which draws nothing; ember has no meta device, so it builds it and
    rewinds the generator)."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    state = default_generator.get_state()
    try:
        return module_cls(*args, **kwargs)
    finally:
        default_generator.set_state(state)


def _in_layout(weight, memory_format):
    """A copy of `weight` laid out in `memory_format`: channels-last formats store the
    channel dim innermost (dims 0, 2, ..., 1 row-major), contiguous_format row-major."""
    if memory_format in (channels_last, channels_last_3d):
        order = (0,) + tuple(range(2, weight.dim())) + (1,)
        back = [order.index(d) for d in range(weight.dim())]
        return weight.permute(order).contiguous().permute(back)
    if memory_format is contiguous_format:
        return weight.clone().contiguous()
    return weight.clone(memory_format=memory_format)


def _convert(module, kinds, memory_format):
    if isinstance(module, kinds):
        module.weight.data = _in_layout(module.weight.detach(), memory_format)
    for child in module.children():
        _convert(child, kinds, memory_format)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give every Conv2d / ConvTranspose2d weight in `module` the `memory_format` layout."""
    return _convert(module, (Conv2d, ConvTranspose2d), memory_format)


def convert_conv3d_weight_memory_format(module, memory_format):
    """Give every Conv3d / ConvTranspose3d weight in `module` the `memory_format` layout."""
    return _convert(module, (Conv3d, ConvTranspose3d), memory_format)
