"""Pinning batches (DataLoader(pin_memory=True)): each tensor of a batch, however nested,
copied into page-locked host memory, so that `.cuda(non_blocking=True)` can overlap."""
import collections.abc

from ..._tensor import Tensor


def pin_memory(data):
    """`data` with every tensor in it pinned (mappings, named tuples, sequences, and
    objects with their own `pin_memory()` keep their type)."""
    if isinstance(data, Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        pinned = {k: pin_memory(v) for k, v in data.items()}
        try:
            return type(data)(pinned)
        except TypeError:   # a mapping type that cannot be built from a dict
            return pinned
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # a named tuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, tuple):
        return tuple(pin_memory(v) for v in data)
    if isinstance(data, collections.abc.Sequence):
        items = [pin_memory(v) for v in data]
        try:
            return type(data)(items)
        except TypeError:
            return items
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
