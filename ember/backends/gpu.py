"""What every 'cuda' backend shares (CuPy's, and the NumPy stand-in used by ember's tests):
device indices, the current device, the ordinal check and the out-of-memory message.

A subclass supplies the hardware: `device_count`, `properties`, `_use` (make a device
current), `from_host`/`to_host`, `memory`, `synchronize`, `empty_cache`, `pin`/`is_pinned`,
`new_stream`/`new_event`, `oom_errors` and `runtime_version`.
"""
import contextlib

from . import Backend, current_gpu

_ORDINAL_TEXT = ("CUDA error: invalid device ordinal\nCUDA kernel errors might be "
                 "asynchronously reported at some other API call, so the stacktrace below might "
                 "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1")


def _gib(n):
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.2f} MiB"


class GPUBackend(Backend):
    name = "cuda"

    # ------------------------------------------------------------------ device indices
    def check_index(self, index):
        """PyTorch's error for a device index this machine does not have."""
        if index is not None and not 0 <= index < self.device_count():
            raise RuntimeError(_ORDINAL_TEXT)
        return current_gpu.index if index is None else index

    def current_index(self):
        return current_gpu.index

    def set_current(self, index):
        index = self.check_index(index)
        self._use(index)
        current_gpu.index = index

    @contextlib.contextmanager
    def guard(self, index):
        previous = current_gpu.index
        if index is None or index == previous:
            yield
            return
        self.set_current(index)
        try:
            yield
        finally:
            self.set_current(previous)

    # ------------------------------------------------------------------ out of memory
    def out_of_memory(self, exc, index, requested=None):
        """ember.cuda.OutOfMemoryError for a backend's allocation failure `exc`."""
        from ..cuda import OutOfMemoryError   # (cycle: ember.cuda imports ember.backends)
        index = current_gpu.index if index is None else index
        total = self.properties(index)["total_memory"]
        allocated, reserved = self.memory(index)
        tried = f"Tried to allocate {_gib(requested)}. " if requested else ""
        return OutOfMemoryError(
            f"CUDA out of memory. {tried}GPU {index} has a total capacity of {_gib(total)}. "
            f"Of the allocated memory {_gib(allocated)} is allocated by ember, and "
            f"{_gib(reserved - allocated)} is reserved by ember but unallocated. "
            f"({type(exc).__name__}: {exc})")
