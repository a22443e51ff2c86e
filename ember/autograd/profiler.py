"""torch.autograd.profiler: the original profiler API, on ember.profiler's recorder."""
from ..profiler.activities import DeviceType, ProfilerActivity  # noqa: F401
from ..profiler.events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..profiler.session import profile, record_function

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg", "kineto_available"]


def kineto_available():
    return False


class emit_nvtx:
    """NVTX ranges for NVIDIA's profilers: ember emits none (it has no CUDA profiler
    integration), so entering an enabled one fails as PyTorch's CPU build does."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise AssertionError("ember does not support NVTX ranges (emit_nvtx): "
                                 "use ember.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False


class emit_itt:
    """ITT ranges for Intel VTune: ember is not linked with ITT."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise RuntimeError("ember does not support Intel ITT (VTune) annotations "
                               "(emit_itt): use ember.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False
