"""ember.set_default_device / get_default_device: where factories (zeros, tensor, arange,
rand, ...) put a tensor when no `device=` is given. The state lives in _device.py
(`_default`), read by `placement(None)`, so every factory honours it; `with
ember.device(...)` sets it for a block."""
from . import _device, cuda

__all__ = ["set_default_device", "get_default_device"]


def set_default_device(device):
    """`device` (a device, a string, an index) becomes the factories' default; None resets it
    to the CPU."""
    if device is None:
        _device._default[0] = None
        return
    d = _device.as_device(device)
    _device._default[0] = None if d.type == "cpu" and d.index is None else d


def get_default_device():
    """The default device; an accelerator without an index reads as its current device
    (PyTorch's answer, and its error where the accelerator is missing)."""
    d = _device._default[0]
    if d is None:
        return _device.CPU
    if d.type == "cuda" and d.index is None:
        return _device.device("cuda", cuda.current_device())
    return d
