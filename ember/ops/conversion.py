"""dtype and device conversions: to, type, type_as, float(), long(), cpu(), cuda(), ..."""
import builtins
import warnings

import numpy as np

from .. import _dtype as dt
from .. import accelerator, backends
from .._device import device as device_cls, placement
from .._tensor import Tensor
from .registry import defop, dispatch, export


@defop("_to_copy", node="ToCopyBackward0", save=())
def _to_copy(a, dtype, copy):
    if a.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=5)
        a = a.real
    if dtype.kind in "iu" and (a.dtype.kind == "f" or a.dtype.name == "bfloat16"):
        return _float_to_integer(a, dtype)
    return a.astype(dtype, copy=copy)


def _float_to_integer(a, dtype):
    """PyTorch's float-to-integer cast: truncation toward zero; to uint8 through int64
    (PyTorch's static_cast_with_inter_type), so -3.0 gives 253 and 300.0 gives 44, and to
    int8/int16 through int64 too, as x86's 32-bit conversion wraps them in PyTorch; NumPy's
    direct casts of out-of-range values differ between its SIMD loops.
    NOTE: bfloat16 goes through float32 first: ml_dtypes' own cast clamps instead."""
    if a.dtype.name == "bfloat16":
        a = a.astype(np.float32)
    with np.errstate(invalid="ignore"):
        if dtype.itemsize < 4:
            a = a.astype(np.int64)
        return a.astype(dtype)


@_to_copy.defvjp
def _to_copy_vjp(ctx, g):
    return g  # the engine casts the gradient back to the input's dtype


@defop("_to_device", node="ToCopyBackward0", save=())
def _to_device(a, source, target):
    return backends.to_device(target, backends.to_host(source, a))


@_to_device.defvjp
def _to_device_vjp(ctx, g):
    return g.to(ctx.device)


def cast(input, dtype, copy=False):
    """input in `dtype` (a differentiable copy; input itself when nothing changes)."""
    if dtype is input.dtype and not copy:
        return input
    return dispatch(_to_copy, (input,), {"dtype": dtype.np, "copy": True}, dtype)


def move(input, device, copy=False):
    """input on `device` (a placed device: cuda:0 rather than cuda)."""
    if device == input._device and not copy:
        return input
    backends.get(device.type)  # PyTorch's error for an unavailable device, before any work
    out = dispatch(_to_device, (input,), {"source": input._device, "target": device},
                   input.dtype)
    out._device = device
    return out


