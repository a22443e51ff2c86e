"""Normalisation: batch_norm, instance_norm, layer_norm, group_norm, rms_norm,
local_response_norm, normalize.

batch_norm (training) and layer_norm run the fused ops of ember/ops/nn_ops.py; the rest are
composed from them or from plain ember ops.
"""
import numbers

from ... import _dtype as dt
from ..._creation import zeros
from ..._dtype import FLOATING
from ..._ranges import arange
from ..._signatures import checked
from ..._tensor import _wrap
from ...autograd.grad_mode import no_grad, state
from ...ops._elementwise import not_implemented
from ...ops.arithmetic import div
from ...ops.nn_ops import _batch_norm, _layer_norm
from ...ops.registry import dispatch, name_node
from ...ops.shape import cat
from ._util import builtin_parser

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm",
           "local_response_norm", "normalize"]


def _size(shape):
    return "torch.Size([" + ", ".join(map(str, shape)) + "])"


def _verify_batch_size(shape):
    n = shape[0]
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         + _size(shape))


def _verify_spatial_size(shape):
    n = 1
    for s in shape[2:]:
        n *= s
    if n == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         + _size(shape))


def _check_channels(name, t, c):
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _update_stats(running, value, momentum):
    """running = momentum * value + (1 - momentum) * running, in float64 as PyTorch's CPU
    kernel (its accumulate type), written in place without autograd."""
    new = value._data.astype("float64") * momentum + \
        running._data.astype("float64") * (1 - momentum)
    # NOTE: cast here, not by copy_: a cast would be an op call, which a trace (ONNX export,
    # ember.compile) would see taking an array computed outside the op registry
    with no_grad():
        running.copy_(_wrap(new.astype(running._data.dtype), running.dtype, running._device))


_BATCH_NORM = builtin_parser("batch_norm")
# torch.div behind its parser: normalize hands it the caller's `out`
_checked_div = checked(div, builtin_parser("div"), method=False)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    # NOTE: torch's Python steps come before its builtin's parser: the truth of training (a
    # tensor's raises), the batch size, then eps's sign
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _BATCH_NORM.check((input, weight, bias, running_mean, running_var, training, momentum, eps,
                       True), {})
    return _batch_norm_body(input, running_mean, running_var, weight, bias, training,
                            momentum, eps)


def _batch_norm_body(input, running_mean, running_var, weight, bias, training, momentum,
                     eps):
    """torch.batch_norm's (the builtin's) work: no batch size or eps check."""
    c = input.shape[1] if input.dim() > 1 else 1
    if input.numel() == 0:
        # NOTE: torch returns an empty input's copy before any channel check, multiplied by
        # weight[0] and shifted by bias[0] so that the graph reaches them
        out = input.clone()
        out = out * weight[0] if weight is not None else out
        return out + bias[0] if bias is not None else out
    _check_channels("running_mean", running_mean, c)
    _check_channels("running_var", running_var, c)
    _check_channels("weight", weight, c)
    _check_channels("bias", bias, c)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        return _batch_norm_eval(input, running_mean, running_var, weight, bias, eps)
    mean, var, y = dispatch(_batch_norm, (input, weight, bias), {"eps": eps})
    if running_mean is not None or running_var is not None:
        n = input.numel() // c
        with no_grad():
            if running_mean is not None:
                _update_stats(running_mean, mean, momentum)
            if running_var is not None:
                unbiased = var * (n / (n - 1)) if n > 1 else var * float("nan")
                _update_stats(running_var, unbiased, momentum)
    return y


def _batch_norm_eval(input, running_mean, running_var, weight, bias, eps):
    # y = x * scale + shift with per-channel scale/shift: two passes over the input.
    shape = (1, -1) + (1,) * (input.dim() - 2) if input.dim() > 1 else (-1,)
    scale = (running_var + eps).rsqrt()
    if weight is not None:
        scale = scale * weight
    shift = -running_mean * scale
    if bias is not None:
        shift = shift + bias
    return input * scale.reshape(shape).to(input.dtype) + shift.reshape(shape).to(input.dtype)


