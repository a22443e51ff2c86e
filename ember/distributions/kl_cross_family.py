"""KL(p || q) between different families, for the pairs PyTorch registers among the older
families (Bernoulli, Binomial, Geometric, Poisson, Beta, Exponential, Gamma, Gumbel, Laplace,
Normal, Uniform).

Most are written as cross entropy minus entropy, -H(p) - E_p[log q(X)], with E_p[log q(X)] in
closed form from p's moments; pairs where q's support misses part of p's give +inf.
"""
import math

import ember

from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .discrete import Bernoulli, Binomial, Geometric, Poisson
from .kl import register_kl
from .transformed import Gumbel
from .utils import euler_constant

__all__ = []

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _infinite_like(t):
    return ember.full_like(t, math.inf)


def _inf_where(mask, t):
    return ember.where(mask, ember.full_like(t, math.inf), t)


def _normal_cross_entropy(mean, variance, q):
    """-E_p[log q(X)] for q Normal, from p's mean and variance."""
    return (_HALF_LOG_2PI + q.scale.log()
            + (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2)))


def _gamma_cross_entropy(mean, mean_log, q):
    """-E_p[log q(X)] for q Gamma, from E_p[X] and E_p[log X]."""
    c, r = q.concentration, q.rate
    return -c * r.log() + c.lgamma() - (c - 1) * mean_log + r * mean


def _gumbel_cross_entropy(mean, log_mgf_at, q):
    """-E_p[log q(X)] for q Gumbel: log(scale) + E[z] + E[exp(-z)], z = (X - loc) / scale;
    `log_mgf_at(s)` is log E_p[exp(s X)]."""
    return (q.scale.log() + (mean - q.loc) / q.scale
            + (q.loc / q.scale + log_mgf_at(-q.scale.reciprocal())).exp())


# ---- discrete --------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # p's support reaches past q's where p has more trials: +inf there
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


# ---- Beta ------------------------------------------------------------------------------

def _beta_mean_log(p):
    return p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() + _gamma_cross_entropy(p.mean, _beta_mean_log(p), q)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


# ---- Exponential -------------------------------------------------------------------------

@register_kl(Exponential, Beta)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    mean_log = -euler_constant - p.rate.log()
    return -p.entropy() + _gamma_cross_entropy(p.rate.reciprocal(), mean_log, q)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    def log_mgf(s):
        return (p.rate / (p.rate - s)).log()
    return -p.entropy() + _gumbel_cross_entropy(p.rate.reciprocal(), log_mgf, q)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.rate.reciprocal(), p.rate.pow(-2), q)


# ---- Gamma -----------------------------------------------------------------------------

@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    def log_mgf(s):
        return p.concentration * (p.rate / (p.rate - s)).log()
    return -p.entropy() + _gumbel_cross_entropy(p.mean, log_mgf, q)


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)


# ---- Gumbel, Laplace, Normal: real support ---------------------------------------------

@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Beta)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Beta)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Uniform)
def _kl_real_support_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    def log_mgf(s):
        # E[exp(s X)] = exp(s loc) Gamma(1 - s scale) for X ~ Gumbel(loc, scale)
        return s * p.loc + (1 - s * p.scale).lgamma()
    return -p.entropy() + _gumbel_cross_entropy(p.mean, log_mgf, q)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.loc, p.variance, q)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    def log_mgf(s):
        return s * p.loc + 0.5 * (s * p.scale).pow(2)
    return -p.entropy() + _gumbel_cross_entropy(p.loc, log_mgf, q)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|X - b| for X ~ N(m, s^2), d = m - b: s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / s sqrt 2)
    d = p.loc - q.loc
    mean_abs = (p.scale * math.sqrt(2 / math.pi) * (-(d / p.scale).pow(2) / 2).exp()
                + d * ember.erf(d / (p.scale * math.sqrt(2))))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


# ---- Uniform ---------------------------------------------------------------------------

def _uniform_mean_log(low, high):
    """E[log X] for X uniform on [low, high] (0 <= low < high)."""
    return ((ember.xlogy(high, high) - high) - (ember.xlogy(low, low) - low)) / (high - low)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    log_beta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    cross = (log_beta - (a - 1) * _uniform_mean_log(p.low, p.high)
             - (b - 1) * _uniform_mean_log(1 - p.high, 1 - p.low))
    return _inf_where((p.high > 1) | (p.low < 0), -p.entropy() + cross)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _gamma_cross_entropy(p.mean, _uniform_mean_log(p.low, p.high), q)
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    def log_mgf(s):
        # s < 0: (exp(s low) - exp(s high)) / (-s (high - low)), both parts positive
        return (((s * p.low).exp() - (s * p.high).exp()).log()
                - (-s * (p.high - p.low)).log())
    return -p.entropy() + _gumbel_cross_entropy(p.mean, log_mgf, q)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    return -p.entropy() + _normal_cross_entropy(p.mean, p.variance, q)
