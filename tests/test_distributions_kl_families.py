"""KL divergences of the newer ember.distributions families, and every pair torch registers
between different families, against torch.distributions.kl_divergence on the same inputs."""
import numpy as np
import pytest
from test_distributions_families import CORR_L, W_COV, _message, _np

import ember

D = ember.distributions


def _pair(make_p, make_q):
    def run(m):
        return make_p(m), make_q(m)
    return run


def _t(m, x):
    return m.tensor(x)


KL_PAIRS = {
    "Cauchy-Cauchy": _pair(lambda m: m.distributions.Cauchy(_t(m, [0., 1.]), _t(m, [1., 2.])),
                           lambda m: m.distributions.Cauchy(_t(m, [1., 0.]),
                                                            _t(m, [2., 0.5]))),
    "HalfNormal-HalfNormal": _pair(lambda m: m.distributions.HalfNormal(_t(m, [1., 2.])),
                                   lambda m: m.distributions.HalfNormal(_t(m, [0.5, 3.]))),
    "Pareto-Pareto": _pair(lambda m: m.distributions.Pareto(_t(m, [1., 2.]), _t(m, [3., 1.5])),
                           lambda m: m.distributions.Pareto(_t(m, [0.5, 3.]),
                                                            _t(m, [2., 1.]))),
    "Pareto-Exponential": _pair(lambda m: m.distributions.Pareto(_t(m, [1., 2.]),
                                                                 _t(m, [3., 0.5])),
                                lambda m: m.distributions.Exponential(_t(m, [0.5, 2.]))),
    "Pareto-Gamma": _pair(lambda m: m.distributions.Pareto(_t(m, [1., 2.]), _t(m, [3., 0.5])),
                          lambda m: m.distributions.Gamma(_t(m, [2., 1.]), _t(m, [1., 3.]))),
    "Pareto-Normal": _pair(lambda m: m.distributions.Pareto(_t(m, [1., 2.]), _t(m, [3., 1.5])),
                           lambda m: m.distributions.Normal(_t(m, [0., 1.]), _t(m, [2., 1.]))),
    "Pareto-Uniform": _pair(lambda m: m.distributions.Pareto(_t(m, [1.]), _t(m, [3.])),
                            lambda m: m.distributions.Uniform(_t(m, [0.]), _t(m, [9.]))),
    "Normal-Pareto": _pair(lambda m: m.distributions.Normal(_t(m, [0.]), _t(m, [1.])),
                           lambda m: m.distributions.Pareto(_t(m, [1.]), _t(m, [3.]))),
    "Uniform-Pareto": _pair(lambda m: m.distributions.Uniform(_t(m, [1.5, 0.5]),
                                                              _t(m, [4., 2.])),
                            lambda m: m.distributions.Pareto(_t(m, [1., 1.]),
                                                             _t(m, [3., 2.]))),
    "ContinuousBernoulli-ContinuousBernoulli": _pair(
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.5, 0.9])),
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.6, 0.3, 0.4995]))),
    "ContinuousBernoulli-Exponential": _pair(
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.9])),
        lambda m: m.distributions.Exponential(_t(m, [0.5, 2.]))),
    "ContinuousBernoulli-Normal": _pair(
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.9])),
        lambda m: m.distributions.Normal(_t(m, [0., 1.]), _t(m, [2., 0.5]))),
    "ContinuousBernoulli-Uniform": _pair(
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.9])),
        lambda m: m.distributions.Uniform(_t(m, [-1., 0.5]), _t(m, [2., 1.]))),
    "ContinuousBernoulli-Pareto": _pair(
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2])),
        lambda m: m.distributions.Pareto(_t(m, [1.]), _t(m, [2.]))),
    "Beta-ContinuousBernoulli": _pair(
        lambda m: m.distributions.Beta(_t(m, [0.5, 2.]), _t(m, [1., 3.])),
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.9]))),
    "Uniform-ContinuousBernoulli": _pair(
        lambda m: m.distributions.Uniform(_t(m, [0.1, -1.]), _t(m, [0.5, 0.5])),
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2, 0.9]))),
    "Gamma-ContinuousBernoulli": _pair(
        lambda m: m.distributions.Gamma(_t(m, [2.]), _t(m, [1.])),
        lambda m: m.distributions.ContinuousBernoulli(_t(m, [0.2]))),
    "Exponential-Pareto": _pair(lambda m: m.distributions.Exponential(_t(m, [1.])),
                                lambda m: m.distributions.Pareto(_t(m, [1.]), _t(m, [2.]))),
    "LowRank-LowRank": _pair(
        lambda m: m.distributions.LowRankMultivariateNormal(
            _t(m, [0., 1., 2.]), _t(m, [[1.], [0.5], [0.2]]), _t(m, [1., 2., 0.5])),
        lambda m: m.distributions.LowRankMultivariateNormal(
            _t(m, [[1., 0., 0.], [0., 0., 1.]]), _t(m, [[0.3, 1.], [0., 2.], [1., 1.]]),
            _t(m, [0.5, 1., 1.5]))),
    "LowRank-MVN": _pair(
        lambda m: m.distributions.LowRankMultivariateNormal(
            _t(m, [0., 1., 2.]), _t(m, [[1.], [0.5], [0.2]]), _t(m, [1., 2., 0.5])),
        lambda m: m.distributions.MultivariateNormal(_t(m, [1., 0., 0.]), _t(m, W_COV))),
    "MVN-LowRank": _pair(
        lambda m: m.distributions.MultivariateNormal(_t(m, [1., 0., 0.]), _t(m, W_COV)),
        lambda m: m.distributions.LowRankMultivariateNormal(
            _t(m, [0., 1., 2.]), _t(m, [[1.], [0.5], [0.2]]), _t(m, [1., 2., 0.5]))),
    "Wishart-Wishart (Bregman)": _pair(
        lambda m: m.distributions.Wishart(_t(m, [5.0, 4.0]), _t(m, W_COV)),
        lambda m: m.distributions.Wishart(_t(m, 6.0), scale_tril=_t(m, CORR_L))),
    "LogNormal-LogNormal (transformed)": _pair(
        lambda m: m.distributions.LogNormal(_t(m, [0., 1.]), _t(m, [1., 2.])),
        lambda m: m.distributions.LogNormal(_t(m, [1., 0.]), _t(m, [2., 0.5]))),
}


