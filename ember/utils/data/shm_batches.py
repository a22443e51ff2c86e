"""Batches from workers to the main process through shared memory.

A worker allocates batch tensors in named segments (collate stacks straight into them), and
sends only descriptors; the main process maps each segment and unlinks its name at once, so
nothing is left behind however the loop ends. Leftovers of killed workers are swept by name.
"""
from ... import _dtype as dt
from ..._tensor import Tensor, _wrap

_owner_pid = None  # set in each worker: the main process's pid, used in segment names


def _shm():
    """ember.multiprocessing.shared_memory, imported on first use: it brings Python's
    multiprocessing, which `import ember` need not pay for."""
    from ...multiprocessing import shared_memory   # (deferred: see the docstring)
    return shared_memory


def set_owner(pid):
    global _owner_pid
    _owner_pid = pid


def shared_empty(shape, dtype):
    """An ember tensor whose storage is a new shared segment named for the main process."""
    array, name = _shm().create_array(shape, dtype.np, _shm().segment_name(_owner_pid))
    t = _wrap(array, dtype)
    t._shm_name = name
    return t


class SharedTensor:
    """A tensor in flight: the segment name, shape and dtype."""

    __slots__ = ("name", "shape", "dtype", "requires_grad")

    def __init__(self, name, shape, dtype, requires_grad):
        self.name, self.shape, self.dtype, self.requires_grad = name, shape, dtype, \
            requires_grad


def pack(data):
    """Replace tensors in a (nested) batch by SharedTensor descriptors (worker side)."""
    if isinstance(data, Tensor):
        name = getattr(data, "_shm_name", None)
        if name is None or not data._data.flags.c_contiguous:
            shared = shared_empty(tuple(data.shape), data.dtype)
            shared._data[...] = data._data
            data, name = shared, shared._shm_name
        return SharedTensor(name, tuple(data.shape), data.dtype.name, data.requires_grad)
    return _map_structure(data, pack)


def unpack(data):
    """Map descriptors back to tensors and unlink the segments (main side)."""
    if isinstance(data, SharedTensor):
        d = dt._BY_NAME[data.dtype]
        t = _wrap(_shm().open_array(data.name, data.shape, d.np, unlink=True), d)
        if data.requires_grad:
            t.requires_grad_(True)
        return t
    return _map_structure(data, unpack)


def discard(data):
    """Unlink the segments of a batch that will never be used (shutdown)."""
    if isinstance(data, SharedTensor):
        _shm().unlink_segment(data.name)
        return None
    _map_structure(data, discard)
    return None


def _map_structure(data, fn):
    if isinstance(data, dict):
        try:
            return type(data)({k: fn(v) for k, v in data.items()})
        except TypeError:
            return {k: fn(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(fn(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(fn(v) for v in data)
    return data
