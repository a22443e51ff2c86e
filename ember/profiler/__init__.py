"""ember.profiler (torch.profiler): time every op, record_function range, backward node,
DataLoader fetch and optimizer step of a program, and report them as PyTorch's table,
a Chrome/Perfetto trace or TensorBoard trace files.

The op registry's door (`ops.registry.dispatch`) hands each call to the active Recorder;
with no profiler running it costs one check. Ops carry PyTorch's aten names where the two
libraries share an operator (`aten::addmm`, `aten::relu`, `aten::conv2d`...).
"""
from . import itt  # noqa: F401
from .activities import DeviceType, ProfilerActivity, supported_activities  # noqa: F401
from .profile_api import profile, tensorboard_trace_handler
from .schedule import ProfilerAction, schedule
from .session import record_function

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "record_function", "itt", "DeviceType",
           "kineto_available"]


def kineto_available():
    """Whether PyTorch's Kineto tracer is present: ember records through its own door."""
    return False
