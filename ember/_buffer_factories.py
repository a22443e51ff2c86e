"""Factories over memory ember does not allocate itself: frombuffer (any object with the
buffer protocol, shared), from_file (a file's bytes, memory-mapped when shared), and
empty_permuted (an uninitialised tensor whose memory is laid out in a given dim order)."""
import os
import warnings

import numpy as np

from . import _dtype as dt
from ._creation import _finish, empty, from_numpy
from ._device import placement
from ._dlpack import _writable

__all__ = ["frombuffer", "from_file", "empty_permuted"]

_READONLY_WARNED = []


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor sharing `buffer`'s memory: `count` elements of `dtype` from byte
    `offset` (-1: all that remain)."""
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    size = dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _READONLY_WARNED:
        _READONLY_WARNED.append(True)
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to "
                      "copy the buffer to protect its data or make it writable before "
                      "converting it to a tensor. This type of warning will be suppressed for "
                      "the rest of this program.", UserWarning, stacklevel=2)
    flat = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * size, offset=offset)
    t = from_numpy(_writable(flat.view(dtype.np)))   # as PyTorch: writable, with the warning
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """`size` elements of `dtype` read from `filename`; with shared=True the tensor maps the
    file, and writes to it reach the file."""
    dtype = dt.get_default_dtype() if dtype is None else dtype
    needed = size * dtype.itemsize
    actual = os.path.getsize(filename)
    if needed > actual:
        raise RuntimeError(f"file <{filename}> size <{actual}> is smaller than the required "
                           f"mapping size <{needed}>")
    if size == 0:
        array = np.empty(0, dtype.np)
    elif shared:
        array = np.memmap(filename, dtype=dtype.np, mode="r+", shape=(size,))
    else:
        array = np.fromfile(filename, dtype=dtype.np, count=size)
    # NOTE: not one of the factories PyTorch's default device applies to: cpu unless asked
    target = placement("cpu" if device is None else device)
    t = from_numpy(np.asarray(array)) if target.type == "cpu" else \
        _finish(np.asarray(array), dtype, target, False)
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """empty(size) whose memory order is `physical_layout` (outermost dim first):
    empty_permuted((2, 3, 4), (2, 0, 1)) has strides (3, 1, 6)."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; i.e. len(size) = "
                           f"{len(size)} is not equal to len(physical_layout) = {len(order)}")
    if len(set(order)) != len(order) or any(not 0 <= p < len(order) for p in order):
        raise RuntimeError("Duplicate dim not allowed")
    physical = empty(*[size[p] for p in order], dtype=dtype, device=device,
                     requires_grad=False)
    inverse = [order.index(d) for d in range(len(order))]
    t = physical.permute(*inverse)
    if requires_grad:
        t.requires_grad_(True)
    return t

