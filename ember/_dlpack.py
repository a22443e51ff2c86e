"""DLPack interchange: ember.from_dlpack / ember.to_dlpack (torch.utils.dlpack's pair).

A CPU tensor's array is a NumPy array, which speaks DLPack itself, so the exchange shares
memory both ways; CUDA arrays go through CuPy's DLPack support."""
import ctypes

import numpy as np

from . import _dtype as dt
from ._creation import from_numpy
from ._device import device as device_cls
from ._scalars import type_name
from ._tensor import Tensor, _wrap

__all__ = ["from_dlpack", "to_dlpack"]

_CPU, _CUDA = 1, 2   # DLPack device types


class _Capsule:
    """A bare DLPack capsule made consumable by `numpy.from_dlpack`, which asks for the
    protocol methods rather than a capsule."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (_CPU, 0)


def _writable(array):
    """`array` made writable. NOTE: NumPy marks arrays imported from unversioned DLPack
    capsules (torch.to_dlpack's kind) read-only, since such capsules cannot say whether the
    producer allows writes; PyTorch treats the memory as writable, so ember maps the same
    bytes again as a writable array that keeps the import alive."""
    if array.flags.writeable or array.size == 0 or min(array.strides, default=0) < 0:
        return array
    span = sum((n - 1) * st for n, st in zip(array.shape, array.strides)) + array.itemsize
    memory = (ctypes.c_char * span).from_address(array.ctypes.data)
    memory.owner = array   # the imported array holds the producer's deleter
    return np.ndarray(array.shape, array.dtype, buffer=memory, strides=array.strides)


def to_dlpack(tensor):
    """A DLPack capsule viewing `tensor`'s memory (consumed once, by one from_dlpack)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type_name(tensor)}")
    if tensor.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return tensor._data.__dlpack__()


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                    "be consumed only once, so you might have already constructed a tensor "
                    "from it once.")


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of `ext_tensor` (an object with `__dlpack__`, e.g. a
    NumPy array or a torch tensor, or a capsule from to_dlpack); `copy=True` copies."""
    if isinstance(ext_tensor, Tensor):
        if ext_tensor.requires_grad:   # (what exporting it through __dlpack__ refuses)
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        result = ext_tensor
    elif hasattr(ext_tensor, "__dlpack__"):
        kind = ext_tensor.__dlpack_device__()[0]
        if kind == _CUDA:
            import cupy  # (optional: cupy)
            array = cupy.from_dlpack(ext_tensor)
            result = _wrap(array, dt.from_numpy_dtype(array.dtype),
                           device_cls("cuda", array.device.id))
        elif kind != _CPU:
            raise BufferError(f"ember does not support DLPack device type {kind}: only CPU "
                              "(1) and CUDA (2) memory can be imported")
        else:
            result = from_numpy(_writable(np.from_dlpack(ext_tensor)))
    else:
        # anything else must be a capsule, which carries no device or copy choice
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is "
                                 "already a DLPack capsule.")
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(_INVALID_CAPSULE)
        result = from_numpy(_writable(np.from_dlpack(_Capsule(ext_tensor))))
    if device is not None:
        result = result.to(device)
    if copy is True:   # (PyTorch's exporter reads only an explicit True)
        result = result.clone()
    return result
