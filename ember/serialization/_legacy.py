"""PyTorch's legacy (pre-1.6, non-zip) checkpoint format: read only."""
import pickle
import struct

import numpy as np

from .._device import CPU

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001


def load_legacy(f, make_unpickler, place):
    """Read the magic, protocol and sys-info pickles, the object (its storages allocated
    empty as they are met), the storage key list, then fill each storage in place from its
    raw data (an int64 element count, then the bytes)."""
    def read_pickle(persistent_load=None):
        return make_unpickler(f, persistent_load).load()

    try:
        magic = read_pickle()
    except Exception:
        raise RuntimeError("Invalid magic number; corrupt file?") from None
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = read_pickle()
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    read_pickle()  # sys_info
    roots = {}

    def persistent_load(pid):
        kind, storage_type, key, location, numel, view = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id kind {kind!r}")
        d = storage_type.dtype
        if key not in roots:
            roots[key] = np.empty(numel, dtype=d.np)
        array = roots[key]
        # NOTE: the storages are filled only after the object is unpickled, so legacy
        # checkpoints load on the CPU (a mapped location is still checked).
        place(location, array, d)
        if view is not None:
            _, offset, size = view
            array = array[offset:offset + size]
        return array, d, CPU

    result = read_pickle(persistent_load)
    keys = read_pickle()
    for key in keys:
        (numel,) = struct.unpack("<q", f.read(8))
        target = roots[key]
        view = memoryview(target).cast("B")
        if numel != target.size or f.readinto(view) != len(view):
            raise RuntimeError("the legacy checkpoint is truncated or corrupt")
    return result
