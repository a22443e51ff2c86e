"""Samplers PyTorch implements in custom C++ (gamma, Dirichlet, Poisson, binomial), run on the
host.

The draws replay PyTorch's scalar samplers on ember's generator (`_scalar_samplers`), so
seeded draws are PyTorch's numbers. Gamma samples carry implicit reparameterisation gradients
(d sample / d concentration = -dCDF/dalpha / pdf), so Gamma, Beta, Dirichlet, StudentT and the
families built on them have rsample.
"""
import numpy as np

from .. import backends
from .._dtype import finfo, float64
from .._random import default_generator
from .._tensor import _wrap
from ..ops.registry import defop, dispatch
from ._scalar_samplers import binomial_draws, gamma_draws, poisson_draws


def _generator(generator):
    return default_generator if generator is None else generator


def _host(t):
    return t._host() if hasattr(t, "_host") else np.asarray(t)


def _to_device(array, like):
    if like._device.type != "cpu":
        array = backends.to_device(like._device, np.asarray(array))
    return array


@defop("_standard_gamma", node="StandardGammaBackward0", save=(0,), save_output=True)
def _standard_gamma_fwd(alpha, generator):
    xp = backends.array_module(alpha)
    a = np.ascontiguousarray(alpha if xp is np else alpha.get())
    x = gamma_draws(a.astype(np.float64).reshape(-1), generator,
                    single=a.dtype != np.float64).astype(a.dtype).reshape(a.shape)
    # NOTE: a gamma draw can underflow to 0 for tiny concentrations; PyTorch clamps to tiny.
    x = np.maximum(x, np.finfo(a.dtype).tiny)
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
    from scipy import special   # (deferred: scipy.special loads on first use)
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
    """Gamma(alpha, 1) draws of alpha's shape, PyTorch's numbers; differentiable in alpha."""
    return dispatch(_standard_gamma_fwd, (alpha,), {"generator": _generator(generator)},
                    alpha.dtype)


def sample_dirichlet(concentration, generator=None):
    """Dirichlet draws as PyTorch's `_sample_dirichlet`: gamma draws in float64 (tiny
    concentrations would underflow in float32), normalised in float64, clamped into
    [tiny, 1) and rounded to the concentration's dtype. Differentiable in the concentration."""
    gammas = standard_gamma(concentration.to(float64), generator)
    draws = gammas / gammas.sum(-1, keepdim=True)
    dtype = concentration.dtype
    upper = float(np.nextafter(dtype.np.type(1.0), dtype.np.type(0.0)))
    return draws.to(dtype).clamp(min=finfo(dtype).tiny, max=upper)


def poisson(rate, generator=None):
    """Poisson(rate) draws as floats of rate's dtype, PyTorch's numbers (no gradient)."""
    r = np.ascontiguousarray(_host(rate.detach()))
    x = poisson_draws(r.astype(np.float64).reshape(-1), _generator(generator))
    return _wrap(_to_device(x.astype(r.dtype).reshape(r.shape), rate), rate.dtype,
                 rate._device)


def binomial(count, prob, generator=None):
    """Binomial(count, prob) draws as floats of prob's dtype, PyTorch's numbers."""
    n = np.ascontiguousarray(_host(count.detach()))
    p = np.ascontiguousarray(_host(prob.detach()))
    x = binomial_draws(n.astype(np.float64).reshape(-1), p.astype(np.float64).reshape(-1),
                       _generator(generator), single=p.dtype != np.float64)
    return _wrap(_to_device(x.astype(p.dtype).reshape(p.shape), prob), prob.dtype,
                 prob._device)


def regularized_gammainc(a, x):
    """P(a, x) of two broadcastable tensors, as a tensor of x's dtype (no gradient)."""
    from scipy import special   # (deferred: as above)
    a, x = a.detach(), x.detach()
    out = special.gammainc(_host(a).astype(np.float64), _host(x).astype(np.float64))
    return _wrap(_to_device(np.asarray(out).astype(x.dtype.np), x), x.dtype, x._device)
