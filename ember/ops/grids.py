"""Broadcasting and grids: broadcast_shapes, broadcast_tensors, meshgrid, cartesian_prod,
combinations."""
import builtins
from collections.abc import Sequence
import warnings

import numpy as np

from .. import _dtype as dt
from .. import backends
from .._scalars import type_name
from .._tensor import Size, _wrap
from ..backends import array_module
from ._promote import broadcast_error
from .index_ops import index_select
from .registry import check_elements, check_tensor, export
from .shape import stack
from .views import expand, reshape


# ---------------------------------------------------------------------- grids and broadcasting
def _decided(comparison):
    """torch's guard_or_false: a size comparison must give a bool (a NumPy integer's or a
    tensor's does not)."""
    if not isinstance(comparison, builtins.bool):
        raise AssertionError(f"Expected bool, got {type(comparison)}")
    return comparison


@export(method=False)
def broadcast_shapes(*shapes):
    # NOTE: PyTorch's reference implementation, step for step: None is skipped, an int is a
    # 1-d shape, any Sequence (a str too) is a shape, and each size is compared as given, so
    # a str's letters fail on `< 0` with Python's TypeError.
    shapes = [(s,) if isinstance(s, builtins.int) else s for s in shapes if s is not None]
    for s in shapes:
        if not isinstance(s, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a "
                               f"list of ints, got {s}")
    out = [1] * max((len(s) for s in shapes), default=0)
    for i, s in enumerate(shapes):
        for k in range(-1, -1 - len(s), -1):
            if _decided(s[k] == out[k]):
                continue
            if _decided(out[k] == 1):
                if s[k] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                out[k] = s[k]
            if not _decided(s[k] == 1) and out[k] != s[k]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[k]} at "
                                   f"{k}! Mismatching argument at index {i} had {s}; but "
                                   f"expected shape should be broadcastable to {out}")
    return Size(out)


@export(method=False)
def broadcast_tensors(*tensors):
    check_elements(tensors)   # (PyTorch takes the tensors unpacked only, not one list)
    if not tensors:
        return ()
    shape = tuple(tensors[0]._data.shape)
    for t in tensors[1:]:
        other = t._data.shape
        try:
            shape = tuple(array_module(t._data).broadcast_shapes(shape, other))
        except ValueError:
            raise broadcast_error(shape, other) from None
    # PyTorch hands back a tensor that already has the common shape itself.
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


@export(method=False)
def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    check_elements(tensors)
    if indexing is not None and not isinstance(indexing, str):   # (the builtin's parser)
        raise TypeError(f"meshgrid(): argument 'indexing' must be str, not "
                        f"{type_name(indexing)}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    sizes = [t._data.size for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        pos = (1 - i if i < 2 else i) if swap else i
        view = [1] * len(tensors)
        view[pos] = -1
        out.append(expand(reshape(t, view), sizes))
    return tuple(out)


@export(method=False)
def cartesian_prod(*tensors):
    check_elements(tensors)
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, (-1,)) for g in grids], 1)


@export(method=False)
def combinations(input, r=2, with_replacement=False):
    check_tensor("combinations", input)
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(array_module(input._data).zeros((0,), dtype=input.dtype.np), input.dtype,
                     input._device)
    n = input._data.shape[0]
    grid = np.indices((n,) * r).reshape(r, -1)
    steps = np.diff(grid, axis=0)
    keep = (steps >= 0).all(axis=0) if with_replacement else (steps > 0).all(axis=0)
    chosen = grid[:, keep]
    # NOTE: to_device places the indices on input's own GPU (from_host alone: the current one)
    cols = [index_select(input, 0, _wrap(backends.to_device(input._device,
                                                            np.ascontiguousarray(c)),
                                         dt.int64, input._device)) for c in chosen]
    return stack(cols, 1)
