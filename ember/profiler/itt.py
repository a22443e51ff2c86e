"""torch.profiler.itt: Intel ITT (VTune) annotations. ember is not linked with ITT:
is_available() is False and the annotation calls say so."""
from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def is_available():
    return False


def _unsupported():
    return RuntimeError("ember does not support Intel ITT (VTune) annotations; "
                        "use ember.profiler.record_function for named ranges")


def range_push(msg):
    raise _unsupported()


def range_pop():
    raise _unsupported()


def mark(msg):
    raise _unsupported()


@contextmanager
def range(msg, *args, **kwargs):
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
