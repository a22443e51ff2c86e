"""Parsing an indexing key as PyTorch does: ints, slices, None and Ellipsis make one basic
NumPy key (a view), then integer and bool tensors, sequences and masks become the advanced
part; the errors for keys PyTorch rejects, and for advanced keys NumPy refused (bounds,
broadcasting), are PyTorch's."""
import builtins
import operator
import warnings

import numpy as np

from .. import _dtype as dt
from .. import backends
from .._scalars import type_name
from .._tensor import Tensor
from ..backends import array_module


_INDEX_DTYPES = (dt.int64, dt.int32)
MASK_DTYPES = (dt.bool, dt.uint8)
FULL = slice(None)


# ---------------------------------------------------------------------- key parsing
def _bad_index(k):
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                      f"Variables are valid indices (got {type_name(k)})")


def _tensor_index_error():
    return IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _index_array(k, device):
    """A list / ndarray / Tensor index as a backend array on `device` (None: an int)."""
    if isinstance(k, Tensor):
        d = k.dtype
        if d in _INDEX_DTYPES:
            if k._data.ndim == 0:
                return None
        elif d is dt.uint8:
            warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                          "dtype torch.bool instead.", UserWarning, stacklevel=4)
            return k._data.astype(bool)
        elif d is not dt.bool:
            raise _tensor_index_error()
        a = k._data
        if k._device != device:
            a = backends.to_device(device, k._host())
        return a
    a = _sequence_index(k)
    if device.type != "cpu":
        a = backends.to_device(device, a)
    return a


def _sequence_index(k):
    """A sequence index (list, range, ndarray, nested lists) as PyTorch's
    indexing_tensor_from_data makes it: a bool mask when its values are bools (or an
    ndarray's uint8), else int64, floats truncated toward zero."""
    if isinstance(k, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(k, list):
        # (a tensor inside a list index is read through __index__: one integer element)
        k = [operator.index(e) if isinstance(e, Tensor) else e for e in k]
    try:
        a = np.asarray(k)
    except ValueError:   # a ragged list
        raise _ragged_error(k) from None
    kind = a.dtype.kind
    if kind == "b":
        return a
    if kind == "u" and a.dtype.itemsize == 1 and isinstance(k, np.ndarray):
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a "
                      "dtype torch.bool instead.", UserWarning, stacklevel=5)
        return a.astype(bool)
    if kind in "iuf":
        return a if a.dtype == np.int64 else a.astype(np.int64)
    if kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    if isinstance(k, np.ndarray):
        raise TypeError(f"can't convert np.ndarray of type numpy.{a.dtype.type.__name__}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.")
    if kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    raise _bad_index(k)


def _ragged_error(k):
    """PyTorch's error for a nested list whose rows differ in length."""
    lengths = [len(e) if isinstance(e, (list, tuple, range)) else None for e in k]
    for n in lengths[1:]:
        if n != lengths[0]:
            return ValueError(f"expected sequence of length {lengths[0]} at dim 1 (got {n})")
    return ValueError("the index's nested sequences differ in length")


# Index elements PyTorch converts to an index tensor (any Python sequence but a tuple).
_SEQUENCES = (list, range, np.ndarray, str)
_ARRAY_KEYS = (Tensor, tuple) + _SEQUENCES   # the elements _index_array converts


def _is_legacy_sequence(key):
    """PyTorch's treatSequenceAsTuple for a list key: x[[0, [1]]] means x[0, [1]] when an
    element is itself a sequence, a slice, None, ... or a Tensor (fewer than 32 of them)."""
    if len(key) >= 32:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (slice, tuple, Tensor) + _SEQUENCES):
            return True
    return False


def parse_key(self, key):
    """Split `key` into (basic, kind, adv).

    basic: a NumPy basic key ending in Ellipsis; kind: the grad_fn of that view ('select',
    'slice', 'unsqueeze', 'alias') or None when the view would be the tensor itself;
    adv: None or the advanced key (arrays and full slices) applied to the view.
    """
    # NOTE: every x[...] runs this: ints, slices, None and ... stay inline, and the helpers
    # are called once per key or only for the rarer elements (each call costs ~2% of x[1:3, 0]).
    if type(key) is not tuple:
        key = _sequence_key(key) if isinstance(key, (tuple, list)) else (key,)
    shape = self._data.shape
    items, consumed = [], 0   # the elements as ints, slices, None, ... and index arrays
    for k in key:
        tk = type(k)
        if tk is int:
            items.append(k)
            consumed += 1
        elif tk is slice or k is None or k is Ellipsis:
            items.append(k)
            consumed += tk is slice
        elif isinstance(k, _ARRAY_KEYS):
            a = _index_array(k, self._device)
            if a is None:   # a 0-d integer tensor: an int
                items.append(builtins.int(k.item()))
                consumed += 1
            else:
                items.append(a)
                consumed += a.ndim if a.dtype == bool else 1
        else:
            k, n = _scalar_item(k, self._device)
            items.append(k)
            consumed += n
    if consumed > len(shape):
        raise _too_many_indices(len(shape))
    return _split_items(items, shape, consumed)


