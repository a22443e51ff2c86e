"""The guard's state, its findings, reporting, and the user's source line."""
import contextlib
import os
import sys
import warnings


class PitfallWarning(UserWarning):
    """A silent numerical or training pitfall found by ember.debug.guard."""


class PitfallError(RuntimeError):
    """Raised instead of PitfallWarning in guard(mode="raise")."""


class _State:
    enabled = False
    mode = "warn"
    repeat = False
    atexit_registered = False
    in_check = False
    declared_accumulation = 1   # backward() calls per step the user declared
    accumulating_depth = 0

    def __init__(self):
        self.findings = {}  # (kind, op, file, line) -> [count, message]


state = _State()
_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP = (_EMBER_DIR, os.path.dirname(contextlib.__file__))


def user_frame():
    """(file, line) of the innermost caller outside ember and the standard library."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(_SKIP) and not name.startswith("<frozen"):
            return name, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def report_pitfall(kind, op_name, message, where=None):
    """Warn (or raise) once per (kind, op, source line) unless repeat=True."""
    file, line = where or user_frame()
    key = (kind, op_name, file, line)
    entry = state.findings.get(key)
    if entry is not None:
        entry[0] += 1
        if not state.repeat:
            return
    else:
        state.findings[key] = [1, message]
    text = f"[{kind}] {message}\n  at {file}:{line}"
    if state.mode == "raise":
        raise PitfallError(text)
    warnings.warn_explicit(text, PitfallWarning, file, line)


def report(file=None):
    """Print (and return) the summary table of everything the guard found."""
    rows = [f"{'count':>5}  {'pitfall':<16} {'op':<14} where"]
    for (kind, op, f, line), (count, _) in sorted(state.findings.items(),
                                                  key=lambda kv: -kv[1][0]):
        rows.append(f"{count:5d}  {kind:<16} {op:<14} {f}:{line}")
    text = "ember.debug guard report\n" + "\n".join(rows)
    print(text, file=file or sys.stderr)
    return text


def accumulate(n):
    """Declare that gradients are meant to accumulate over n backward() calls per step."""
    state.declared_accumulation = max(1, int(n))


@contextlib.contextmanager
def accumulating():
    """Inside this block, several backward() calls before a step are intended."""
    state.accumulating_depth += 1
    try:
        yield
    finally:
        state.accumulating_depth -= 1
