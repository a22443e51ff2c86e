"""linear_cross_entropy: cross entropy of `input` projected to class logits by a (possibly
K-dimensional) linear weight, and the options PyTorch's chunked implementation takes.

ember always computes the reference form, cross_entropy(linear(input)), whatever the
options: PyTorch's chunked path gives the same values (it only bounds memory), and a valid
LinearCrossEntropyOptions is accepted so that code written for it runs."""
import dataclasses
import math
import warnings

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
    (N, in_features). PyTorch's checks, in its order."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           "respectively")
    class_shape = tuple(linear_weight.shape[:-1])        # (C, d1, ..., dK)
    if linear_bias is not None and tuple(linear_bias.shape) != class_shape:
        raise RuntimeError(f"expected linear_bias shape {class_shape}, got "
                           f"{tuple(linear_bias.shape)}")
    if len(class_shape) > 1 and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    if target.shape == batches + class_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if options is not None:
        _check_options(options, class_shape[1:], reduction, label_smoothing, target,
                       linear_bias)
    flat = linear_weight.reshape(math.prod(class_shape), in_features)
    logits = input.matmul(flat.T)
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(-1)
    logits = logits.reshape(batches + class_shape)
    return cross_entropy(logits, target, weight=weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def _check_options(options, out_features, reduction, label_smoothing, target, linear_bias):
    """PyTorch's warning when `options` cannot apply, and its use of them when they can (an
    object that is no LinearCrossEntropyOptions fails there)."""
    if (out_features or reduction not in {"mean", "sum", "none"} or label_smoothing != 0.0
            or target.dtype != dt.int64):
        bias = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs "
                      "reduction in {'mean','sum','none'}, label_smoothing == 0, target.dtype "
                      f"== int64, out_features == (). Got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={tuple(out_features)}, tracing=False, "
                      f"linear_bias.shape={bias}.", UserWarning, stacklevel=3)
    elif not isinstance(options, LinearCrossEntropyOptions):
        raise AttributeError(f"'{type(options).__name__}' object has no attribute '_adjust'")
