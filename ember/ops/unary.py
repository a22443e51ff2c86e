"""Unary floating functions: exp/log families, trigonometric and hyperbolic functions,
sigmoid/logit, the error and gamma functions, sinc and angle conversions.

Integer and bool inputs give the default float dtype; in-place forms on integer tensors raise
PyTorch's cast error (from the generic in-place protocol). VJPs are ember ops, saving the
output where that is cheaper (exp, tanh, sigmoid, ...).
"""
import math

from .. import _dtype as dt
from .._tensor import Tensor
from ..backends import array_module, elementwise
from ..backends.special import special_module
from ._elementwise import (check_tensor, defpointwise, not_implemented, public, unary)
from .registry import export

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)
_DEG = math.pi / 180.0


def float_unary(op, name, kernel=None, aliases=(), complex_error=None):
    """Export `op` as ember.<name>, Tensor.<name> and Tensor.<name>_.

    `kernel`: the kernel name in PyTorch's "not implemented for 'ComplexFloat'" error, for
    functions without complex support (`complex_error` gives a RuntimeError text instead).
    """
    def fn(input, *, out=None):
        if not isinstance(input, Tensor):
            check_tensor(name, input)
        d = input.dtype
        if d.category == 3:
            if complex_error is not None:
                raise RuntimeError(complex_error)
            if kernel is not None:
                raise not_implemented(kernel, d)
        return unary(op, input, d if d.category >= 2 else dt.get_default_dtype(), out)
    return public(fn, name, inplace=True, aliases=aliases)


# ---------------------------------------------------------------------- exponentials, logs
@defpointwise("exp", save=(), save_output=True)
def _exp(a):
    return elementwise.unary("exp", a)


@_exp.defvjp
def _exp_vjp(ctx, g):
    return g * ctx.output


@defpointwise("exp2", save=(), save_output=True)
def _exp2(a):
    return array_module(a).exp2(a)


@_exp2.defvjp
def _exp2_vjp(ctx, g):
    return g * ctx.output * _LN2


@defpointwise("expm1", save=(), save_output=True)
def _expm1(a):
    return array_module(a).expm1(a)


@_expm1.defvjp
def _expm1_vjp(ctx, g):
    return g * (ctx.output + 1)


@defpointwise("log")
def _log(a):
    return array_module(a).log(a)


@_log.defvjp
def _log_vjp(ctx, g):
    return g / ctx.inputs[0]


@defpointwise("log2")
def _log2(a):
    return array_module(a).log2(a)


@_log2.defvjp
def _log2_vjp(ctx, g):
    return g / (ctx.inputs[0] * _LN2)


@defpointwise("log10")
def _log10(a):
    return array_module(a).log10(a)


@_log10.defvjp
def _log10_vjp(ctx, g):
    return g / (ctx.inputs[0] * _LN10)


@defpointwise("log1p", node="Log1PBackward0")
def _log1p(a):
    return array_module(a).log1p(a)


@_log1p.defvjp
def _log1p_vjp(ctx, g):
    return g / (ctx.inputs[0] + 1)


@defpointwise("sqrt", save=(), save_output=True)
def _sqrt(a):
    return elementwise.unary("sqrt", a)


@_sqrt.defvjp
def _sqrt_vjp(ctx, g):
    return g / (2 * ctx.output)


@defpointwise("rsqrt", save=(), save_output=True)
def _rsqrt(a):
    return 1 / array_module(a).sqrt(a)


@_rsqrt.defvjp
def _rsqrt_vjp(ctx, g):
    out = ctx.output
    return g * (out * out * out) * -0.5


@defpointwise("reciprocal", save=(), save_output=True)
def _reciprocal(a):
    return array_module(a).reciprocal(a)


@_reciprocal.defvjp
def _reciprocal_vjp(ctx, g):
    out = ctx.output
    return -g * (out * out)


exp = float_unary(_exp, "exp")
exp2 = float_unary(_exp2, "exp2")
expm1 = float_unary(_expm1, "expm1")
log = float_unary(_log, "log")
log2 = float_unary(_log2, "log2")
log10 = float_unary(_log10, "log10")
log1p = float_unary(_log1p, "log1p")
sqrt = float_unary(_sqrt, "sqrt")
rsqrt = float_unary(_rsqrt, "rsqrt")
reciprocal = float_unary(_reciprocal, "reciprocal")