@pytest.mark.parametrize("name", list(KL_PAIRS))
def test_kl_divergence_matches_torch(name, torch_mod):
    got = D.kl_divergence(*KL_PAIRS[name](ember))
    ref = torch_mod.distributions.kl_divergence(*KL_PAIRS[name](torch_mod))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(_np(got), _np(ref), rtol=2e-5, atol=2e-6)


KL_ERRORS = {
    "different exponential families": lambda m: m.distributions.kl_divergence(
        m.distributions.Normal(0.0, 1.0), m.distributions.Poisson(1.0)),
    "lowrank event shapes": lambda m: m.distributions.kl_divergence(
        m.distributions.LowRankMultivariateNormal(m.zeros(3), m.ones(3, 1), m.ones(3)),
        m.distributions.LowRankMultivariateNormal(m.zeros(2), m.ones(2, 1), m.ones(2))),
    "lowrank-mvn event shapes": lambda m: m.distributions.kl_divergence(
        m.distributions.LowRankMultivariateNormal(m.zeros(3), m.ones(3, 1), m.ones(3)),
        m.distributions.MultivariateNormal(m.zeros(2), m.eye(2))),
    "transformed different transforms": lambda m: m.distributions.kl_divergence(
        m.distributions.LogNormal(0.0, 1.0),
        m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0),
                                                [m.distributions.SigmoidTransform()])),
}


@pytest.mark.parametrize("case", list(KL_ERRORS), ids=list(KL_ERRORS))
def test_kl_errors_match_torch(case, torch_mod):
    ref = _message(lambda: KL_ERRORS[case](torch_mod))
    assert ref is not None and _message(lambda: KL_ERRORS[case](ember)) == ref


