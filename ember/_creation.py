"""Tensor constructors: tensor, as_tensor, from_numpy, zeros/ones/empty/full (+ _like),
arange, linspace, logspace, eye, and the legacy typed constructors (FloatTensor, ...)."""
import builtins
import math
import warnings

import numpy as np

from . import _dtype as dt
from . import backends
from ._device import as_device
from ._tensor import Size, Tensor, _wrap

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
           "logspace", "eye", "scalar_tensor", "empty_strided", "FloatTensor", "DoubleTensor",
           "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "is_tensor", "numel", "complex",
           "polar"]


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def _finish(array, dtype, device, requires_grad):
    """Move a host array to `device` and wrap it; the end of every constructor."""
    if device.type != "cpu":
        array = backends.get(device.type).from_host(array)
    t = _wrap(array, dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(array):
    """PyTorch's dtype for data given as Python numbers (floats take the default dtype)."""
    kind = array.dtype.kind
    if kind == "b":
        return dt.bool
    if kind in "iu":
        return dt.int64
    if kind == "f":
        return dt.get_default_dtype()
    if kind == "c":
        return dt.default_complex()
    raise TypeError(f"Could not infer dtype of {array.dtype}")


def _flatten_tensors(data):
    """Replace Tensors nested in lists by Python numbers or lists (`tensor([t1, t2])`)."""
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_flatten_tensors(x) for x in data]
    return data


def _ragged_error(data, dim=0):
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], (list, tuple)):
        n = len(data[0])
        for x in data[1:]:
            if not isinstance(x, (list, tuple)) or len(x) != n:
                got = len(x) if isinstance(x, (list, tuple)) else type(x).__name__
                return ValueError(f"expected sequence of length {n} at dim {dim + 1} "
                                  f"(got {got})")
        for x in data:
            err = _ragged_error(x, dim + 1)
            if err:
                return err
    return None


def _data_to_array(data, dtype):
    """A NumPy array holding `data` (copied), and the ember dtype PyTorch would give it."""
    if isinstance(data, Tensor):
        array, inferred = data._host(), data.dtype
    elif isinstance(data, np.ndarray):
        array, inferred = data, dt.from_numpy_dtype(data.dtype)
    elif isinstance(data, np.generic):
        array, inferred = np.asarray(data), dt.from_numpy_dtype(data.dtype)
    else:
        if isinstance(data, (list, tuple)):
            data = _flatten_tensors(data)
        elif not isinstance(data, (builtins.bool, builtins.int, builtins.float,
                                   builtins.complex)):
            if hasattr(data, "__array__"):
                return _data_to_array(np.asarray(data), dtype)
            if hasattr(data, "__len__") and hasattr(data, "__getitem__"):
                data = [data[i] for i in builtins.range(len(data))]
                return _data_to_array(data, dtype)
            raise TypeError(f"Could not infer dtype of {type(data).__name__}")
        try:
            array = np.array(data)
        except ValueError:
            raise _ragged_error(data) or ValueError("ragged nested sequence") from None
        except OverflowError:
            raise RuntimeError("Overflow when unpacking long") from None
        if array.dtype == object:
            raise _ragged_error(data) or TypeError(f"Could not infer dtype of {data!r}")
        inferred = _infer_dtype(array)
    dtype = inferred if dtype is None else dtype
    return _cast(array, dtype), dtype


