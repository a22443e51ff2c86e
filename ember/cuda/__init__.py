"""ember.cuda (torch.cuda): CUDA through CuPy. Without CuPy or a GPU, is_available() is False
and the calls that need a device raise PyTorch's error, saying which of the two is missing.

Every call goes through the installed 'cuda' backend (ember/backends/cupy_backend.py, or the
NumPy stand-in that ember's own tests install), so this file names neither CuPy nor NumPy.
"""
import importlib

from .. import backends as _backends
from .._device import device as _device_cls
from ._memory import (OutOfMemoryError, empty_cache, max_memory_allocated, max_memory_cached,
                      max_memory_reserved, mem_get_info, memory_allocated, memory_cached,
                      memory_reserved, memory_stats, memory_summary, reset_max_memory_allocated,
                      reset_max_memory_cached, reset_peak_memory_stats)
from ._random import generator as _generator
from ._random import (get_rng_state, get_rng_state_all, initial_seed,
                      manual_seed, manual_seed_all, seed, seed_all, set_rng_state,
                      set_rng_state_all)
from .streams import (Event, Stream, StreamContext, current_stream, default_stream,
                      set_stream, stream)

__all__ = ["is_available", "device_count", "is_initialized", "init", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "default_generators", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "synchronize", "empty_cache", "ipc_collect", "current_device",
           "set_device", "device", "device_of", "get_device_name", "get_device_properties",
           "get_device_capability", "get_arch_list", "mem_get_info", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
           "max_memory_cached", "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached", "OutOfMemoryError",
           "Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
           "set_stream", "amp"]

_cupy_state = None   # None: not probed yet; else (has_gpu, reason when not)


def _probe_cupy():
    global _cupy_state
    if _cupy_state is None:
        try:
            import cupy   # (optional: cupy)
        except ImportError:
            _cupy_state = (False, "CuPy is not installed: pip install cupy-cuda12x")
        else:
            try:
                count = cupy.cuda.runtime.getDeviceCount()
            except Exception as exc:   # no driver, an old driver, no device: all mean no GPU
                _cupy_state = (False, f"CuPy found no usable CUDA GPU ({exc})")
            else:
                _cupy_state = (count > 0, "CuPy found no CUDA GPU")
    return _cupy_state


def is_available():
    """True when CuPy imports and sees a GPU (or the test stand-in is on); never raises."""
    if "cuda" in _backends.BACKENDS or _backends.standin_requested():
        return True
    return _probe_cupy()[0]


def _lazy_init():
    """Install the 'cuda' backend, or raise PyTorch's error naming what is missing."""
    if "cuda" in _backends.BACKENDS:
        return
    count = _backends.standin_requested()
    if count:
        from ..backends.standin import StandinBackend   # (deferred: tests only)
        _backends.register("cuda", StandinBackend(count))
        return
    ok, reason = _probe_cupy()
    if not ok:
        raise AssertionError(f"Torch not compiled with CUDA enabled\n(ember: {reason})")
    from ..backends import cupy_backend   # (deferred: loaded once a GPU is seen)
    cupy_backend.install()


def _backend():
    _lazy_init()
    return _backends.BACKENDS["cuda"]


def device_count():
    return _backend().device_count() if is_available() else 0


def is_initialized():
    return "cuda" in _backends.BACKENDS


def init():
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    if not is_available():
        return False
    return including_emulation or _backend().properties(current_device())["major"] >= 8


def get_arch_list():
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def ipc_collect():
    _lazy_init()


# ---------------------------------------------------------------------- devices
def _index(device, optional=True):
    """A device index from an int, a string, an ember.device or None (the current one)."""
    if device is None or device == "cuda":
        return None if optional else current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _device_cls) else _device_cls(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return d.index


def current_device():
    return _backend().current_index()


def set_device(device):
    """Make `device` current; a negative index does nothing, as in PyTorch."""
    idx = _index(device)
    if idx is None or idx < 0:
        return
    _backend().set_current(idx)


def synchronize(device=None):
    backend = _backend()
    backend.synchronize(backend.check_index(_index(device)))


class device:
    """Context manager selecting a GPU; index -1 (or None) does nothing."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None or self.idx < 0:
            return
        if not is_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = current_device()
        set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """`device` of a tensor's GPU (a CPU tensor selects nothing)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" else -1)


class _CudaDeviceProperties:
    """What get_device_properties returns: name, major, minor, total_memory,
    multi_processor_count, with PyTorch's repr."""

    def __init__(self, props):
        self.__dict__.update(props)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    backend = _backend()
    return _CudaDeviceProperties(backend.properties(backend.check_index(_index(device))))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def __getattr__(name):
    if name == "amp":   # imported on first use: `import ember` stays light
        return importlib.import_module(__name__ + ".amp")
    if name == "default_generators":   # one per device, so it depends on the machine
        return tuple(_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")
