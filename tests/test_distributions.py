"""ember.distributions against torch.distributions (values, shapes, seeded draws, messages)
and against SciPy / moment formulas where torch's sampler is custom C++."""
import numpy as np
import pytest
from scipy import special, stats

import ember
from ember.distributions import _samplers

D = ember.distributions

P3 = [0.2, 0.7, 0.5]
PROBS = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]
COV = [[2.0, 0.5], [0.5, 1.0]]

# name -> (constructor args as a function of the module, support-valid test values)
FAMILIES = {
    "Normal": (lambda m: (m.tensor([0., 1., 2.]), m.tensor([1., 2., 0.5])),
               [[-1.0, 0.5, 3.0]]),
    "Uniform": (lambda m: (m.tensor([0., 1.]), m.tensor([1., 3.])), [[0.25, 2.0]]),
    "Exponential": (lambda m: (m.tensor([0.5, 2.]),), [[0.3, 1.7]]),
    "Laplace": (lambda m: (m.tensor([0., 1.]), m.tensor([1., 2.])), [[-0.5, 2.5]]),
    "Gumbel": (lambda m: (m.tensor([0., 1.]), m.tensor([1., 2.])), [[-0.5, 2.5]]),
    "LogNormal": (lambda m: (m.tensor([0., 1.]), m.tensor([1., 0.5])), [[0.5, 2.5]]),
    "Bernoulli": (lambda m: (m.tensor(P3),), [[0.0, 1.0, 1.0]]),
    "Geometric": (lambda m: (m.tensor(P3),), [[0.0, 3.0, 1.0]]),
    "Categorical": (lambda m: (m.tensor(PROBS),), [[2, 0]]),
    "OneHotCategorical": (lambda m: (m.tensor(PROBS),), [[[0., 0., 1.], [1., 0., 0.]]]),
    "Multinomial": (lambda m: (5, m.tensor(PROBS)), [[[1., 1., 3.], [0., 0., 5.]]]),
    "MultivariateNormal": (lambda m: (m.tensor([0., 1.]), m.tensor(COV)), [[0.5, -1.0]]),
    "RelaxedBernoulli": (lambda m: (m.tensor(0.5), m.tensor(P3)), [[0.1, 0.5, 0.9]]),
    "Gamma": (lambda m: (m.tensor([0.5, 2.]), m.tensor([1., 3.])), [[0.3, 1.2]]),
    "Beta": (lambda m: (m.tensor([0.5, 2.]), m.tensor([1., 3.])), [[0.3, 0.6]]),
    "Dirichlet": (lambda m: (m.tensor([0.5, 2., 1.]),), [[0.2, 0.5, 0.3]]),
    "StudentT": (lambda m: (m.tensor([3., 5.]), m.tensor([0., 1.]), m.tensor([1., 2.])),
                 [[0.5, -1.5]]),
    "Poisson": (lambda m: (m.tensor([0.5, 20.]),), [[0.0, 18.0]]),
    "Binomial": (lambda m: (10, m.tensor([0.2, 0.7])), [[3.0, 7.0]]),
    "Chi2": (lambda m: (m.tensor([1.5, 4.0]),), [[0.5, 3.0]]),
}
# torch draws these as transforms of standard draws: seeded samples must agree
EXACT = ["Normal", "Uniform", "Exponential", "Bernoulli", "Geometric", "Categorical",
         "OneHotCategorical", "Multinomial"]
# the same, through a transcendental function whose last bit may differ (NumPy vs SLEEF), or
# through a matrix product whose summation order is the BLAS's and the CPU's (MKL vs OpenBLAS,
# fused multiply-adds or not)
CLOSE = ["Laplace", "Gumbel", "LogNormal", "RelaxedBernoulli", "MultivariateNormal"]


def pair(name, torch_mod):
    make = FAMILIES[name][0]
    return getattr(D, name)(*make(ember)), getattr(torch_mod.distributions, name)(
        *make(torch_mod))


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


