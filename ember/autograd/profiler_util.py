"""torch.autograd.profiler_util: the profiler's result classes (defined in ember.profiler)."""
from ..profiler.activities import DeviceType  # noqa: F401
from ..profiler.events import (EventList, FormattedTimesMixin, FunctionEvent,  # noqa: F401
                               FunctionEventAvg, Interval)

MEMORY_EVENT_NAME = "[memory]"
OUT_OF_MEMORY_EVENT_NAME = "[OutOfMemory]"

__all__ = ["EventList", "FormattedTimesMixin", "FunctionEvent", "FunctionEventAvg", "Interval",
           "MEMORY_EVENT_NAME", "OUT_OF_MEMORY_EVENT_NAME"]
