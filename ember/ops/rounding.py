"""Dtype-preserving unary ops: abs, sign/sgn, rounding (floor, ceil, round, trunc, frac),
positive, nan_to_num, and the complex parts (conj, real, imag, angle).

Integer inputs keep their dtype (floor of an int tensor is a copy); bool inputs are refused
where PyTorch has no kernel for them, with its NotImplementedError.
"""
import builtins
import math

from .. import _dtype as dt
from .._creation import zeros_like
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._elementwise import (check_tensor, defpointwise, float_result, not_implemented, public,
                           unary, zeros_vjp)
from ._promote import broadcast_error
from .comparison import isfinite
from ._grad_support import real_grad_only
from .registry import METHODS, PUBLIC, defop, dispatch, export


def same_dtype_unary(op, name, kernel, aliases=(), allow_bool=False, complex_error=None):
    """Export `op` (dtype-preserving) as ember.<name>, Tensor.<name> and Tensor.<name>_."""
    def fn(input, *, out=None):
        if not isinstance(input, Tensor):
            check_tensor(name, input)
        d = input.dtype
        if d is dt.bool and not allow_bool:
            raise not_implemented(kernel, d)
        if d.category == dt.COMPLEX and complex_error is not None:
            raise NotImplementedError(complex_error)
        return unary(op, input, d, out)
    return public(fn, name, inplace=True, aliases=aliases)


# ---------------------------------------------------------------------- abs, sign
@defpointwise("abs")
def _abs(a):
    return array_module(a).abs(a)


@_abs.defvjp
def _abs_vjp(ctx, g):
    return g * sgn(ctx.inputs[0])


@defpointwise("sign", save=())
def _sign(a):
    xp = array_module(a)
    if a.dtype.kind == "b":
        return a.copy()
    # NOTE: PyTorch's sign(nan) is 0, NumPy's is nan.
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype) if a.dtype.kind == "f" \
        else xp.sign(a)


@defpointwise("sgn")
def _sgn(a):
    xp = array_module(a)
    r = xp.abs(a)
    return xp.where(r == 0, 0, a / xp.where(r == 0, 1, r))


_sign.defvjp(zeros_vjp)


@_sgn.defvjp
def _sgn_vjp(ctx, g):
    """sgn(z) = z / |z| (complex inputs; real ones take `sign`): PyTorch's gradient
    (g - conj(g) sgn(z)^2) / (2 |z|), zero at z = 0."""
    z = ctx.inputs[0]
    r = z.abs()
    s = _sgn_fn(z)
    return ((g - g.conj() * s * s) / (2 * r)).masked_fill(r == 0, 0)


_sgn.conj_ready = True  # (the VJP above is in PyTorch's complex convention already)


def _abs_fn(input, *, out=None):
    if not isinstance(input, Tensor):
        check_tensor("abs", input)
    d = input.dtype
    if d is dt.bool:
        raise not_implemented("abs_cpu", d)
    return unary(_abs, input, d.to_real() if d.category == dt.COMPLEX else d, out)


abs = public(_abs_fn, "abs", inplace=True, aliases=("absolute",))
METHODS["__abs__"] = abs


def _abs_inplace(name):
    generic = METHODS[name]

    def inplace(self):
        # NOTE: |z| is real; PyTorch refuses to store it back into a complex tensor rather
        # than keep a zero imaginary part.
        if isinstance(self, Tensor) and self.dtype.category == dt.COMPLEX:
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return generic(self)
    inplace.__name__ = name
    inplace.__qualname__ = "Tensor." + name
    return inplace


for _name in ("abs_", "absolute_"):
    METHODS[_name] = _abs_inplace(_name)
sign = same_dtype_unary(_sign, "sign", "sign", allow_bool=True, complex_error=(
    "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
    "torch.sgn instead."))


def _sgn_fn(input, *, out=None):
    check_tensor("sgn", input)
    return unary(_sign if input.dtype.category < dt.COMPLEX else _sgn, input, input.dtype, out)


sgn = public(_sgn_fn, "sgn", inplace=True)


# ---------------------------------------------------------------------- rounding
@defop("floor", save=())
def _floor(a):
    return array_module(a).floor(a) if a.dtype.kind in "fc" else a.copy()


@defop("ceil", save=())
def _ceil(a):
    return array_module(a).ceil(a) if a.dtype.kind in "fc" else a.copy()


@defop("trunc", save=())
def _trunc(a):
    return array_module(a).trunc(a) if a.dtype.kind in "fc" else a.copy()


@defop("round", save=())
def _round(a):
    # rint rounds half to even, as PyTorch's round does.
    return array_module(a).rint(a) if a.dtype.kind in "fc" else a.copy()


@defpointwise("round_decimals", node="RoundBackward1", save=())
def _round_decimals(a, decimals):
    xp = array_module(a)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals < 0:
        return xp.rint(a / scale) * scale
    return xp.rint(a * scale) / scale


for _op in (_floor, _ceil, _trunc, _round, _round_decimals):
    _op.defvjp(zeros_vjp)

floor = same_dtype_unary(_floor, "floor", "floor_vml_cpu",
                         complex_error="floor is not supported for complex inputs")
ceil = same_dtype_unary(_ceil, "ceil", "ceil_vml_cpu",
                        complex_error="ceil is not supported for complex inputs")
trunc = same_dtype_unary(_trunc, "trunc", "trunc_vml_cpu", aliases=("fix",),
                         complex_error="trunc is not supported for complex inputs")


@export(inplace=True)
def round(input, *, decimals=0, out=None):
    check_tensor("round", input)
    d = input.dtype
    if d is dt.bool or d.category == dt.COMPLEX:
        raise not_implemented("round_vml_cpu", d)
    if decimals == 0:
        return unary(_round, input, d, out)
    if d.category < dt.FLOATING:
        raise not_implemented("round_cpu", d)
    return unary(_round_decimals, input, d, out, {"decimals": int(decimals)})


@defpointwise("frac", save=())
def _frac(a):
    return a - array_module(a).trunc(a)


@_frac.defvjp
def _frac_vjp(ctx, g):
    return g


def _frac_fn(input, *, out=None):
    check_tensor("frac", input)
    d = input.dtype
    if d.category != dt.FLOATING:
        raise not_implemented("frac_cpu", d)
    return unary(_frac, input, d, out)


frac = public(_frac_fn, "frac", inplace=True)


# ---------------------------------------------------------------------- positive, nan_to_num
@export
def positive(input):
    check_tensor("positive", input)
    if input.dtype is dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@defop("nan_to_num", node="NanToNumBackward0")
def _nan_to_num(a, nan, posinf, neginf):
    return array_module(a).nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


@_nan_to_num.defvjp
def _nan_to_num_vjp(ctx, g):
    return g * isfinite(ctx.inputs[0])


@export(inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    check_tensor("nan_to_num", input)
    d = input.dtype
    if d.category < dt.FLOATING:
        r = input.clone()
        return r if out is None else _write(r, out)
    # NOTE: the defaults are the limits of the result dtype, not of the float32 the
    # low-precision kernels compute in (float16 inf becomes 65504).
    info = dt.finfo(d)  # (ml_dtypes only for bfloat16: see _dtype)
    params = {"nan": float(nan),
              "posinf": float(info.max) if posinf is None else float(posinf),
              "neginf": float(info.min) if neginf is None else float(neginf)}
    return real_grad_only("nan_to_num", unary(_nan_to_num, input, d, out, params), input)


def _write(r, out):
    return write_out(r, out)


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
