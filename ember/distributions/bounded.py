"""Families on bounded supports: ContinuousBernoulli and Kumaraswamy on [0, 1], VonMises on the
circle.

All three draw from uniform draws as PyTorch does (ContinuousBernoulli and Kumaraswamy by
inverting their CDFs, VonMises by Best and Fisher's rejection sampler, three uniforms per
round, in float64), so seeded samples are PyTorch's up to the last bit of a transcendental.
"""
import math
from numbers import Number

import ember

from .._size import Size as _Size
from . import constraints
from .continuous import Uniform
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .location import LocCentered
from .transformed import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import (BinaryProbs, broadcast_all, clamp_probs, euler_constant,
                    lazy_property)

__all__ = ["ContinuousBernoulli", "Kumaraswamy", "VonMises"]


def _bce_logits(logits, target):
    return ember.nn.functional.binary_cross_entropy_with_logits(logits, target,
                                                                reduction="none")


class ContinuousBernoulli(BinaryProbs, ExponentialFamily):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1] (Loaiza-Ganem and Cunningham, 2019).

    NOTE: the normaliser C(p) and the moments are 0/0 at p = 1/2; inside `lims` they are
    replaced by their Taylor expansions around 1/2.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # validated here, before clamping would hide values outside [0, 1]
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(_Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(ContinuousBernoulli, batch_shape, _instance,
                                  ("probs", "logits"))
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return ember.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * ember.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(p) (the log normalising constant)."""
        cut = self._cut_probs()
        below_half = ember.where(cut <= 0.5, cut, ember.zeros_like(cut))
        above_half = ember.where(cut >= 0.5, cut, ember.ones_like(cut))
        log_norm = (ember.log(ember.abs(ember.log1p(-cut) - ember.log(cut)))
                    - ember.where(cut <= 0.5, ember.log1p(-2.0 * below_half),
                                  ember.log(2.0 * above_half - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (ember.log1p(-cut) - ember.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return ember.sqrt(self.variance)

    @property
    def variance(self):
        cut = self._cut_probs()
        vars_ = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                 + 1.0 / (ember.log1p(-cut) - ember.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._outside_unstable_region(), vars_, taylor)

    def sample(self, sample_shape=_Size()):
        with ember.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = ember.where(self._outside_unstable_region(), cdfs, value)
        return ember.where(value <= 0.0, ember.zeros_like(value),
                           ember.where(value >= 1.0, ember.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverted = ((ember.log1p(-cut + value * (2.0 * cut - 1.0)) - ember.log1p(-cut))
                    / (ember.log(cut) - ember.log1p(-cut)))
        return ember.where(self._outside_unstable_region(), inverted, value)

    def entropy(self):
        log_probs0 = ember.log1p(-self.probs)
        log_probs1 = ember.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter (the logits)."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = ember.where(outside, x, (self._lims[0] - 0.5) * ember.ones_like(x))
        log_norm = ember.log(ember.abs(ember.expm1(cut))) - ember.log(ember.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return ember.where(outside, log_norm, taylor)


def _kumaraswamy_moment(a, b, n):
    """E[X^n] of Kumaraswamy(a, b): b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    log_value = ember.lgamma(arg1) + ember.lgamma(b) - ember.lgamma(arg1 + b)
    return b * ember.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Density a b x^(a-1) (1 - x^a)^(b-1) on [0, 1], a = concentration1, b = concentration0:
    (1 - U^(1/b))^(1/a) for U uniform."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(ember.full_like(self.concentration0, 0),
                            ember.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _kumaraswamy_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1))^(1/a), defined only for a, b >= 1
        log_mode = a.reciprocal() * (a - 1).log() - a.reciprocal() * (a * b - 1).log()
        return ember.where((a < 1) | (b < 1), ember.full_like(log_mode, math.nan),
                           log_mode).exp()

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _kumaraswamy_moment(a, b, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        harmonic = ember.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * harmonic - ember.log(self.concentration1)
                - ember.log(self.concentration0))


def _log_bessel_i(order, x):
    """log I_order(x) for order 0 or 1 and x >= 0, through the exponentially scaled Bessel
    functions (I_v(x) overflows for large x; log(i_ve(x)) + x does not)."""
    scaled = ember.special.i0e(x) if order == 0 else ember.special.i1e(x)
    return scaled.log() + x


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher (1979): wrapped-Cauchy proposals accepted by a squeeze test, three
    uniforms per round for every site, until every site has accepted once."""
    done = ember.zeros(x.shape, dtype=ember.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = ember.rand((3,) + tuple(x.shape), dtype=loc.dtype,
                                device=loc.device).unbind()
        z = ember.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = ember.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(LocCentered, Distribution):
    """The circular normal: density exp(concentration cos(x - loc)) / (2 pi I0(concentration))
    on [-pi, pi). No rsample (as in PyTorch)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        batch_shape = self.loc.shape
        super().__init__(batch_shape, _Size(), validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * ember.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_bessel_i(0, self.concentration))

    @lazy_property
    def _loc(self):
        return self.loc.to(ember.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(ember.double)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        # NOTE: for tiny kappa rho underflows and r is 0/0: its series 1/kappa + kappa instead
        r_series = 1 / kappa + kappa
        return ember.where(kappa < 1e-5, r_series, r)

    def sample(self, sample_shape=_Size()):
        """Rejection sampling in float64 (float32 loses the acceptance test for large
        concentration); the result in the parameters' dtype."""
        shape = self._extended_shape(sample_shape)
        with ember.no_grad():
            x = ember.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)


    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(k) / I0(k)."""
        # NOTE: the ratio of the scaled functions, where exp(k) cancels exactly; a difference
        # of logs would carry k's float32 rounding (3e-5 at k = 500) into a variance of 1e-3
        k = self.concentration
        return 1 - ember.special.i1e(k) / ember.special.i0e(k)
