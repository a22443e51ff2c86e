"""torch.binomial and torch.poisson: seeded draws equal to PyTorch's, from the scalar
samplers ember.distributions replays (distributions/_scalar_samplers.py), with torch's
argument checks. As in PyTorch, the draws carry no gradient (PoissonBackward0's is zero);
a result of an input that requires grad records a zero gradient the same way."""
from .. import _dtype as dt
from .registry import PUBLIC, check_tensor, export

__all__ = ["binomial", "poisson"]


def _zero_grad_through(sample, input):
    """`sample`, attached to `input`'s graph with a zero gradient (PyTorch's PoissonBackward0
    and BinomialBackward0 give zeros)."""
    if input.requires_grad:
        return sample + input * 0
    return sample


def poisson(input, generator=None):
    check_tensor("poisson", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{dt.type_name(input.dtype)}'")
    if input.numel() and bool((input.detach() < 0).any()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    # (deferred: ember.distributions loads on first use)
    from ..distributions._samplers import poisson as draws
    return _zero_grad_through(draws(input, generator), input)


def binomial(count, prob, generator=None):
    check_tensor("binomial", count, "count")
    check_tensor("binomial", prob, "prob", 2)
    if not count.dtype.is_floating_point:
        raise ValueError("binomial only supports floating-point dtypes for count, got: "
                         f"{dt.type_name(count.dtype)}")
    if not prob.dtype.is_floating_point:
        raise ValueError("binomial only supports floating-point dtypes for prob, got: "
                         f"{dt.type_name(prob.dtype)}")
    if count.dtype is not prob.dtype:
        raise RuntimeError(f"Found dtype {dt.type_name(prob.dtype)} but expected "
                           f"{dt.type_name(count.dtype)}")
    # (deferred: ember.distributions loads on first use)
    from ..distributions._samplers import binomial as draws
    count_b, prob_b = PUBLIC["broadcast_tensors"](count.detach(), prob.detach())
    sample = draws(count_b.contiguous(), prob_b.contiguous(), generator)
    return _zero_grad_through(_zero_grad_through(sample, count), prob)


for _name in __all__:
    export(globals()[_name], method=False)
