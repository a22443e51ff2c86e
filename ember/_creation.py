"""Tensor constructors: tensor, as_tensor, asarray, from_numpy, zeros/ones/empty/full (+ _like),
arange, range, linspace, logspace, eye, and the legacy typed constructors (FloatTensor, ...).

How Python data becomes an array (`tensor([...])`, PyTorch's inference and overflow rules)
lives in _data.py.
"""
import builtins
import math
import warnings

import numpy as np

from . import _dtype as dt
from . import _names, backends
from ._data import check_fill, data_to_array, positive_strides, STRIDE_ERROR
from . import _device
from ._device import placement
from ._scalars import is_number, number, type_name as _type_name
from ._signatures import Parser, checked
from ._tensor import Size, Tensor, _as_subclass, _wrap

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
           "logspace", "eye", "scalar_tensor", "empty_strided", "FloatTensor", "DoubleTensor",
           "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor", "ComplexFloatTensor",
           "ComplexDoubleTensor", "is_tensor", "numel"]

_GRAD_ERROR = "Only Tensors of floating point and complex dtype can require gradients"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def _finish(array, dtype, device, requires_grad):
    """Move a host array to `device` and wrap it; the end of every constructor."""
    if device.type != "cpu":
        array = backends.to_device(device, array)
    t = _wrap(array, dtype, device)
    if requires_grad:
        if dtype.category < dt.FLOATING:
            raise RuntimeError(_GRAD_ERROR)
        t._requires_grad = True
    return t


def _finish_out(array, dtype, device, requires_grad, out):
    t = _finish(array, dtype, placement(device), requires_grad)
    if out is not None:
        from ._tensor import write_out  # (cycle: loaded while _tensor is initialising)
        return write_out(t, out)
    return t


# ---------------------------------------------------------------------- from data
def _parsed(name, signature):
    """The constructor behind PyTorch's argument parser (the signature of its binding): a
    wrongly typed dtype, device or flag is its TypeError before the data is read."""
    return lambda fn: checked(fn, Parser(name, (signature,)), method=False)


_DEVICE = "torch.dtype? dtype = None, torch.device? device = None"


@_parsed("tensor", f"object? data, *, {_DEVICE}, bool pin_memory = False, bool requires_grad "
         "= False")
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of `data` (numbers, nested sequences, arrays, tensors)."""
    device = _with_default(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use "
            "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
            "requires_grad_(True), rather than torch.tensor(sourceTensor).", UserWarning,
            stacklevel=2)
        dev = data._device if device is None else placement(device)
    else:
        dev = placement(device)   # None: the default device
    array, dtype = data_to_array(data, dtype)
    return pinned(_finish(array, dtype, dev, requires_grad), pin_memory)


def _with_default(device):
    """`device`, or the default device when one is set: as in PyTorch, tensor/as_tensor/
    asarray of a tensor then move it there (with no default set, a tensor keeps its own)."""
    return _device._default[0] if device is None else device


def pinned(t, pin_memory):
    """Constructors' `pin_memory=True`: the new tensor `t` moved into pinned memory (still
    a leaf), or PyTorch's error without a GPU."""
    if not pin_memory:
        return t
    try:
        backend = backends.get("cuda")
    except AssertionError:   # (no accelerator: no pinned memory allocator)
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.") from None
    if t._device.type != "cpu":
        raise RuntimeError("Only dense CPU tensors can be pinned")
    t._data = backend.pin(t._data)
    return t


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    if isinstance(s, Tensor):
        s = s.item()
    elif not is_number(s):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{_type_name(s)}")
    d = dtype or dt.get_default_dtype()
    if isinstance(s, (builtins.complex, np.complexfloating)) and not d.is_complex:
        # (the Scalar is converted to the real type: its imaginary part must be 0)
        if s.imag:
            target = "double" if dtype is not None or d is not dt.float32 else "float"
            raise RuntimeError(f"value cannot be converted to type {target} without overflow")
        s = s.real
    return tensor(s, dtype=d, device=device, requires_grad=requires_grad)


@_parsed("as_tensor", f"object? data, *, {_DEVICE}")
def as_tensor(data, *, dtype=None, device=None):
    """`data` as a tensor, sharing memory when no copy is needed (ndarrays, tensors)."""
    device = _with_default(device)
    dev = None if device is None else placement(device)
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data.dtype) and (dev is None or dev == data._device):
            return data
        # (through the conversion op, Tensor.to, so the result has a graph node as in PyTorch)
        out = data if dev is None else data.to(dev)
        return out if dtype is None else out.to(dtype)
    if isinstance(data, np.ndarray) and (dev is None or dev.type == "cpu"):
        if not positive_strides(data):
            raise ValueError(STRIDE_ERROR)
        src = dt.from_numpy_dtype(data.dtype)
        if dtype is None or dtype is src:
            return _wrap(data, src)
    return tensor(data, dtype=dtype, device=dev)


@_parsed("asarray", f"object? obj, *, {_DEVICE}, bool? copy = None, bool? requires_grad = "
         "False")
