"""CUDA streams and events (torch.cuda.Stream, Event, stream(), current_stream()).

Each wraps the backend's own object (CuPy's stream and event; the stand-in's synchronous
ones), so work queued by CuPy kernels is ordered and timed by these.
"""
from .._device import device as _device_cls

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
           "set_stream"]

_current = {}    # device index -> the Stream made current by `stream()` / `set_stream`
_defaults = {}   # device index -> its default Stream


def _backend_and_index(device):
    from . import _backend, _index   # (cycle: ember.cuda imports this module first)
    backend = _backend()
    return backend, backend.check_index(_index(device))


class Stream:
    """A queue of GPU work on one device; `priority` lower is more urgent."""

    def __init__(self, device=None, priority=0, _native=None):
        backend, index = _backend_and_index(device)
        self._native = _native if _native is not None else backend.new_stream(index, priority)
        self.device_index = index
        self.priority = priority

    @property
    def device(self):
        return _device_cls("cuda", self.device_index)

    @property
    def cuda_stream(self):
        native = getattr(self._native, "native", None)
        return getattr(native, "ptr", id(self._native))

    def wait_event(self, event):
        self._native.wait_event(event._native)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self):
        return self._native.query()

    def synchronize(self):
        self._native.synchronize()

    def __eq__(self, other):
        return isinstance(other, Stream) and self._native is other._native

    def __hash__(self):
        return hash(id(self._native))

    def __repr__(self):
        return (f"<ember.cuda.Stream device=cuda:{self.device_index} "
                f"cuda_stream={hex(self.cuda_stream)}>")


class Event:
    """A marker in a stream: record it, wait on it, time between two of them."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        from . import _backend   # (cycle: ember.cuda imports this module first)
        self._native = _backend().new_event(enable_timing, blocking)
        self.enable_timing = enable_timing
        self._recorded = False

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        self._native.record(stream._native)
        self._recorded = True

    def wait(self, stream=None):
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        return self._native.query()

    def synchronize(self):
        self._native.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, with timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return self._native.elapsed_ms(end_event._native)

    def __repr__(self):
        return "<ember.cuda.Event initialized>" if self._recorded else \
            "<ember.cuda.Event uninitialized>"


def default_stream(device=None):
    backend, index = _backend_and_index(device)
    found = _defaults.get(index)
    if found is None:
        native = backend.default_stream(index) if hasattr(backend, "default_stream") else None
        found = _defaults[index] = Stream(index, _native=native)
    return found


def current_stream(device=None):
    _, index = _backend_and_index(device)
    return _current.get(index) or default_stream(index)


def set_stream(stream):
    """Make `stream` current on its device."""
    if stream is None:
        return
    _current[stream.device_index] = stream
    native = getattr(stream._native, "native", None)
    if native is not None:
        native.use()


class StreamContext:
    """`with ember.cuda.stream(s):` queues work on `s` (None selects nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self.previous = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.previous = current_stream(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.previous)
        return False


def stream(stream):
    return StreamContext(stream)
