"""torch's top-level forms of nn kernels that are written in tensor ops alone, with ATen's
positional signatures: batch_norm_update_stats, native_dropout, feature_dropout(_),
embedding_renorm_, and the checks nn.functional shares with them (dropout's p, embedding's
index dtype). The forms that run an nn.functional kernel (torch.batch_norm, convolution,
embedding_bag, ...) are nn/_functional/torch_entry_points.py's."""
from .. import _dtype as dt
from ..autograd.grad_mode import no_grad
from .registry import check_tensor, export

__all__ = ["batch_norm_update_stats", "native_dropout", "feature_dropout", "feature_dropout_",
           "embedding_renorm_"]


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


# ---------------------------------------------------------------------- embeddings
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
