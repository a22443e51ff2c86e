"""Complex numbers: the parts of a complex tensor (conj, real, imag, angle), complex tensors
from parts (complex, polar), and complex tensors as real ones and back (view_as_real: a
trailing axis of size 2 holding the real and imaginary parts; view_as_complex), views of the
same memory whose gradients are each other.

Real inputs: conj, real, resolve_conj return the input itself; imag refuses them, as PyTorch.
"""
import math

import numpy as np

from .. import _dtype as dt
from .._creation import zeros_like
from .._tensor import write_out
from ..backends import array_module
from ._elementwise import check_tensor, defpointwise, float_result, unary
from ._promote import broadcast_error
from .registry import METHODS, PUBLIC, defop, dispatch, export


# ---------------------------------------------------------------------- complex parts
@defop("conj", node="ConjBackward0", save=())
def _conj(a):
    return array_module(a).conj(a)


@_conj.defvjp
def _conj_vjp(ctx, g):
    return conj(g)


@export
def conj(input):
    """Real tensors are returned as they are (PyTorch returns a view without copying)."""
    check_tensor("conj", input)
    if input.dtype.category < dt.COMPLEX:
        return input
    return dispatch(_conj, (input,), {}, input.dtype)


@export
def conj_physical(input):
    return conj(input)  # ember's conj already materialises the conjugate


@export
def resolve_conj(input):
    return input


@export
def resolve_neg(input):
    return input


@defop("real", node="RealBackward0", save=(), view=True)
def _real(a):
    return a.real


@_real.defvjp
def _real_vjp(ctx, g):
    return g  # the engine casts the real gradient back to the complex input dtype


@defop("imag", node="ImagBackward0", save=(), view=True)
def _imag(a):
    return a.imag


@_imag.defvjp
def _imag_vjp(ctx, g):
    return g * 1j


def real(input):
    check_tensor("real", input)
    if input.dtype.category < dt.COMPLEX:
        return input
    return dispatch(_real, (input,), {}, input.dtype.to_real())


def imag(input):
    check_tensor("imag", input)
    if input.dtype.category < dt.COMPLEX:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return dispatch(_imag, (input,), {}, input.dtype.to_real())


@defop("complex", node="ComplexBackward0", save=(), conj_ready=True)
def _complex(re, im):
    xp = array_module(re)
    out = xp.empty(xp.broadcast_shapes(re.shape, im.shape),
                   dtype=xp.result_type(re.dtype, xp.complex64))
    out.real = re
    out.imag = im
    return out


@_complex.defvjp
def _complex_vjp(ctx, g):
    return real(g), imag(g)


_COMPLEX_OF = {dt.float16: dt.complex64, dt.float32: dt.complex64, dt.float64: dt.complex128}


@export(name="_complex", method=False)
def complex_from_parts(real, imag):
    """ember.complex(real, imag); float16 parts give complex64 (ember has no complex32)."""
    check_tensor("complex", real, "real")
    check_tensor("complex", imag, "imag", 2)
    if real.dtype not in _COMPLEX_OF or imag.dtype not in _COMPLEX_OF:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dt.type_name(real.dtype)} and {dt.type_name(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {dt.type_name(real.dtype)} but got "
                           f"scalar type {dt.type_name(imag.dtype)} for second argument")
    try:
        return dispatch(_complex, (real, imag), {}, _COMPLEX_OF[real.dtype])
    except ValueError:   # (NumPy's broadcasting error)
        raise broadcast_error(real._data.shape, imag._data.shape) from None


@export(name="complex", method=False)
def complex_(real, imag, *, out=None):
    r = complex_from_parts(real, imag)
    return r if out is None else write_out(r, out)


@export(method=False)
def polar(abs, angle, *, out=None):
    """abs * (cos(angle) + i sin(angle)), of two floating tensors of one dtype (no promotion,
    as PyTorch's kernel)."""
    floating = (dt.float16, dt.float32, dt.float64)
    if abs.dtype not in floating or angle.dtype not in floating:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dt.type_name(abs.dtype)} and {dt.type_name(angle.dtype)}")
    if abs.dtype is not angle.dtype:
        raise RuntimeError(f"Expected object of scalar type {dt.type_name(abs.dtype)} but got "
                           f"scalar type {dt.type_name(angle.dtype)} for second argument")
    r = complex_from_parts(abs * PUBLIC["cos"](angle), abs * PUBLIC["sin"](angle))
    return r if out is None else write_out(r, out)


complex_.__name__ = complex_.__qualname__ = "complex"
export(real, method=False)
export(imag, method=False)
METHODS["real"] = property(real)  # x.real and x.imag are attributes, as in PyTorch
METHODS["imag"] = property(imag)


@defpointwise("angle")
def _angle(a):
    xp = array_module(a)
    if a.dtype.kind == "c":
        return xp.angle(a)
    # NOTE: NumPy's angle(-0.0) is pi; PyTorch's is 0 (only x < 0 is pi; nan stays nan).
    return xp.where(a < 0, math.pi, xp.where(xp.isnan(a), a, 0)).astype(a.dtype)


@_angle.defvjp
def _angle_vjp(ctx, g):
    z = ctx.inputs[0]
    if z.dtype.category < dt.COMPLEX:
        return zeros_like(g)  # real inputs: angle is piecewise constant
    # d angle = (x dy - y dx) / |z|^2, so PyTorch's gradient is g * i z / |z|^2 (0 at z = 0)
    r2 = z.real * z.real + z.imag * z.imag
    return (g * z * 1j / r2).masked_fill(r2 == 0, 0)


@export
def angle(input, *, out=None):
    check_tensor("angle", input)
    d = input.dtype
    return unary(_angle, input, d.to_real() if d.category == dt.COMPLEX else float_result(d), out)


# ---------------------------------------------------------------------- real views
_EMPTY = {}


@defop("view_as_real", node="ViewAsRealBackward0", save=(), view=True)
def _view_as_real(a):
    # NOTE: the new trailing axis of size 1 is the one the dtype view splits in two, so
    # any strides of `a` are allowed (a plain a.view(float) needs a contiguous last axis).
    return a[..., None].view(a.real.dtype)


@defop("view_as_complex", node="ViewAsComplexBackward0", save=(), view=True,
       conj_ready=True)
def _view_as_complex(a):
    return a.view(array_module(a).result_type(a.dtype, np.complex64))[..., 0]


@_view_as_real.defvjp
def _view_as_real_vjp(ctx, g):
    g = g.contiguous()  # (view_as_complex needs the pairs adjacent)
    return dispatch(_view_as_complex, (g,), _EMPTY, g.dtype.to_complex())


@_view_as_complex.defvjp
def _view_as_complex_vjp(ctx, g):
    return view_as_real(g)


@export(method=False)
def view_as_real(input):
    check_tensor("view_as_real", input)
    if input.dtype.category != dt.COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return dispatch(_view_as_real, (input,), _EMPTY, input.dtype.to_real())


@export(method=False)
def view_as_complex(input):
    check_tensor("view_as_complex", input)
    d = input.dtype
    if d not in (dt.float32, dt.float64):
        if d is dt.float16:
            raise RuntimeError("view_as_complex of a Half tensor gives ComplexHalf, which "
                               "ember lacks; convert to float32 first")
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {dt.type_name(d)}")
    shape, strides = input._data.shape, input.stride()
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                           "dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return dispatch(_view_as_complex, (input,), _EMPTY, d.to_complex())
