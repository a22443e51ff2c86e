"""ember.cuda's memory statistics, read from the backend's allocator (CuPy's memory pool).
Without a GPU they report 0 (an empty dict for memory_stats), as PyTorch's CPU build does."""
from collections import OrderedDict

from .. import backends as _backends

__all__ = ["OutOfMemoryError", "empty_cache", "mem_get_info", "memory_allocated",
           "memory_reserved", "max_memory_allocated", "max_memory_reserved", "memory_cached",
           "max_memory_cached", "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_max_memory_cached"]


class OutOfMemoryError(RuntimeError):
    """A CUDA allocation failed (torch.cuda.OutOfMemoryError); the message gives the sizes."""


_peaks = {}   # device index -> [peak allocated, peak reserved], raised whenever we look


def _current(device):
    """(index, allocated, reserved) of `device`, or None without a GPU."""
    from . import _backend, _index, is_available   # (cycle: ember.cuda imports this module first)
    if not is_available():
        return None
    backend = _backend()
    index = backend.check_index(_index(device))
    allocated, reserved = backend.memory(index)
    peak = _peaks.setdefault(index, [0, 0])
    peak[0], peak[1] = max(peak[0], allocated), max(peak[1], reserved)
    return index, allocated, reserved


def memory_allocated(device=None):
    now = _current(device)
    return 0 if now is None else now[1]


def memory_reserved(device=None):
    now = _current(device)
    return 0 if now is None else now[2]


def max_memory_allocated(device=None):
    now = _current(device)
    return 0 if now is None else _peaks[now[0]][0]


def max_memory_reserved(device=None):
    now = _current(device)
    return 0 if now is None else _peaks[now[0]][1]


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_peak_memory_stats(device=None):
    from . import _lazy_init   # (cycle: ember.cuda imports this module first)
    _lazy_init()
    now = _current(device)
    _peaks[now[0]] = [now[1], now[2]]


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats


def memory_stats(device=None):
    now = _current(device)
    if now is None:
        return OrderedDict()
    index, allocated, reserved = now
    return OrderedDict([("allocated_bytes.all.current", allocated),
                        ("allocated_bytes.all.peak", _peaks[index][0]),
                        ("reserved_bytes.all.current", reserved),
                        ("reserved_bytes.all.peak", _peaks[index][1])])


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024


def memory_summary(device=None, abbreviated=False):
    """A printable table of the allocator's current and peak usage on `device`."""
    from . import _lazy_init   # (cycle: ember.cuda imports this module first)
    _lazy_init()
    index, allocated, reserved = _current(device)
    peak = _peaks[index]
    rule = "|" + "=" * 61 + "|"
    rows = [rule, f"|{f'ember CUDA memory summary, device ID {index}':^61}|", rule,
            f"| {'Metric':<29}| {'Cur Usage':>13} | {'Peak Usage':>13} |",
            "|" + "-" * 61 + "|",
            f"| {'Allocated memory':<29}| {_size(allocated):>13} | {_size(peak[0]):>13} |",
            f"| {'Reserved memory (pool)':<29}| {_size(reserved):>13} | {_size(peak[1]):>13} |",
            f"| {'Reserved but unallocated':<29}| {_size(reserved - allocated):>13} | "
            f"{'':>13} |", rule]
    return "\n".join(rows) + "\n"


def empty_cache():
    """Return the pool's unused blocks to the driver (nothing to do without a GPU)."""
    if "cuda" in _backends.BACKENDS:
        _backends.BACKENDS["cuda"].empty_cache()


def mem_get_info(device=None):
    """(free, total) bytes of `device`."""
    from . import _backend, _index   # (cycle: ember.cuda imports this module first)
    backend = _backend()
    index = backend.check_index(_index(device))
    total = backend.properties(index)["total_memory"]
    return backend.free_memory(index), total
