"""ember.mps (torch.mps): Apple's Metal device, absent here; answers as PyTorch does on a
machine without MPS (is_available False, device_count 0, the rest PyTorch's errors)."""

__all__ = ["Event", "compile_shader", "current_allocated_memory", "device_count",
           "driver_allocated_memory", "empty_cache", "get_rng_state", "is_available",
           "load_metallib", "manual_seed", "recommended_max_memory", "seed",
           "set_per_process_memory_fraction", "set_rng_state", "synchronize"]


def _no_backend(what):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


def is_available():
    return False


def device_count():
    return 0


def synchronize():
    raise _no_backend("deviceSynchronize")


def get_rng_state(device="mps"):
    raise _no_backend("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    raise _no_backend("getDefaultGenerator")


def manual_seed(seed):
    pass   # (PyTorch: ignored without MPS)


def seed():
    raise _no_backend("getDefaultGenerator")


def empty_cache():
    raise _no_backend("emptyCache")


def set_per_process_memory_fraction(fraction):
    raise _no_backend("setMemoryFraction")


def current_allocated_memory():
    raise _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory():
    raise _no_backend("getDriverAllocatedMemory")


def recommended_max_memory():
    raise _no_backend("getRecommendedMaxMemory")


def compile_shader(source):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    raise RuntimeError("MPS is not available")


class Event:
    def __init__(self, enable_timing=False):
        raise _no_backend("acquireEvent")
