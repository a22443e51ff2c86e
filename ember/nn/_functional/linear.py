"""linear, bilinear."""
import ember
from ...amp import autocast_mode as _amp

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if _amp.active:  # autocast computes linear in low precision, bias included
        input, weight, bias = _amp.autocast_args("lower", input, weight, bias)
    if input.shape[-1] != weight.shape[-1]:
        rows = input.numel() // max(input.shape[-1], 1) if input.dim() else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input.shape[-1] if input.dim() else 1} and {weight.shape[-1]}x"
                           f"{weight.shape[0]})")
    out = ember.matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for each output feature."""
    out = ember.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