def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Like as_tensor; `copy=True` always copies, `copy=False` never does (or raises)."""
    device = _with_default(device)
    if copy:
        if isinstance(obj, Tensor):
            t = obj.detach().to(device=device or obj._device, dtype=dtype or obj.dtype,
                                copy=True)
        else:
            array, d = data_to_array(obj, dtype)
            t = _finish(array, d, placement(device), False)
    else:
        if isinstance(obj, np.ndarray) and not positive_strides(obj) and copy is None:
            obj = obj.copy()  # NOTE: asarray may copy where from_numpy must refuse
        t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and not _shares(obj, t):
            raise ValueError("Can't perform a copy-free conversion of this object to a tensor"
                             "; use copy=None or copy=True")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shares(obj, t):
    if isinstance(obj, Tensor):
        return obj._data is t._data
    if isinstance(obj, np.ndarray):
        return np.shares_memory(obj, t._data)
    return False


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (writes through either are seen by both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if not positive_strides(ndarray):
        raise ValueError(STRIDE_ERROR)
    dtype = dt.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior. You may want to copy the array to protect its data "
                      "or make it writable before converting it to a tensor. This type of "
                      "warning will be suppressed for the rest of this program.", UserWarning,
                      stacklevel=2)
    return _wrap(ndarray, dtype)


# ---------------------------------------------------------------------- sizes
def _size_args(name, size):
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean shape (2, 3); PyTorch's
    TypeErrors for anything else."""
    if len(size) > 1 and isinstance(size[0], (tuple, list)):
        raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
    if len(size) == 1:
        only = size[0]
        if isinstance(only, (tuple, list)):
            size = only
        elif not _is_int(only):
            tname = _type_name(only)
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {tname}")
    shape = []
    for pos, s in enumerate(size):
        # (PyTorch type-checks the first element; the others only go through __index__,
        # which a bool passes: randn(2, True) is randn(2, 1))
        if not (_is_int(s) or pos and isinstance(s, builtins.bool)):
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{pos + 1} with error \"type must be tuple of ints,but got "
                            f"{_type_name(s)}\"")
        shape.append(builtins.int(s.__index__()))
    return tuple(shape)


def _is_int(s):
    if type(s) is builtins.int or isinstance(s, np.integer):
        return True
    if isinstance(s, Tensor):
        return s.dtype.category == dt.INTEGER and s._data.size == 1
    return isinstance(s, builtins.int) and not isinstance(s, builtins.bool)




def _check_shape(shape, zeros=False):
    for s in shape:
        if s < 0:
            if zeros:
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")


def _filled_array(xp, shape, value, dtype):
    if value is None:
        return xp.empty(shape, dtype=dtype.np)
    if value == 0:
        return xp.zeros(shape, dtype=dtype.np)
    if value == 1:
        return xp.ones(shape, dtype=dtype.np)
    return xp.full(shape, value, dtype=dtype.np)


def _filled(shape, value, dtype, device, requires_grad, out=None):
    dtype = dtype or dt.get_default_dtype()
    device = placement(device)
    if device.type == "cpu":
        array = _filled_array(np, shape, value, dtype)
    else:
        backend = backends.get(device.type)
        try:
            with backends.on(device):
                array = _filled_array(backend.xp, shape, value, dtype)
        except backend.oom_errors as exc:
            nbytes = math.prod(shape) * dtype.itemsize
            raise backend.out_of_memory(exc, device.index, nbytes) from None
    t = _wrap(array, dtype, device)
    if requires_grad:
        if dtype.category < dt.FLOATING:
            raise RuntimeError(_GRAD_ERROR)
        t._requires_grad = True
    if out is not None:
        from ._tensor import write_out  # (cycle: loaded while _tensor is initialising)
        return write_out(t, out)
    return t


def _sized(name, size, kwargs):
    kwsize = kwargs.pop("size", None)
    if kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if kwsize is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        size = (kwsize,)
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    return _size_args(name, size)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kwargs):
    shape = _sized("zeros", size, kwargs)
    _check_shape(shape, zeros=True)
    return pinned(_filled(shape, 0, dtype, device, requires_grad, out), pin_memory)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kwargs):
    shape = _sized("ones", size, kwargs)
    _check_shape(shape)
    return pinned(_filled(shape, 1, dtype, device, requires_grad, out), pin_memory)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None, **kwargs):
    shape = _sized("empty", size, kwargs)
    _check_shape(shape)
    return pinned(_filled(shape, None, dtype, device, requires_grad, out), pin_memory)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    # NOTE: ember tensors are NumPy arrays; the strides asked for are not honoured.
    shape = _size_args("empty_strided", (size,))
    _check_shape(shape)
    return pinned(_filled(shape, None, dtype, device, requires_grad), pin_memory)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_type_name(size)}")
    for pos, s in enumerate(size):
        if len(size) == 1 and not _is_int(s):
            raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, but "
                            f"found element of type {_type_name(s)} at pos {pos}")
    shape = _size_args("full", (size,))
    _check_shape(shape)
    fill_value = _fill_number("full", fill_value)
    if dtype is None:
        dtype = dt.scalar_dtype(fill_value)
    value = check_fill(fill_value, dtype, math.prod(shape))
    return _filled(shape, value, dtype, device, requires_grad, out)


