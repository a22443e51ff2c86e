"""Samplers PyTorch implements in custom C++ (gamma, Poisson, binomial), run on the host.

NOTE: these draws are exact in distribution but not PyTorch's numbers: a NumPy Generator is
seeded from 256 bits of ember's stream (so `manual_seed` still makes them repeatable) and
its gamma/Poisson/binomial algorithms do the rest. Gamma samples carry implicit
reparameterisation gradients (d sample / d concentration = -dCDF/dalpha / pdf), so Gamma,
Beta, Dirichlet and StudentT have rsample.
"""
import numpy as np

from .. import backends
from .._random import default_generator
from .._tensor import _wrap
from ..ops.registry import defop, dispatch


def _numpy_rng(generator):
    gen = default_generator if generator is None else generator
    return np.random.Generator(np.random.PCG64(gen.random_uint64(4)))


def _host(t):
    return t._host() if hasattr(t, "_host") else np.asarray(t)


def _to_device(array, like):
    if like._device.type != "cpu":
        array = backends.to_device(like._device, np.asarray(array))
    return array


@defop("_standard_gamma", node="StandardGammaBackward0", save=(0,), save_output=True)
def _standard_gamma_fwd(alpha, rng):
    xp = backends.array_module(alpha)
    a = alpha if xp is np else alpha.get()
    x = rng.standard_gamma(a.astype(np.float64)).astype(alpha.dtype)
    # NOTE: a gamma draw can underflow to 0 for tiny concentrations; PyTorch clamps to tiny.
    x = np.maximum(x, np.finfo(alpha.dtype).tiny)
    return x if xp is np else xp.asarray(x)


@_standard_gamma_fwd.defvjp
def _standard_gamma_vjp(ctx, g):
    alpha = ctx.inputs[0]
    x = ctx.output
    dxda = gamma_sample_grad(_host(x.detach()), _host(alpha.detach()))
    return (g * _wrap(_to_device(dxda.astype(alpha.dtype.np), alpha), alpha.dtype,
                      alpha._device),)


def gamma_sample_grad(x, alpha):
    """d x / d alpha for x ~ Gamma(alpha, 1) held at a fixed CDF value (implicit
    reparameterisation): -(dF/dalpha) / f, dF/dalpha by a central difference of the
    regularised incomplete gamma function."""
    from scipy import special
    x = x.astype(np.float64)
    a = alpha.astype(np.float64)
    h = 1e-5 * np.maximum(a, 1.0)
    h = np.minimum(h, 0.5 * a)
    dF = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        logpdf = (a - 1) * np.log(x) - x - special.gammaln(a)
        out = -dF / np.exp(logpdf)
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) draws of alpha's shape; differentiable in alpha."""
    return dispatch(_standard_gamma_fwd, (alpha,), {"rng": _numpy_rng(generator)},
                    alpha.dtype)


def poisson(rate, generator=None):
    """Poisson(rate) draws as floats of rate's dtype (no gradient, as in PyTorch)."""
    r = _host(rate.detach())
    x = _numpy_rng(generator).poisson(r.astype(np.float64)).astype(r.dtype)
    return _wrap(_to_device(x, rate), rate.dtype, rate._device)


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws as floats of prob's dtype."""
    n = _host(count.detach()).astype(np.int64)
    p = _host(prob.detach()).astype(np.float64)
    x = _numpy_rng(generator).binomial(n, np.clip(p, 0.0, 1.0)).astype(prob.dtype.np)
    return _wrap(_to_device(x, prob), prob.dtype, prob._device)




def regularized_gammainc(a, x):
    """P(a, x) of two broadcastable tensors, as a tensor of x's dtype (no gradient)."""
    from scipy import special
    a, x = a.detach(), x.detach()
    out = special.gammainc(_host(a).astype(np.float64), _host(x).astype(np.float64))
    return _wrap(_to_device(np.asarray(out).astype(x.dtype.np), x), x.dtype, x._device)
