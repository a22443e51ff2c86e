"""The per-device kernels of synchronized batch norm (what nn.SyncBatchNorm calls around its
all-gathers): batch_norm_stats, batch_norm_gather_stats(_with_counts), batch_norm_elemt,
batch_norm_backward_reduce, batch_norm_backward_elemt.

PyTorch has them on CUDA only (a CPU tensor gets its "Could not run ... 'CPU' backend"
NotImplementedError); so does ember, whose CUDA tensors compute them with ember ops.
Statistics are over every dim but the channel dim (1)."""
from .._inplace import write_out
from .registry import check_tensor, export

__all__ = ["batch_norm_stats", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_elemt",
           "batch_norm_backward_reduce", "batch_norm_backward_elemt"]


def _cuda_only(name, input):
    check_tensor(name, input)
    if input.device.type == "cpu":
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could "
            "be because the operator doesn't exist for this backend, or was omitted during "
            "the selective/custom build process (if using custom build). (ember, as PyTorch, "
            "has the synchronized batch-norm kernels on CUDA only.)")


def _reduced_dims(input):
    return (0,) + tuple(range(2, input.dim()))


def _per_channel(t, input):
    """A (C,) tensor shaped to broadcast along `input`'s channel dim."""
    return t.reshape((1, -1) + (1,) * (input.dim() - 2))


def batch_norm_stats(input, eps):
    """(mean, invstd) of this device's batch: invstd = 1 / sqrt(biased var + eps)."""
    _cuda_only("batch_norm_stats", input)
    dims = _reduced_dims(input)
    mean = input.mean(dims)
    var = input.var(dims, unbiased=False)
    return mean, (var + eps).rsqrt()


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                        momentum, eps, counts):
    """The global (mean, invstd) from every device's (mean, invstd) rows weighted by their
    element counts; the running statistics move toward them (unbiased variance)."""
    _cuda_only("batch_norm_gather_stats_with_counts", input)
    weights = counts.to(mean.dtype).reshape(-1, 1)
    total = weights.sum()
    global_mean = (weights * mean).sum(0) / total
    local_var = invstd.pow(-2) - eps
    global_var = (weights * (local_var + (mean - global_mean).pow(2))).sum(0) / total
    if running_mean is not None:
        running_mean.mul_(1 - momentum).add_(global_mean.detach() * momentum)
    if running_var is not None:
        unbiased = global_var.detach() * (total / (total - 1))
        running_var.mul_(1 - momentum).add_(unbiased * momentum)
    return global_mean, (global_var + eps).rsqrt()


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps,
                            count):
    """As batch_norm_gather_stats_with_counts, every device having `count` elements."""
    _cuda_only("batch_norm_gather_stats", input)
    counts = mean.new_full((mean.shape[0],), float(count))
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean,
                                               running_var, momentum, eps, counts)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):
    """(input - mean) * invstd * weight + bias, per channel."""
    _cuda_only("batch_norm_elemt", input)
    result = (input - _per_channel(mean, input)) * _per_channel(invstd, input)
    if weight is not None:
        result = result * _per_channel(weight, input)
    if bias is not None:
        result = result + _per_channel(bias, input)
    if out is None:
        return result
    return write_out(result, out)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g,
                               bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) of this device; each is None where its
    flag asks for none (sum_dy and sum_dy_xmu follow input_g)."""
    _cuda_only("batch_norm_backward_reduce", input)
    dims = _reduced_dims(input)
    sum_dy = grad_out.sum(dims)
    sum_dy_xmu = (grad_out * (input - _per_channel(mean, input))).sum(dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    grad_bias = sum_dy if bias_g else None
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu,
                              count):
    """The input gradient from the globally reduced sums (`count`: every device's element
    count)."""
    _cuda_only("batch_norm_backward_elemt", input)
    total = count.sum().to(grad_out.dtype)
    mean_dy = _per_channel(sum_dy / total, input)
    mean_dy_xmu = _per_channel(sum_dy_xmu / total, input)
    inv = _per_channel(invstd, input)
    centred = input - _per_channel(mean, input)
    scale = inv if weight is None else inv * _per_channel(weight, input)
    return (grad_out - mean_dy - centred * inv * inv * mean_dy_xmu) * scale


for _name in __all__:
    export(globals()[_name], method=False)
