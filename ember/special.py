"""ember.special (torch.special): every function of PyTorch's module, with its names and
signatures. Functions ember already had as top-level ops are the same ops here (erf, i0,
lgamma as gammaln, sigmoid as expit, ...); the rest are registry entries in ops/special.py
and ops/special_polynomials.py. Loaded on first use of `ember.special`."""
import math

import ember

from ._dtype import FLOATING
from ._inplace import write_out
from ._tensor import Tensor  # noqa: F401  (torch.special re-exports it too)
from .ops._elementwise import check_tensor, not_implemented
from .ops.registry import PUBLIC
from .ops.special import (NOT_DIFFERENTIABLE, check_overloads, entr, erfcx,  # noqa: F401
                          i0e, i1, i1e, log_ndtr, ndtri, xlog1py, zeta)
from .ops.special_polynomials import POLYNOMIALS

globals().update(NOT_DIFFERENTIABLE)
globals().update(POLYNOMIALS)

_SQRT1_2 = math.sqrt(0.5)


def _same(name, public_name=None):
    """The top-level op under torch.special's name (a separate function object, so that its
    __name__ and module read as torch.special's)."""
    fn = PUBLIC[public_name or name]

    def special(*args, **kwargs):
        return fn(*args, **kwargs)
    special.__name__ = special.__qualname__ = name
    special.__doc__ = fn.__doc__
    return special


erf = _same("erf")
erfc = _same("erfc")
erfinv = _same("erfinv")
exp2 = _same("exp2")
expm1 = _same("expm1")
log1p = _same("log1p")
i0 = _same("i0")
sinc = _same("sinc")
logit = _same("logit")


def xlogy(input, other, *, out=None):
    check_overloads("special_xlogy", input, other)
    return PUBLIC["xlogy"](input, other, out=out)


digamma = _same("digamma")
psi = _same("psi", "digamma")
gammaln = _same("gammaln", "lgamma")
expit = _same("expit", "sigmoid")
polygamma = _same("polygamma")
logsumexp = _same("logsumexp")


def multigammaln(input, p, *, out=None):
    return _out(PUBLIC["mvlgamma"](input, p), out)


def _out(result, out):
    if out is None:
        return result
    return write_out(result, out)


def _igamma(fname, public_name, input, other, out):
    for pos, (arg, v) in enumerate((("input", input), ("other", other))):
        check_tensor(fname, v, arg, pos + 1)
    return _out(PUBLIC[public_name](input, other), out)


def gammainc(input, other, *, out=None):
    return _igamma("special_gammainc", "igamma", input, other, out)


def gammaincc(input, other, *, out=None):
    return _igamma("special_gammaincc", "igammac", input, other, out)


def ndtr(input, *, out=None):
    # PyTorch's composite (its gradient comes from erf's): Phi(x) = (1 + erf(x / sqrt 2)) / 2
    check_tensor("special_ndtr", input)
    return _out((1 + PUBLIC["erf"](input * _SQRT1_2)) * 0.5, out)


def round(input, *, decimals=0, out=None):
    check_tensor("special_round", input)
    if input.dtype.category < FLOATING:   # (torch.round takes integers; special.round does not)
        raise not_implemented("round_vml_cpu", input.dtype)
    return PUBLIC["round"](input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    return ember.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return ember.log_softmax(input, dim, dtype=dtype)


__all__ = sorted(["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma",
                  "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
                  "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
                  "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
                  "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                  "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax",
                  "spherical_bessel_j0", "xlog1py", "xlogy", "zeta", *POLYNOMIALS])