def _parse_to(args, kwargs):
    """to(dtype) | to(device, dtype) | to(tensor) | to(device=..., dtype=...)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a._device, a.dtype
        elif isinstance(a, (str, device_cls, int)) and not isinstance(a, bool):
            device = a
        elif isinstance(a, bool):
            continue  # the legacy positional non_blocking / copy flags
        elif a is None:
            continue
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    return (placement(device) if device is not None else None), dtype, copy


@export(function=False)
def to(self, *args, **kwargs):
    device, dtype, copy = _parse_to(args, dict(kwargs))
    out = self
    if device is not None and device != self._device:
        out = move(out, device)
        copy = False
    if dtype is not None:
        out = cast(out, dtype, copy)
    elif copy and out is self:
        out = cast(out, self.dtype, True)
    return out


@export(function=False)
def cpu(self, memory_format=None):
    return to(self, "cpu")


@export(function=False)
def cuda(self, device=None, non_blocking=False, memory_format=None):
    if device is None:
        device = "cuda"
    elif isinstance(device, int) and not isinstance(device, bool):
        device = device_cls("cuda", device)
    return to(self, device)


def _caster(dtype):
    def method(self, memory_format=None):
        return cast(self, dtype)
    return method


for _name, _d in (("float", dt.float32), ("double", dt.float64), ("half", dt.float16),
                  ("bfloat16", dt.bfloat16), ("long", dt.int64), ("int", dt.int32),
                  ("short", dt.int16), ("char", dt.int8), ("byte", dt.uint8), ("bool", dt.bool),
                  ("cfloat", dt.complex64), ("cdouble", dt.complex128)):
    export(_caster(_d), name=_name, function=False)


_TYPE_STRINGS = {f"torch.{name}": d for d, name in (
    (dt.float32, "FloatTensor"), (dt.float64, "DoubleTensor"), (dt.float16, "HalfTensor"),
    (dt.bfloat16, "BFloat16Tensor"), (dt.int64, "LongTensor"), (dt.int32, "IntTensor"),
    (dt.int16, "ShortTensor"), (dt.int8, "CharTensor"), (dt.uint8, "ByteTensor"),
    (dt.bool, "BoolTensor"), (dt.complex64, "ComplexFloatTensor"),
    (dt.complex128, "ComplexDoubleTensor"))}
_TYPE_NAMES = {d: s for s, d in _TYPE_STRINGS.items()}


@export(function=False)
def type(self, dtype=None, non_blocking=False, **kwargs):
    """Without arguments the legacy type string ('torch.FloatTensor', kept as PyTorch spells
    it so programs comparing it keep working); with one, a cast."""
    if dtype is None:
        name = _TYPE_NAMES[self.dtype]
        return name if self._device.type == "cpu" else name.replace("torch.", "torch.cuda.")
    if isinstance(dtype, str):
        target = _TYPE_STRINGS.get(dtype.replace("ember.", "torch.").replace(".cuda", ""))
        if target is None:
            raise ValueError(f"invalid type: '{dtype}'")
        if ".cuda." in dtype:
            return cast(to(self, "cuda"), target)
        dtype = target
    elif isinstance(dtype, builtins.type):   # a legacy tensor type (FloatTensor), else named
        cls, dtype = dtype, getattr(dtype, "dtype", None)
        if cls is Tensor:
            dtype = dt.get_default_dtype()
        elif not isinstance(dtype, dt.dtype):
            name = cls.__qualname__ if cls.__module__ == "builtins" else \
                f"{cls.__module__}.{cls.__qualname__}"
            raise ValueError(f"invalid type: '{name}'")
    elif not isinstance(dtype, dt.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    return cast(self, dtype)


@export(function=False)
def type_as(self, other):
    return to(self, other)


@defop("view_dtype", node="ViewBackward0", view=True, save=())
def _view_dtype(a, dtype):
    return a.view(dtype)


def view_as_dtype(self, dtype):
    old, new = self.dtype.itemsize, dtype.itemsize
    if new != old:
        if self._data.ndim == 0:
            raise RuntimeError("self.dim() cannot be 0 to view " + str(self.dtype) + " as " +
                               str(dtype) + " (different element sizes)")
        _check_view_dtype(self, dtype, old, new)
    return dispatch(_view_dtype, (self,), {"dtype": dtype.np}, dtype)


def _check_view_dtype(self, dtype, old, new):
    """PyTorch's checks (in its order) for viewing elements as a dtype of another size."""
    what = (f"to view {dt.type_name(self.dtype)} as {dt.type_name(dtype)} (different element "
            "sizes), but got")
    strides = self.stride()
    if new > old:
        ratio = new // old
        if self.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what} "
                               f"{self.shape[-1]}")
        if self.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what} "
                               f"{self.storage_offset()}")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what} {strides[-1]}")
    if new > old:
        for i, st in enumerate(strides[:-1]):
            if st % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what} {st}")


# ---------------------------------------------------------------------- pinned host memory
def _accelerator_available():
    return accelerator.is_available()


def _pinning_backend():
    """The accelerator backend that allocates pinned memory (PyTorch's error without one)."""
    if not _accelerator_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return backends.get("cuda")


@defop("_pin_memory", node="PinMemoryBackward0", save=())
def _pin_memory(a, backend):
    return backend.pin(a)


@_pin_memory.defvjp
def _pin_memory_vjp(ctx, g):
    return g


@export(function=False)
def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory (itself when already pinned)."""
    backend = _pinning_backend()
    if self._device.type != "cpu":
        name = _TYPE_NAMES[self.dtype].replace("torch.", "torch.cuda.")
        raise RuntimeError(f"cannot pin '{name}' only dense CPU tensors can be pinned")
    if backend.is_pinned(self._data):
        return self
    return dispatch(_pin_memory, (self,), {"backend": backend}, self.dtype)


@export(function=False)
def is_pinned(self, device=None):
    if self._device.type != "cpu" or "cuda" not in backends.BACKENDS:
        return False
    return backends.BACKENDS["cuda"].is_pinned(self._data)
