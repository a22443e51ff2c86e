"""linear, bilinear."""
from ..._dtype import type_name
from ...amp import autocast_mode as _amp
from ...ops.einsum import einsum
from ...ops.linalg import addmm
from ...ops.matmul import matmul

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if _amp.active:  # autocast computes linear in low precision, bias included
        input, weight, bias = _amp.autocast_args("lower", input, weight, bias)
    if input.dim() == 0 or weight.dim() == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input.dim()}D and {weight.dim()}D")
    if input.shape[-1] != weight.shape[-1]:
        rows = input.numel() // max(input.shape[-1], 1) if input.dim() else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input.shape[-1] if input.dim() else 1} and {weight.shape[-1]}x"
                           f"{weight.shape[0]})")
    if bias is None:
        return matmul(input, weight.t())
    # With a bias PyTorch runs addmm, whose dtype checks word the error differently.
    if input.dtype != weight.dtype:
        raise RuntimeError("mat1 and mat2 must have the same dtype, but got "
                           f"{type_name(input.dtype)} and {type_name(weight.dtype)}")
    if bias.dtype != weight.dtype:
        raise RuntimeError("self and mat2 must have the same dtype, but got "
                           f"{type_name(bias.dtype)} and {type_name(weight.dtype)}")
    # NOTE: PyTorch's graph: addmm on the rows (AddmmBackward0), viewed back for N-d inputs.
    if input.dim() == 2:
        return addmm(bias, input, weight.t())
    rows = input.reshape(-1, input.shape[-1]) if input.dim() else input.reshape(1, 1)
    return addmm(bias, rows, weight.t()).view(tuple(input.shape[:-1]) +
                                                    (weight.shape[0],))


def bilinear(input1, input2, weight, bias=None):
    """y = x1^T A x2 + b for each output feature."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} "
                           f"and {input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    for i, (x, expected) in enumerate(((input1, weight.shape[1]), (input2, weight.shape[2]))):
        if x.shape[-1] != expected:
            raise RuntimeError(f"bilinear(): input{i + 1} size does not match weight size: "
                               f"got {x.shape[-1]} but expected {expected}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
