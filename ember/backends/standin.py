"""A NumPy-backed 'cuda' for ember's own tests: device semantics without a GPU.

Enabled only when the variable EMBER_CUDA_STANDIN holds a device count (the test suite's
`cuda_standin` fixture sets it). Arrays are NumPy arrays; transfers copy, as real ones do;
each device index is its own device, so mixing cuda:0 and cuda:1 raises as on a real machine.
Memory statistics report 0 (nothing is pooled); streams and events run synchronously.
"""
import time
import weakref

import numpy as np

from .gpu import GPUBackend

_TOTAL_MEMORY = 16 * 2**30    # what the stand-in reports as each device's capacity


class StandinStream:
    def __init__(self, index, priority=0):
        self.index, self.priority = index, priority

    def synchronize(self):
        pass

    def query(self):
        return True

    def wait_event(self, event):
        pass


class StandinEvent:
    def __init__(self, enable_timing=False, blocking=False):
        self.enable_timing = enable_timing
        self.recorded_at = None

    def record(self, stream):
        self.recorded_at = time.perf_counter()

    def synchronize(self):
        pass

    def query(self):
        return True

    def elapsed_ms(self, end):
        return (end.recorded_at - self.recorded_at) * 1000.0


class StandinBackend(GPUBackend):
    xp = np
    oom_errors = (MemoryError,)
    runtime_version = "12.0"    # what the stand-in reports as ember.version.cuda
    nccl = False                # 'nccl' process groups carry its tensors over MPI

    def __init__(self, count):
        super().__init__()
        self.count = count
        # NOTE: weak values: a freed pinned array leaves, so a reused id is not 'pinned'.
        self._pinned = weakref.WeakValueDictionary()

    def device_count(self):
        return self.count

    def properties(self, index):
        return {"name": "ember CUDA stand-in (NumPy)", "major": 9, "minor": 0,
                "total_memory": _TOTAL_MEMORY, "multi_processor_count": 1}

    def _use(self, index):
        pass

    def from_host(self, host, index=None):
        index = self.check_index(index)
        if host.nbytes > _TOTAL_MEMORY:
            raise self.out_of_memory(MemoryError("the stand-in device is full"), index,
                                     host.nbytes)
        return np.array(host)

    def to_host(self, array):
        return np.array(array)

    def memory(self, index):
        return 0, 0

    def free_memory(self, index):
        return _TOTAL_MEMORY

    def synchronize(self, index):
        pass

    def empty_cache(self):
        pass

    def pin(self, host):
        pinned = np.array(host)
        self._pinned[id(pinned)] = pinned
        return pinned

    def is_pinned(self, host):
        while host is not None:
            if self._pinned.get(id(host)) is host:
                return True
            host = host.base if isinstance(host, np.ndarray) else None
        return False

    new_stream = StandinStream
    new_event = StandinEvent
