"""Tensor's conversions: to Python numbers (item, __float__, __int__, __complex__, __bool__,
__index__, __format__), to Python sequences (tolist, __len__, __iter__, __contains__) and to
host and NumPy arrays (_host, numpy, __array__).

Attached to Tensor by ember/_tensor.py when it has defined the class.
"""
import builtins
import warnings

import numpy as np

from . import _dtype as dt
from . import backends
from ._tensor import Tensor


def _warn_scalar():
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                  "unexpected behavior.\nConsider using tensor.detach() first.", UserWarning,
                  stacklevel=3)


def item(self):
    if self._data.size != 1:
        raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                           "to Scalar")
    value = self._host().reshape(()).item()
    if self.dtype is dt.bfloat16:
        return builtins.float(value)
    return value


def tolist(self):
    a = self._host()
    if self.dtype is dt.bfloat16:
        a = a.astype(np.float32)
    return a.tolist()


def __float__(self):
    if self._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    if self._requires_grad:
        _warn_scalar()
    value = self.item()
    if type(value) is builtins.complex:
        raise RuntimeError("value cannot be converted to type double without overflow")
    return builtins.float(value)


def __int__(self):
    if self._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    value = self.item()
    if type(value) is builtins.complex:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return builtins.int(value)


def __complex__(self):
    if self._requires_grad:
        _warn_scalar()
    return builtins.complex(self.item())


def __bool__(self):
    if self._data.size != 1:
        what = "no values" if self._data.size == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return builtins.bool(self.item())


def __index__(self):
    if self.dtype.category > dt.INTEGER or self._data.size != 1:
        raise TypeError("only integer tensors of a single element can be converted to an "
                        "index")
    return builtins.int(self.item())


def __len__(self):
    if self._data.ndim == 0:
        raise TypeError("len() of a 0-d tensor")
    return self._data.shape[0]


def __iter__(self):
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))   # (the op, bound on Tensor by ops/)


def __contains__(self, element):
    if isinstance(element, (Tensor, builtins.int, builtins.float, builtins.complex,
                            np.number, np.bool_)):
        return builtins.bool((self == element).any())
    raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you passed "
                       f"in a {type(element)}.")


def __format__(self, spec):
    # PyTorch: a plain 0-dim tensor formats as its Python number (f"{t}" gives "1.5");
    # anything else is its str, and a format spec then raises TypeError.
    if self._data.ndim == 0 and type(self) is Tensor:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


def _host(self):
    if self._device.type == "cpu":
        return self._data
    return backends.to_host(self._device, self._data)


def numpy(self, *, force=False):
    """The array itself (shared memory); `force=True` also detaches and copies to the
    host. bfloat16 raises, as NumPy has no such dtype in PyTorch's eyes."""
    if self.dtype is dt.bfloat16:
        raise TypeError("Got unsupported ScalarType BFloat16")
    if force:
        return self._host()
    if self._requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if self._device.type != "cpu":
        raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                        "Tensor.cpu() to copy the tensor to host memory first.")
    return self._data


def __array__(self, dtype=None, copy=None):
    # NOTE: np.asarray(t) shares memory and raises where t.numpy() does (requires grad,
    # not on the CPU), as in PyTorch.
    a = self.numpy()
    if dtype is not None:
        a = a.astype(dtype, copy=builtins.bool(copy))
    elif copy:
        a = a.copy()
    return a


for _method in (item, tolist, __float__, __int__, __complex__, __bool__, __index__, __len__,
                __iter__, __contains__, __format__, _host, numpy, __array__):
    setattr(Tensor, _method.__name__, _method)
