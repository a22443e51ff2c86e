"""ember.xpu (torch.xpu): Intel's GPU device, absent here; answers as a PyTorch built without
XPU does (is_available False, device_count 0, zero memory, PyTorch's errors elsewhere), so
device-generic code that probes it runs unchanged."""
import collections
import contextlib

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream",
           "default_generators", "device", "device_count", "device_of", "empty_cache",
           "get_arch_list", "get_device_capability", "get_device_name",
           "get_device_properties", "get_gencode_flags", "get_rng_state",
           "get_rng_state_all", "init", "initial_seed", "is_available",
           "is_bf16_supported", "is_initialized", "is_tf32_supported", "manual_seed",
           "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_reserved", "memory_snapshot", "memory_stats",
           "memory_stats_as_nested_dict", "seed", "seed_all", "set_device",
           "set_rng_state", "set_rng_state_all", "set_stream", "stream", "synchronize"]

default_generators = ()


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with XPU enabled")


init = current_device = synchronize = get_device_name = get_device_capability = \
    get_device_properties = initial_seed = get_rng_state = mem_get_info = set_device = \
    _not_compiled


def is_available():
    return False


def is_initialized():
    return False


def device_count():
    return 0


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


def get_rng_state_all():
    return []


def set_rng_state(new_state, device="xpu"):
    pass   # (PyTorch queues it until XPU initializes, which never happens here)


def set_rng_state_all(new_states):
    pass


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def seed():
    pass


def seed_all():
    pass


def empty_cache():
    pass


def memory_allocated(device=None):
    return 0


memory_reserved = max_memory_allocated = max_memory_reserved = memory_allocated


def memory_stats(device=None):
    return collections.OrderedDict()


def memory_stats_as_nested_dict(device=None):
    return {}


def memory_snapshot(mempool_id=None):
    return []


class _Dummy:
    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {type(self).__name__}")


class Stream(_Dummy):
    pass


class Event(_Dummy):
    pass


def current_stream(device=None):
    _not_compiled()


def set_stream(stream):
    if stream is not None:
        _not_compiled()


class StreamContext(contextlib.AbstractContextManager):
    """Selects `stream` inside the block; None (as here, with no XPU) selects nothing."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            _not_compiled()

    def __exit__(self, *exc):
        pass


def stream(stream):
    return StreamContext(stream)


class device:
    """Selects an XPU device inside the block (PyTorch's error: none exists)."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx not in (None, -1):   # (-1: a CPU tensor's device_of, nothing to select)
            raise NotImplementedError("PyTorch was compiled without XPU support")

    def __exit__(self, *exc):
        return False


class device_of(device):
    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_xpu else -1)
