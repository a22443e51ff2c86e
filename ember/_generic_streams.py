"""torch.Stream and torch.Event: the device-generic stream and event objects
(`torch.Stream()` is the CPU's, `torch.Stream('cuda')` a CUDA one).

On the CPU, work is synchronous: a stream is always idle and an event always complete, and
recording an event raises PyTorch's "cpu backend doesn't support events." A CUDA stream or
event hands each call to ember.cuda's Stream/Event (CuPy's)."""
from . import _names
from ._device import device as device_cls
from ._device import placement
from .cuda.streams import Event as CudaEvent
from .cuda.streams import Stream as CudaStream

__all__ = ["Stream", "Event"]

_NO_EVENTS = "cpu backend doesn't support events."
_TYPE_CODES = {"cpu": 0, "cuda": 1}   # c10::DeviceType, which Stream.device_type reports


def _placed(device):
    return placement(device_cls(device) if isinstance(device, int) else device)


class Stream:
    """A stream of `device` (the default device when None)."""

    def __init__(self, device=None, *, priority=0):
        self.device = _placed(device)
        self._cuda = None
        if self.device.type == "cuda":
            self._cuda = CudaStream(self.device, priority=priority)
        elif self.device.type != "cpu":
            raise RuntimeError(f"PyTorch is not linked with support for {self.device.type} "
                               "devices")

    @property
    def device_type(self):
        return _TYPE_CODES[self.device.type]

    @property
    def device_index(self):
        return -1 if self.device.index is None else self.device.index

    @property
    def stream_id(self):
        return 0 if self._cuda is None else id(self._cuda)

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait_event(self, event):
        if self._cuda is not None:
            self._cuda.wait_event(event._cuda)

    def wait_stream(self, stream):
        if self._cuda is None:
            raise RuntimeError(_NO_EVENTS)
        self._cuda.wait_stream(stream._cuda)

    def record_event(self, event=None):
        if self._cuda is None:
            raise RuntimeError(_NO_EVENTS)
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device and \
            self._cuda == other._cuda

    def __hash__(self):
        return hash((self.device, self.stream_id))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return (f"{_names.MODULE}.Stream device_type={self.device.type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a stream of `device` (the default device when None)."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _placed(device)
        self._timing = enable_timing
        self._cuda = None
        if self.device.type == "cuda":
            self._cuda = CudaEvent(enable_timing, blocking, interprocess)
        elif self.device.type != "cpu":
            raise RuntimeError(f"PyTorch is not linked with support for {self.device.type} "
                               "devices")

    @property
    def event_id(self):
        return 0 if self._cuda is None else id(self._cuda)

    def record(self, stream=None):
        if self._cuda is None:
            raise RuntimeError(_NO_EVENTS)
        self._cuda.record(None if stream is None else stream._cuda)

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait(self, stream=None):
        if self._cuda is not None:
            self._cuda.wait(None if stream is None else stream._cuda)

    def elapsed_time(self, end_event):
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._cuda is None:
            raise RuntimeError(_NO_EVENTS)
        return self._cuda.elapsed_time(end_event._cuda)

    def __repr__(self):
        index = -1 if self.device.index is None else self.device.index
        return (f"{_names.MODULE}.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag=0, event_id={self.event_id}")
