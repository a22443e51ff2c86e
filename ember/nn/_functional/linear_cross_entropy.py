"""linear_cross_entropy: cross entropy of `input` projected to class logits by a (possibly
K-dimensional) linear weight, and the options PyTorch's chunked implementation takes.

ember always computes the reference form, cross_entropy(linear(input)), whatever the
options: PyTorch's chunked path gives the same values (it only bounds memory), and a valid
LinearCrossEntropyOptions is accepted so that code written for it runs."""
import dataclasses
import math

from ... import _dtype as dt
from .loss import cross_entropy

__all__ = ["linear_cross_entropy", "LinearCrossEntropyOptions"]

_ACC_POLICIES = {"auto", "accurate", "balanced", "compact"}


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (
                dt.float16, dt.bfloat16, dt.float32, dt.float64):
            raise ValueError(
                f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically.")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(logits, target, ...) with logits[n, c, d1..dK] = input[n] .
    linear_weight[c, d1..dK] (+ linear_bias[c, d1..dK]); `input` is (in_features,) or
    (N, in_features)."""
    class_shape = tuple(linear_weight.shape[:-1])        # (C, d1, ..., dK)
    flat = linear_weight.reshape(math.prod(class_shape), linear_weight.shape[-1])
    logits = input.matmul(flat.T)
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(-1)
    logits = logits.reshape(tuple(input.shape[:-1]) + class_shape)
    return cross_entropy(logits, target, weight=weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
