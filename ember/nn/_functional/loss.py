"""Loss functions (numerically stable formulations: log-sum-exp, log-sigmoid).

Where PyTorch computes a loss as one op of its own, the composite's result carries that op's
node name (MseLossBackward0, BinaryCrossEntropyBackward0, ...: registry.name_node); where
PyTorch's loss is itself a composite (l1_loss, kl_div, the weighted forms) so is the graph."""
import math
import warnings

from ... import _dtype as dt
from ..._creation import full, full_like, tensor, zeros, zeros_like
from ..._dtype import INTEGER, can_cast, promote_types, result_type, type_name
from ..._ranges import arange
from ..._signatures import Parser
from ..._tensor import Tensor
from ...amp import autocast_mode as _amp
from ...autograd.grad_mode import state
from ...ops import loss_ops
from ...ops.cumulative import cumsum
from ...ops.grids import broadcast_shapes, broadcast_tensors
from ...ops.pointwise import pow as _pow, xlogy
from ...ops.reduction import logsumexp, sum as _sum
from ...ops.registry import name_node
from ...ops.rounding import abs as _abs
from ...ops.select import clamp, minimum, where
from ...ops.shape import cat, stack
from ...ops.unary import exp, log

from ._util import (builtin_parser, check_weight, compare_sizes, reduce_loss, reduction_enum,
                    reduction_name, reduction_of, torch_size, weighted_reduction)
from .activation import log_softmax, logsigmoid

__all__ = ["mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "kl_div",
           "ctc_loss"]


# ---------------------------------------------------------------------- pointwise losses
# NOTE: torch's mse/l1/huber/smooth_l1 are Python wrappers, reproduced step by step: compare
# target.size() with input.size() (a non-tensor fails there, in Python), read the legacy
# size_average/reduce, broadcast, then either the weighted composite or the C builtin, whose
# reduction is first turned into its enum (ValueError) and whose kernel pools a promoted dtype.
def _kernel_dtype(input, target, kernel, into_input=False):
    """The dtype a pointwise loss kernel computes in: the promoted one, which must be
    floating; `into_input`: the result is written into the input's dtype (huber_loss)."""
    common = promote_types(input.dtype, target.dtype)
    if into_input and not can_cast(common, input.dtype):
        raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired "
                           f"output type {type_name(input.dtype)}")
    if not common.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(common)}\'')
    return common


_MSE = Parser("mse_loss", ("Tensor input, Tensor target, int reduction = 1",))
_L1 = Parser("l1_loss", ("Tensor input, Tensor target, int reduction = 1",))
_HUBER = Parser("huber_loss", ("Tensor input, Tensor target, int reduction = 1, "
                               "float delta = 1.0",))
_SMOOTH_L1 = Parser("smooth_l1_loss", ("Tensor input, Tensor target, int reduction = 1, "
                                       "float beta = 1.0",))


def _l1(input, target, reduction):
    """The builtin l1_loss: a composite of sub, abs and the reduction."""
    _L1.check((input, target, reduction), {})
    loss = _abs(input - target)
    return reduce_loss(loss, reduction_name(reduction))


def _pointwise_operands(input, target, size_average, reduce, reduction):
    """(input, target, reduction) of an elementwise loss: in float32 under autocast, the
    sizes compared (PyTorch's warning), broadcast together; the legacy size_average and
    reduce folded into the reduction."""
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    compare_sizes(input, target)
    if size_average is not None or reduce is not None:
        reduction = reduction_of(size_average, reduce, reduction)
    input, target = broadcast_tensors(input, target)
    return input, target, reduction


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    x, y, reduction = _pointwise_operands(input, target, size_average, reduce, reduction)
    if weight is not None:   # (PyTorch's weighted form is a composite: no named node)
        check_weight(weight, input)
        return weighted_reduction(_pow(x - y, 2), weight, reduction,
                                  lambda w: _sum(w) / _sum(weight))
    enum = reduction_enum(reduction)
    _MSE.check((x, y, enum), {})
    common = _kernel_dtype(x, y, "mse_cpu")
    diff = x.to(common) - y.to(common)
    return name_node(reduce_loss(diff * diff, reduction_name(enum)), "MseLossBackward0")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    x, y, reduction = _pointwise_operands(input, target, size_average, reduce, reduction)
    if weight is not None:
        check_weight(weight, input)
        return weighted_reduction(_abs(x - y), weight, reduction,
                                  lambda w: _sum(w) / _sum(weight))
    return _l1(x, y, reduction_enum(reduction))


