"""torch.special's functions that ember had no op for: the scaled error and Bessel functions
(erfcx, i0e, i1e), the normal distribution's ndtri and log_ndtr, entr, xlog1py and Hurwitz's
zeta, with PyTorch's VJPs (node names SpecialErfcxBackward0, ...); and the functions PyTorch
does not differentiate at all (airy_ai, the Bessel functions of the first and second kinds,
the modified and scaled modified ones, spherical_bessel_j0): their results never require grad.

Forwards call scipy.special (cupyx.scipy.special on GPU) through `special_module`, imported on
first use. NOTE: several of them have no float16/bfloat16 kernel in PyTorch: those raise its
NotImplementedError, as they do for complex input.
"""
import math

from .._dtype import COMPLEX
from .._tensor import Tensor
from ..backends import array_module
from ..backends.special import airy_ai, special_module
from ._elementwise import (LOW, NUMBER_TYPES, binary, check_tensor, defpointwise,
                           float_result, not_implemented, result_of, unary)
from .gamma_bessel import _i1, tiny_safe
from .pointwise import x_log_vjp
from .select import where

_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def special_unary(op, fname, kernel, input, out=None, half=True, differentiable=True):
    """Run a unary special function with PyTorch's operand checks and dtype rules."""
    check_tensor(fname, input)
    d = input.dtype
    if d.category == COMPLEX or (not half and d in LOW):
        raise not_implemented(kernel, d)
    if not differentiable:   # PyTorch records no node: the result never requires grad
        input = input.detach()
    return unary(op, input, float_result(d), out)


def check_overloads(fname, input, other, names=("input", "other")):
    """PyTorch's TypeError for arguments matching none of the Tensor-Tensor, number-Tensor
    and Tensor-number forms."""
    def kind(v):
        if isinstance(v, Tensor):
            return "Tensor"
        return "Number" if isinstance(v, NUMBER_TYPES) and not isinstance(v, str) else None
    if (kind(input), kind(other)) in (("Tensor", "Tensor"), ("Number", "Tensor"),
                                      ("Tensor", "Number")):
        return
    a, b = names
    first = "self" if a == "input" else a
    raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                    f"({_type(input)}, {_type(other)}), but expected one of:\n"
                    f" * (Tensor {a}, Tensor {b}, *, Tensor out = None)\n"
                    f" * (Number {first}, Tensor {b}, *, Tensor out = None)\n"
                    f" * (Tensor {a}, Number {b}, *, Tensor out = None)\n")


def _type(v):
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def special_binary(op, fname, kernel, input, other, out=None, half=True, differentiable=True,
                   names=("input", "other")):
    """The binary form: Tensor-Tensor, Tensor-number or number-Tensor, as PyTorch takes."""
    check_overloads(fname, input, other, names)
    d = result_of(input, other)
    if d.category == COMPLEX or (not half and d in LOW):
        raise not_implemented(kernel, d)
    if not differentiable:
        input = input.detach() if isinstance(input, Tensor) else input
        other = other.detach() if isinstance(other, Tensor) else other
    return binary(op, input, other, float_result(d), out=out)


def _scipy_op(name, node, **kwargs):
    """Op special_<name>: scipy.special's (cupyx's) function `name` of one array."""
    def forward(a):
        return getattr(special_module(a), name)(a)
    return defpointwise("special_" + name, node=node, **kwargs)(forward)


# ---------------------------------------------------------------------- scaled erfc, i0e, i1e
_erfcx = _scipy_op("erfcx", "SpecialErfcxBackward0", save_output=True)


@_erfcx.defvjp
def _erfcx_vjp(ctx, g):
    return (2.0 * ctx.inputs[0] * ctx.output - _TWO_OVER_SQRT_PI) * g


_i0e = _scipy_op("i0e", "SpecialI0EBackward0", save_output=True)


@_i0e.defvjp
def _i0e_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * (unary(_i1e, x, x.dtype) - x.sgn() * ctx.output)


_i1e = _scipy_op("i1e", "SpecialI1EBackward0", save_output=True)


@_i1e.defvjp
def _i1e_vjp(ctx, g):
    safe, not_tiny = tiny_safe(ctx.inputs[0])
    d = unary(_i0e, safe, safe.dtype) - ctx.output * (safe.sgn() + safe.reciprocal())
    return g * where(not_tiny, d, 0.5)


# ---------------------------------------------------------------------- normal distribution
_ndtri = _scipy_op("ndtri", "SpecialNdtriBackward0", save=(), save_output=True)


@_ndtri.defvjp
def _ndtri_vjp(ctx, g):
    out = ctx.output
    return g * _SQRT_2PI * (out * out / 2).exp()


