"""torch.autograd.profiler: the original profiler API, on ember.profiler's recorder."""
from ..profiler.activities import DeviceType, ProfilerActivity  # noqa: F401
from ..profiler.events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..profiler.session import profile, record_function

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg", "kineto_available", "EnforceUnique",
           "KinetoStepTracker"]


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


class EnforceUnique:
    """Raises if a key is seen twice."""

    def __init__(self):
        self.seen = set()

    def see(self, *key):
        if key in self.seen:
            raise RuntimeError("duplicate key: " + str(key))
        self.seen.add(key)


class KinetoStepTracker:
    """One global step count shared by several requesters (a profiler, optimizers): each
    keeps its own count, and the global step is the furthest any of them has reached."""

    _step_dict = {}
    _current_step = 0

    @classmethod
    def init_step_count(cls, requester):
        cls._step_dict[requester] = cls._current_step

    @classmethod
    def erase_step_count(cls, requester):
        return cls._step_dict.pop(requester, None) is not None

    @classmethod
    def increment_step(cls, requester):
        if requester not in cls._step_dict:
            cls.init_step_count(requester)
        cls._step_dict[requester] += 1
        cls._current_step = max(cls._current_step, max(cls._step_dict.values()))
        return cls._current_step

    @classmethod
    def current_step(cls):
        return cls._current_step
