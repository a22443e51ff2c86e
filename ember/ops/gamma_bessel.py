"""Gamma and Bessel functions at torch level: the regularized incomplete gamma functions
(igamma, igammac), the multivariate log-gamma (mvlgamma) and the modified Bessel function i0
(with i1, its derivative, which torch.special exposes). torch.special's other functions are in
special.py."""
import math

from .. import _dtype as dt
from .._tensor import Tensor
from ..backends.special import special_module
from ._elementwise import binary_not_implemented, defpointwise
from .conversion import cast
from .registry import PUBLIC, defop, dispatch, export
from .select import where
from .unary import unary_row


def tiny_safe(x):
    """(x with |x| <= eps replaced by eps, the mask of the others): derivatives with a 1/x
    term are taken at a safe point, as PyTorch does (both branches of `where` differentiate)."""
    eps = dt.finfo(x.dtype).eps
    not_tiny = x.abs() > eps
    return where(not_tiny, x, eps), not_tiny


# ---------------------------------------------------------------------- i0 (and i1 for its VJP)
@defpointwise("special_i1", node="SpecialI1Backward0", save_output=True)
def _i1(a):
    return special_module(a).i1(a)


@_i1.defvjp
def _i1_vjp(ctx, g):
    # i1'(x) = i0(x) - i1(x) / x, whose limit at 0 is 0.5. NOTE: x is made safe before the
    # division, as PyTorch does: `where` differentiates both branches, and 0/0 would put a
    # NaN into the next derivative.
    safe, not_tiny = tiny_safe(ctx.inputs[0])
    return g * where(not_tiny, i0(safe) - ctx.output / safe, 0.5)


_i0, i0 = unary_row("i0", lambda a: special_module(a).i0(a),
                    lambda g, x: g * dispatch(_i1, (x,)), kernel="i0_vml_cpu")


# ---------------------------------------------------------------------- igamma, igammac
def _igamma_forward(a, x, upper):
    out = getattr(special_module(a, x), "gammaincc" if upper else "gammainc")(a, x)
    return out.astype(a.dtype)


def _igamma_vjp(ctx, g):
    name = "igammac" if ctx.params["upper"] else "igamma"
    if ctx.edges[0] is not None:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    exp, lgamma, log = PUBLIC["exp"], PUBLIC["lgamma"], PUBLIC["log"]
    a, x = ctx.inputs
    # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a); Q = 1 - P
    d = exp((a - 1) * log(x) - x - lgamma(a))
    gx = g * (-d if ctx.params["upper"] else d)
    return None, gx   # (inputs come broadcast already; expand undoes it)


_IGAMMA = {}
for _name, _node in (("igamma", "IgammaBackward0"), ("igammac", "IgammacBackward0")):
    _IGAMMA[_name] = defop(_name, node=_node, save=(0, 1))(_igamma_forward)
    _IGAMMA[_name].defvjp(_igamma_vjp)


def _igamma_call(name, input, other):
    for pos, (arg, v) in enumerate((("input", input), ("other", other))):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos + 1}) must be Tensor, "
                            f"not {type(v).__name__}")
    d = dt.result_type(input, other)
    if d.category != dt.FLOATING:
        raise binary_not_implemented(f"{name}_cpu", d, input, other)
    a, x = PUBLIC["broadcast_tensors"](cast(input, d), cast(other, d))
    return dispatch(_IGAMMA[name], (a, x), {"upper": name == "igammac"}, d)


@export(inplace=True)
def igamma(input, other):
    return _igamma_call("igamma", input, other)


@export(inplace=True)
def igammac(input, other):
    return _igamma_call("igammac", input, other)


# ---------------------------------------------------------------------- mvlgamma
@export(inplace=True)
def mvlgamma(input, p):
    lgamma = PUBLIC["lgamma"]
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype.category < dt.FLOATING:
        input = cast(input, dt.get_default_dtype())
    # NOTE: PyTorch 2.13 no longer checks the domain x > (p - 1) / 2 (nan/inf there too)
    # log Gamma_p(x) = p(p-1)/4 log(pi) + sum_j lgamma(x - j/2), j = 0..p-1
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)
