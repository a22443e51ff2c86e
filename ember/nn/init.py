"""nn.init: weight initialisations, drawing from the same distributions (and, on CPU, the
same random stream) as PyTorch's."""
import math
import warnings

from .. import _creation
from .._tensor import Tensor  # noqa: F401  (torch.nn.init re-exports it too)
from ..autograd.grad_mode import no_grad
from ..ops.indexing_views import diagonal
from ..ops.linalg_decomp import qr
from ..ops.random_factories import randperm
from ..ops.rounding import sign
from ..ops.select import where

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def calculate_gain(nonlinearity, param=None):
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', "
                         "'fan_out']")
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal values, those outside [a, b] redrawn; PyTorch's two rejection samplers (so the
    same seed gives the same values)."""

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            # Most draws land inside: redraw the outliers from the normal itself.
            # NOTE: the bounds are rounded to the tensor's dtype first, as PyTorch does.
            lo, hi = tensor.new_tensor(a).item(), tensor.new_tensor(b).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                fresh = _creation.empty_like(result).normal_(mean, std, generator=generator)
                result = where(mask, fresh, result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        # A narrow window: uniform proposals on [a, b], accepted with the normal's density
        # relative to its peak inside the window.
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

        def log_density(x):
            return ((x - mean) / std) ** 2 * -0.5 - log_peak

        tensor.uniform_(a, b, generator=generator)
        accept = _creation.empty_like(tensor)
        pending = accept.uniform_(generator=generator).log_().gt(log_density(tensor))
        result = tensor
        while pending.any():
            candidates = _creation.empty_like(tensor).uniform_(a, b, generator=generator)
            result = where(pending, candidates, result)
            redraw = accept.uniform_(generator=generator).log_().gt(log_density(candidates))
            pending = where(pending, redraw, pending)
        if result is not tensor:
            tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_creation.eye(*tensor.shape, dtype=tensor.dtype))
    return tensor


def dirac_(tensor, groups=1):
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                index = (g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])
                tensor[index] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    """He's standard deviation for `tensor`, or None for a zero-element one (a no-op, which
    PyTorch warns of)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std  # NOTE: PyTorch's rounding order, for bit-equal draws
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = _creation.empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened = flattened.t()
    q, r = qr(flattened)
    q = q * sign(diagonal(r, 0))
    if rows < cols:
        q = q.t()
    with no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            row_indices = randperm(rows)
            tensor[row_indices[:num_zeros], col] = 0
    return tensor


def _legacy(name, fn):
    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    return deprecated


uniform = _legacy("uniform", uniform_)
normal = _legacy("normal", normal_)
constant = _legacy("constant", constant_)
xavier_uniform = _legacy("xavier_uniform", xavier_uniform_)
xavier_normal = _legacy("xavier_normal", xavier_normal_)
kaiming_uniform = _legacy("kaiming_uniform", kaiming_uniform_)
kaiming_normal = _legacy("kaiming_normal", kaiming_normal_)
orthogonal = _legacy("orthogonal", orthogonal_)
eye = _legacy("eye", eye_)
dirac = _legacy("dirac", dirac_)
sparse = _legacy("sparse", sparse_)
