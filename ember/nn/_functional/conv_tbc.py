"""conv_tbc: a 1-d convolution over (time, batch, channels) sequences, the layout of
fairseq's convolutional models, with the weight as (kernel width, in, out)."""
from .conv import conv1d

__all__ = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    steps = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if steps <= 0:   # (a sequence shorter than the kernel: no output steps, as PyTorch)
        return input.new_zeros((0, input.shape[1], weight.shape[2]))
    # (T, B, C_in) -> (B, C_in, T) and (K, C_in, C_out) -> (C_out, C_in, K): conv1d's layout
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
