"""The margin, ranking, embedding, probabilistic and sequence losses, composed of ember ops
(gradients for free). Numerically stable forms: softplus / log-sigmoid for logistic terms,
log-sum-exp with a finite floor for CTC."""
import math

from ... import _dtype as dt
from ..._creation import full_like, ones, ones_like, zeros, zeros_like
from ..._dtype import type_name
from ..._signatures import Parser, checked
from ...autograd.grad_mode import state
from ...ops.arithmetic import neg
from ...ops.cumulative import cumprod
from ...ops.reduction import any as _any
from ...ops.registry import name_node
from ...ops.select import minimum, where
from ...ops.unary import exp, log
from ...ops.views import unsqueeze

from ._util import (builtin_parser, reduce_loss, reduction_enum, reduction_name,
                    reduction_of)
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = ["poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "multilabel_margin_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "soft_margin_loss"]


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not a valid value for reduction")
    return _poisson_nll(input, target, log_input, full, eps, reduction_enum(reduction))


def _poisson_nll(input, target, log_input, full, eps, reduction):
    """torch.poisson_nll_loss, the builtin."""
    _POISSON.check((input, target, log_input, full, eps, reduction), {})
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        # Stirling's approximation of log(target!), only where target > 1.
        big = target.detach() > 1
        safe = where(big, target, ones_like(target))
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        loss = loss + where(big, stirling, zeros_like(stirling))
    return reduce_loss(loss, reduction_name(reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    # NOTE: torch's checks, in its order and kinds: only a Python float var is a number
    # (an int goes through torch.any(var < 0), whose parser refuses a bool).
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif _checked_any(var < 0):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(
                y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass  # heteroscedastic: one dim of size 1 broadcasts
        else:
            raise ValueError("var is of incorrect size")
    if reduction != "none" and reduction != "mean" and reduction != "sum":
        raise ValueError(reduction + " is not valid")
    # NOTE: PyTorch clamps var in place under no_grad: the value is floored at eps but the
    # gradient passes as if it were not (straight through).
    v = var.detach()
    var = var + (v.clone().clamp_(min=eps) - v)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def _size(t):
    return "[" + ", ".join(map(str, t.shape)) + "]"


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_tsize(input1)}, input2: "
                           f"{_tsize(input2)}, target: {_tsize(target)} ")
    return _margin_ranking(input1, input2, target, margin, enum)


def _margin_ranking(input1, input2, target, margin=0.0, reduction=0):
    """torch.margin_ranking_loss, the builtin."""
    _MARGIN_RANKING.check((input1, input2, target, margin, reduction), {})
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return reduce_loss(loss, reduction_name(reduction))


def _tsize(t):
    """torch's f"{t.size()}" (t.size(), as it reads it: a NumPy scalar's size is no method)."""
    return "torch.Size([" + ", ".join(map(str, t.size())) + "])"


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    return _hinge_embedding(input, target, margin,
                            reduction_enum(reduction_of(size_average, reduce, reduction)))


def _hinge_embedding(input, target, margin=1.0, reduction=0):
    """torch.hinge_embedding_loss, the builtin."""
    _HINGE.check((input, target, margin, reduction), {})
    # NOTE: torch's kernel fills the margin in the input's dtype (an integer input truncates
    # it) and keeps that dtype throughout.
    zero = zeros_like(input)
    hinge = (full_like(input, float(margin)) - input).clamp_min(0)
    loss = where(target != 1, hinge, zero) + where(target != -1, input, zero)
    return reduce_loss(loss, reduction_name(reduction))


# torch.any behind its parser: gaussian_nll_loss hands it `var < 0` of the caller's var
_checked_any = checked(_any, builtin_parser("any"), method=False)
_POISSON = builtin_parser("poisson_nll_loss")
_MARGIN_RANKING = builtin_parser("margin_ranking_loss")
_HINGE = builtin_parser("hinge_embedding_loss")
_COSINE_EMBEDDING = builtin_parser("cosine_embedding_loss")
_TRIPLET = builtin_parser("triplet_margin_loss")


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    return _cosine_embedding(input1, input2, target, margin,
                             reduction_enum(reduction_of(size_average, reduce, reduction)))


def _cosine_embedding(input1, input2, target, margin=0.0, reduction=0):
    """torch.cosine_embedding_loss, the builtin."""
    _COSINE_EMBEDDING.check((input1, input2, target, margin, reduction), {})
    tdim = target.dim()
    if tdim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {_size(input1)} and {_size(input2)}.")
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {_size(input1)} and {_size(input2)}.")
    # NOTE: PyTorch's epsilon inside both squared magnitudes keeps zero vectors finite.
    eps = 1e-12
    prod = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + eps
    mag2 = (input2 * input2).sum(tdim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zero = zeros_like(cos)
    loss = (where(target == 1, 1 - cos, zero) +
            where(target == -1, (cos - margin).clamp_min(0), zero))
    return reduce_loss(loss, reduction_name(reduction))


def _check_triplet_dims(a, p, n):
    a, p, n = a.ndim, p.ndim, n.ndim   # (as torch reads them: NumPy scalars have them too)
    if not (a == p == n):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _triplet_margin(anchor, positive, negative, margin, p, eps, swap, enum)


def _triplet_margin(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                    reduction=0):
    """torch.triplet_margin_loss, the builtin."""
    _TRIPLET.check((anchor, positive, negative, margin, p, eps, swap, reduction), {})
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction_name(reduction))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)


