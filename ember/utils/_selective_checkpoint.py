"""Selective activation checkpointing (torch.utils.checkpoint's policies and contexts).

A policy says, per op run inside a checkpointed region, whether its output should be saved
or recomputed. ember consults the policy on every op of the forward pass, through an
instrument at the registry's door, exactly when PyTorch does.

NOTE: what the policy decides changes memory, not values: ember's checkpoint recomputes the
whole region in backward (with the forward's random state), so the gradients are the ones
PyTorch gives whichever ops were saved; ember keeps none of the saved outputs.
"""
import enum

from ..ops import registry


class CheckpointPolicy(enum.Enum):
    """What to do with an op's output in a selectively checkpointed region."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


CheckpointPolicy.__module__ = "ember.utils.checkpoint"


class SelectiveCheckpointContext:
    """What a policy function receives first: whether this is the recomputation (always
    False: the policy runs during the forward pass only) and the op's output."""

    __module__ = "ember.utils.checkpoint"

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class _PolicyConsulted:
    """The forward context: calls the policy on every op run inside it."""

    def __init__(self, policy_fn):
        self.policy_fn = policy_fn

    def _instrument(self, op, inputs, params, result):
        ctx = SelectiveCheckpointContext(is_recompute=False, op_output=result)
        self.policy_fn(ctx, op, *inputs, **params)

    def __enter__(self):
        registry.instruments.append(self._instrument)
        return self

    def __exit__(self, *exc):
        registry.instruments.remove(self._instrument)


class _Recomputing:
    """The recompute context: the region runs again in full (see the NOTE above)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recompute) context pair for checkpoint's `context_fn`: a policy function
    `policy(ctx, op, *args, **kwargs) -> CheckpointPolicy`, or a list of ops to save."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, registry.Op):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got {op} "
                                 f"of type {type(op)}. If you passed an OpOverloadPacket "
                                 "(e.g. torch.ops.aten.foo), call .default on it to get an "
                                 "OpOverload.")
        ops = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return (CheckpointPolicy.MUST_SAVE if op in ops
                    else CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _PolicyConsulted(policy_fn), _Recomputing()
