"""Max unpooling (1d/2d/3d): the inverse of max pooling's indices, zeros elsewhere."""
import numpy as np

from ... import _dtype as dt
from ..._creation import zeros
from ..._signatures import Parser
from ..._tensor import Tensor
from ._pool_args import COUNT, int_list, ntuple

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch's Python computation of the unpooled spatial size, step by step (its errors are
    Python's: indexing the sizes, comparing the given output_size with the default one)."""
    input_size = input.size()
    n = len(kernel_size)
    default = [(input_size[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f"{lo} and {hi})")
        size = output_size
    for d in range(n):
        ok = size[d] >= 0
        if ok.__class__ is not bool:
            raise TypeError("cond must be a bool, but got " + (
                "a Tensor. For tensor conditions, use torch._check_tensor_all() to assert that "
                "all elements are true." if isinstance(ok, Tensor) else str(type(ok))))
        if not ok:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return size


_UNPOOL_PARSERS = {
    2: Parser("max_unpool2d", ("Tensor input, Tensor indices, int or tuple of ints "
                               "output_size",)),
    3: Parser("max_unpool3d", ("Tensor input, Tensor indices, int or tuple of ints output_size, "
                               "int or tuple of ints stride, int or tuple of ints padding",))}


def _max_unpool_checks(input, indices, size, stride, padding, nd):
    """torch's max_unpool{2,3}d builtins' checks (nd 2 or 3), in their order; max_unpool3d
    also takes (and checks) the stride and padding."""
    name = f"max_unpooling{nd}d"
    if indices.dtype is not dt.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {dt.type_name(indices.dtype)}" if nd == 2 else ""))
    where = f"({'depth, ' if nd == 3 else ''}height, width)"
    if len(size) != nd:
        raise RuntimeError(f"There should be exactly {COUNT[nd]} elements {where} in "
                           f"output_size, but got {len(size)} elements.")
    if nd == 3:
        for arg, v in (("stride", stride), ("padding", padding)):
            if len(v) != 3:
                raise RuntimeError(f"There should be exactly three elements {where} in {arg}, "
                                   f"but got: {len(v)} elements.")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got "
                           f"a tensor with {input.dim()} dimensions.")
    if nd == 3 and any(v <= 0 for v in stride):
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    if input.shape != indices.shape:
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}_forward_out_cpu(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but got {list(input.shape)} with "
                               f"dimension {i} being empty" + ("." if nd == 2 else ""))
    if nd == 3 and any(v < 0 for v in size):
        raise RuntimeError(f"{name}(): output_size must contain non-negative spatial dimensions, "
                           f"but got output_size={tuple(size)}")
    if input.dtype is dt.bool or input.dtype.is_complex:
        raise NotImplementedError(f'"max_unpool{nd}d" not implemented for '
                                  f"'{dt.type_name(input.dtype)}'")


def _max_unpool_kernel(input, indices, size, nd):
    """The values of `input` scattered to `indices` in each plane of the output size."""
    lead = tuple(input.shape[:-nd])
    plane = int(np.prod(size))
    flat_idx = indices.reshape(lead + (-1,))
    flat = flat_idx.detach()._data.reshape(-1)
    bad = flat[(flat < 0) | (flat >= plane)]
    if bad.size:   # (torch's single-threaded kernel reports the last one it met)
        raise RuntimeError(f"Found an invalid max index: {int(bad[-1])} (output volumes are of "
                           f"size {'x'.join(map(str, size))})")
    out = zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(lead + (-1,)))
    return out.reshape(lead + size)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    kernel_size = ntuple(kernel_size, nd)
    stride = kernel_size if stride is None else ntuple(stride, nd)
    padding = ntuple(padding, nd)
    size = _unpool_output_size(input, kernel_size, stride, padding, output_size)
    unit_width = nd == 1
    if unit_width:   # unpooled as 2-D
        size = size + ([1] if isinstance(size, list) else (1,))
        input, indices = input.unsqueeze(-1), indices.unsqueeze(-1)
        nd = 2
    if nd == 3:
        _UNPOOL_PARSERS[3].check((input, indices, size, stride, padding), {})
        stride, padding = int_list(stride, 3), int_list(padding, 3)
    else:
        _UNPOOL_PARSERS[2].check((input, indices, size), {})
    size = int_list(size, nd)
    _max_unpool_checks(input, indices, size, stride, padding, nd)
    out = _max_unpool_kernel(input, indices, size, nd)
    return out.squeeze(-1) if unit_width else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)