_log_ndtr = _scipy_op("log_ndtr", "SpecialLogNdtrBackward0", save_output=True)


@_log_ndtr.defvjp
def _log_ndtr_vjp(ctx, g):
    x = ctx.inputs[0]
    return g / _SQRT_2PI * (-(ctx.output + x * x / 2)).exp()


_entr = _scipy_op("entr", "SpecialEntrBackward0")


@_entr.defvjp
def _entr_vjp(ctx, g):
    return g * (-(1 + ctx.inputs[0].log()))


# ---------------------------------------------------------------------- xlog1py, zeta
@defpointwise("special_xlog1py", node="SpecialXlog1PyBackward0")
def _xlog1py(x, y):
    xp = array_module(x, y)
    # NOTE: x == 0 gives 0 even where log1p(y) is -inf or nan from y < -1; nan y propagates.
    return xp.where((x == 0) & ~xp.isnan(y), 0, x * xp.log1p(y))


@defpointwise("special_zeta", node="SpecialZetaBackward0")
def _zeta(x, q):
    return special_module(x, q).zeta(x, q)


@_zeta.defvjp
def _zeta_vjp(ctx, g):
    if ctx.edges[0] is not None:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    x, q = ctx.inputs
    return None, g * -x * zeta(x + 1.0, q)


def xlog1py(input, other, *, out=None):
    return special_binary(_xlog1py, "special_xlog1py", "xlog1py_cpu", input, other, out)


_xlog1py.defvjp(x_log_vjp(xlog1py, 1))


def zeta(input, other, *, out=None):
    return special_binary(_zeta, "special_zeta", "zeta_cpu", input, other, out, half=False)


def erfcx(input, *, out=None):
    return special_unary(_erfcx, "special_erfcx", "erfcx_cpu", input, out, half=False)


def i0e(input, *, out=None):
    return special_unary(_i0e, "special_i0e", "i0e_cpu", input, out)


def i1(input, *, out=None):
    return special_unary(_i1, "special_i1", "i1_cpu", input, out)


def i1e(input, *, out=None):
    return special_unary(_i1e, "special_i1e", "i1e_cpu", input, out)


def ndtri(input, *, out=None):
    return special_unary(_ndtri, "special_ndtri", "ndtri_cpu", input, out, half=False)


def log_ndtr(input, *, out=None):
    return special_unary(_log_ndtr, "special_log_ndtr", "log_ndtr_cpu", input, out,
                         half=False)


def entr(input, *, out=None):
    return special_unary(_entr, "special_entr", "entr_cpu", input, out)


# ---------------------------------------------------------------------- not differentiated
def _spherical_j0(a):
    # PyTorch's form: a Taylor series below 0.5 (sin(x)/x loses digits there), 0 at +-inf.
    xp = array_module(a)
    x2 = a * a
    series = 1 + x2 * (-1 / 6 + x2 * (1 / 120 + x2 * (-1 / 5040 + x2 * (
        1 / 362880 + x2 * (-1 / 39916800 + x2 * (1 / 6227020800))))))
    out = xp.where(xp.abs(a) < 0.5, series, xp.sin(a) / a)
    return xp.where(xp.isinf(a), 0, out).astype(a.dtype)


_NOT_DIFFERENTIABLE = {
    "airy_ai": lambda sp, a: airy_ai(a),
    "bessel_j0": lambda sp, a: sp.j0(a),
    "bessel_j1": lambda sp, a: sp.j1(a),
    "bessel_y0": lambda sp, a: sp.y0(a),
    "bessel_y1": lambda sp, a: sp.y1(a),
    "modified_bessel_i0": lambda sp, a: sp.i0(a),
    "modified_bessel_i1": lambda sp, a: sp.i1(a),
    "modified_bessel_k0": lambda sp, a: sp.k0(a),
    "modified_bessel_k1": lambda sp, a: sp.k1(a),
    "scaled_modified_bessel_k0": lambda sp, a: sp.k0e(a),
    "scaled_modified_bessel_k1": lambda sp, a: sp.k1e(a),
    "spherical_bessel_j0": lambda sp, a: _spherical_j0(a),
}


def _not_differentiable(name, formula):
    op = defpointwise("special_" + name)(lambda a: formula(special_module(a), a))

    def fn(input, *, out=None):
        return special_unary(op, "special_" + name, name + "_cpu", input, out, half=False,
                             differentiable=False)
    fn.__name__ = fn.__qualname__ = name
    return fn


NOT_DIFFERENTIABLE = {name: _not_differentiable(name, f)
                      for name, f in _NOT_DIFFERENTIABLE.items()}
