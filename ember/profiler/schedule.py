"""ProfilerAction and `schedule`: which steps of a training loop a profiler records."""
import warnings
from enum import Enum


class ProfilerAction(Enum):
    """What the profiler does during one step (a schedule's answer for that step)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A step -> ProfilerAction function: skip `skip_first` steps, then cycles of `wait` idle
    steps, `warmup` steps and `active` recorded steps (the last one saves the trace),
    `repeat` cycles (0: forever). With `skip_first_wait` the first cycle has no wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    cycle = wait + warmup + active
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def action(step):
        if step < 0:
            raise AssertionError(f"Step should be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and wait:
            # The first cycle starts at its warmup: as if `wait` idle steps had gone by.
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action
