"""The CUDA backend on CuPy (installed lazily by ember.cuda on first use).

CuPy's memory pool is ember's caching allocator (memory statistics come from it), CuPy's
streams and events are ember.cuda's, and pinned host memory comes from CuPy's pinned pool.
"""
import numpy as np

from .. import backends
from . import current_gpu
from .gpu import GPUBackend


class _Stream:
    """A CuPy stream behind ember.cuda.Stream."""

    def __init__(self, index, priority=0):
        import cupy   # (optional: cupy)
        with cupy.cuda.Device(index):
            self.native = cupy.cuda.Stream(non_blocking=True, priority=priority) \
                if priority else cupy.cuda.Stream(non_blocking=True)
        self.index, self.priority = index, priority

    def synchronize(self):
        self.native.synchronize()

    def query(self):
        return self.native.done

    def wait_event(self, event):
        self.native.wait_event(event.native)


class _DefaultStream(_Stream):
    def __init__(self, index):
        import cupy   # (optional: cupy)
        self.native = cupy.cuda.Stream.null
        self.index, self.priority = index, 0


class _Event:
    def __init__(self, enable_timing=False, blocking=False):
        import cupy   # (optional: cupy)
        self.native = cupy.cuda.Event(block=blocking, disable_timing=not enable_timing)

    def record(self, stream):
        self.native.record(stream.native if stream is not None else None)

    def synchronize(self):
        self.native.synchronize()

    def query(self):
        return self.native.done

    def elapsed_ms(self, end):
        import cupy   # (optional: cupy)
        return float(cupy.cuda.get_elapsed_time(self.native, end.native))


class CupyBackend(GPUBackend):
    nccl = True   # 'nccl' process groups run NCCL on these arrays (ember/distributed/_nccl.py)

    def __init__(self, cupy):
        super().__init__()
        self.xp = cupy
        self.oom_errors = (cupy.cuda.memory.OutOfMemoryError,)
        from ..version import _cuda_version   # (cycle: ember.version imports ember)
        self.runtime_version = _cuda_version()
        current_gpu.index = cupy.cuda.runtime.getDevice()

    def device_count(self):
        return self.xp.cuda.runtime.getDeviceCount()

    def properties(self, index):
        p = self.xp.cuda.runtime.getDeviceProperties(index)
        name = p.get("name", b"")
        return {"name": name.decode() if isinstance(name, bytes) else name,
                "major": p["major"], "minor": p["minor"], "total_memory": p["totalGlobalMem"],
                "multi_processor_count": p["multiProcessorCount"]}

    def _use(self, index):
        self.xp.cuda.Device(index).use()

    def from_host(self, host, index=None):
        index = self.check_index(index)
        with self.xp.cuda.Device(index):
            try:
                return self.xp.asarray(host)
            except self.oom_errors as exc:
                raise self.out_of_memory(exc, index, host.nbytes) from None

    def to_host(self, array):
        return self.xp.asnumpy(array)

    def memory(self, index):
        with self.xp.cuda.Device(index):   # CuPy's default pool answers for the current GPU
            pool = self.xp.get_default_memory_pool()
            return pool.used_bytes(), pool.total_bytes()

    def free_memory(self, index):
        with self.xp.cuda.Device(index):
            return self.xp.cuda.runtime.memGetInfo()[0]

    def synchronize(self, index):
        with self.xp.cuda.Device(self.check_index(index)):
            self.xp.cuda.Device().synchronize()

    def empty_cache(self):
        self.xp.get_default_memory_pool().free_all_blocks()
        self.xp.get_default_pinned_memory_pool().free_all_blocks()

    def pin(self, host):
        import cupyx   # (optional: cupy)
        pinned = cupyx.empty_pinned(host.shape, host.dtype)
        np.copyto(pinned, host)
        return pinned

    def is_pinned(self, host):
        runtime = self.xp.cuda.runtime
        try:
            attrs = runtime.pointerGetAttributes(host.ctypes.data)
        except Exception:   # plain pageable memory on older runtimes raises
            return False
        return attrs.type == runtime.memoryTypeHost

    new_stream = _Stream
    new_event = _Event

    def default_stream(self, index):
        return _DefaultStream(index)


def install():
    """Make CuPy the 'cuda' backend (ember.cuda calls this once a GPU is seen)."""
    import cupy   # (optional: cupy)
    if "cuda" in backends.BACKENDS:
        return
    backends._cupy = cupy
    backends.register("cuda", CupyBackend(cupy))
