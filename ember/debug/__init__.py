"""ember.debug: the pitfall guard.

Under `guard()` every op passing the registry's door is checked for the traps PyTorch leaves
silent: integer wraparound, overflow to inf, the first nan/inf from finite inputs (forward
and backward), lossy casts, accidental outer-product broadcasting, and gradients that
accumulate over several backward() calls before a step. Each finding names the op, the
dtypes, an example value and the user's own file and line.
"""
import atexit
import functools
import os

from .checks import guard_instrument
from .state import (PitfallError, PitfallWarning, accumulate, accumulating,  # noqa: F401
                    report, state)

__all__ = ["guard", "enable", "disable", "is_enabled", "PitfallWarning", "PitfallError",
           "accumulate", "accumulating", "report"]


def enable(mode="warn", repeat=False):
    """Turn the guard on for the rest of the run (mode 'warn' or 'raise')."""
    if mode not in ("warn", "raise"):
        raise ValueError(f"guard mode must be 'warn' or 'raise', got {mode!r}")
    from ..ops import registry   # (cycle: autograd.node loads this package before the ops)
    state.mode, state.repeat = mode, repeat
    if guard_instrument not in registry.instruments:
        registry.instruments.append(guard_instrument)
    state.enabled = True
    if not state.atexit_registered:
        atexit.register(_report_at_exit)
        state.atexit_registered = True


def disable():
    from ..ops import registry   # (cycle: as in enable)
    if guard_instrument in registry.instruments:
        registry.instruments.remove(guard_instrument)
    state.enabled = False


def is_enabled():
    return state.enabled


class guard:
    """`with ember.debug.guard(mode="warn"):` or `@ember.debug.guard()`."""

    def __init__(self, mode="warn", repeat=False):
        self.mode, self.repeat = mode, repeat
        self.previous = None

    def __enter__(self):
        self.previous = (state.enabled, state.mode, state.repeat)
        enable(self.mode, self.repeat)
        return self

    def __exit__(self, *exc):
        was_enabled, mode, repeat = self.previous
        if was_enabled:
            enable(mode, repeat)
        else:
            disable()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with guard(self.mode, self.repeat):
                return fn(*args, **kwargs)
        return wrapper


def _report_at_exit():
    if state.findings:
        report()


def enable_from_environment():
    mode = os.environ.get("EMBER_GUARD", "").strip().lower()
    if mode in ("warn", "raise"):
        enable(mode)
    elif mode in ("1", "on", "true"):
        enable("warn")