def _cast(array, dtype):
    if array.dtype == dtype.np:
        return np.array(array, copy=True)
    if array.dtype.kind == "c" and dtype.category < 3:
        array = array.real
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NOTE: -1 into uint8 wraps to 255, as in PyTorch
        if dtype.category == 1 and array.dtype.kind in "iu":
            return array.astype(np.int64).astype(dtype.np)
        return array.astype(dtype.np)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (numbers, nested sequences, arrays, tensors)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
            "requires_grad_(True), rather than torch.tensor(sourceTensor).", UserWarning,
            stacklevel=2)
    array, dtype = _data_to_array(data, dtype)
    return _finish(array, dtype, as_device(device) if device is not None else
                   (data._device if isinstance(data, Tensor) else as_device(None)),
                   requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or dt.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, sharing memory when no copy is needed (ndarrays, tensors)."""
    dev = as_device(device) if device is not None else None
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data.dtype) and (dev is None or dev == data._device):
            return data
        return data.to(device=dev or data._device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        try:
            src = dt.from_numpy_dtype(data.dtype)
        except TypeError:
            src = None
        if src is not None and (dtype is None or dtype is src) and _positive_strides(data):
            return _wrap(data, src)
    return tensor(data, dtype=dtype, device=dev)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        t = tensor(obj, dtype=dtype, device=device) if not isinstance(obj, Tensor) else \
            obj.to(dtype=dtype or obj.dtype, device=device or obj.device, copy=True)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _positive_strides(a):
    return all(s >= 0 for s in a.strides)


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not _positive_strides(ndarray):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around "
            "this by making a copy of your array  with array.copy().) ")
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior.", UserWarning, stacklevel=2)
    return _wrap(ndarray, dt.from_numpy_dtype(ndarray.dtype))


def _size_args(size):
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean shape (2, 3)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    shape = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.__index__()
        if not isinstance(s, (builtins.int, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__}")
        shape.append(builtins.int(s))
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{shape}")
    return tuple(shape)


def _filled(shape, value, dtype, device, requires_grad, out=None):
    dtype = dtype or dt.get_default_dtype()
    device = as_device(device)
    xp = backends.get(device.type).xp
    if value is None:
        array = xp.empty(shape, dtype=dtype.np)
    elif value == 0:
        array = xp.zeros(shape, dtype=dtype.np)
    else:
        array = xp.full(shape, value, dtype=dtype.np)
    t = _wrap(array, dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    if out is not None:
        from ._tensor import write_out
        return write_out(t, out)
    return t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    return _filled(_size_args(size), 0, dtype, device, requires_grad, out)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    return _filled(_size_args(size), 1, dtype, device, requires_grad, out)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _filled(_size_args(size), None, dtype, device, requires_grad, out)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    return _filled(_size_args((size,)), None, dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if dtype is None:
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        dtype = dt.scalar_dtype(fill_value)
    return _filled(_size_args((size,)), _wrap_scalar(fill_value, dtype), dtype, device,
                   requires_grad, out)


def _wrap_scalar(value, dtype):
    """A Python number as a value of `dtype` (ints wrap around as PyTorch's casts do)."""
    if isinstance(value, Tensor):
        value = value.item()
    if dtype.category == 1 and isinstance(value, (builtins.int, np.integer)) and \
            not isinstance(value, builtins.bool):
        info = np.iinfo(dtype.np)
        span = builtins.int(info.max) - builtins.int(info.min) + 1
        return (builtins.int(value) - builtins.int(info.min)) % span + builtins.int(info.min)
    return value


def _like(input, dtype, device, requires_grad, value):
    return _filled(input._data.shape, value, dtype or input.dtype,
                   device if device is not None else input._device, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(input, dtype, device, requires_grad, 0)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(input, dtype, device, requires_grad, 1)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like(input, dtype, device, requires_grad, None)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    dtype = dtype or input.dtype
    return _like(input, dtype, device, requires_grad, _wrap_scalar(fill_value, dtype))


def _num(x):
    return x.item() if isinstance(x, Tensor) else x


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values from start to end (exclusive) by step; int64 unless an argument is a float."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is None:
        floats = any(isinstance(v, (builtins.float, np.floating)) for v in (start, end, step))
        dtype = dt.get_default_dtype() if floats else dt.int64
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.max(0, math.ceil((end - start) / step))
    values = start + np.arange(n, dtype=np.float64 if dtype.category >= 2 else np.int64) * step
    return _finish_created(values.astype(dtype.np), dtype, device, requires_grad, out)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release "
                  "because its behavior is inconsistent with Python's range builtin. "
                  "Instead, use torch.arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    n = builtins.int(math.floor((end - start) / step)) + 1
    dtype = dtype or dt.get_default_dtype()
    values = start + np.arange(n, dtype=np.float64) * step
    return _finish_created(values.astype(dtype.np), dtype, device, requires_grad, None)


def _finish_created(array, dtype, device, requires_grad, out):
    t = _finish(array, dtype, as_device(device), requires_grad)
    if out is not None:
        from ._tensor import write_out
        return write_out(t, out)
    return t


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` evenly spaced values from start to end inclusive (PyTorch's two-sided
    formula: the first half counts up from start, the second down from end)."""
    start, end = _num(start), _num(end)
    if not isinstance(steps, (builtins.int, np.integer)) or steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = dtype or (dt.default_complex() if isinstance(start, builtins.complex) or
                      isinstance(end, builtins.complex) else dt.get_default_dtype())
    compute = dtype.np if dtype.category >= 2 else np.float64
    if dtype in (dt.float16, dt.bfloat16):
        compute = np.float32
    if steps == 1:
        values = np.array([start], dtype=compute)
    else:
        i = np.arange(steps)
        half = steps // 2
        s, e = np.asarray(start, compute), np.asarray(end, compute)
        step = (e - s) / np.asarray(steps - 1, compute)
        values = np.where(i < half, s + step * i.astype(compute),
                          e - step * (steps - 1 - i).astype(compute))
    return _finish_created(values.astype(dtype.np), dtype, device, requires_grad, out)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    dtype = dtype or dt.get_default_dtype()
    exps = linspace(start, end, steps, dtype=dt.float64)._data
    values = np.power(np.float64(base), exps)
    return _finish_created(values.astype(dtype.np), dtype, device, requires_grad, out)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    if n < 0 or (m is not None and m < 0):
        raise RuntimeError(f"n must be greater or equal to 0, got {n if n < 0 else m}")
    dtype = dtype or dt.get_default_dtype()
    return _finish_created(np.eye(n, m, dtype=dtype.np), dtype, device, requires_grad, out)


def complex(real, imag, *, out=None):
    from .ops.registry import PUBLIC
    return PUBLIC["_complex"](real, imag)


def polar(abs, angle, *, out=None):
    from .ops.registry import PUBLIC
    return PUBLIC["_complex"](abs * PUBLIC["cos"](angle), abs * PUBLIC["sin"](angle))


# ---------------------------------------------------------------------- legacy constructors
def legacy_new(cls, dtype, args, device):
    """`Tensor(2, 3)`, `FloatTensor([1, 2])`, `LongTensor(size)`, `Tensor(other)`."""
    device = as_device(device)
    if not args:
        return _retype(_finish(np.empty((0,), dtype=dtype.np), dtype, device, False), cls)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not dtype:
            raise TypeError(f"expected {dt.type_name(dtype)} (got {dt.type_name(other.dtype)})")
        return _retype(other.detach(), cls)
    if all(isinstance(a, (builtins.int, np.integer)) and not isinstance(a, builtins.bool)
           for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
        shape = _size_args(args)
        return _retype(_finish(np.zeros(shape, dtype=dtype.np), dtype, device, False), cls)
    if len(args) == 1:
        array, _ = _data_to_array(args[0], dtype)
        return _retype(_finish(array, dtype, device, False), cls)
    raise TypeError(f"new(): invalid arguments {args}")


def _retype(t, cls):
    if cls is Tensor or not isinstance(cls, type) or not issubclass(cls, Tensor):
        return t
    from ._tensor import _as_subclass
    return _as_subclass(t, cls)


class _LegacyTensorType(type):
    """`isinstance(x, ember.FloatTensor)` checks the dtype, as PyTorch's legacy types do."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype


def _legacy_type(name, dtype):
    def new(cls, *args, device=None):
        return legacy_new(Tensor, dtype, args, device)
    return _LegacyTensorType(name, (), {"__new__": new, "dtype": dtype,
                                        "__module__": "ember"})


FloatTensor = _legacy_type("FloatTensor", dt.float32)
DoubleTensor = _legacy_type("DoubleTensor", dt.float64)
HalfTensor = _legacy_type("HalfTensor", dt.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", dt.bfloat16)
LongTensor = _legacy_type("LongTensor", dt.int64)
IntTensor = _legacy_type("IntTensor", dt.int32)
ShortTensor = _legacy_type("ShortTensor", dt.int16)
CharTensor = _legacy_type("CharTensor", dt.int8)
ByteTensor = _legacy_type("ByteTensor", dt.uint8)
BoolTensor = _legacy_type("BoolTensor", dt.bool)
LEGACY_TYPES = {t.dtype: t for t in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor,
                                      LongTensor, IntTensor, ShortTensor, CharTensor,
                                      ByteTensor, BoolTensor)}
