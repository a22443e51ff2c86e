"""KL(p || q) for the pairs PyTorch registers that involve the newer families (Cauchy,
HalfNormal, Pareto, ContinuousBernoulli, LowRankMultivariateNormal) and transformed
distributions. Pairs whose q cannot cover p's support give +inf."""
import math

import ember

from .bounded import ContinuousBernoulli
from .continuous import Beta, Exponential, Gamma, Laplace, Normal, Uniform
from .exp_family import ExponentialFamily
from .heavy_tailed import Cauchy, Pareto
from .kl import kl_divergence, register_kl
from .lowrank_multivariate_normal import (LowRankMultivariateNormal,
                                          _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .positive import HalfNormal
from .transformed import Gumbel, TransformedDistribution
from .utils import _sum_rightmost

__all__ = []


def _infinite_like(t):
    return ember.full_like(t, math.inf)


def _inf_where(mask, t):
    return ember.where(mask, ember.full_like(t, math.inf), t)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019): log(((s_p + s_q)^2 + (m_p - m_q)^2) / (4 s_p s_q))
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    return 0.5 * (var_ratio - 1 - var_ratio.log())


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normaliser between q's and p's natural parameters:
    A(eta_q) - A(eta_p) - <eta_q - eta_p, dA/deta(eta_p)>."""
    if type(p) is not type(q):
        # NOTE: the run of spaces is PyTorch's message, character for character
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot" + " " * 29 + "be computed using Bregman "
                                  "divergences")
    p_nparams, p_log_normalizer, grads = p._log_normalizer_and_grads()
    result = q._log_normalizer(*q._natural_params) - p_log_normalizer
    for p_eta, q_eta, g in zip(p_nparams, q._natural_params, grads):
        result = result - _sum_rightmost((q_eta - p_eta) * g, len(q.event_shape))
    return result


# ---- Pareto ----------------------------------------------------------------------------

@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # q puts no mass below its scale, where p has some
    return _inf_where(p.scale < q.scale, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 - t2 + t3 - 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common_term = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common_term
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common_term
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(p.alpha <= 1, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common_term = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common_term.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common_term - q.loc).pow(2)
    return _inf_where(p.alpha <= 2, t1 - t2 + (t3 + t4) / var_normal - 1)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    # E_p[log x] for x uniform on [low, high]
    mean_log = (p.high.log() * p.high - p.low.log() * p.low - width) / width
    result = mean_log * (q.alpha + 1) - (q.alpha * q.scale.pow(q.alpha) * width).log()
    return _inf_where(p.low < q.scale, result)


def _register_infinite(pairs, parameter):
    """Pairs where q's support misses part of p's: KL is +inf, shaped like p's `parameter`."""
    for type_p, type_q in pairs:
        def kl(p, q):
            return _infinite_like(getattr(p, parameter))
        register_kl(type_p, type_q)(kl)


_register_infinite([(Pareto, Beta), (Pareto, ContinuousBernoulli), (Pareto, Uniform)], "scale")
_register_infinite([(Beta, Pareto)], "concentration1")
_register_infinite([(ContinuousBernoulli, Pareto)], "probs")
_register_infinite([(Exponential, Pareto), (Exponential, ContinuousBernoulli)], "rate")
_register_infinite([(Gamma, Pareto), (Gamma, ContinuousBernoulli)], "concentration")
_register_infinite([(Gumbel, Pareto), (Gumbel, ContinuousBernoulli), (Laplace, Pareto),
                    (Laplace, ContinuousBernoulli), (Normal, Pareto),
                    (Normal, ContinuousBernoulli)], "loc")


# ---- ContinuousBernoulli ------------------------------------------------------------------

def _cross_entropy_with_continuous_bernoulli(p, q):
    """-E_p[log q(x)] for q continuous Bernoulli: only p's mean enters."""
    return -p.mean * q.logits - ember.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + ember.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - ember.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_with_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() + _cross_entropy_with_continuous_bernoulli(p, q)
    return _inf_where((p.high > 1) | (p.low < 0), result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - ember.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + ember.square(q.loc / q.scale)) + ember.log(q.scale)
    t3 = ((p.variance + ember.square(p.mean) - 2.0 * q.loc * p.mean)
          / (2.0 * ember.square(q.scale)))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


# ---- low-rank multivariate normals ------------------------------------------------------
# KL = (log det Sq - log det Sp + tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n) / 2, each
# term through the structure of the covariance at hand (capacitance or Cholesky factor).

_LOWRANK_SHAPES = ("KL-divergence between two Low Rank Multivariate Normals with"
                   "                          different event shapes cannot be computed")
_MIXED_SHAPES = ("KL-divergence between two (Low Rank) Multivariate Normals with"
                 "                          different event shapes cannot be computed")


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _mvn_logdet(d):
    return 2 * d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _batch_trace_XXT(bmat):
    """tr(X X^T) = the sum of X's squared entries, per matrix of the batch."""
    return bmat.pow(2).sum((-2, -1))


def _lowrank_trace_against(q, factors):
    """tr(Sq^-1 F F^T) for q low-rank, summed over the columns of the factors F given:
    by Woodbury, |D^-1/2 F|^2 - |C^-1 W^T D^-1 F|^2."""
    W, Dq = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    A = ember.linalg.solve_triangular(q._capacitance_tril, W.mT / Dq.unsqueeze(-2),
                                      upper=False)
    total = 0
    for F in factors:
        total = (total + _batch_trace_XXT(F * Dq.rsqrt().unsqueeze(-1))
                 - _batch_trace_XXT(ember.matmul(A, F)))
    return total


def _lowrank_mahalanobis(q, diff):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      diff, q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_LOWRANK_SHAPES)
    logdet = _lowrank_logdet(q) - _lowrank_logdet(p)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    # Sp = Wp Wp^T + diag(Dp): its two factors Wp and diag(sqrt Dp)
    p_diag_factor = ember.diag_embed(p._unbroadcasted_cov_diag.sqrt())
    trace = _lowrank_trace_against(q, [p._unbroadcasted_cov_factor, p_diag_factor])
    return 0.5 * (logdet + trace + mahalanobis - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_MIXED_SHAPES)
    logdet = _lowrank_logdet(q) - _mvn_logdet(p)
    mahalanobis = _lowrank_mahalanobis(q, q.loc - p.loc)
    trace = _lowrank_trace_against(q, [p._unbroadcasted_scale_tril])
    return 0.5 * (logdet + trace + mahalanobis - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(_MIXED_SHAPES)
    logdet = _mvn_logdet(q) - _lowrank_logdet(p)
    mahalanobis = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    n = p.event_shape[0]
    # tr(Sq^-1 Sp) = |Lq^-1 Wp|^2 + |Lq^-1 diag(sqrt Dp)|^2
    batch = ember.broadcast_shapes(tuple(q._unbroadcasted_scale_tril.shape[:-2]),
                                   tuple(p._unbroadcasted_cov_factor.shape[:-2]))
    Lq = q._unbroadcasted_scale_tril.expand(tuple(batch) + (n, n))
    trace = 0
    for F in (p._unbroadcasted_cov_factor, ember.diag_embed(p._unbroadcasted_cov_diag.sqrt())):
        F = F.expand(tuple(batch) + tuple(F.shape[-2:]))
        trace = trace + _batch_trace_XXT(ember.linalg.solve_triangular(Lq, F, upper=False))
    return 0.5 * (logdet + trace + mahalanobis - n)
