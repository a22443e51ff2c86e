"""Distributions over the simplex and its corners that carry gradients: the relaxed
categorical (Concrete / Gumbel-softmax) in log space and on the simplex, the straight-through
one-hot categorical, and LogisticNormal (a Normal pushed through stick breaking).

All draw as PyTorch does (rand for the Gumbel noise, multinomial, normal_), so seeded samples
are PyTorch's up to the last bit of a log or exp.
"""
import ember

from .._size import Size as _Size
from . import constraints
from .continuous import Normal
from .discrete import Categorical, OneHotCategorical, OverCategorical
from .distribution import Distribution
from .transformed import Relaxed, TransformedDistribution
from .transforms import ExpTransform
from .transforms_constrained import StickBreakingTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical",
           "OneHotCategoricalStraightThrough", "LogisticNormal"]


class ExpRelaxedCategorical(OverCategorical, Distribution):
    """The log of a RelaxedOneHotCategorical draw: log-softmax((logits + Gumbel) / T)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = _Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=_Size()):
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(ember.rand(shape, dtype=self.logits.dtype,
                                          device=self.logits.device))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = ember.as_tensor(self.temperature, dtype=logits.dtype,
                                      device=logits.device)
        log_scale = (ember.full_like(temperature, float(k)).lgamma()
                     - temperature.log().mul(-(k - 1)))
        score = logits - value.mul(temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(Relaxed):
    """A continuous relaxation of OneHotCategorical on the simplex, sharper as the temperature
    goes to 0 (Maddison et al. 2017; Jang et al. 2017)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through: the value is a
    one-hot draw, the gradient that of the probabilities (Bengio et al. 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=_Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of a Normal: a K-vector of normals onto the (K+1)-simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
