"""ember.accelerator (torch.accelerator): the current accelerator, which is CUDA through CuPy
when a GPU is visible, else none (then the device calls raise PyTorch's error)."""
from . import cuda as _cuda
from ._device import device as _device_cls

__all__ = ["is_available", "current_accelerator", "device_count", "set_device_index",
           "set_device_idx", "current_device_index", "current_device_idx", "synchronize",
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved"]


def _none_error():
    return RuntimeError("Cannot access accelerator device when none is available.")


def is_available():
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """`device('cuda')` when a GPU is usable, else None."""
    if not _cuda.is_available():
        return None
    return _device_cls("cuda")


def device_count():
    return _cuda.device_count()


def current_device_index():
    if not _cuda.is_available():
        raise _none_error()
    return _cuda.current_device()


def set_device_index(device):
    if not _cuda.is_available():
        raise _none_error()
    _cuda.set_device(device)


current_device_idx = current_device_index
set_device_idx = set_device_index


def synchronize(device=None):
    if not _cuda.is_available():
        raise _none_error()
    _cuda.synchronize(device)


def _check():
    if not _cuda.is_available():
        raise _none_error()


def empty_cache():
    _check()
    _cuda.empty_cache()


def memory_allocated(device_index=None):
    _check()
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index=None):
    _check()
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index=None):
    _check()
    return _cuda.memory_reserved(device_index)


def max_memory_reserved(device_index=None):
    _check()
    return _cuda.max_memory_reserved(device_index)
