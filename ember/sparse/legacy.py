"""torch.sparse.FloatTensor & co.: the legacy typed constructors of sparse COO tensors.
`FloatTensor(2, 3)` is an empty (2, 3) tensor of that dtype; `FloatTensor(indices, values,
size)` is sparse_coo_tensor's (the values keep their own dtype, as PyTorch's do);
`isinstance(x, ember.sparse.FloatTensor)` asks for a sparse COO tensor of that dtype."""
import numbers

from .. import _dtype as dt
from .._device import CPU
from .coo import sparse_coo_tensor, zeros_coo

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor"]


class _SparseTensorType(type):
    def __instancecheck__(cls, obj):
        return getattr(obj, "is_sparse", False) is True and obj.dtype is cls.dtype

    def __call__(cls, *args, device=None):
        if all(isinstance(a, numbers.Integral) for a in args):
            return zeros_coo(tuple(int(a) for a in args), cls.dtype,
                             CPU if device is None else device)
        return sparse_coo_tensor(*args, device=device)


def _legacy(name, dtype):
    return _SparseTensorType(name, (), {"dtype": dtype, "__module__": "ember.sparse"})


FloatTensor = _legacy("FloatTensor", dt.float32)
DoubleTensor = _legacy("DoubleTensor", dt.float64)
HalfTensor = _legacy("HalfTensor", dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dt.bfloat16)
ByteTensor = _legacy("ByteTensor", dt.uint8)
CharTensor = _legacy("CharTensor", dt.int8)
ShortTensor = _legacy("ShortTensor", dt.int16)
IntTensor = _legacy("IntTensor", dt.int32)
LongTensor = _legacy("LongTensor", dt.int64)
