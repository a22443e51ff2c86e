"""ember.cpu (torch.cpu): the CPU as a device module, answered as PyTorch answers it. The CPU
has no streams: Stream and Event are no-ops that keep device-generic code running."""
import contextlib
import os
import platform
import types

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream",
           "device_count", "get_capabilities", "is_available", "is_initialized",
           "set_device", "stream", "synchronize"]


class Stream:
    """N.B. This class only exists to facilitate device-agnostic code."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current_stream = _default_stream


class StreamContext(contextlib.AbstractContextManager):
    """Makes `stream` the current CPU stream inside the block (a no-op for the work)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current_stream
        if self.stream is not None:
            self.prev_stream, _current_stream = _current_stream, self.stream

    def __exit__(self, *exc):
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream):
    return StreamContext(stream)


def current_stream(device=None):
    return _current_stream


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    pass


def current_device():
    return "cpu"


def device_count():
    return 1


def set_device(device):
    pass


# torch's capability names -> /proc/cpuinfo's flag names, where they differ
_FLAG_NAMES = {"fma3": "fma", "bmi": "bmi1", "sse3": "pni", "sha": "sha_ni", "lzcnt": "abm",
               "avx512_4fmaps": "avx512_4fmaps", "avx512_4vnniw": "avx512_4vnniw"}
_FLAGS = ("aes", "amx_bf16", "amx_fp16", "amx_int8", "amx_tile", "avx", "avx10_1", "avx10_2",
          "avx2", "avx512_4fmaps", "avx512_4vnniw", "avx512_bf16", "avx512_bitalg",
          "avx512_bw", "avx512_cd", "avx512_dq", "avx512_f", "avx512_fp16", "avx512_ifma",
          "avx512_vbmi", "avx512_vbmi2", "avx512_vl", "avx512_vnni", "avx512_vp2intersect",
          "avx512_vpopcntdq", "avx_ne_convert", "avx_vnni", "avx_vnni_int16", "avx_vnni_int8",
          "bmi", "bmi2", "clflush", "clflushopt", "clwb", "f16c", "fma3", "fma4", "lzcnt",
          "popcnt", "sha", "sse", "sse2", "sse3", "sse4_1", "sse4_2", "sse4a", "ssse3")


def _cache_size(level, kind):
    """cpu0's cache size in bytes at `level` of `kind` (Data, Unified), 0 if unknown."""
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for entry in sorted(os.listdir(root)):
            with open(f"{root}/{entry}/level") as f, open(f"{root}/{entry}/type") as g:
                if f.read().strip() == str(level) and g.read().strip() == kind:
                    with open(f"{root}/{entry}/size") as h:
                        size = h.read().strip()
                    scale = {"K": 1024, "M": 1024 ** 2}.get(size[-1:], 1)
                    return int(size.rstrip("KM")) * scale
    except OSError:
        pass
    return 0


def get_capabilities():
    """The CPU's features by PyTorch's names (from /proc/cpuinfo and sysfs), read-only."""
    flags, name, cores, sockets = set(), platform.processor(), 0, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "flags" and not flags:
                    flags = set(value.split())
                elif key == "model name":
                    name = value.strip()
                elif key == "cpu cores":
                    cores = int(value)
                elif key == "physical id":
                    sockets.add(value.strip())
    except OSError:
        pass
    n_sockets = max(len(sockets), 1)
    caps = {"architecture": platform.machine(), "cpu_name": name,
            "num_logical_cores": os.cpu_count(),
            "num_physical_cores": cores * n_sockets or os.cpu_count(),
            "num_sockets": n_sockets, "l1d_cache_size": _cache_size(1, "Data"),
            "l2_cache_size": _cache_size(2, "Unified")}
    for k in _FLAGS:
        flag = _FLAG_NAMES.get(k, k.replace("avx512_", "avx512"))
        caps[k] = flag in flags or k in flags
    return types.MappingProxyType(caps)
