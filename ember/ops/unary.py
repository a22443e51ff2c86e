"""Unary floating functions: exp/log families, trigonometric and hyperbolic functions,
sigmoid/logit, the error and gamma functions, sinc and angle conversions. Most are one row of
a table (`unary_row`): name, forward on arrays, gradient in ember ops, what it reads.

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
from .select import where

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_HALF_SQRT_PI = 0.5 * math.sqrt(math.pi)
_DEG = math.pi / 180.0
INPUT, OUTPUT, NOTHING = "input", "output", "nothing"   # what a table row's gradient reads


def float_unary(op, name, kernel=None, aliases=(), complex_error=None):
    """Export `op` as ember.<name>, Tensor.<name> and Tensor.<name>_.

    `kernel`: the kernel name in PyTorch's "not implemented for 'ComplexFloat'" error, for
    functions without complex support (`complex_error` gives a RuntimeError text instead).
    """
    def fn(input, *, out=None):
        if not isinstance(input, Tensor):
            check_tensor(name, input)
        d = input.dtype
        if d.category == dt.COMPLEX:
            if complex_error is not None:
                raise RuntimeError(complex_error)
            if kernel is not None:
                raise not_implemented(kernel, d)
        return unary(op, input, d if d.category >= dt.FLOATING else dt.get_default_dtype(), out)
    return public(fn, name, inplace=True, aliases=aliases)


def unary_row(name, forward, gradient, reads=INPUT, node=None, **options):
    """One row of the unary table: the registry op `name` (`forward` on arrays, the VJP
    `gradient(g, v)` in ember ops, `v` what the row reads: the input, the output, or nothing)
    and its public function (float_unary's `options`). Returns (op, function)."""
    if reads == INPUT:
        op = defpointwise(name, node=node)(forward)
        op.defvjp(lambda ctx, g: gradient(g, ctx.inputs[0]))
    elif reads == OUTPUT:
        op = defpointwise(name, node=node, save=(), save_output=True)(forward)
        op.defvjp(lambda ctx, g: gradient(g, ctx.output))
    else:
        op = defpointwise(name, node=node, save=())(forward)
        op.defvjp(lambda ctx, g: gradient(g, None))
    return op, float_unary(op, name, **options)


def _xp(fn):
    """A forward calling the array module's `fn` (NumPy's or CuPy's)."""
    return lambda a: getattr(array_module(a), fn)(a)


# The table. A row reading the OUTPUT keeps it instead of the input (exp, tanh, sigmoid: the
# derivative is cheaper from the result).
# ---------------------------------------------------------------------- exponentials, logs
_exp, exp = unary_row("exp", lambda a: elementwise.unary("exp", a), lambda g, y: g * y, OUTPUT)
_exp2, exp2 = unary_row("exp2", _xp("exp2"), lambda g, y: g * y * _LN2, OUTPUT)
_expm1, expm1 = unary_row("expm1", _xp("expm1"), lambda g, y: g * (y + 1), OUTPUT)
_log, log = unary_row("log", _xp("log"), lambda g, x: g / x)
_log2, log2 = unary_row("log2", _xp("log2"), lambda g, x: g / (x * _LN2))
_log10, log10 = unary_row("log10", _xp("log10"), lambda g, x: g / (x * _LN10))
_log1p, log1p = unary_row("log1p", _xp("log1p"), lambda g, x: g / (x + 1),
                          node="Log1PBackward0")
_sqrt, sqrt = unary_row("sqrt", lambda a: elementwise.unary("sqrt", a),
                        lambda g, y: g / (2 * y), OUTPUT)
_rsqrt, rsqrt = unary_row("rsqrt", lambda a: 1 / array_module(a).sqrt(a),
                          lambda g, y: g * (y * y * y) * -0.5, OUTPUT)
_reciprocal, reciprocal = unary_row("reciprocal", _xp("reciprocal"),
                                    lambda g, y: -g * (y * y), OUTPUT)

# ---------------------------------------------------------------------- trigonometric
_sin, sin = unary_row("sin", _xp("sin"), lambda g, x: g * cos(x))
_cos, cos = unary_row("cos", _xp("cos"), lambda g, x: -(g * sin(x)))
_tan, tan = unary_row("tan", _xp("tan"), lambda g, y: g * (y * y + 1), OUTPUT)
_asin, asin = unary_row("asin", _xp("arcsin"), lambda g, x: g * rsqrt(1 - x * x),
                        aliases=("arcsin",))
_acos, acos = unary_row("acos", _xp("arccos"), lambda g, x: -(g * rsqrt(1 - x * x)),
                        aliases=("arccos",))
_atan, atan = unary_row("atan", _xp("arctan"), lambda g, x: g / (x * x + 1),
                        aliases=("arctan",))

# ---------------------------------------------------------------------- hyperbolic
_sinh, sinh = unary_row("sinh", _xp("sinh"), lambda g, x: g * cosh(x))
_cosh, cosh = unary_row("cosh", _xp("cosh"), lambda g, x: g * sinh(x))
_tanh, tanh = unary_row("tanh", _xp("tanh"), lambda g, y: g * (1 - y * y), OUTPUT)
_asinh, asinh = unary_row("asinh", _xp("arcsinh"), lambda g, x: g * rsqrt(x * x + 1),
                          aliases=("arcsinh",))
_acosh, acosh = unary_row("acosh", _xp("arccosh"), lambda g, x: g * rsqrt(x * x - 1),
                          aliases=("arccosh",))
_atanh, atanh = unary_row("atanh", _xp("arctanh"), lambda g, x: g / (1 - x * x),
                          aliases=("arctanh",))

# ---------------------------------------------------------------------- sigmoid, logit
_sigmoid, sigmoid = unary_row("sigmoid", lambda a: elementwise.unary("sigmoid", a),
                              lambda g, y: g * y * (1 - y), OUTPUT)


@defpointwise("logit")
def _logit(a, eps=None):
    xp = array_module(a)
    if eps is not None:
        a = xp.clip(a, eps, 1 - eps)
    return xp.log(a / (1 - a))


@_logit.defvjp
def _logit_vjp(ctx, g):
    x = ctx.inputs[0]
    eps = ctx.params.get("eps")
    d = g / (x * (1 - x))
    if eps is None:
        return where((x < 0) | (x > 1), math.nan, d)
    return where((x < eps) | (x > 1 - eps), 0.0, d)


@export(inplace=True)
def logit(input, eps=None, *, out=None):
    check_tensor("logit", input)
    if input.dtype.category == dt.COMPLEX:
        raise not_implemented("logit_cpu", input.dtype)
    params = {} if eps is None else {"eps": float(eps)}
    return unary(_logit, input, _float(input), out, params)


def _float(input):
    d = input.dtype
    return d if d.category >= dt.FLOATING else dt.get_default_dtype()


# ---------------------------------------------------------------------- error, gamma functions
def _lgamma_forward(a):
    # NOTE: scipy's gammaln(-inf) is -inf; C's lgamma (and PyTorch) give +inf there.
    xp = array_module(a)
    return xp.where(xp.isneginf(a), xp.inf, special_module(a).gammaln(a)).astype(a.dtype)


_erf, erf = unary_row("erf", lambda a: special_module(a).erf(a),
                      lambda g, x: g * exp(-(x * x)) * _TWO_OVER_SQRT_PI, kernel="erf_vml_cpu")
_erfc, erfc = unary_row("erfc", lambda a: special_module(a).erfc(a),
                        lambda g, x: g * exp(-(x * x)) * -_TWO_OVER_SQRT_PI,
                        kernel="erfc_vml_cpu")
_erfinv, erfinv = unary_row("erfinv", lambda a: special_module(a).erfinv(a),
                            lambda g, y: g * exp(y * y) * _HALF_SQRT_PI, OUTPUT,
                            kernel="erfinv_vml_cpu")
_lgamma, lgamma = unary_row("lgamma", _lgamma_forward, lambda g, x: g * digamma(x),
                            kernel="lgamma_vml_cpu")
_digamma, digamma = unary_row("digamma", lambda a: special_module(a).psi(a),
                              lambda g, x: g * _polygamma_fn(1, x), kernel="digamma")


@defpointwise("polygamma")
def _polygamma(a, n):
    sp = special_module(a)
    if n == 0:
        return sp.psi(a)
    # (n as an array of a's library: cupyx's polygamma tests `n == 0` with cupy.where, which
    # refuses the Python bool a Python n gives)
    return sp.polygamma(array_module(a).asarray(n), a).astype(a.dtype, copy=False)


@_polygamma.defvjp
def _polygamma_vjp(ctx, g):
    return g * _polygamma_fn(ctx.params["n"] + 1, ctx.inputs[0])


def _polygamma_fn(n, input, out=None):
    check_tensor("polygamma", input, "input", 2)
    if input.dtype.category == dt.COMPLEX:
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
    x = ctx.inputs[0]
    px = x * math.pi
    d = (px * cos(px) - sin(px)) / (px * x)
    return where(x == 0, 0.0, d) * g


sinc = float_unary(_sinc, "sinc")
_deg2rad, deg2rad = unary_row(
    "deg2rad", lambda a: a * _DEG, lambda g, _: g * _DEG, NOTHING, node="Deg2RadBackward0",
    complex_error="deg2rad is not supported for complex tensors.")
_rad2deg, rad2deg = unary_row(
    "rad2deg", lambda a: a * (1 / _DEG), lambda g, _: g * (1 / _DEG), NOTHING,
    node="Rad2DegBackward0", complex_error="rad2deg is not supported for complex tensors.")