@pytest.mark.parametrize("name", EXACT + CLOSE)
def test_seeded_samples_equal_torch(name, torch_mod):
    e, t = pair(name, torch_mod)
    for method in ("sample", "rsample") if e.has_rsample else ("sample",):
        ember.manual_seed(7)
        torch_mod.manual_seed(7)
        es, ts = getattr(e, method)((4,)), getattr(t, method)((4,))
        assert tuple(es.shape) == tuple(ts.shape) and str(es.dtype)[6:] == str(ts.dtype)[6:]
        if name in EXACT:
            np.testing.assert_array_equal(_np(es), _np(ts))
        else:
            np.testing.assert_allclose(_np(es), _np(ts), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_values_match_torch(name, torch_mod):
    e, t = pair(name, torch_mod)
    assert tuple(e.batch_shape) == tuple(t.batch_shape)
    assert tuple(e.event_shape) == tuple(t.event_shape)
    value = FAMILIES[name][1][0]
    dtype = ember.long if name == "Categorical" else ember.float32
    ev = ember.tensor(value, dtype=dtype)
    tv = torch_mod.tensor(value, dtype=torch_mod.long if name == "Categorical" else None)
    np.testing.assert_allclose(_np(e.log_prob(ev)), _np(t.log_prob(tv)), rtol=2e-5,
                               atol=1e-6)
    for attr in ("mean", "mode", "variance", "stddev", "entropy", "cdf", "icdf"):
        def get(d, v):
            a = getattr(d, attr)
            if attr == "cdf":
                return a(v)
            if attr == "icdf":
                return a(v.clamp(0.05, 0.95) if name != "Normal" else v.sigmoid())
            return a() if attr == "entropy" else a
        try:
            expected = _np(get(t, tv))
        except NotImplementedError:
            continue
        np.testing.assert_allclose(_np(get(e, ev)), expected, rtol=2e-5, atol=1e-6,
                                   err_msg=attr)


SCIPY = {
    "Normal": lambda x: stats.norm(loc=[0, 1, 2], scale=[1, 2, 0.5]).logpdf(x),
    "Gamma": lambda x: stats.gamma(a=[0.5, 2.0], scale=[1.0, 1 / 3.0]).logpdf(x),
    "Beta": lambda x: stats.beta([0.5, 2.0], [1.0, 3.0]).logpdf(x),
    "StudentT": lambda x: stats.t(df=[3, 5], loc=[0, 1], scale=[1, 2]).logpdf(x),
    "Poisson": lambda x: stats.poisson([0.5, 20.0]).logpmf(x),
    "Binomial": lambda x: stats.binom(10, [0.2, 0.7]).logpmf(x),
    "Laplace": lambda x: stats.laplace(loc=[0, 1], scale=[1, 2]).logpdf(x),
    "Dirichlet": lambda x: stats.dirichlet([0.5, 2.0, 1.0]).logpdf(x),
    "MultivariateNormal": lambda x: stats.multivariate_normal([0, 1], COV).logpdf(x),
}


@pytest.mark.parametrize("name", list(SCIPY))
def test_log_prob_matches_scipy(name):
    d = getattr(D, name)(*FAMILIES[name][0](ember))
    value = np.array(FAMILIES[name][1][0])
    got = _np(d.log_prob(ember.tensor(value, dtype=ember.float64).float()))
    np.testing.assert_allclose(got, SCIPY[name](value), rtol=1e-5, atol=1e-5)


MOMENTS = {   # name -> (args, mean, variance) of one scalar distribution
    "Gamma": ((ember.tensor(2.5), ember.tensor(1.5)), 2.5 / 1.5, 2.5 / 1.5 ** 2),
    "Beta": ((ember.tensor(2.0), ember.tensor(3.0)), 0.4, 6 / (25 * 6)),
    "Poisson": ((ember.tensor(4.0),), 4.0, 4.0),
    "Binomial": ((12, ember.tensor(0.3)), 3.6, 12 * 0.3 * 0.7),
    "StudentT": ((ember.tensor(6.0),), 0.0, 6 / 4),
    "Chi2": ((ember.tensor(3.0),), 3.0, 6.0),
}


@pytest.mark.parametrize("name", list(MOMENTS))
def test_custom_samplers_match_moments(name):
    """torch's gamma/Poisson/binomial samplers are its own C++: match in distribution."""
    args, mean, var = MOMENTS[name]
    ember.manual_seed(0)
    x = _np(getattr(D, name)(*args).sample((40000,))).astype(np.float64)
    se = np.sqrt(var / x.size)
    assert abs(x.mean() - mean) < 5 * se
    assert abs(x.var() - var) < 0.1 * var
    ember.manual_seed(0)      # repeatable under manual_seed
    np.testing.assert_array_equal(_np(getattr(D, name)(*args).sample((40000,))), x)


def test_dirichlet_samples_on_simplex_with_right_mean():
    ember.manual_seed(1)
    c = np.array([0.5, 2.0, 1.5])
    x = _np(D.Dirichlet(ember.tensor(c)).sample((20000,))).astype(np.float64)
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(x.mean(0), c / c.sum(), atol=0.01)


def test_gamma_reparameterised_gradient():
    """d sample / d alpha at a fixed CDF level, against the inverse CDF's finite difference."""
    alpha = np.array([0.3, 1.0, 2.5, 10.0])
    u = np.array([0.2, 0.5, 0.7, 0.9])
    x = special.gammaincinv(alpha, u)
    h = 1e-6
    fd = (special.gammaincinv(alpha + h, u) - special.gammaincinv(alpha - h, u)) / (2 * h)
    np.testing.assert_allclose(_samplers.gamma_sample_grad(x, alpha), fd, rtol=1e-4)
    # and through rsample: E[d x/d alpha] = d E[x] / d alpha = 1 / rate
    conc = ember.tensor([2.0], requires_grad=True)
    ember.manual_seed(3)
    D.Gamma(conc, ember.tensor([2.0])).rsample((20000,)).mean().backward()
    assert abs(conc.grad.item() - 0.5) < 0.02


def test_normal_rsample_is_differentiable():
    loc = ember.tensor([1.0, 2.0], requires_grad=True)
    scale = ember.tensor([0.5, 3.0], requires_grad=True)
    ember.manual_seed(0)
    x = D.Normal(loc, scale).rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    eps = (x.detach().numpy() - np.array([1.0, 2.0])) / np.array([0.5, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-5)
    assert not D.Normal(loc, scale).sample().requires_grad


KL_PAIRS = {
    "Normal": (lambda m: m.distributions.Normal(m.tensor([0., 1.]), m.tensor([1., 2.])),
               lambda m: m.distributions.Normal(m.tensor([1., 0.]), m.tensor([2., 0.5]))),
    "Bernoulli": (lambda m: m.distributions.Bernoulli(m.tensor([0.2, 0.0, 1.0])),
                  lambda m: m.distributions.Bernoulli(m.tensor([0.5, 0.3, 0.0]))),
    "Categorical": (lambda m: m.distributions.Categorical(m.tensor(PROBS)),
                    lambda m: m.distributions.Categorical(m.tensor([[0.3, 0.3, 0.4],
                                                                   [0.5, 0.0, 0.5]]))),
    "Beta": (lambda m: m.distributions.Beta(m.tensor([0.5, 2.]), m.tensor([1., 3.])),
             lambda m: m.distributions.Beta(m.tensor([1.5, 1.]), m.tensor([2., 0.5]))),
    "Gamma": (lambda m: m.distributions.Gamma(m.tensor([0.5, 2.]), m.tensor([1., 3.])),
              lambda m: m.distributions.Gamma(m.tensor([1.5, 1.]), m.tensor([2., 0.5]))),
    "Exponential": (lambda m: m.distributions.Exponential(m.tensor([0.5, 2.])),
                    lambda m: m.distributions.Exponential(m.tensor([1.5, 0.2]))),
    "Uniform": (lambda m: m.distributions.Uniform(m.tensor([0., 0.]), m.tensor([1., 2.])),
                lambda m: m.distributions.Uniform(m.tensor([-1., 0.5]), m.tensor([2., 3.]))),
    "MultivariateNormal": (
        lambda m: m.distributions.MultivariateNormal(m.tensor([0., 1.]), m.tensor(COV)),
        lambda m: m.distributions.MultivariateNormal(
            m.tensor([[1., 0.], [0., 0.]]), scale_tril=m.tensor([[1.5, 0.], [0.3, 0.7]]))),
    "Independent": (
        lambda m: m.distributions.Independent(
            m.distributions.Normal(m.zeros(2, 3), m.ones(2, 3)), 1),
        lambda m: m.distributions.Independent(
            m.distributions.Normal(m.ones(2, 3), 2 * m.ones(2, 3)), 1)),
    "Dirichlet": (lambda m: m.distributions.Dirichlet(m.tensor([0.5, 2., 1.])),
                  lambda m: m.distributions.Dirichlet(m.tensor([1., 1., 3.]))),
    "Laplace": (lambda m: m.distributions.Laplace(m.tensor([0., 1.]), m.tensor([1., 2.])),
                lambda m: m.distributions.Laplace(m.tensor([1., 0.]), m.tensor([2., 0.5]))),
    "Poisson": (lambda m: m.distributions.Poisson(m.tensor([0.5, 3.])),
                lambda m: m.distributions.Poisson(m.tensor([1.5, 2.]))),
}


@pytest.mark.parametrize("name", list(KL_PAIRS))
def test_kl_divergence_matches_torch(name, torch_mod):
    p, q = KL_PAIRS[name]
    got = D.kl_divergence(p(ember), q(ember))
    ref = torch_mod.distributions.kl_divergence(p(torch_mod), q(torch_mod))
    assert tuple(got.shape) == tuple(ref.shape)
    np.testing.assert_allclose(_np(got), _np(ref), rtol=2e-5, atol=1e-6)


def test_kl_unregistered_pair_message(torch_mod):
    for m in (ember, torch_mod):
        with pytest.raises(NotImplementedError,
                           match="No KL\\(p \\|\\| q\\) is implemented for p type Uniform and "
                                 "q type Categorical"):
            m.distributions.kl_divergence(m.distributions.Uniform(0.0, 1.0),
                                          m.distributions.Categorical(m.ones(2)))


def _message(fn):
    try:
        fn()
    except (ValueError, NotImplementedError) as exc:
        return type(exc).__name__, str(exc).replace("ember", "torch")
    return None


ERRORS = {
    "bad scale": lambda m: m.distributions.Normal(m.tensor([0., 1.]), m.tensor([1., -1.])),
    "nan loc": lambda m: m.distributions.Normal(m.tensor([float("nan")]), m.tensor([1.])),
    "bad probs": lambda m: m.distributions.Bernoulli(m.tensor([1.5])),
    "probs and logits": lambda m: m.distributions.Bernoulli(m.tensor(0.5), m.tensor(0.0)),
    "0-dim categorical": lambda m: m.distributions.Categorical(m.tensor(0.5)),
    "uniform low>=high": lambda m: m.distributions.Uniform(m.tensor([1.]), m.tensor([0.])),
    "outside support": lambda m: m.distributions.Exponential(m.tensor([1.])).log_prob(
        m.tensor([-1.])),
    "event shape": lambda m: m.distributions.Dirichlet(m.ones(3)).log_prob(m.ones(2) / 2),
    "not broadcastable": lambda m: m.distributions.Normal(m.zeros(3), m.ones(3)).log_prob(
        m.zeros(2)),
    "log_prob non-tensor": lambda m: m.distributions.Normal(0.0, 1.0).log_prob(0.5),
    "independent ndims": lambda m: m.distributions.Independent(
        m.distributions.Normal(m.zeros(2), m.ones(2)), 2),
    "mvn two matrices": lambda m: m.distributions.MultivariateNormal(
        m.zeros(2), m.eye(2), scale_tril=m.eye(2)),
    "mvn not pd": lambda m: m.distributions.MultivariateNormal(m.zeros(2),
                                                               -m.eye(2)),
    "multinomial tensor count": lambda m: m.distributions.Multinomial(
        m.tensor(3), m.tensor([0.5, 0.5])),
    "bad validate default": lambda m: m.distributions.Distribution.set_default_validate_args(3),
}


@pytest.fixture
def validating(torch_mod):
    """Argument validation on in both libraries. NOTE: torch's dynamo switches it off for the
    whole process the first time it patches torch (any torch.compile'd call in an earlier test
    of this worker), so the default cannot be relied on."""
    before = torch_mod.distributions.Distribution._validate_args
    torch_mod.distributions.Distribution.set_default_validate_args(True)
    yield
    torch_mod.distributions.Distribution.set_default_validate_args(before)


@pytest.mark.parametrize("case", list(ERRORS), ids=list(ERRORS))
def test_argument_validation_messages(case, torch_mod, validating):
    got, ref = _message(lambda: ERRORS[case](ember)), _message(lambda: ERRORS[case](torch_mod))
    assert ref is not None and got == ref


def test_validation_can_be_turned_off(torch_mod):
    for m in (ember, torch_mod):
        d = m.distributions.Normal(m.tensor([0.]), m.tensor([-1.]), validate_args=False)
        assert d.scale.item() == -1.0
        m.distributions.Distribution.set_default_validate_args(False)
        try:
            m.distributions.Bernoulli(m.tensor([1.5]))
        finally:
            m.distributions.Distribution.set_default_validate_args(True)


@pytest.mark.parametrize("name", ["Normal", "Bernoulli", "Categorical", "Dirichlet",
                                  "MultivariateNormal", "Gumbel", "LogNormal", "Multinomial",
                                  "Beta", "StudentT", "OneHotCategorical", "Binomial"])
def test_expand_matches_torch(name, torch_mod):
    e, t = pair(name, torch_mod)
    new_batch = (4,) + tuple(t.batch_shape)
    ee, te = e.expand(new_batch), t.expand(new_batch)
    assert tuple(ee.batch_shape) == tuple(te.batch_shape)
    assert tuple(ee.event_shape) == tuple(te.event_shape)
    ember.manual_seed(0)
    assert tuple(ee.sample((2,)).shape) == tuple(te.sample((2,)).shape)
    np.testing.assert_allclose(_np(ee.mean), _np(te.mean), rtol=1e-6, equal_nan=True)


def test_transforms_and_independent(torch_mod):
    x = np.array([[-1.0, 0.3], [0.5, 2.0]], np.float32)
    for name, args in [("ExpTransform", ()), ("SigmoidTransform", ()),
                       ("AffineTransform", (1.0, -2.0))]:
        et = getattr(D.transforms, name)(*args)
        tt = getattr(torch_mod.distributions.transforms, name)(*args)
        ex, tx = ember.tensor(x), torch_mod.tensor(x)
        np.testing.assert_allclose(_np(et(ex)), _np(tt(tx)), rtol=1e-6)
        np.testing.assert_allclose(_np(et.inv(et(ex))), x, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(et.log_abs_det_jacobian(ex, et(ex))),
                                   _np(tt.log_abs_det_jacobian(tx, tt(tx))), rtol=1e-6)
    def base(m):
        return m.distributions.Normal(m.zeros(2, 3), m.ones(2, 3))
    ei = D.Independent(base(ember), 1)
    ti = torch_mod.distributions.Independent(base(torch_mod), 1)
    assert tuple(ei.batch_shape) == (2,) and tuple(ei.event_shape) == (3,)
    v = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    np.testing.assert_allclose(_np(ei.log_prob(ember.tensor(v))),
                               _np(ti.log_prob(torch_mod.tensor(v))), rtol=1e-6)
    td = D.TransformedDistribution(D.Normal(ember.tensor(0.), ember.tensor(1.)),
                                   [D.AffineTransform(2.0, 3.0), D.ExpTransform()])
    ld = D.LogNormal(ember.tensor(2.), ember.tensor(3.))
    y = ember.tensor([0.5, 4.0])
    np.testing.assert_allclose(_np(td.log_prob(y)), _np(ld.log_prob(y)), rtol=1e-6)
    np.testing.assert_allclose(_np(td.cdf(y)), _np(ld.cdf(y)), rtol=1e-6)


def test_repr_and_constraints(torch_mod):
    e, t = pair("Normal", torch_mod)
    assert repr(e).replace("ember", "torch") == repr(t)
    for c in ("positive", "unit_interval", "simplex", "real_vector", "nonnegative_integer"):
        assert repr(getattr(D.constraints, c)) == repr(getattr(torch_mod.distributions
                                                               .constraints, c))