def _fill_number(name, value):
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise TypeError(f"{name}(): argument 'fill_value' (position 2) must be Number, "
                            "not Tensor")
        return value.item()
    return number(value)


def _like(name, input, dtype, device, requires_grad, value):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    if input.layout is not Tensor.layout:   # (a sparse input has a sparse result)
        from .sparse.coo import sparse_like  # (cycle: sparse.coo imports this module)
        return sparse_like(name, input, dtype, device, requires_grad, value)
    return _filled(input._data.shape, value, dtype or input.dtype,
                   device if device is not None else input._device, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like("zeros_like", input, dtype, device, requires_grad, 0)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _like("ones_like", input, dtype, device, requires_grad, 1)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _like("empty_like", input, dtype, device, requires_grad, None)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    target = dtype or getattr(input, "dtype", None)
    value = _fill_number("full_like", fill_value)
    if isinstance(target, dt.dtype):
        size = input._data.size if isinstance(input, Tensor) else 2
        value = check_fill(value, target, size)
    return _like("full_like", input, dtype, device, requires_grad, value)


# ---------------------------------------------------------------------- identity, complex
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    for name, v in (("n", n), ("m", m)):
        if (v is not None or name == "n") and not _is_int(v):
            raise TypeError(f"eye(): argument '{name}' (position {1 if name == 'n' else 2}) "
                            f"must be int, not {_type_name(v)}")
    n = builtins.int(n.__index__())
    m = n if m is None else builtins.int(m.__index__())
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dtype = dtype or dt.get_default_dtype()
    return _finish_out(np.eye(n, m, dtype=dtype.np), dtype, device, requires_grad, out)


# ---------------------------------------------------------------------- legacy constructors
_C_NAMES = {dt.bool: "bool", dt.uint8: "unsigned char", dt.int8: "signed char",
            dt.int16: "short int", dt.int32: "int", dt.int64: "long int",
            dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16", dt.float32: "float",
            dt.float64: "double", dt.complex64: "c10::complex<float>",
            dt.complex128: "c10::complex<double>"}


def _options(dtype, device):
    return (f"TensorOptions(dtype={_C_NAMES[dtype]}, device={device}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def legacy_new(cls, dtype, args, device, typed=False):
    """`Tensor(2, 3)`, `FloatTensor([1, 2])`, `LongTensor(size)`, `Tensor(other)`.

    `typed`: called as FloatTensor & co., whose dtype is fixed (plain `Tensor(other)` keeps
    the other tensor's dtype)."""
    # NOTE: the legacy constructors are not among PyTorch's default-device factories: cpu
    device = placement("cpu" if device is None else device)
    if not args:
        return _retype(_finish(np.empty((0,), dtype=dtype.np), dtype, device, False), cls)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if typed and other.dtype is not dtype:
            raise TypeError(f"expected {_options(dtype, device)} (got "
                            f"{_options(other.dtype, other._device)})")
        return _retype(other.detach(), cls)
    if len(args) == 1 and isinstance(args[0], Size) or all(_is_int(a) for a in args):
        shape = _size_args("new", args)
        _check_shape(shape)
        xp = backends.get(device.type).xp
        return _retype(_wrap(xp.empty(shape, dtype=dtype.np), dtype, device), cls)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (builtins.float, builtins.complex, builtins.bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        array, _ = data_to_array(data, dtype)
        return _retype(_finish(array, dtype, device, False), cls)
    _size_args("new", args)  # raises PyTorch's TypeError for the offending element
    raise TypeError(f"new(): invalid arguments {args}")


def _retype(t, cls):
    if cls is Tensor or not isinstance(cls, type) or not issubclass(cls, Tensor):
        return t
    return _as_subclass(t, cls)


class _LegacyTensorType(type):
    """`isinstance(x, ember.FloatTensor)` checks the dtype, as PyTorch's legacy types do."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj._device.type == "cpu"

    def __repr__(cls):
        return f"<class '{_names.MODULE}.{cls.__name__}'>"


def _legacy_type(name, dtype):
    def new(cls, *args, device=None):
        return legacy_new(Tensor, dtype, args, device, typed=True)
    return _LegacyTensorType(name, (), {"__new__": new, "dtype": dtype, "is_cuda": False,
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
ComplexFloatTensor = _legacy_type("ComplexFloatTensor", dt.complex64)
ComplexDoubleTensor = _legacy_type("ComplexDoubleTensor", dt.complex128)
LEGACY_TYPES = {t.dtype: t for t in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor,
                                      LongTensor, IntTensor, ShortTensor, CharTensor,
                                      ByteTensor, BoolTensor, ComplexFloatTensor,
                                      ComplexDoubleTensor)}


# (ranges live in _ranges.py; their names are part of this module's __all__)
from ._ranges import arange, linspace, logspace, range  # noqa: E402
