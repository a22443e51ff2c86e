"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits."""
import numbers
from functools import update_wrapper

import ember

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "standard_normal", "euler_constant"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Tensors of one broadcast shape; Python numbers become tensors of the tensors' dtype
    (the default dtype when all are numbers)."""
    if not all(isinstance(v, (ember.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, ember.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, ember.Tensor)), None)
        dtype = ref.dtype if ref is not None else ember.get_default_dtype()
        device = ref.device if ref is not None else None
        values = [v if isinstance(v, ember.Tensor)
                  else ember.tensor(v, dtype=dtype, device=device) for v in values]
    return ember.broadcast_tensors(*values)


def standard_normal(shape, dtype, device):
    """N(0, 1) draws consumed from the stream as PyTorch's `empty(shape).normal_()`."""
    return ember.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return ember.sigmoid(logits)
    return ember.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Probabilities kept one epsilon away from 0 and 1 (so their logs are finite)."""
    eps = ember.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps = clamp_probs(probs)
    if is_binary:
        return ember.log(ps) - ember.log1p(-ps)
    return ember.log(ps)


class lazy_property:
    """A property computed once per instance and stored (probs from logits and back)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with ember.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryProbs:
    """The two-class parameter pair of Bernoulli-like distributions: whichever of `probs` and
    `logits` was not given is computed from the other on first use."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)
