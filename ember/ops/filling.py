"""Whole-tensor writes: fill_ (and fill, its out-of-place form), zero_, copy_ (broadcasting,
casting, differentiable), and the new_* constructors that take dtype and device from a
tensor."""
import warnings

import numpy as np

from .. import _creation, _dtype as dt
from .._creation import full, tensor
from .._data import check_fill
from .._dtype import COMPLEX
from .._inplace import bump_version
from .._scalars import is_number, type_name
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import state
from ..backends import array_module
from ._promote import broadcast_error
from .conversion import cast, move
from .indexing import _value_array
from .inplace import apply_inplace
from .registry import METHODS, check_tensor, defop, dispatch, export
from ..func import _state as _func


# ---------------------------------------------------------------------- fill_, zero_, copy_
@defop("fill", node="FillBackward3", save=())
def _fill(a, value):
    return array_module(a).full(a.shape, value, dtype=a.dtype)


@_fill.defvjp
def _fill_vjp(ctx, g):
    gv = g.sum() if ctx.edges[1] is not None else None
    return (g.new_zeros(g.shape) if ctx.edges[0] is not None else None), gv


@defop("fill_scalar", node="FillBackward2", save=())
def _fill_scalar(a, value):
    return array_module(a).full(a.shape, value, dtype=a.dtype)


@_fill_scalar.defvjp
def _fill_scalar_vjp(ctx, g):
    return g.new_zeros(g.shape)


@defop("zero", node="ZeroBackward0", save=())
def _zero(a):
    return array_module(a).zeros(a.shape, dtype=a.dtype)


@_zero.defvjp
def _zero_vjp(ctx, g):
    return g.new_zeros(g.shape)


def _filled(self, value):
    if isinstance(value, Tensor):
        return dispatch(_fill, (self, cast(value, self.dtype)))
    return dispatch(_fill_scalar, (self,), {"value": value})


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
    else:
        # (fill's conversion, not indexing's: uint8 -1 wraps to 255 as in PyTorch)
        value = check_fill(value, self.dtype, self._data.size)
    if state.enabled and (self._requires_grad or (isinstance(value, Tensor) and
                                                  value._requires_grad)):
        return apply_inplace(self, _filled, (value,), {})
    self._data[...] = _value_array(self, value)
    bump_version(self)
    return self


@export(method=False)
def fill(input, value):
    """A new tensor like `input` holding `value` (fill_'s out-of-place form)."""
    check_tensor("fill", input)
    if input.layout is not Tensor.layout:   # (PyTorch has no fill_ for sparse layouts)
        raise NotImplementedError(f"Could not run 'aten::fill_.Scalar' with arguments from the "
                                  f"'{input._data.backend}' backend")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return dispatch(_fill.renamed("FillBackward1"), (input, cast(value, input.dtype)))
    return dispatch(_fill_scalar.renamed("FillBackward0"), (input,),
                    {"value": check_fill(value, input.dtype, input._data.size)})


def zero_(self):
    if state.enabled and self._requires_grad:
        return apply_inplace(self, lambda s: dispatch(_zero, (s,)), (), {})
    self._data[...] = 0
    bump_version(self)
    return self


@defop("copy_", node="CopyBackwards", save=())
def _copy(a, src):
    return array_module(a).broadcast_to(src, a.shape).astype(a.dtype)


@_copy.defvjp
def _copy_vjp(ctx, g):
    ga = g.new_zeros(g.shape) if ctx.edges[0] is not None else None
    return ga, (g if ctx.edges[1] is not None else None)


def _copied(self, src):
    if src._device != self._device:
        src = move(src, self._device)
    try:
        return dispatch(_copy, (self, src), {}, self.dtype)
    except ValueError:
        raise _copy_error(self, src) from None


def _copy_error(self, src):
    try:
        shape = np.broadcast_shapes(self._data.shape, src._data.shape)
    except ValueError:
        return broadcast_error(self._data.shape, src._data.shape)
    return RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                        f"shape {list(shape)}")


def _number_source(value):
    """The 0-d tensor PyTorch's parser makes of a Number given for copy_'s source: bool,
    int64, double or complex128, so that the copy casts it as it casts a tensor."""
    if isinstance(value, (bool, np.bool_)):
        dtype = dt.bool
    elif isinstance(value, (int, np.integer)):
        dtype = dt.int64
    elif isinstance(value, (complex, np.complexfloating)):
        dtype = dt.complex128
    else:
        dtype = dt.float64
    return _wrap(np.asarray(value, dtype=dtype.np), dtype)


def copy_(self, src, non_blocking=False):
    if is_number(src):
        src = _number_source(src)
    elif not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(src)}")
    if state.enabled and (self._requires_grad or src._requires_grad) or _func.depth:
        return apply_inplace(self, _copied, (src,), {})   # (under vmap: batched writes)
    if src.dtype.category == COMPLEX and self.dtype.category < COMPLEX:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=2)
    # NOTE: NumPy's assignment drops a source's leading size-1 dims; torch's output shape is
    # fixed, so a source with more dims never fits
    if src.dim() > self.dim():
        raise _copy_error(self, src)
    if src.dtype is not self.dtype and src.dtype.category < COMPLEX:
        src = cast(src, self.dtype)   # (PyTorch's conversions: -3.8 wraps to 253 in uint8)
    a = _value_array(self, src)
    if a.dtype.kind == "c" and self.dtype.category < COMPLEX:
        a = a.real
    try:
        self._data[...] = a
    except ValueError:
        raise _copy_error(self, src) from None
    bump_version(self)
    return self


METHODS.update({"fill_": fill_, "zero_": zero_, "copy_": copy_})


# ---------------------------------------------------------------------- new_* constructors
def _new_args(self, dtype, device):
    return (dtype or self.dtype), (device if device is not None else self._device)


def new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        data = data.detach()
    dtype, device = _new_args(self, dtype, device)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _new_filled(name):
    def new(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
            pin_memory=False):
        dtype, device = _new_args(self, dtype, device)
        return getattr(_creation, name)(*size, dtype=dtype, device=device,
                                        requires_grad=requires_grad)
    new.__name__ = "new_" + name
    return new


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    dtype, device = _new_args(self, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


METHODS.update({"new_tensor": new_tensor, "new_zeros": _new_filled("zeros"),
                "new_ones": _new_filled("ones"), "new_empty": _new_filled("empty"),
                "new_full": new_full})
