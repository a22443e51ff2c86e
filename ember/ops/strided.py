"""A tensor's storage and strides: as_strided (a view of any geometry over the storage),
new_empty_strided, resize_/resize_as_ (the tensor grows or shrinks over its storage) and the
storage()/untyped_storage() methods. (set_, as_strided_ and as_strided_scatter are in
tensor_storage_methods.py.)"""
import math

import numpy as np

from .. import storage as _storage
from .._inplace import bump_version
from .._tensor import _contiguous_strides
from ..autograd.grad_mode import state
from ..backends import array_module
from ._dims import size_list
from .registry import METHODS, defop, dispatch, export
from .view_inplace import _scatter
from .views import shape_arg


def storage_of(t):
    """`t`'s whole storage as a flat array of t's dtype, and t's offset into it."""
    a = base = t._data
    while getattr(base, "base", None) is not None and (
            hasattr(base.base, "ctypes") or not isinstance(a, np.ndarray)):
        base = base.base
    if base.flags.c_contiguous:
        flat = base.reshape(-1)
    elif base.flags.f_contiguous:
        flat = base.T.reshape(-1)
    else:   # (an owner is dense; this is a guard, not a case PyTorch knows)
        raise RuntimeError("as_strided: the tensor's storage is not dense")
    if flat.dtype != a.dtype:
        flat = flat.view(np.uint8 if isinstance(flat, np.ndarray) else "u1")
        flat = flat[:flat.size - flat.size % a.itemsize].view(a.dtype)
    return flat, t.storage_offset()


def strided_view(flat, size, stride, offset):
    item = flat.itemsize
    strides = [s * item for s in stride]
    if isinstance(flat, np.ndarray):
        # NOTE: not stride_tricks.as_strided: its result's base is a wrapper object, which
        # would end the base chain storage_offset() and later views walk.
        return np.ndarray(size, flat.dtype, buffer=flat, offset=offset * item, strides=strides)
    return array_module(flat).lib.stride_tricks.as_strided(flat[offset:], size, strides)


def _span(size, stride):
    """Elements from the first to the last one a (size, stride) layout touches."""
    return 1 + sum((n - 1) * s for n, s in zip(size, stride))


# PyTorch's messages for a (size, stride) layout a function refuses, by the check that fails
# first: lengths that differ, a negative size, a negative stride.
_LAYOUT_ERRORS = {
    "as_strided": (
        "mismatch in length of strides and shape",
        "Storage size calculation overflowed with sizes={size} and strides={stride}",
        "as_strided: Negative strides are not supported at the moment, got strides: {stride}"),
    "new_empty_strided": (
        "dimensionality of sizes ({ndim}) must match dimensionality of strides ({stride_ndim})",
        "Trying to create tensor with negative dimension {least}: {size}",
        "Storage size calculation overflowed with sizes={size} and strides={stride}"),
}


def _check_layout(fname, size, stride):
    """Raise `fname`'s error for a layout that fails a check (see _LAYOUT_ERRORS)."""
    lengths, negative_size, negative_stride = _LAYOUT_ERRORS[fname]
    if len(size) != len(stride):
        message = lengths
    elif any(s < 0 for s in size):
        message = negative_size
    elif any(s < 0 for s in stride):
        message = negative_stride
    else:
        return
    raise RuntimeError(message.format(size=size_list(size), stride=size_list(stride),
                                      ndim=len(size), stride_ndim=len(stride),
                                      least=min(size, default=0)))


def check_geometry(size, stride, offset, itemsize, storage_items):
    _check_layout("as_strided", size, stride)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + _span(size, stride)
    if need > storage_items:
        raise RuntimeError(f"setStorage: sizes {size_list(size)}, strides {size_list(stride)}"
                           f", storage offset {offset}, and itemsize {itemsize} requiring a "
                           f"storage size of {need * itemsize} are out of bounds for storage "
                           f"of size {storage_items * itemsize}")


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    for name, v in (("size", size), ("stride", stride)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"new_empty_strided(): argument '{name}' (position "
                            f"{1 if name == 'size' else 2}) must be tuple of ints, not "
                            f"{type(v).__name__}")
    size, stride = shape_arg((size,)), shape_arg((stride,))
    _check_layout("new_empty_strided", size, stride)
    buffer = self.new_empty((0 if 0 in size else _span(size, stride),), dtype=dtype,
                            device=device)
    out = buffer   # (its dtype and device; the array becomes the strided one)
    out._data = strided_view(buffer._data, size, stride, 0)
    if requires_grad:
        out.requires_grad_()
    return out


METHODS["new_empty_strided"] = new_empty_strided


@defop("as_strided_view", node="AsStridedBackward0", save=(), view=True)
def _as_strided(a, flat, size, stride, offset, idx):
    return strided_view(flat, size, stride, offset)


@_as_strided.defvjp
def _as_strided_vjp(ctx, g):
    # NOTE: `idx` holds each output element's C-order position in the input, or the input's
    # numel for memory the input does not cover: that extra slot is cut off (PyTorch drops
    # those gradients too); overlapping outputs add up in the scatter.
    shape = ctx.in_meta[0][0]
    n = math.prod(shape)
    full = dispatch(_scatter, (g,), {"idx": ctx.params["idx"], "shape": (n + 1,)})
    return full[:n].reshape(shape)


def _input_positions(t, flat, base, size, stride, offset):
    xp = array_module(flat)
    n = t._data.size
    lin = xp.full(flat.size, n, dtype=xp.int64)
    item = t._data.itemsize
    mine = strided_view(lin, t._data.shape, [s // item for s in t._data.strides], base)
    mine[...] = xp.arange(n, dtype=xp.int64).reshape(t._data.shape)
    return strided_view(lin, size, stride, offset).copy()


@export
def as_strided(input, size, stride, storage_offset=None):
    size, stride = shape_arg((size,)), shape_arg((stride,))
    flat, base = storage_of(input)
    offset = base if storage_offset is None else storage_offset
    check_geometry(size, stride, offset, input._data.itemsize, flat.size)
    idx = None
    if state.enabled and input._requires_grad:
        idx = _input_positions(input, flat, base, size, stride, offset)
    return dispatch(_as_strided, (input,), {"flat": flat, "size": size, "stride": stride,
                                            "offset": offset, "idx": idx})


# ---------------------------------------------------------------------- resize_
def resize_(self, *sizes, memory_format=None):
    """PyTorch's resize_: the tensor becomes contiguous with the new size over its storage
    from its offset on; a larger size takes a new buffer holding the old elements first.
    (In PyTorch other views then follow the grown storage; here they keep the old one.)"""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = shape_arg(sizes)
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    n = math.prod(size)
    flat, offset = storage_of(self)
    if offset + n <= flat.size:
        self._data = strided_view(flat, size, _contiguous_strides(size), offset)
    else:
        xp = array_module(flat)
        grown = xp.zeros(n, dtype=flat.dtype)   # (PyTorch leaves the new elements unset)
        kept = flat[offset:offset + n]
        grown[:kept.size] = kept
        self._data = grown.reshape(size)
    bump_version(self)
    return self


def resize_as_(self, the_template, *, memory_format=None):
    return resize_(self, *the_template.shape)


METHODS.update({"resize_": resize_, "resize_as_": resize_as_})


def untyped_storage(self):
    return _storage.untyped_storage(self)


def storage(self):
    return _storage.storage(self)


METHODS.update({"untyped_storage": untyped_storage, "storage": storage})
