"""torch's top-level forms of nn.functional's kernels, with ATen's positional signatures:
batch_norm / native_batch_norm / batch_norm_update_stats, native_layer_norm,
native_group_norm, rms_norm, native_dropout, the in-place and feature dropouts,
native_channel_shuffle, convolution, max_pool1d_with_indices, grid_sampler(_2d/_3d),
affine_grid_generator, embedding_bag, embedding_renorm_.

Each calls ember's nn.functional implementation (so values, random streams and gradients
are that code's, which is tested against torch) and adds the extra outputs ATen returns
(saved mean and inverse std, dropout masks, bag bookkeeping)."""
from .. import _dtype as dt
from .._inplace import write_out
from ..autograd.grad_mode import no_grad
from .registry import PUBLIC, check_tensor, export

__all__ = ["batch_norm", "native_batch_norm", "batch_norm_update_stats", "native_layer_norm",
           "native_group_norm", "rms_norm", "native_dropout", "feature_dropout",
           "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_",
           "native_channel_shuffle", "convolution", "max_pool1d_with_indices",
           "grid_sampler", "grid_sampler_2d", "grid_sampler_3d", "affine_grid_generator",
           "embedding_bag", "embedding_renorm_"]


def _F():
    from ..nn import functional  # (cycle: each entry point runs nn.functional's kernel)
    return functional


def _empty(like):
    return like.new_empty((0,))


# ---------------------------------------------------------------------- normalization
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """ATen's argument order (weight and bias before the running statistics)."""
    return _F()._batch_norm_body(input, running_mean, running_var, weight, bias, training,
                                 momentum, eps)


def _batch_stats(input, eps):
    """The batch mean and 1/sqrt(biased var + eps) over every dim but the channel's."""
    dims = (0,) + tuple(range(2, input.dim()))
    with no_grad():
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        return mean, (var + eps).rsqrt()


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps, *, out=None):
    """(output, save_mean, save_invstd); the saved statistics are empty in evaluation."""
    check_tensor("native_batch_norm", input)
    if training:
        stats = _batch_stats(input, eps)
    output = _F()._batch_norm_body(input, running_mean, running_var, weight, bias, training,
                                   momentum, eps)
    if not training:
        stats = (_empty(input), _empty(input))
    result = (output,) + stats
    if out is None:
        return result
    with no_grad():
        for value, target in zip(result, out):
            write_out(value, target)
    return tuple(out)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """Moves the running statistics toward the batch's (unbiased variance, as training
    batch norm does) and returns the batch mean and biased variance."""
    check_tensor("batch_norm_update_stats", input)
    dims = (0,) + tuple(range(2, input.dim()))
    count = input.numel() // input.shape[1]
    with no_grad():
        mean = input.mean(dims)
        var = input.var(dims, unbiased=False)
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean * momentum)
        if running_var is not None:
            unbiased = var * (count / max(count - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return mean, var


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    check_tensor("native_layer_norm", input)
    output = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    with no_grad():
        mean = input.mean(dims, keepdim=True) if dims else input.clone()
        var = input.var(dims, unbiased=False, keepdim=True) if dims else input * 0
        return output, mean, (var + eps).rsqrt()


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(output, mean, rstd) with mean and rstd of shape (N, group)."""
    check_tensor("native_group_norm", input)
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()}")
    output = _F().group_norm(input, group, weight, bias, eps)
    with no_grad():
        grouped = input.reshape(N, group, -1)
        mean = grouped.mean(-1)
        var = grouped.var(-1, unbiased=False)
        return output, mean, (var + eps).rsqrt()


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _F().rms_norm(input, normalized_shape, weight, eps)


# ---------------------------------------------------------------------- dropout
def native_dropout(input, p, train):
    """(output, mask): the mask is bool, True where an element was kept. `train=None`
    means training, as in ATen."""
    check_tensor("native_dropout", input)
    if train is False or p == 0:
        return input.clone(), input.new_ones(input.shape, dtype=dt.bool)
    if p == 1:
        return input * 0, input.new_zeros(input.shape, dtype=dt.bool)
    # NOTE: the same draws as F.dropout (bernoulli(1 - p) over the input's shape), so
    # a seeded native_dropout equals a seeded F.dropout, as in PyTorch.
    with no_grad():
        mask = input.new_empty(input.shape).bernoulli_(1 - p).bool()
    kept = input * mask
    if train is None:
        # NOTE: PyTorch's gradient for train=None leaves out the 1/(1 - p) scale (its
        # backward formula scales only for an explicit train=True); reproduced here.
        return kept + (kept * (p / (1 - p))).detach(), mask
    return kept / (1 - p), mask


def check_dropout_p(p):
    """ATen's _dropout_impl bound on p, as its RuntimeError (torch's Python forms check the
    same bound first, with a ValueError)."""
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def _channel_mask(input, p):
    """One bernoulli(1 - p) draw per (sample, channel), scaled by 1/(1 - p)."""
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    with no_grad():
        if p == 1:
            return input.new_zeros(shape)
        return input.new_empty(shape).bernoulli_(1 - p).div_(1 - p)


def feature_dropout(input, p, train):
    """Whole channels (dim 1) dropped together, whatever the input's rank."""
    check_tensor("feature_dropout", input)
    check_dropout_p(p)
    if not train or p == 0:
        return input
    return input * _channel_mask(input, p)


def feature_dropout_(input, p, train):
    check_tensor("feature_dropout_", input)
    check_dropout_p(p)
    if not train or p == 0:
        return input
    return input.mul_(_channel_mask(input, p))


def alpha_dropout_(input, p, train):
    check_tensor("alpha_dropout_", input)
    check_dropout_p(p)
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input, p, train):
    check_tensor("feature_alpha_dropout_", input)
    check_dropout_p(p)
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def native_channel_shuffle(input, groups):
    return _F().channel_shuffle(input, groups)


