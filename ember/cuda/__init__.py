"""ember.cuda: CUDA through CuPy. Without CuPy or a GPU, is_available() is False."""

__all__ = ["is_available", "device_count", "is_initialized", "init", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
           "synchronize", "empty_cache", "ipc_collect", "current_device", "set_device",
           "device", "device_of", "get_device_name", "get_device_properties",
           "get_device_capability", "get_arch_list", "mem_get_info", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_cached",
           "max_memory_cached", "memory_stats", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached", "amp"]

_available = None


def _probe():
    global _available
    if _available is None:
        try:
            import cupy
            _available = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            _available = False
    return _available


def is_available():
    """True when CuPy imports and sees a GPU; never raises."""
    return _probe()


def device_count():
    if not _probe():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def _lazy_init():
    """Install the CuPy backend, or raise PyTorch's error where CUDA is unavailable."""
    if not _probe():
        raise AssertionError("Torch not compiled with CUDA enabled")
    from ..backends import cupy_backend
    cupy_backend.install()


def _require():
    """PyTorch's CPU build raises this from every call that needs a device."""
    if not _probe():
        raise AssertionError("Torch not compiled with CUDA enabled")


def is_initialized():
    from ..backends import BACKENDS
    return _probe() and "cuda" in BACKENDS


def init():
    _lazy_init()


def is_bf16_supported(including_emulation=True):
    return is_available()


def get_arch_list():
    return []


# ---------------------------------------------------------------------- random
# NOTE: CuPy's generator is not PyTorch's CUDA stream; seeding it still makes GPU runs
# repeatable. Without a GPU, seeding is silently ignored, as in PyTorch.
def manual_seed(seed):
    if is_available():
        import cupy
        cupy.random.seed(int(seed) & 0xFFFFFFFF)


manual_seed_all = manual_seed


def seed():
    if is_available():
        import cupy
        cupy.random.seed()


seed_all = seed


def initial_seed():
    _require()
    raise RuntimeError("ember.cuda.initial_seed: CuPy's generator does not report its seed")


def get_rng_state(device="cuda"):
    _require()
    raise RuntimeError("ember.cuda.get_rng_state: CuPy's generator state cannot be saved")


def set_rng_state(new_state, device="cuda"):
    if is_available():
        raise RuntimeError("ember.cuda.set_rng_state: CuPy's generator state cannot be set")


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---------------------------------------------------------------------- devices
def synchronize(device=None):
    _require()
    import cupy
    cupy.cuda.Device().synchronize()


def empty_cache():
    if is_available():
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()


def ipc_collect():
    _require()


def current_device():
    _lazy_init()
    import cupy
    return cupy.cuda.Device().id


def _index(device):
    from .._device import device as dev
    if device is None:
        return None
    if isinstance(device, int):
        return device
    return dev(device).index


def set_device(device):
    idx = _index(device)
    if idx is None or idx < 0:
        return
    _require()
    import cupy
    cupy.cuda.Device(idx).use()


class device:
    """Context manager selecting a GPU; index -1 (or None) does nothing."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None or self.idx < 0:
            return
        if not _probe():
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


def _props(device):
    _lazy_init()
    import cupy
    idx = _index(device)
    return cupy.cuda.runtime.getDeviceProperties(current_device() if idx is None else idx)


def get_device_name(device=None):
    name = _props(device)["name"]
    return name.decode() if isinstance(name, bytes) else name


def get_device_capability(device=None):
    p = _props(device)
    return p["major"], p["minor"]


def get_device_properties(device=None):
    """CuPy's property dict exposed as attributes (name, total_memory, major, minor...)."""
    from types import SimpleNamespace
    p = dict(_props(device))
    name = p.get("name", b"")
    p["name"] = name.decode() if isinstance(name, bytes) else name
    p["total_memory"] = p.get("totalGlobalMem", 0)
    p["multi_processor_count"] = p.get("multiProcessorCount", 0)
    return SimpleNamespace(**p)


def mem_get_info(device=None):
    _require()
    import cupy
    return cupy.cuda.runtime.memGetInfo()


# ---------------------------------------------------------------------- memory statistics
# Without a GPU these report 0 (an empty dict for memory_stats), as PyTorch's CPU build does.
_peak = {"allocated": 0, "reserved": 0}


def memory_allocated(device=None):
    if not is_available():
        return 0
    import cupy
    used = cupy.get_default_memory_pool().used_bytes()
    _peak["allocated"] = max(_peak["allocated"], used)
    return used


def memory_reserved(device=None):
    if not is_available():
        return 0
    import cupy
    total = cupy.get_default_memory_pool().total_bytes()
    _peak["reserved"] = max(_peak["reserved"], total)
    return total


def max_memory_allocated(device=None):
    return max(memory_allocated(device), _peak["allocated"])


def max_memory_reserved(device=None):
    return max(memory_reserved(device), _peak["reserved"])


def memory_cached(device=None):
    return memory_reserved(device)


def max_memory_cached(device=None):
    return max_memory_reserved(device)


def memory_stats(device=None):
    from collections import OrderedDict
    if not is_available():
        return OrderedDict()
    return OrderedDict([("allocated_bytes.all.current", memory_allocated(device)),
                        ("allocated_bytes.all.peak", max_memory_allocated(device)),
                        ("reserved_bytes.all.current", memory_reserved(device)),
                        ("reserved_bytes.all.peak", max_memory_reserved(device))])


def reset_peak_memory_stats(device=None):
    _require()
    _peak["allocated"] = _peak["reserved"] = 0


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats


def __getattr__(name):
    if name == "amp":   # imported on first use: `import ember` stays light
        import importlib
        return importlib.import_module(__name__ + ".amp")
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")