# ---------------------------------------------------------------------- trigonometric
@defpointwise("sin")
def _sin(a):
    return array_module(a).sin(a)


@_sin.defvjp
def _sin_vjp(ctx, g):
    return g * cos(ctx.inputs[0])


@defpointwise("cos")
def _cos(a):
    return array_module(a).cos(a)


@_cos.defvjp
def _cos_vjp(ctx, g):
    return -(g * sin(ctx.inputs[0]))


@defpointwise("tan", save=(), save_output=True)
def _tan(a):
    return array_module(a).tan(a)


@_tan.defvjp
def _tan_vjp(ctx, g):
    out = ctx.output
    return g * (out * out + 1)


@defpointwise("asin")
def _asin(a):
    return array_module(a).arcsin(a)


@_asin.defvjp
def _asin_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * rsqrt(1 - x * x)


@defpointwise("acos")
def _acos(a):
    return array_module(a).arccos(a)


@_acos.defvjp
def _acos_vjp(ctx, g):
    x = ctx.inputs[0]
    return -(g * rsqrt(1 - x * x))


@defpointwise("atan")
def _atan(a):
    return array_module(a).arctan(a)


@_atan.defvjp
def _atan_vjp(ctx, g):
    x = ctx.inputs[0]
    return g / (x * x + 1)


sin = float_unary(_sin, "sin")
cos = float_unary(_cos, "cos")
tan = float_unary(_tan, "tan")
asin = float_unary(_asin, "asin", aliases=("arcsin",))
acos = float_unary(_acos, "acos", aliases=("arccos",))
atan = float_unary(_atan, "atan", aliases=("arctan",))


# ---------------------------------------------------------------------- hyperbolic
@defpointwise("sinh")
def _sinh(a):
    return array_module(a).sinh(a)


@_sinh.defvjp
def _sinh_vjp(ctx, g):
    return g * cosh(ctx.inputs[0])


@defpointwise("cosh")
def _cosh(a):
    return array_module(a).cosh(a)


@_cosh.defvjp
def _cosh_vjp(ctx, g):
    return g * sinh(ctx.inputs[0])


@defpointwise("tanh", save=(), save_output=True)
def _tanh(a):
    return array_module(a).tanh(a)


@_tanh.defvjp
def _tanh_vjp(ctx, g):
    out = ctx.output
    return g * (1 - out * out)


@defpointwise("asinh")
def _asinh(a):
    return array_module(a).arcsinh(a)


@_asinh.defvjp
def _asinh_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * rsqrt(x * x + 1)


@defpointwise("acosh")
def _acosh(a):
    return array_module(a).arccosh(a)


@_acosh.defvjp
def _acosh_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * rsqrt(x * x - 1)


@defpointwise("atanh")
def _atanh(a):
    return array_module(a).arctanh(a)


@_atanh.defvjp
def _atanh_vjp(ctx, g):
    x = ctx.inputs[0]
    return g / (1 - x * x)


sinh = float_unary(_sinh, "sinh")
cosh = float_unary(_cosh, "cosh")
tanh = float_unary(_tanh, "tanh")
asinh = float_unary(_asinh, "asinh", aliases=("arcsinh",))
acosh = float_unary(_acosh, "acosh", aliases=("arccosh",))
atanh = float_unary(_atanh, "atanh", aliases=("arctanh",))


# ---------------------------------------------------------------------- sigmoid, logit
@defpointwise("sigmoid", save=(), save_output=True)
def _sigmoid(a):
    return elementwise.unary("sigmoid", a)


@_sigmoid.defvjp
def _sigmoid_vjp(ctx, g):
    out = ctx.output
    return g * out * (1 - out)


sigmoid = float_unary(_sigmoid, "sigmoid")


@defpointwise("logit")
def _logit(a, eps=None):
    xp = array_module(a)
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    return xp.log(a / (1 - a))


@_logit.defvjp
def _logit_vjp(ctx, g):
    from .select import where
    x = ctx.inputs[0]
    eps = ctx.params.get("eps")
    d = g / (x * (1 - x))
    if eps is None:
        return where((x < 0) | (x > 1), math.nan, d)
    return where((x < eps) | (x > 1 - eps), 0.0, d)