# ---------------------------------------------------------------------- convolution
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """ATen's generic convolution: the dimensionality comes from the weight."""
    check_tensor("convolution", input)
    F = _F()
    spatial = weight.dim() - 2
    if spatial not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but "
                           f"got input of size: {list(input.shape)}")
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[spatial - 1]
        return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding),
                    groups, tuple(dilation))
    conv = (F.conv1d, F.conv2d, F.conv3d)[spatial - 1]
    return conv(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    return _F().max_pool1d(input, kernel_size, stride if stride != () else None, padding,
                           dilation, ceil_mode, return_indices=True)


# ---------------------------------------------------------------------- grid sampling
_INTERPOLATION = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """F.grid_sample with ATen's integer modes (0 bilinear, 1 nearest, 2 bicubic; padding 0
    zeros, 1 border, 2 reflection)."""
    check_tensor("grid_sampler", input)
    return _F().grid_sample(input, grid, _INTERPOLATION[interpolation_mode],
                            _PADDING[padding_mode], align_corners)


def _grid_sampler_of_rank(spatial):
    """grid_sampler_2d / grid_sampler_3d: grid_sampler for inputs of `spatial` + 2 dims."""
    name = f"grid_sampler_{spatial}d"

    def fn(input, grid, interpolation_mode, padding_mode, align_corners):
        check_tensor(name, input)
        if input.dim() != spatial + 2:
            raise RuntimeError(f"grid_sampler(): expected {spatial + 2}D input and grid with "
                               f"same number of dimensions, but got input with sizes "
                               f"{list(input.shape)} and grid with sizes {list(grid.shape)}")
        return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
    fn.__name__ = fn.__qualname__ = name
    return fn


grid_sampler_2d, grid_sampler_3d = _grid_sampler_of_rank(2), _grid_sampler_of_rank(3)


def affine_grid_generator(theta, size, align_corners):
    return _F().affine_grid(theta, list(size), align_corners)


# ---------------------------------------------------------------------- embeddings
_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices), ATen's order of arguments; the last three
    are the bookkeeping ATen's CPU kernel returns for each mode (empty or zero where a mode
    keeps none)."""
    check_tensor("embedding_bag", weight, "weight")
    output = _F().embedding_bag(indices, weight, offsets, None, 2, scale_grad_by_freq,
                                _BAG_MODES[mode], sparse, per_sample_weights,
                                include_last_offset, padding_idx)
    with no_grad():
        bags = output.shape[0]
        starts = offsets[:bags] if include_last_offset else offsets
        zeros = offsets.new_zeros((bags,))
        # offset2bag: the bag each index falls in (a later bag wins over empty ones)
        marks = indices.new_zeros((indices.numel() + 1,))
        marks.index_add_(0, starts, indices.new_ones(starts.shape))
        offset2bag = marks[:indices.numel()].cumsum(0) - 1
        if mode == 0:
            # NOTE: ATen's CPU sum kernel fills offset2bag only on its float64 path and
            # when a padding index is given
            if weight.dtype is not dt.float64 and padding_idx is None:
                offset2bag = indices.new_empty((0,))
            return output, offset2bag, zeros, zeros.clone()
        # NOTE: as ATen's CPU kernel, bag sizes run from each start to the next one (the
        # last bag to the end of `indices`), also under include_last_offset
        ends = PUBLIC["cat"]([starts[1:], offsets.new_tensor([indices.numel()])])
        bag_size = ends - starts
        if padding_idx is not None:
            kept = (indices != padding_idx).long()
            bag_size = zeros.index_add(0, offset2bag, kept)
        if mode == 1:
            return output, offset2bag, bag_size, bag_size.clone()
        max_indices = offsets.new_zeros(tuple(output.shape))
        rows = weight[indices]
        if padding_idx is not None:   # padded entries never win (an all-padded bag: 0)
            rows = rows.masked_fill((indices == padding_idx).unsqueeze(-1), float("-inf"))
        for b in range(bags):
            lo, hi = int(starts[b]), int(ends[b])
            if hi > lo and bool((rows[lo:hi] > float("-inf")).any()):
                best = rows[lo:hi].argmax(0)
                max_indices[b] = indices[lo:hi][best]
        return output, offset2bag, bag_size, max_indices


def check_indices(fname, indices, position):
    """ATen's checkScalarTypes of an embedding's indices: int64 or int32."""
    if indices.dtype not in (dt.int64, dt.int32):
        raise RuntimeError(f"Expected tensor for argument #{position} 'indices' to have one of "
                           "the following scalar types: Long, Int; but got torch."
                           f"{dt.type_name(indices.dtype)}Tensor instead (while checking "
                           f"arguments for {fname})")


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales, in place, each row `indices` names whose norm exceeds max_norm (scale =
    max_norm / (norm + 1e-7)); F.embedding's max_norm."""
    if input.dim() != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    check_indices("embedding_renorm_", indices, 2)
    with no_grad():
        rows = indices.reshape(-1).unique()
        vectors = input.index_select(0, rows)
        norms = vectors.norm(norm_type, dim=1).double()
        scale = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        input[rows] = vectors * scale.to(input.dtype).unsqueeze(1)
    return input


for _name in __all__:
    export(globals()[_name], method=False)