def _sequence_key(key):
    """A tuple subclass or a list key as the tuple of indices it stands for."""
    if isinstance(key, tuple):   # a torch.Size or a named tuple: a tuple of indices
        return tuple(key)
    if _is_legacy_sequence(key):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is "
                      "deprecated; use x[tuple(seq)] instead of x[seq].", UserWarning,
                      stacklevel=4)
        return tuple(key)
    return (key,)


def _scalar_item(k, device):
    """(index, dims consumed) of a bool (a 0-d mask, on the tensor's device) or of an object
    with __index__; PyTorch's error for anything else."""
    if type(k) is builtins.bool:   # (np.bool_ is not an index in PyTorch)
        mask = np.asarray(k)
        return (mask if device.type == "cpu" else backends.to_device(device, mask)), 0
    if isinstance(k, np.integer) or (hasattr(k, "__index__") and
                                     not isinstance(k, (float, complex, np.bool_))):
        return k.__index__(), 1
    raise _bad_index(k)


def _too_many_indices(ndim):
    """PyTorch's error for a key that indexes more dims than the tensor's `ndim`."""
    if ndim == 0:
        return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                          "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    return IndexError(f"too many indices for tensor of dimension {ndim}")


def _split_items(items, shape, consumed):
    """parse_key's (basic, kind, adv) from the key's elements; `consumed`: the dims they index,
    the Ellipsis aside."""
    basic, adv, vshape = [], [], []   # vshape: the shape of the basic view so far
    dim, kind, has_adv, ellipsis_seen = 0, None, False, False
    for k in items:
        tk = type(k)
        if tk is int:
            size = shape[dim]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            basic.append(k)
            dim += 1
            kind = "select"
        elif tk is slice:
            size = shape[dim]
            k = _check_slice(k)
            basic.append(k)
            adv.append(FULL)
            start, stop, step = k.indices(size)
            vshape.append(len(range(start, stop, step)))
            if start != 0 or stop != size or step != 1:
                kind = "slice"
            dim += 1
        elif k is None:
            basic.append(None)
            adv.append(FULL)
            vshape.append(1)
            kind = "unsqueeze"
        else:   # an Ellipsis or an index array: n whole dims of the basic view
            if k is Ellipsis:
                n = 0 if ellipsis_seen else len(shape) - consumed
                ellipsis_seen = True
                adv.extend((FULL,) * n)
            else:
                has_adv = True
                n = 1 if k.dtype != bool else _mask_dims(k, vshape, shape, dim)
                adv.append(k)
            basic.extend((FULL,) * n)
            vshape.extend(shape[dim:dim + n])
            dim += n
    basic.append(Ellipsis)
    if len(items) == 1 and type(items[0]) is slice:
        kind = "slice"  # PyTorch's single-slice fast path always records a slice
    elif kind is None and not has_adv:
        kind = "alias"
    return tuple(basic), kind, (_trim_full_slices(adv) if has_adv else None)


def _mask_dims(mask, vshape, shape, dim):
    """The number of dims a bool mask indexes, checked against the view's dims from there on
    (vshape: the basic view's dims so far, then those of `shape` from `dim`)."""
    if mask.ndim:
        _check_mask(mask, vshape + list(shape[dim:]), len(vshape))
    return mask.ndim


def _trim_full_slices(adv):
    """The advanced key as a tuple, without the full slices that end it."""
    while adv and type(adv[-1]) is slice:
        adv.pop()
    return tuple(adv)


def _slice_int(v):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ "
                        "method") from None


def _check_slice(k):
    start, stop, step = k.start, k.stop, k.step
    if step is not None:
        step = _slice_int(step)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        if step < 0:
            raise ValueError("step must be greater than zero")
    if (start is not None and type(start) is not int) or \
            (stop is not None and type(stop) is not int):
        start = None if start is None else _slice_int(start)
        stop = None if stop is None else _slice_int(stop)
        return slice(start, stop, step)
    return k


def _check_mask(mask, shape, dim):
    for j, s in enumerate(mask.shape):
        if dim + j >= len(shape) or shape[dim + j] != s:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not "
                             f"match the shape of the indexed tensor {shape} at index "
                             f"{dim + j}")


def advanced_error(shape, key):
    """PyTorch's message for an advanced key NumPy rejected (bounds or broadcasting)."""
    arrays = [k for k in key if type(k) is not slice and k.dtype != bool]
    try:
        array_module(*arrays).broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        shapes = ", ".join(str(list(a.shape)) for a in arrays)
        return IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                          f"with shapes {shapes}")
    dim = pos = 0
    for k in key:
        if type(k) is slice:
            dim += 1
            continue
        if k.dtype == bool:
            dim += k.ndim
            pos += 1
            continue
        size = shape[dim]
        bad = k[(k < -size) | (k >= size)]
        if bad.size:
            if size == 0:
                return IndexError("index is out of bounds for dimension with size 0")
            return IndexError(f"index {builtins.int(bad.reshape(-1)[0])} is out of bounds for "
                              f"dimension {pos} with size {size}")
        dim += 1
        pos += 1
    return IndexError("index out of range")
