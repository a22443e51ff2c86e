"""What PyTorch's autograd refuses to record for a differentiable op's output: an integer or
bool result, and, for the ops whose derivative formulas are real-only, a complex one."""
from .. import _dtype as dt
from ..autograd.grad_mode import state


def recorded_dtype(input, result):
    """`result`, the dtype of a differentiable reduction's output: PyTorch's autograd refuses
    to record an integer or bool one for an input that requires grad (sum(dtype=int64))."""
    if result.category < dt.FLOATING and input.requires_grad and state.enabled:
        raise RuntimeError(f"Autograd not support dtype: {dt.type_name(result)}")
    return result


def real_grad_only(name, out, *inputs):
    """`out`, a result of an op whose derivative is defined for real outputs only: PyTorch
    refuses to record a complex one (after the kernel ran, so the kernel's errors come
    first)."""
    if out.dtype.category == dt.COMPLEX and state.enabled and any(
            getattr(t, "requires_grad", False) for t in inputs):
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           "with complex dtype.")
    return out
