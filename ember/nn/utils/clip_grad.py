"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_.

`foreach` is accepted for PyTorch compatibility; ember runs the same per-tensor loop either way
(the loop is over parameters, and each step is one array operation)."""
import types
import warnings

from ..._creation import tensor
from ..._signatures import checked
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.linalg_norms import vector_norm
from ...ops.select import clamp
from ...ops.shape import stack
from .._functional._util import builtin_parser

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


# torch.clamp behind its parser: clip_grads_with_norm_ hands it the caller's total_norm, and a
# number there is PyTorch's TypeError naming clamp
_checked_clamp = checked(clamp, builtin_parser("clamp"), method=False)


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of all `tensors` as if concatenated into one vector."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    first_device = tensors[0].device
    with no_grad():
        norms = [vector_norm(t, norm_type).to(first_device) for t in tensors]
        total = vector_norm(stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """grad *= min(max_norm / (total_norm + 1e-6), 1) for every parameter's grad."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coef = _checked_clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their total norm is at most max_norm; returns the
    total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
