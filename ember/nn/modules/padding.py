"""Padding modules over F.pad: zero, constant, reflection, replication, circular; 1d-3d."""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _ntuple(padding, n):
    if isinstance(padding, int):
        return (padding,) * n
    return tuple(padding)


class _PadNd(Module):
    mode = "constant"
    ndim = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.ndim)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    ndim = 1


class ConstantPad2d(_ConstantPadNd):
    ndim = 2


class ConstantPad3d(_ConstantPadNd):
    ndim = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


def _mode_class(name, mode, ndim):
    return type(name, (_PadNd,), {"mode": mode, "ndim": ndim, "__module__": __name__})


ReflectionPad1d = _mode_class("ReflectionPad1d", "reflect", 1)
ReflectionPad2d = _mode_class("ReflectionPad2d", "reflect", 2)
ReflectionPad3d = _mode_class("ReflectionPad3d", "reflect", 3)
ReplicationPad1d = _mode_class("ReplicationPad1d", "replicate", 1)
ReplicationPad2d = _mode_class("ReplicationPad2d", "replicate", 2)
ReplicationPad3d = _mode_class("ReplicationPad3d", "replicate", 3)
CircularPad1d = _mode_class("CircularPad1d", "circular", 1)
CircularPad2d = _mode_class("CircularPad2d", "circular", 2)
CircularPad3d = _mode_class("CircularPad3d", "circular", 3)
