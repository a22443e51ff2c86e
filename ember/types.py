"""ember.types (torch.types): the type aliases PyTorch's annotations use.

ember has no symbolic shapes, so the "int-like" aliases are the plain Python types and
`py_sym_types` is empty (an isinstance check against it is always False, as it is in
PyTorch for every value that is not symbolic)."""
import os
from typing import IO, Union

from ._device import device as _device
from ._size import Size
from ._tensor import Tensor

__all__ = ["Number", "Device", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType",
           "Storage", "Size", "Tensor", "py_sym_types"]

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
IntLikeType = int
FloatLikeType = float
BoolLikeType = bool
py_sym_types = ()


class Storage:
    """The interface every storage class offers, for annotations (ember's are
    ember.storage.UntypedStorage and TypedStorage)."""

    _cdata: int
    device: _device
    dtype: object
    _torch_load_uninitialized: bool