def _check_targets(input, target, class_dim, weight):
    """PyTorch's nll_loss shape and dtype checks, in its order; returns an out-of-range
    class, if any."""
    nd, td = input.dim(), target.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and input.shape[0] != (target.shape[0] if td else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if td else 0}).")
    if nd <= 2:
        if td > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 4:  # PyTorch's nll_loss2d path words these differently
        if td != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {td}")
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
    elif tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, "
                           f"got {list(target.shape)}")
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(target.dtype)}")
    if nd == 1 and td == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    n_classes = input.shape[class_dim]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                           "classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if not input.dtype.is_floating_point:
        kernel = "nll_loss_out_frame" if nd <= 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    if target.numel():
        # (on the array: two recorded ember reductions cost more than the loss itself)
        lo, hi = int(target._data.min()), int(target._data.max())
        bad = hi if hi >= n_classes else lo
        if (hi >= n_classes or lo < 0):
            return bad
    return None


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of `target` classes under log-probabilities `input`."""
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    _NLL.check((input, target, weight, enum, ignore_index), {})
    reduction = reduction_name(enum)
    class_dim = 0 if input.dim() == 1 else 1
    bad = _check_targets(input, target, class_dim, weight)
    if bad is not None and (bad != ignore_index):
        raise IndexError(f"Target {bad} is out of bounds.")
    return loss_ops.nll_loss(input, target, weight, reduction, ignore_index)


_NLL = Parser("nll_loss_nd", ("Tensor input, Tensor target, Tensor? weight = None, int "
                              "reduction = 1, SymInt ignore_index = -100",))


def _weighted_mean(total, weight_sum):
    """total / weight_sum.
    NOTE: with every target ignored this is 0/0 = nan, as in PyTorch, whose backward still
    gives zero gradients: the nan is added apart from the division so none flows back."""
    empty = weight_sum == 0
    return (total / where(empty, 1, weight_sum) +
            where(empty, math.nan, 0).to(total.dtype))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax + nll_loss over class indices, or against class probabilities."""
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    _CROSS_ENTROPY.check((input, target, weight, enum, ignore_index, label_smoothing), {})
    reduction = reduction_name(enum)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if target.shape == input.shape and not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class "
                           f"probabilities, got {type_name(target.dtype)}")
    class_dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    wshape = [1] * input.dim()
    wshape[class_dim] = n_classes
    if target.shape == input.shape:  # class probabilities
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(wshape)
        loss = -terms.sum(class_dim)
        if reduction == "mean":   # (PyTorch divides by a Scalar there: DivBackward1)
            return name_node(loss.sum() / (input.numel() // n_classes), "DivBackward1")
        return reduce_loss(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    valid = (target != ignore_index)
    terms = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -terms.sum(class_dim) * valid.to(logp.dtype)
    if reduction == "mean":
        if weight is None:
            smooth = _weighted_mean(smooth.sum(), valid.sum())
        else:
            safe = where(valid, target, zeros_like(target))
            smooth = _weighted_mean(smooth.sum(), (weight[safe] * valid.to(weight.dtype)).sum())
    else:
        smooth = reduce_loss(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


_CROSS_ENTROPY = Parser("cross_entropy_loss", ("Tensor input, Tensor target, Tensor? weight = "
                                               "None, int reduction = 1, SymInt ignore_index = "
                                               "-100, float label_smoothing = 0.0",))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({torch_size(target)}) that is different to "
                         f"the input size ({torch_size(input)}) is deprecated. Please ensure "
                         "they have the same size.")
    if weight is not None:
        weight = weight.expand(broadcast_shapes(target.size(), weight.size()))
    _BCE.check((input, target, weight, enum), {})
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {type_name(target.dtype)} but expected "
                           f"{type_name(input.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError('"binary_cross_entropy" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    if input.numel() and (float(input.detach().min()) < 0 or
                          float(input.detach().max()) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    # NOTE: PyTorch clamps the logs at -100 so that log(0) never yields -inf.
    log_p = clamp(log(input), min=-100)
    log_q = clamp(log(1 - input), min=-100)
    loss = -(target * log_p + (1 - target) * log_q)
    if weight is not None:   # (into the loss, in place: its dtype stays)
        common = result_type(loss, weight)
        if not can_cast(common, loss.dtype):
            raise RuntimeError(f"result type {type_name(common)} can't be cast to the desired "
                               f"output type {type_name(loss.dtype)}")
        loss = (loss * weight).to(loss.dtype)
    return name_node(reduce_loss(loss, reduction_name(enum)), "BinaryCrossEntropyBackward0")


_BCE = Parser("binary_cross_entropy", ("Tensor input, Tensor target, Tensor? weight = None, "
                                       "int reduction = 1",))


_BCE_LOGITS = Parser("binary_cross_entropy_with_logits", (
    "Tensor input, Tensor target, Tensor? weight = None, Tensor? pos_weight = None, "
    "int reduction = 1",))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    if not target.size() == input.size():
        raise ValueError(f"Target size ({torch_size(target)}) must be the same as input size "
                         f"({torch_size(input)})")
    return _bce_with_logits(input, target, weight, pos_weight, enum)


def _bce_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """torch.binary_cross_entropy_with_logits, the builtin (no size check: the target
    broadcasts as its in-place kernel allows)."""
    enum = reduction
    _BCE_LOGITS.check((input, target, weight, pos_weight, enum), {})
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is not None and state.enabled and t.requires_grad:
            raise RuntimeError("The function 'binary_cross_entropy_with_logits' is not "
                               f"differentiable with respect to argument '{name}'. This input "
                               "cannot have requires_grad True.")
    # NOTE: torch's kernel step by step, in place on fresh tensors (so its casting and
    # broadcasting errors are the in-place ops'): (1 - t) x - w_p log(sigmoid(x)), with
    # w_p = 1 + (pos_weight - 1) t.
    log_sigmoid = logsigmoid(input).clone()
    if pos_weight is not None:
        log_sigmoid.mul_((pos_weight - 1).mul(target).add_(1))
    loss = (1 - target).mul_(input).sub_(log_sigmoid)
    if weight is not None:
        loss.mul_(weight)
    return name_node(reduce_loss(loss, reduction_name(enum)),
                     "BinaryCrossEntropyWithLogitsBackward0")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    x, y, reduction = _pointwise_operands(input, target, None, None, reduction)
    if weight is None:
        return _huber(x, y, reduction_enum(reduction), delta)
    check_weight(weight, input)   # (PyTorch's weighted form is a composite: no named node)
    return weighted_reduction(_huber(x, y, 0, delta), weight, reduction, lambda w: w.mean())


def _huber(input, target, reduction, delta):
    """The builtin huber_loss: computed in the promoted dtype, written in the input's."""
    _HUBER.check((input, target, reduction, delta), {})
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    common = _kernel_dtype(input, target, "huber_cpu", into_input=True)
    diff = _abs(input.to(common) - target.to(common))
    loss = where(diff < delta, 0.5 * diff * diff, delta * (diff - 0.5 * delta))
    loss = loss.to(input.dtype)
    return name_node(reduce_loss(loss, reduction_name(reduction)), "HuberLossBackward0")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    input, target, reduction = _pointwise_operands(input, target, size_average, reduce,
                                                   reduction)
    if beta == 0.0:
        return _l1(input, target, reduction_enum(reduction))
    enum = reduction_enum(reduction)
    _SMOOTH_L1.check((input, target, enum, beta), {})
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    common = _kernel_dtype(input, target, "smooth_l1_cpu")
    diff = _abs(input.to(common) - target.to(common))
    loss = where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return name_node(reduce_loss(loss, reduction_name(enum)), "SmoothL1LossBackward0")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _amp.active:  # autocast runs losses in float32
        input, target = _amp.autocast_args("fp32", input, target)
    if size_average is not None or reduce is not None:
        enum = reduction_enum(reduction_of(size_average, reduce, reduction))
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                          "the support size.'batchmean' divides only by the batch size, and "
                          "aligns with the KL div math definition.'mean' will be changed to "
                          "behave the same as 'batchmean' in the next major release.",
                          UserWarning, stacklevel=2)
        enum = reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _kl_div(input, target, enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def _kl_div(input, target, reduction=0, *, log_target=False):
    """torch.kl_div, the builtin."""
    _KL_DIV.check((input, target, reduction), {"log_target": log_target})
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = exp(target) * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    return reduce_loss(loss, reduction_name(reduction))


_KL_DIV = builtin_parser("kl_div")


# ---------------------------------------------------------------------- CTC
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification: the log-space forward (alpha) recursion over
    time, vectorised over the batch and the extended (blank-interleaved) label positions.

    NOTE: log(0) is a large finite negative number, not -inf, so that every log-sum-exp and
    its gradient stay finite; totals below half of it are impossible alignments (inf)."""
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank,
                reduction_enum(reduction), zero_infinity)


def _ctc(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
         zero_infinity=False):
    """torch.ctc_loss, the builtin."""
    _CTC.check((log_probs, targets, input_lengths, target_lengths, blank, reduction,
                zero_infinity), {})
    reduction = reduction_name(reduction)
    unbatched = log_probs.dim() != 3
    log_probs, targets = _batched(log_probs, targets, input_lengths, target_lengths, unbatched)
    t_max, n, c = log_probs.shape
    in_len = _lengths(input_lengths, n, "input_lengths")
    tg_len = _lengths(target_lengths, n, "target_lengths")
    labels = _padded_targets(targets, tg_len, n)
    if in_len.numel() and int(in_len.max()) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(in_len.max())} (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    s_max = labels.shape[1]
    neg = -1e30
    # Extended labels: blank, y1, blank, y2, ..., blank; (N, S') with S' = 2 S + 1.
    ext = full((n, 2 * s_max + 1), blank, dtype=dt.int64)
    if s_max:
        ext[:, 1::2] = labels
    width = ext.shape[1]
    pos = arange(width).unsqueeze(0)
    in_range = pos < (2 * tg_len + 1).unsqueeze(1)
    skip = zeros((n, width), dtype=dt.bool)
    if width > 2:
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    lp = log_probs.gather(2, ext.unsqueeze(0).expand(t_max, n, width))  # (T, N, S')
    floor = full((n, width), neg, dtype=log_probs.dtype)
    alpha = where((pos < 2) & in_range, lp[0], floor)
    col = full((n, 1), neg, dtype=log_probs.dtype)
    for t in range(1, t_max):
        a1 = cat([col, alpha[:, :-1]], 1)
        a2 = where(skip, cat([col, col, alpha[:, :-2]], 1)[:, :width], floor)
        step = logsumexp(stack([alpha, a1, a2]), 0) + lp[t]
        step = where(in_range, step, floor)
        alpha = where((t < in_len).unsqueeze(1), step, alpha)
    last = (2 * tg_len).unsqueeze(1)
    end = alpha.gather(1, last)
    before = where(last > 0, alpha.gather(1, (last - 1).clamp_min(0)),
                   full_like(end, neg))
    ll = logsumexp(cat([end, before], 1), 1)
    impossible = (ll < neg / 2) | (in_len == 0) & (tg_len > 0)
    loss = where(impossible, full_like(ll, math.inf), -ll)
    if zero_infinity:
        loss = where(impossible | loss.isinf(), zeros_like(loss), loss)
    if reduction == "mean":
        return (loss / tg_len.clamp_min(1).to(loss.dtype)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


_CTC = builtin_parser("ctc_loss")


def _batched(log_probs, targets, input_lengths, target_lengths, unbatched):
    """torch's first checks (integral lengths, then 3-d log-probabilities once an unbatched
    input has its batch dim); log_probs and targets batched."""
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if isinstance(lengths, Tensor) and lengths.dtype.category != INTEGER:
            raise RuntimeError(f"{name} must be integral")
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.unsqueeze(0)
    if log_probs.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.dim()}-dimensional "
                           "tensor for argument #1 'log_probs' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    return log_probs, targets


def _lengths(lengths, n, name):
    if not isinstance(lengths, Tensor):
        lengths = tensor(list(lengths), dtype=dt.int64)
    lengths = lengths.reshape(-1).to(dt.int64)
    if lengths.numel() != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return lengths


def _padded_targets(targets, tg_len, n):
    """(N, S) labels from padded (N, S) targets or their 1-D concatenation."""
    targets = targets.to(dt.int64)
    s_max = int(tg_len.max()) if n else 0
    if targets.dim() == 2:
        if targets.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, "
                               f"but got size {targets.shape[1]} for argument #2 'targets' "
                               "(while checking arguments for ctc_loss_allocate_outputs)")
        return targets[:, :s_max]
    starts = cumsum(tg_len, 0) - tg_len
    s = arange(s_max).unsqueeze(0)
    idx = (starts.unsqueeze(1) + minimum(s, (tg_len - 1).clamp_min(0).unsqueeze(1)))
    if targets.numel() == 0:
        return zeros((n, s_max), dtype=dt.int64)
    return targets[idx.clamp(0, targets.numel() - 1)]


# torch.<name>: the builtins the Python losses hand their arguments to (an enum reduction,
# none by default, as torch's parser reads the builtins' `Mean` default)
BUILTINS = {"kl_div": _kl_div, "binary_cross_entropy_with_logits": _bce_with_logits,
            "ctc_loss": _ctc}
