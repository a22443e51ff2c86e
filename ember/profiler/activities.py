"""What a profiler can observe: ProfilerActivity, DeviceType, supported_activities()."""
import warnings
from enum import Enum

from ..autograd.engine_settings import DeviceType  # noqa: F401  (one enum, as in torch)


class ProfilerActivity(Enum):
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"


def supported_activities():
    """The activities ember's profiler records: CPU only. Ops on CUDA tensors are timed on
    the host like any other op; GPU kernels are not traced."""
    return {ProfilerActivity.CPU}


def cpu_requested(activities):
    """Whether `activities` asks for CPU. Other activities get PyTorch's warning on a machine
    that cannot trace them, and a request left with none fails as in PyTorch."""
    if activities is None:
        return True
    wanted = set()
    for activity in activities:
        if isinstance(activity, dict):
            wanted.update(activity)
        else:
            wanted.add(activity)
    for activity in wanted - {ProfilerActivity.CPU}:
        name = activity.name if isinstance(activity, ProfilerActivity) else str(activity)
        warnings.warn(f"{name} is not available, disabling {name} profiling")
    if ProfilerActivity.CPU not in wanted:
        raise AssertionError("No activities specified for the profiler")
    return True