_MULTILABEL_MARGIN = Parser("multilabel_margin_loss", ("Tensor input, Tensor target, int "
                                                       "reduction = 1",))


def _batched(input, target, name):
    """(N, C) views of an (N, C) or unbatched (C,) input and its target."""
    if input.dim() > 2 or (input.dim() >= 1 and input.shape[-1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_size(input)}")
    if input.dim() <= 1:
        return input.reshape(1, -1), target.reshape(1, -1)
    return input, target


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    _MULTILABEL_MARGIN.check((input, target, enum), {})
    reduction = reduction_name(enum)
    x, y = _batched(input, target, "multilabel_margin_loss")
    if y.shape != x.shape:
        raise RuntimeError(f"inconsistent target size: {_size(target)} for input of size: "
                           f"{_size(input)}")
    n, c = x.shape
    if y.numel() and (int(y.max()) >= c or int(y.min()) < -1):
        raise RuntimeError("multilabel_margin_loss: target values must be in [-1, nclasses)")
    # The targets are the labels before the first -1 of each row.
    valid = cumprod((y >= 0).to(dt.int64), 1).to(dt.bool)
    safe = where(valid, y, zeros_like(y))
    is_target = zeros((n, c), dtype=dt.int64).scatter_add(
        1, safe, valid.to(dt.int64)) > 0
    picked = x.gather(1, safe)                                   # (N, J): x[y_j]
    hinge = (1 - picked.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)  # (N, J, C)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (hinge * mask.to(x.dtype)).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return name_node(reduce_loss(loss, reduction), "MultilabelMarginLossBackward0")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = reduction_of(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return reduce_loss(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _MULTI_MARGIN.check((input, target, p, margin, weight, enum), {})
    x = input.reshape(1, -1) if input.dim() <= 1 else input
    if input.dim() > 2 or x.shape[1] == 0:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_size(input)}")
    n, c = x.shape
    y = target.reshape(-1)
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {_size(target)}. Input has shape {_size(input)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {_size(weight)}")
    if input.numel() and input.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError('"multi_margin_loss_cpu_kernel" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    for t, expected in ((target, dt.int64), (weight, input.dtype)):
        if t is not None and t.dtype is not expected and n:
            raise RuntimeError(f"expected scalar type {type_name(expected)} but found "
                               f"{type_name(t.dtype)}")
    if y.numel() and (int(y.max()) >= c or int(y.min()) < 0):
        raise RuntimeError("target out of range")
    if not n:   # (nothing is gathered: torch never looks at the target's dtype)
        y = y.to(dt.int64)
    picked = x.gather(1, y.unsqueeze(1))
    hinge = (margin - picked + x).clamp_min(0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[y].unsqueeze(1)
    # The target's own class is not a margin violation.
    not_target = ones((n, c), dtype=x.dtype).scatter(1, y.unsqueeze(1), 0.0)
    loss = (hinge * not_target).sum(1) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return name_node(reduce_loss(loss, reduction_name(enum)), "MultiMarginLossBackward0")


_MULTI_MARGIN = Parser("multi_margin_loss", ("Tensor input, Tensor target, Number p = 1, "
                                             "Number margin = 1, Tensor? weight = None, "
                                             "int reduction = 1",))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    _SOFT_MARGIN.check((input, target, enum), {})
    if state.enabled and target.requires_grad:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    # NOTE: torch's kernel, in place into a copy of -input: log1p(exp(-input * target)) in
    # the input's shape and dtype (so its casting and broadcasting errors are the in-place
    # ops'), not the stabler softplus.
    loss = neg(input)
    loss.mul_(target)
    loss.exp_()
    loss.log1p_()
    if loss.dtype.is_complex and state.enabled and (input.requires_grad or
                                                    target.requires_grad):
        raise RuntimeError("soft_margin_loss does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return name_node(reduce_loss(loss, reduction_name(enum)), "SoftMarginLossBackward0")


_SOFT_MARGIN = Parser("soft_margin_loss", ("Tensor input, Tensor target, int reduction = 1",))


BUILTINS = {   # (see loss.BUILTINS)
    "hinge_embedding_loss": _hinge_embedding, "poisson_nll_loss": _poisson_nll,
    "margin_ranking_loss": _margin_ranking, "cosine_embedding_loss": _cosine_embedding,
    "triplet_margin_loss": _triplet_margin}
