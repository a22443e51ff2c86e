"""Heavy-tailed families: Cauchy, HalfCauchy, Pareto, GeneralizedPareto, FisherSnedecor.

Cauchy draws with cauchy_, Pareto pushes Exponential draws through exp, GeneralizedPareto
inverts uniform draws and FisherSnedecor is a ratio of Gamma draws (PyTorch's gamma sampler,
replayed), as PyTorch does, so their seeded samples are PyTorch's.
"""
import math
from numbers import Number

import ember

from .._size import Size as _Size
from . import constraints
from .continuous import Exponential, Gamma
from .distribution import Distribution
from .location import LocScale, batch_shape_of
from .positive import _Folded
from .transformed import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Cauchy", "HalfCauchy", "Pareto", "GeneralizedPareto", "FisherSnedecor"]


def _full(shape, value, like):
    return ember.full(shape, value, dtype=like.dtype, device=like.device)


class Cauchy(LocScale, Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2))."""

    @property
    def mean(self):
        return _full(self._extended_shape(), math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return _full(self._extended_shape(), math.inf, self.loc)

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        eps = ember.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - ((value - self.loc) / self.scale).pow(2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ember.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return ember.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(_Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    _base = Cauchy

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _full(self._extended_shape(), math.inf, self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # (unlike HalfNormal's, PyTorch's takes a Python number too)
        value = ember.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return self._folded_log_prob(value)


class Pareto(TransformedDistribution):
    """scale * exp(E) for E ~ Exponential(alpha): density alpha scale^alpha / x^(alpha + 1) on
    [scale, inf)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        a = self.alpha.clamp(min=1)
        # NOTE: infinite for alpha <= 1; the where keeps 1 / 0 out of the division
        finite = a * self.scale / ember.where(a > 1, a - 1, ember.ones_like(a))
        return ember.where(a > 1, finite, ember.full_like(finite, math.inf))

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha.clamp(min=2)
        denominator = (a - 1).pow(2) * (a - 2)
        finite = self.scale.pow(2) * a / ember.where(a > 2, denominator,
                                                     ember.ones_like(a))
        return ember.where(a > 2, finite, ember.full_like(finite, math.inf))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


class GeneralizedPareto(Distribution):
    """Density (1/scale) (1 + concentration z)^(-1/concentration - 1), z = (x - loc) / scale,
    on [loc, inf) for concentration >= 0 and [loc, loc - scale/concentration] below 0; the
    exponential distribution at concentration 0."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(batch_shape_of((loc, scale, concentration), self.loc),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ("loc", "scale", "concentration"))

    def _at_zero(self):
        """concentration == 0 (the exponential limit) and a concentration safe to divide by."""
        zero = self.concentration == 0
        safe = ember.where(zero, ember.ones_like(self.concentration), self.concentration)
        return zero, safe

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._at_zero()
        log_density = ember.where(zero, -z, -(safe.reciprocal() + 1) * ember.log1p(safe * z))
        log_density = log_density - self.scale.log()
        return ember.where(self._inside(value, z), log_density,
                           ember.full_like(log_density, -math.inf))

    def _z(self, value):
        return (value - self.loc) / self.scale

    def _inside(self, value, z):
        above = z >= 0
        return above & ((self.concentration >= 0) | (self.concentration * z > -1))

    def log_survival_function(self, value):
        z = self._z(value)
        zero, safe = self._at_zero()
        log_sf = ember.where(zero, -z, -ember.log1p(safe * z) / safe)
        below = ember.where(z < 0, ember.zeros_like(log_sf), ember.full_like(log_sf, -math.inf))
        return ember.where(self._inside(value, z), log_sf, below)

    def log_cdf(self, value):
        return ember.log1p(-ember.exp(self.log_survival_function(value)))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -ember.expm1(self.log_survival_function(value))

    def icdf(self, value):
        zero, safe = self._at_zero()
        log1m_u = ember.log1p(-value)
        z = ember.where(zero, -log1m_u, ember.expm1(-safe * log1m_u) / safe)
        return self.loc + self.scale * z

    @property
    def mean(self):
        xi = self.concentration
        mean = self.loc + self.scale / (1 - xi)
        return ember.where(xi < 1, mean, ember.full_like(mean, math.inf))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        xi = self.concentration
        var = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return ember.where(xi < 0.5, var, ember.full_like(var, math.inf))

    def entropy(self):
        return self.scale.log() + self.concentration + 1

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        _, safe = self._at_zero()
        upper = ember.where(self.concentration < 0, lower - self.scale / safe,
                            ember.full_like(lower, math.inf))
        return constraints.interval(lower, upper)


class FisherSnedecor(Distribution):
    """The F distribution: (X1 / df1) / (X2 / df2) for chi-squared X1, X2."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch = _Size() if isinstance(df1, Number) and isinstance(df2, Number) \
            else self.df1.size()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        df2 = self.df2
        return ember.where(df2 > 2, df2 / (df2 - 2), ember.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return ember.where(self.df1 > 2, mode, ember.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return ember.where(df2 > 4, var, ember.full_like(var, math.nan))

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        tiny = ember.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_beta = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return (log_beta + half1 * ratio.log() + (half1 - 1) * ember.log(value)
                - (half1 + half2) * ember.log1p(ratio * value))
