"""fractional_max_pool2d / 3d (and their _with_indices forms): argument handling, the draw
of one uniform sample per plane and dim from the random stream (the same draw as PyTorch's,
so a seeded call gives PyTorch's windows), and PyTorch's checks. The op is in
ember/ops/fractional_pooling.py."""
from ... import _dtype as dt
from ...ops import random_factories
from ..._signatures import Parser
from ...ops.fractional_pooling import fractional_max_pool
from ._pool_args import int_list, ntuple, refuse_none
from .dispatch_helpers import boolean_dispatch

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_NAMES = {2: ("fractional_max_pool2d", ("height", "width")),
          3: ("fractional_max_pool3d_out", ("time", "height", "width"))}


_PARSERS = {nd: Parser(f"fractional_max_pool{nd}d", (
    "Tensor input, int or tuple of ints kernel_size, int or tuple of ints output_size, "
    "Tensor random_samples",)) for nd in (2, 3)}


def _pool(input, kernel_size, output_size, output_ratio, samples, nd):
    """torch's Python wrapper (the output size from the ratio, the random samples), then its
    builtin's parser and checks, in their order."""
    public = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{public} requires specifying either an output_size or an "
                         "output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a "
                             "single Int or tuple of Ints.")
        ratio = ntuple(output_ratio, nd)
        output_size = [int(input.size(k - nd) * ratio[k]) for k in range(nd)]
    if samples is None:
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = random_factories.rand(batch, input.size(-nd - 1), nd, dtype=input.dtype,
                                         device=input.device)
    _PARSERS[nd].check((input, kernel_size, output_size, samples), {})
    refuse_none(public, kernel_size=kernel_size, output_size=output_size)
    kernel, out_shape = int_list(kernel_size, nd), int_list(output_size, nd)
    three = " three" if nd == 3 else ""
    for arg, v in (("kernel_size", kernel), ("output_size", out_shape)):
        if len(v) != nd:
            raise RuntimeError(f"{public}: {arg} must either be a single Int or tuple of{three} "
                               "Ints")
    name, dim_names = _NAMES[nd]
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batched = input.unsqueeze(0) if input.dim() == nd + 1 else input
    _check_samples(samples, batched, input.dtype, nd)
    for k in range(1, input.dim()):
        if input.size(k) == 0:
            raise RuntimeError(f"{name.replace('_out', '')}(): Expected input to have non-zero "
                               "size for non-batch dimensions, but got"
                               f"{list(input.shape)} with dimension {k} being empty.")
    if input.dtype.category < dt.FLOATING:
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{dt.type_name(input.dtype)}'")
    spatial = batched.shape[2:]
    for k in range(nd):
        # NOTE: PyTorch lets the 2d windows reach the last element exactly but requires the
        # 3d ones to stop short of it
        limit = spatial[k] if nd == 2 else spatial[k] - 1
        if out_shape[k] + kernel[k] - 1 > limit:
            raise RuntimeError(f"{name}(): pool {dim_names[k]} {kernel[k]} too large relative "
                               f"to input {dim_names[k]} {spatial[k]}")
    bad = next((o for o in out_shape if o < 0), None)
    if bad is not None:
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{list(batched.shape[:2]) + list(out_shape)}")
    return fractional_max_pool(input, kernel, out_shape, samples)


def _check_samples(samples, batched, dtype, nd):
    """The random samples: one per (batch, channel) plane and spatial dim, in the input's
    dtype."""
    if samples.dtype is not dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random samples to be 3D tensor, got: {samples.dim()}D")
    if samples.size(2) != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.size(2)}.")
    if samples.size(0) < batched.size(0):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.size(1) != batched.size(1):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def _fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                           return_indices=False, _random_samples=None):
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)[0]


def _fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                           return_indices=False, _random_samples=None):
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)[0]


fractional_max_pool2d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool2d_with_indices,
                                         _fractional_max_pool2d, __name__,
                                         "fractional_max_pool2d")
fractional_max_pool3d = boolean_dispatch("return_indices", 4, False,
                                         fractional_max_pool3d_with_indices,
                                         _fractional_max_pool3d, __name__,
                                         "fractional_max_pool3d")
