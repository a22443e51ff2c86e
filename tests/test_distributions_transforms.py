"""The structured and constrained transforms of ember.distributions, the constraint
registries (biject_to, transform_to), MixtureSameFamilyConstraint and the tril/vector helpers,
against torch.distributions on the same inputs."""
import numpy as np
import pytest
from test_distributions_families import _np

import ember

D = ember.distributions


def _normal(m):
    return m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([1.0, 2.0]))


# name -> (build(m) -> transform, an input in its domain)
TRANSFORMS = {
    "Softplus": (lambda m: m.distributions.transforms.SoftplusTransform(),
                 [[-30.0, -1.0, 0.0], [0.5, 2.0, 25.0]]),
    "Softmax": (lambda m: m.distributions.transforms.SoftmaxTransform(),
                [[-1.0, 0.0, 3.0], [100.0, 99.0, -5.0]]),
    "StickBreaking": (lambda m: m.distributions.transforms.StickBreakingTransform(),
                      [[-1.0, 0.0, 3.0], [2.0, -0.5, 0.1]]),
    "LowerCholesky": (lambda m: m.distributions.transforms.LowerCholeskyTransform(),
                      [[0.5, 2.0, -1.0], [0.3, -0.2, 0.7], [1.0, 0.4, 0.1]]),
    "PositiveDefinite": (lambda m: m.distributions.transforms.PositiveDefiniteTransform(),
                         [[0.5, 2.0, -1.0], [0.3, -0.2, 0.7], [1.0, 0.4, 0.1]]),
    "CorrCholesky": (lambda m: m.distributions.transforms.CorrCholeskyTransform(),
                     [[0.5, -1.0, 2.0, 0.1, -0.3, 0.7], [0.0, 0.2, -2.5, 1.0, 0.4, -0.1]]),
    "Cat": (lambda m: m.distributions.transforms.CatTransform(
        [m.distributions.transforms.ExpTransform(),
         m.distributions.transforms.AffineTransform(1.0, -2.0)], dim=1, lengths=[2, 1]),
        [[0.5, -1.0, 2.0], [0.1, -0.3, 0.7]]),
    "CatEvent": (lambda m: m.distributions.transforms.CatTransform(
        [m.distributions.transforms.IndependentTransform(
            m.distributions.transforms.ExpTransform(), 1),
         m.distributions.transforms.SoftplusTransform()], dim=0, lengths=[1, 1]),
        [[0.5, -1.0], [0.1, -0.3]]),
    "Stack": (lambda m: m.distributions.transforms.StackTransform(
        [m.distributions.transforms.ExpTransform(),
         m.distributions.transforms.SigmoidTransform()], dim=1),
        [[0.5, -1.0], [0.1, 2.0], [-3.0, 0.3]]),
    "Independent": (lambda m: m.distributions.transforms.IndependentTransform(
        m.distributions.transforms.ExpTransform(), 1), [[0.5, -1.0], [0.1, 2.0]]),
    "Reshape": (lambda m: m.distributions.transforms.ReshapeTransform((2, 2), (4,)),
                [[[0.5, -1.0], [0.1, 2.0]], [[1.0, 2.0], [3.0, 4.0]]]),
    "CumulativeDistribution": (
        lambda m: m.distributions.transforms.CumulativeDistributionTransform(_normal(m)),
        [[-0.5, 2.0], [1.0, 0.3]]),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_match_torch(name, torch_mod):
    make, x = TRANSFORMS[name]
    e, t = make(ember), make(torch_mod)
    ex = ember.tensor(x, requires_grad=True)
    tx = torch_mod.tensor(x, requires_grad=True)
    ey, ty = e(ex), t(tx)
    np.testing.assert_allclose(_np(ey), _np(ty), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(e.inv(ey)), _np(t.inv(ty)), rtol=1e-4, atol=1e-5)
    assert e.bijective == t.bijective
    assert repr(e).replace("ember", "torch") == repr(t)
    assert repr(e.domain) == repr(t.domain) and repr(e.codomain) == repr(t.codomain)
    assert e.domain.event_dim == t.domain.event_dim
    assert e.codomain.event_dim == t.codomain.event_dim
    assert tuple(e.forward_shape(tuple(ex.shape))) == tuple(t.forward_shape(tx.shape))
    assert tuple(e.inverse_shape(tuple(ey.shape))) == tuple(t.inverse_shape(ty.shape))
    if name != "CatEvent":        # torch's cat constraint cannot mix event dims
        assert bool(t.codomain.check(torch_mod.tensor(_np(ey))).all())
    if not t.bijective:
        with pytest.raises(NotImplementedError):
            e.log_abs_det_jacobian(ex, ey)
        return
    ej, tj = e.log_abs_det_jacobian(ex, ey), t.log_abs_det_jacobian(tx, ty)
    np.testing.assert_allclose(_np(ej), _np(tj), rtol=1e-5, atol=1e-5)
    assert ej.requires_grad == tj.requires_grad
    if not tj.requires_grad:       # a volume-preserving reshape: the log-det is constant
        return
    ej.sum().backward()
    tj.sum().backward()
    np.testing.assert_allclose(_np(ex.grad), _np(tx.grad), rtol=1e-4, atol=1e-5)


def test_stick_breaking_log_det_is_the_jacobians():
    """log|det J| of x -> y[:-1] (the free coordinates), by finite differences."""
    x = np.array([0.3, -1.2, 0.8])
    t = D.transforms.StickBreakingTransform()
    h = 1e-6
    jac = np.stack([(_np(t(ember.tensor(x + h * e)))[:-1] - _np(t(ember.tensor(x - h * e)))[:-1])
                    / (2 * h) for e in np.eye(3)], axis=1)
    got = t.log_abs_det_jacobian(ember.tensor(x), t(ember.tensor(x))).item()
    assert abs(got - np.log(abs(np.linalg.det(jac)))) < 1e-6


def test_cache_and_inverse_identity():
    for t in (D.transforms.SoftplusTransform(cache_size=1),
              D.transforms.StickBreakingTransform(cache_size=1),
              D.transforms.IndependentTransform(D.transforms.ExpTransform(), 1, cache_size=1)):
        x = ember.tensor([[0.3, -1.2, 0.8]])
        assert t.inv(t(x)) is x
    assert D.transforms.SoftmaxTransform() == D.transforms.SoftmaxTransform()
    assert D.transforms.SoftmaxTransform() != D.transforms.StickBreakingTransform()


CONSTRAINTS = {
    "real": lambda c: c.real,
    "positive": lambda c: c.positive,
    "nonnegative": lambda c: c.nonnegative,
    "greater_than": lambda c: c.greater_than(2.0),
    "greater_than_eq": lambda c: c.greater_than_eq(-1.0),
    "less_than": lambda c: c.less_than(3.0),
    "unit_interval": lambda c: c.unit_interval,
    "interval": lambda c: c.interval(-2.0, 5.0),
    "half_open_interval": lambda c: c.half_open_interval(1.0, 2.0),
    "simplex": lambda c: c.simplex,
    "real_vector": lambda c: c.real_vector,
    "independent positive": lambda c: c.independent(c.positive, 1),
    "lower_cholesky": lambda c: c.lower_cholesky,
    "positive_definite": lambda c: c.positive_definite,
    "positive_semidefinite": lambda c: c.positive_semidefinite,
    "corr_cholesky": lambda c: c.corr_cholesky,
    "cat": lambda c: c.cat([c.positive, c.real, c.unit_interval], dim=-1, lengths=[1, 1, 1]),
    "stack": lambda c: c.stack([c.positive, c.interval(0.0, 2.0)], dim=-1),
}


def _unconstrained(t, m):
    """An input of the right shape for transform t (3 x 3 for matrices)."""
    values = np.array([[0.4, -1.3, 2.0], [0.1, 0.9, -0.5], [1.5, -0.2, 0.3]], np.float32)
    if t.domain.event_dim == 2:
        return m.tensor(values)
    if type(t).__name__ == "CorrCholeskyTransform":
        return m.tensor(values[0])
    if type(t).__name__ == "StackTransform":
        return m.tensor(values[:, :2])
    return m.tensor(values)


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", list(CONSTRAINTS))
def test_constraint_registries_match_torch(registry, name, torch_mod):
    e_c = CONSTRAINTS[name](D.constraints)
    t_c = CONSTRAINTS[name](torch_mod.distributions.constraints)
    try:
        t_t = getattr(torch_mod.distributions, registry)(t_c)
    except NotImplementedError as exc:
        with pytest.raises(NotImplementedError, match=str(exc)):
            getattr(D, registry)(e_c)
        return
    e_t = getattr(D, registry)(e_c)
    assert repr(e_t).replace("ember", "torch") == repr(t_t)
    ex, tx = _unconstrained(t_t, ember), _unconstrained(t_t, torch_mod)
    ey, ty = e_t(ex), t_t(tx)
    np.testing.assert_allclose(_np(ey), _np(ty), rtol=1e-5, atol=1e-6)
    assert bool(e_c.check(ey).all())


def test_mixture_same_family_constraint(torch_mod):
    for m in (ember, torch_mod):
        c = m.distributions.constraints
        assert repr(m.distributions.constraints.MixtureSameFamilyConstraint(c.positive)) \
            == "MixtureSameFamilyConstraint(GreaterThan(lower_bound=0.0))"
    value = [[0.5, -1.0], [2.0, 0.0]]
    e = D.constraints.MixtureSameFamilyConstraint(D.constraints.positive)
    t = torch_mod.distributions.constraints.MixtureSameFamilyConstraint(
        torch_mod.distributions.constraints.positive)
    np.testing.assert_array_equal(_np(e.check(ember.tensor(value))),
                                  _np(t.check(torch_mod.tensor(value))))
    e = D.constraints.MixtureSameFamilyConstraint(D.constraints.simplex)
    t = torch_mod.distributions.constraints.MixtureSameFamilyConstraint(
        torch_mod.distributions.constraints.simplex)
    assert e.event_dim == t.event_dim == 1
    simplex = [[0.5, 0.5], [0.2, 0.9]]
    np.testing.assert_array_equal(_np(e.check(ember.tensor(simplex))),
                                  _np(t.check(torch_mod.tensor(simplex))))
    d = D.MixtureSameFamily(D.Categorical(ember.ones(2)),
                            D.Normal(ember.zeros(2), ember.ones(2)))
    assert type(d.support).__name__ == "MixtureSameFamilyConstraint"


@pytest.mark.parametrize("diag", [0, -1, -2, 1])
def test_tril_vec_round_trip_matches_torch(diag, torch_mod):
    from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    mat = np.arange(32, dtype=np.float32).reshape(2, 4, 4) + 1
    ref_vec = torch_mod.distributions.utils.tril_matrix_to_vec(torch_mod.tensor(mat), diag)
    vec = tril_matrix_to_vec(ember.tensor(mat), diag)
    np.testing.assert_array_equal(_np(vec), _np(ref_vec))
    np.testing.assert_array_equal(
        _np(vec_to_tril_matrix(vec, diag)),
        _np(torch_mod.distributions.utils.vec_to_tril_matrix(ref_vec, diag)))
