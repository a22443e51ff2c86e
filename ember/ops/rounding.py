"""Dtype-preserving unary ops: abs, sign/sgn, rounding (floor, ceil, round, trunc, frac),
positive, nan_to_num (the complex parts are ops/complex.py's).

Integer inputs keep their dtype (floor of an int tensor is a copy); bool inputs are refused
where PyTorch has no kernel for them, with its NotImplementedError.
"""
import builtins

from .. import _dtype as dt
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._elementwise import (check_tensor, defpointwise, not_implemented, public,
                           unary, zeros_vjp)
from .comparison import isfinite
from ._grad_support import real_grad_only
from .registry import METHODS, defop, export


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