_INSTANCE_NORM = builtin_parser("instance_norm")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    # (torch's Python steps: the truth of use_input_stats, input.size(), then the builtin's
    # argument parser)
    if use_input_stats:
        _verify_spatial_size(input.size())
    _INSTANCE_NORM.check((input, weight, bias, running_mean, running_var, use_input_stats,
                          momentum, eps, True), {})
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    # NOTE: PyTorch's own reduction: each (sample, channel) pair is a channel of a batch of one.
    x = input.reshape((1, b * c) + tuple(input.shape[2:]))
    w = weight.repeat(b) if weight is not None else None
    bb = bias.repeat(b) if bias is not None else None
    rm = running_mean.repeat(b) if running_mean is not None else None
    rv = running_var.repeat(b) if running_var is not None else None
    out = _batch_norm_body(x, rm, rv, w, bb, use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.reshape(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.reshape(b, c).mean(0))
    return out.reshape(input.shape)


def _shape_list(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _normalized(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_affine(shape, **params):
    """layer_norm's and rms_norm's first checks: a non-empty normalized_shape, then each
    affine parameter's shape (weight first)."""
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in params.items():
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_shape_list(t.shape)} and "
                               f"normalized_shape = {_shape_list(shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = _normalized(normalized_shape)
    _check_affine(shape, weight=weight, bias=bias)
    nd = len(shape)
    if input.dim() < nd or tuple(input.shape[input.dim() - nd:]) != shape:
        raise RuntimeError(f"Given normalized_shape={_shape_list(shape)}, expected input with "
                           f"shape [*, {', '.join(map(str, shape))}], but got input of size"
                           f"{_shape_list(input.shape)}")
    params = {"nd": nd, "eps": eps}
    if state.enabled and (input.requires_grad or weight is not None and weight.requires_grad
                          or bias is not None and bias.requires_grad):
        params["saved"] = []
    return dispatch(_layer_norm, (input, weight, bias), params)[2]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_shape_list(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape "
                               f"{_shape_list(t.shape)} and input of shape "
                               f"{_shape_list(input.shape)}")
    x = input.reshape(n, num_groups, -1)
    y = dispatch(_layer_norm, (x, None, None), {"nd": 1, "eps": eps})[2].reshape(input.shape)
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return name_node(y, "NativeGroupNormBackward0")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = _normalized(normalized_shape)
    _check_affine(shape, weight=weight)
    nd = len(shape)
    if input.dim() < nd:
        raise ValueError(f"Input tensor must have at least {nd} dimensions, but got "
                         f"{input.dim()}")
    if tuple(input.shape[input.dim() - nd:]) != shape:
        raise RuntimeError(f"Given normalized_shape={_shape_list(shape)}, expected input with "
                           f"shape [*{', '.join(map(str, shape))}], but got input of size"
                           f"{_shape_list(input.shape)}")
    if input.dtype.category < FLOATING:   # (integers and bool: torch's kernel has no loop for them)
        raise not_implemented("rms_norm", input.dtype)
    if eps is None:
        eps = dt.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - nd, input.dim()))
    x = input
    if input.dtype in (dt.float16, dt.bfloat16):
        x = input.float()
    y = x * (x * x).mean(dims, keepdim=True).add(eps).rsqrt()
    if weight is not None:
        y = y * weight
    return y.to(input.dtype)   # (torch's result has the input's dtype, whatever the weight's)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    # Sum over a window of `size` channels (zero padded size//2 before, (size-1)//2 after):
    # one shifted slice per window offset, so the loop runs `size` times, not per element.
    lo, hi = size // 2, (size - 1) // 2
    zero = zeros((input.shape[0], 1) + tuple(input.shape[2:]), dtype=input.dtype)
    padded = cat([zero.expand((input.shape[0], lo) + tuple(input.shape[2:])), sq,
                  zero.expand((input.shape[0], hi) + tuple(input.shape[2:]))], 1)
    total = padded.narrow(1, 0, c)
    for o in range(1, size):
        total = total + padded.narrow(1, o, c)
    denom = (total / size).mul(alpha).add(k).pow(beta)
    return input / denom


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is not None:
        return _checked_div(input, denom, out=out)
    return input / denom




def _cross_map_lrn2d(input, size, alpha, beta, k):
    """The legacy CrossMapLRN2d, with its running-window quirk: channel 0's square stays in
    every window that has moved past it (PyTorch's recurrence never subtracts it)."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    c = input.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    sq = input * input
    zero = zeros((input.shape[0], 1) + tuple(input.shape[2:]), dtype=input.dtype)
    prefix = cat([zero, sq.cumsum(1)], 1)
    channel = arange(c)
    lo = (channel - pre_pad + 1).clamp(min=0)
    hi = (channel + pre_pad).clamp(max=c)
    total = prefix.index_select(1, hi) - prefix.index_select(1, lo)
    stuck = (lo > 0).to(input.dtype).reshape(1, c, 1, 1)
    total = total + sq.narrow(1, 0, 1) * stuck
    return input * (total * (alpha / size) + k).pow(-beta)
