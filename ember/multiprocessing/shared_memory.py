"""Tensors in POSIX shared memory, named segments that other processes map.

We map segments ourselves (shm_open + mmap) instead of using
multiprocessing.shared_memory.SharedMemory: an ndarray over the mmap keeps the mapping alive
for exactly as long as any view of it lives, and no resource-tracker process is involved.
"""
import atexit
import itertools
import mmap
import os
import weakref

import numpy as np

try:
    import _posixshmem
except ImportError:  # pragma: no cover - non-POSIX platforms
    _posixshmem = None

PREFIX = "ember_"
_counter = itertools.count()
_owned = set()  # segments this process created and must unlink at exit


def segment_name(owner_pid=None):
    """A fresh segment name: ember_<owner pid>_<this pid>_<counter>."""
    owner = os.getpid() if owner_pid is None else owner_pid
    return f"/{PREFIX}{owner}_{os.getpid()}_{next(_counter)}"


def _map(name, size, create):
    flags = os.O_RDWR | ((os.O_CREAT | os.O_EXCL) if create else 0)
    fd = _posixshmem.shm_open(name, flags, mode=0o600)
    try:
        if create:
            os.ftruncate(fd, max(size, 1))
        return mmap.mmap(fd, max(size, 1))
    finally:
        os.close(fd)


def create_array(shape, dtype, name=None):
    """A new zero-filled array in a new shared segment; returns (array, name)."""
    name = name or segment_name()
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    buf = _map(name, count * dtype.itemsize, create=True)
    array = np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)
    return array, name


def open_array(name, shape, dtype, unlink=False):
    """Map an existing segment as an array; with unlink, remove its name at once (the
    mapping stays valid until the array dies)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    buf = _map(name, count * dtype.itemsize, create=False)
    if unlink:
        unlink_segment(name)
    return np.frombuffer(buf, dtype=dtype, count=count).reshape(shape)


def unlink_segment(name):
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass
    _owned.discard(name)


def own(name, holder=None):
    """Unlink `name` when this process exits (or when `holder` is garbage collected)."""
    _owned.add(name)
    if holder is not None:
        weakref.finalize(holder, unlink_segment, name)


def cleanup_prefix(owner_pid):
    """Unlink every segment whose name says it was made for `owner_pid` (leftovers of
    killed workers); /dev/shm is where Linux keeps POSIX shared memory."""
    tag = f"{PREFIX}{owner_pid}_"
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    for n in names:
        if n.startswith(tag):
            unlink_segment("/" + n)


@atexit.register
def _unlink_owned():
    for name in list(_owned):
        unlink_segment(name)