@export(inplace=True)
def logit(input, eps=None, *, out=None):
    check_tensor("logit", input)
    if input.dtype.category == 3:
        raise not_implemented("logit_cpu", input.dtype)
    params = {} if eps is None else {"eps": float(eps)}
    return unary(_logit, input, _float(input), out, params)


def _float(input):
    d = input.dtype
    return d if d.category >= 2 else dt.get_default_dtype()


# ---------------------------------------------------------------------- error, gamma functions
@defpointwise("erf")
def _erf(a):
    return special_module(a).erf(a)


@_erf.defvjp
def _erf_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * exp(-(x * x)) * _TWO_OVER_SQRT_PI


@defpointwise("erfc")
def _erfc(a):
    return special_module(a).erfc(a)


@_erfc.defvjp
def _erfc_vjp(ctx, g):
    x = ctx.inputs[0]
    return g * exp(-(x * x)) * -_TWO_OVER_SQRT_PI


@defpointwise("erfinv", save=(), save_output=True)
def _erfinv(a):
    return special_module(a).erfinv(a)


@_erfinv.defvjp
def _erfinv_vjp(ctx, g):
    out = ctx.output
    return g * exp(out * out) * _HALF_SQRT_PI


@defpointwise("lgamma")
def _lgamma(a):
    # NOTE: scipy's gammaln(-inf) is -inf; C's lgamma (and PyTorch) give +inf there.
    xp = array_module(a)
    return xp.where(xp.isneginf(a), xp.inf, special_module(a).gammaln(a)).astype(a.dtype)


@_lgamma.defvjp
def _lgamma_vjp(ctx, g):
    return g * digamma(ctx.inputs[0])


@defpointwise("digamma")
def _digamma(a):
    return special_module(a).psi(a)


@_digamma.defvjp
def _digamma_vjp(ctx, g):
    return g * _polygamma_fn(1, ctx.inputs[0])


@defpointwise("polygamma")
def _polygamma(a, n):
    sp = special_module(a)
    return sp.psi(a) if n == 0 else sp.polygamma(n, a)


@_polygamma.defvjp
def _polygamma_vjp(ctx, g):
    return g * _polygamma_fn(ctx.params["n"] + 1, ctx.inputs[0])


erf = float_unary(_erf, "erf", "erf_vml_cpu")
erfc = float_unary(_erfc, "erfc", "erfc_vml_cpu")
erfinv = float_unary(_erfinv, "erfinv", "erfinv_vml_cpu")
lgamma = float_unary(_lgamma, "lgamma", "lgamma_vml_cpu")
digamma = float_unary(_digamma, "digamma", "digamma")


def _polygamma_fn(n, input, out=None):
    check_tensor("polygamma", input, "input", 2)
    if input.dtype.category == 3:
        raise not_implemented("polygamma", input.dtype)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return unary(_polygamma, input, _float(input), out, {"n": int(n)})


@export(method=False)
def polygamma(n, input, *, out=None):
    return _polygamma_fn(n, input, out)


def _polygamma_method(self, n):
    return _polygamma_fn(n, self)


public(_polygamma_method, "polygamma", function=False, inplace=True)


# ---------------------------------------------------------------------- sinc, angle units
@defpointwise("sinc")
def _sinc(a):
    return array_module(a).sinc(a)


@_sinc.defvjp
def _sinc_vjp(ctx, g):
    from .select import where
    x = ctx.inputs[0]
    px = x * math.pi
    d = (px * cos(px) - sin(px)) / (px * x)
    return where(x == 0, 0.0, d) * g


@defpointwise("deg2rad", node="Deg2RadBackward0", save=())
def _deg2rad(a):
    return a * _DEG


@_deg2rad.defvjp
def _deg2rad_vjp(ctx, g):
    return g * _DEG


@defpointwise("rad2deg", node="Rad2DegBackward0", save=())
def _rad2deg(a):
    return a * (1 / _DEG)


@_rad2deg.defvjp
def _rad2deg_vjp(ctx, g):
    return g * (1 / _DEG)


sinc = float_unary(_sinc, "sinc")
deg2rad = float_unary(_deg2rad, "deg2rad",
                      complex_error="deg2rad is not supported for complex tensors.")
rad2deg = float_unary(_rad2deg, "rad2deg",
                      complex_error="rad2deg is not supported for complex tensors.")