# one instance per family for the cross-family KL table (batch of two)
KL_FAMILY = {
    "Bernoulli": lambda m: m.distributions.Bernoulli(m.tensor([0.2, 0.7])),
    "Binomial": lambda m: m.distributions.Binomial(m.tensor([5., 8.]), m.tensor([0.2, 0.7])),
    "Geometric": lambda m: m.distributions.Geometric(m.tensor([0.2, 0.7])),
    "Poisson": lambda m: m.distributions.Poisson(m.tensor([0.5, 3.])),
    "Beta": lambda m: m.distributions.Beta(m.tensor([0.5, 2.]), m.tensor([1.5, 3.])),
    "Exponential": lambda m: m.distributions.Exponential(m.tensor([0.5, 2.])),
    "Gamma": lambda m: m.distributions.Gamma(m.tensor([0.5, 2.]), m.tensor([1.5, 3.])),
    "Gumbel": lambda m: m.distributions.Gumbel(m.tensor([0.5, -1.]), m.tensor([1.5, 0.7])),
    "Laplace": lambda m: m.distributions.Laplace(m.tensor([0.5, -1.]), m.tensor([1.5, 0.7])),
    "Normal": lambda m: m.distributions.Normal(m.tensor([0.5, -1.]), m.tensor([1.5, 0.7])),
    "Uniform": lambda m: m.distributions.Uniform(m.tensor([0.1, 0.3]), m.tensor([0.6, 0.9])),
    "ContinuousBernoulli": lambda m: m.distributions.ContinuousBernoulli(
        m.tensor([0.3, 0.8])),
    "Pareto": lambda m: m.distributions.Pareto(m.tensor([0.2, 0.5]), m.tensor([3.0, 2.5])),
    "Cauchy": lambda m: m.distributions.Cauchy(m.tensor([0.5, -1.]), m.tensor([1.5, 0.7])),
    "HalfNormal": lambda m: m.distributions.HalfNormal(m.tensor([1.5, 0.7])),
}


def _torch_pairs():
    try:
        from torch.distributions.kl import _KL_REGISTRY
    except ImportError:
        return []
    return sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY
                  if p.__name__ in KL_FAMILY and q.__name__ in KL_FAMILY)


@pytest.mark.parametrize("pair", _torch_pairs(), ids="-".join)
def test_every_registered_kl_pair_matches_torch(pair, torch_mod):
    """Every pair torch registers among these families, on the same parameters."""
    p, q = pair
    got = D.kl_divergence(KL_FAMILY[p](ember), KL_FAMILY[q](ember))
    ref = torch_mod.distributions.kl_divergence(KL_FAMILY[p](torch_mod),
                                                KL_FAMILY[q](torch_mod))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(_np(got), _np(ref), rtol=2e-5, atol=2e-6)


def test_kl_support_mismatch_and_binomial_counts(torch_mod):
    """+inf where q misses part of p's support; torch's error for fewer trials in p."""
    def pairs(m):
        dist = m.distributions
        return [(dist.Uniform(m.tensor([-0.5, 0.1]), m.tensor([0.5, 0.9])),
                 dist.Exponential(m.tensor([1.0, 2.0]))),
                (dist.Uniform(m.tensor([-0.5, 0.1]), m.tensor([0.5, 0.9])),
                 dist.Beta(m.tensor([1.0, 2.0]), m.tensor([2.0, 1.0]))),
                (dist.Binomial(m.tensor([5., 8.]), m.tensor([0.2, 0.7])),
                 dist.Binomial(m.tensor([5., 6.]), m.tensor([0.4, 0.5])))]
    for (ep, eq), (tp, tq) in zip(pairs(ember), pairs(torch_mod)):
        np.testing.assert_allclose(_np(D.kl_divergence(ep, eq)),
                                   _np(torch_mod.distributions.kl_divergence(tp, tq)),
                                   rtol=2e-5)

    def fewer(m):
        return m.distributions.kl_divergence(
            m.distributions.Binomial(m.tensor([5.]), m.tensor([0.2])),
            m.distributions.Binomial(m.tensor([6.]), m.tensor([0.2])))
    assert _message(lambda: fewer(ember)) == _message(lambda: fewer(torch_mod)) is not None
