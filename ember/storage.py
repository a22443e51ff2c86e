"""ember.storage (torch.storage): a tensor's memory as PyTorch presents it.

`Tensor.untyped_storage()` is the whole block of bytes a tensor (and its views) lives in;
`TypedStorage` (deprecated in PyTorch) is that block seen as elements of one dtype. Both
share memory with their tensor, so `data_ptr()` identifies the block, as code that checks
for shared storage (checkpoint writers, safetensors) expects.
"""
import warnings

import numpy as np

from . import _dtype as dt
from . import _names, backends
from ._device import CPU, as_device
from ._runtime_settings import warn_once

__all__ = ["TypedStorage", "UntypedStorage"]


class UntypedStorage:
    """A 1-D block of bytes on a device (`UntypedStorage(n)` allocates n zero bytes)."""

    def __init__(self, size=0, *, device=None):
        self._device = CPU if device is None else as_device(device)
        self._bytes = np.zeros(int(size), np.uint8)
        if self._device.type != "cpu":
            self._bytes = backends.to_device(self._device, self._bytes)

    @classmethod
    def _of(cls, flat, device):
        s = cls.__new__(cls)
        s._bytes = flat.view(np.uint8) if flat.dtype != np.uint8 else flat
        s._device = device
        return s

    @property
    def device(self):
        return self._device

    @property
    def dtype(self):
        return dt.uint8

    def nbytes(self):
        return int(self._bytes.size)

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        a = self._bytes
        if not a.size:
            return 0
        return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr

    def __getitem__(self, i):
        return int(self._bytes[i])

    def tolist(self):
        return [int(v) for v in self._bytes.tolist()]

    def is_shared(self):
        return False

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"{body}\n" if body else ""
        return (f"{head}[{_names.MODULE}.storage.UntypedStorage(device={self._device}) of size "
                f"{self.nbytes()}]")


class TypedStorage:
    """An UntypedStorage read as elements of `dtype` (deprecated in PyTorch, as here)."""

    def __init__(self, untyped, dtype):
        self._untyped_storage, self.dtype = untyped, dtype

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def tolist(self):
        a = self._untyped_storage._bytes
        return a[:self.size() * self.dtype.itemsize].view(self.dtype.np).tolist()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = f"{body}\n" if body else ""
        return (f"{head}[{_names.MODULE}.storage.TypedStorage(dtype={self.dtype!r}, "
                f"device={self.device}) of size {self.size()}]")


def untyped_storage(self):
    """Tensor.untyped_storage(): the bytes of the memory block `self` views."""
    from .ops.strided import storage_of  # (cycle: ops.strided imports this module)
    flat, _ = storage_of(self)
    return UntypedStorage._of(flat, self._device)


_warned = set()


def _warn_typed_storage():
    """PyTorch's deprecation warning of TypedStorage: once per process (every time under
    set_warn_always(True))."""
    warn_once(_warned, "typed storage",
              "TypedStorage is deprecated. It will be removed in the future and "
              "UntypedStorage will be the only storage class. This should only matter to "
              "you if you are using storages directly.  To access UntypedStorage "
              "directly, use tensor.untyped_storage() instead of tensor.storage()",
              UserWarning, stacklevel=4)


def storage(self):
    _warn_typed_storage()
    return TypedStorage(untyped_storage(self), self.dtype)


from .types import Storage  # noqa: E402,F401  (torch.storage.Storage: the annotation class)
