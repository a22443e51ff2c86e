"""NegativeBinomial: the number of successes before `total_count` failures, each trial a
success with probability `probs`.

Sampled as PyTorch does, as a Gamma-Poisson mixture through PyTorch's gamma and Poisson
samplers (replayed in `_scalar_samplers`), so seeded samples are PyTorch's.
"""

import ember

from .._size import Size as _Size
from . import constraints
from ._samplers import poisson as _poisson_draw
from .continuous import Gamma
from .distribution import Distribution
from .utils import BinaryProbs, lazy_property, probs_or_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbs, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        (self.total_count,) = probs_or_logits(self, probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(NegativeBinomial, batch_shape, _instance,
                                  ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * ember.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / ember.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # the Poisson rate's mixing distribution: Gamma(total_count, rate = (1 - p) / p)
        return Gamma(concentration=self.total_count, rate=ember.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=_Size()):
        with ember.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return _poisson_draw(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = ember.nn.functional.logsigmoid
        log_unnormalized_prob = (self.total_count * logsigmoid(-self.logits)
                                 + value * logsigmoid(self.logits))
        log_normalization = (-ember.lgamma(self.total_count + value) + ember.lgamma(1.0 + value)
                             + ember.lgamma(self.total_count))
        # NOTE: total_count + value == 0 gives lgamma(0) - lgamma(0) = inf - inf: the
        # probability of 0 successes when no failure is needed is 1
        log_normalization = log_normalization.masked_fill(self.total_count + value == 0.0, 0.0)
        return log_unnormalized_prob - log_normalization

