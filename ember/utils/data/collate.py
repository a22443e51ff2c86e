"""default_collate / default_convert: samples -> batches (tensors stacked)."""
import collections.abc
import re

import numpy as np

from ... import _creation
from ..._dtype import float64
from ..._tensor import Tensor
from ...ops.shape import stack
from .shm_batches import shared_empty
from .worker import get_worker_info

__all__ = ["default_collate", "default_convert"]

_NP_STR = re.compile(r"[SaUO]")


def default_convert(data):
    """NumPy arrays and scalars inside `data` become tensors; the structure is kept."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and not _NP_STR.search(data.dtype.str):
        return _creation.as_tensor(data)
    if isinstance(data, np.generic) and not _NP_STR.search(data.dtype.str):
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack(batch):
    """Stack tensors into one batch; inside a worker, straight into shared memory."""
    first = batch[0]
    if get_worker_info() is not None and all(
            t.shape == first.shape and t.dtype is first.dtype for t in batch):
        out = shared_empty((len(batch),) + tuple(first.shape), first.dtype)
        np.stack([t._data for t in batch], out=out._data)
        return out
    return stack(batch, 0)


def default_collate(batch):
    """Stack tensors/arrays/numbers along a new first dim; recurse into mappings and
    sequences; strings stay lists."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if isinstance(elem, np.ndarray) and not _NP_STR.search(elem.dtype.str):
        return _stack([_creation.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and not _NP_STR.search(elem.dtype.str):
        return _creation.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return _creation.tensor(batch)
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=float64)
    if isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(s) for s in transposed]
        try:
            return type(elem)([default_collate(s) for s in transposed])
        except TypeError:
            return [default_collate(s) for s in transposed]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem)}")
