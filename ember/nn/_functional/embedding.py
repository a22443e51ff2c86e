"""embedding, embedding_bag, one_hot."""
import warnings

from ... import _dtype as dt
from ..._creation import zeros
from ..._ranges import arange
from ...autograd.grad_mode import no_grad
from ...ops.functional_entry_points import check_indices, embedding_renorm_
from ...ops.histograms import bincount
from ...ops.nn_ops import _embedding
from ...ops.registry import dispatch
from ...ops.sorting import searchsorted
from ..._value_checks import check_only
from ._util import builtin_parser

__all__ = ["embedding", "embedding_bag", "one_hot"]

def _padding_index(padding_idx, weight):
    """torch's F.embedding/embedding_bag steps: a negative index counts from the end; the
    weight's size is read only when the index is not 0."""
    if padding_idx is None:
        return -1
    if padding_idx > 0:
        assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
        padding_idx = weight.size(0) + padding_idx
    return padding_idx


_EMBEDDING_RENORM = builtin_parser("embedding_renorm_")


def _no_grad_renorm(weight, input, max_norm, norm_type):
    # (torch.embedding_renorm_'s parser first: it sees the arguments as torch's does)
    with no_grad():
        args = (weight.detach(), input, max_norm, norm_type)
        _EMBEDDING_RENORM.check(args, {})
        embedding_renorm_(*args)


@check_only
def _check_range(input, rows):
    if input.numel() and (int(input.max()) >= rows or int(input.min()) < 0):
        raise IndexError("index out of range in self")


def torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding: the builtin F.embedding hands its arguments to."""
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    check_indices("embedding", indices, 1)
    _check_range(indices, weight.shape[0])
    if sparse:   # (the weight's gradient is a sparse COO tensor)
        # (deferred: `import ember` does not load sparse.embedding)
        from ...sparse.embedding import embedding_sparse
        return embedding_sparse(indices, weight, padding_idx, scale_grad_by_freq)
    params = {"padding_idx": padding_idx, "scale_grad_by_freq": scale_grad_by_freq}
    return dispatch(_embedding, (weight, indices), params, weight.dtype,
                    (weight._data, indices._data))


_EMBEDDING = builtin_parser("embedding")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    # NOTE: torch's Python steps come first, in its order (padding_idx compared with 0, the
    # renorm), and only then its builtin's parser: a tensor padding_idx is a RuntimeError
    # ('Boolean value of Tensor ...'), a non-tensor input with max_norm an AttributeError.
    padding_idx = _padding_index(padding_idx, weight)
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_renorm(weight, input, max_norm, norm_type)
    _EMBEDDING.check((weight, input, padding_idx, scale_grad_by_freq, sparse), {})
    return torch_embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def _bag_offsets(input, offsets, per_sample_weights):
    """Flatten a 2D input into fixed-size bags; validate a 1D input's offsets."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {_type_str(offsets)}")
        offsets = arange(0, input.numel(), input.shape[1], dtype=input.dtype)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        return input.reshape(-1), offsets, per_sample_weights, False
    if input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        return input, offsets, per_sample_weights, None
    raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                     f"{input.dim()}")


def _type_str(obj):
    t = type(obj)
    if t.__name__ == "Tensor":
        return "<class 'torch.Tensor'>"
    return str(t)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if weight.dtype is dt.int64 and input.dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({_size(input)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    input, offsets, per_sample_weights, forced = _bag_offsets(input, offsets,
                                                              per_sample_weights)
    if forced is not None:
        include_last_offset = forced
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_renorm(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    return _bag_reduce(input, weight, offsets, mode, scale_grad_by_freq, per_sample_weights,
                       include_last_offset, padding_idx, sparse)


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t.shape)) + "])"


def _bag_reduce(input, weight, offsets, mode, scale_grad_by_freq, per_sample_weights,
                include_last_offset, padding_idx, sparse=False):
    n, num = input.numel(), weight.shape[0]
    off = offsets._data
    if off.size and int(off[0]) != 0:
        # NOTE: PyTorch prints offsets[0] as a 0-dim tensor: the value, then its type line.
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(off[0])}\n"
                           f"[ torch.{dt.type_name(offsets.dtype)}Tensor{{}} ]")
    if off.size and int(off[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(off[-1])}")
    if n and (int(input.max()) >= num or int(input.min()) < 0):
        bad = int(((input >= num) | (input < 0)).nonzero()[0, 0])
        raise RuntimeError(f"Index {bad} of input takes value {int(input[bad])} which is not "
                           f"in the valid range [0, {num})")
    bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    starts = offsets[:bags] if include_last_offset else offsets
    # The bag of each input position: how many bag starts are at or before it, minus one.
    position = arange(n, dtype=offsets.dtype)
    # NOTE: with include_last_offset the last bag still runs to the end of the input, past
    # offsets[-1] when that is smaller than the input's length (PyTorch's CPU kernel).
    bag = searchsorted(starts.contiguous(), position, right=True) - 1
    pad = _padding_index(padding_idx, weight)
    keep = input != pad if pad >= 0 else None
    if keep is not None:
        kept = keep.nonzero().reshape(-1)
        input, bag = input.index_select(0, kept), bag.index_select(0, kept)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.index_select(0, kept)
    # (with sparse=True the weight's gradient is sparse: one entry per looked-up row, as torch)
    rows = torch_embedding(weight, input, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)
    dim = weight.shape[1]
    out = zeros((bags, dim), dtype=weight.dtype, device=weight.device)
    if mode == "max":
        index = bag.unsqueeze(1).expand(bag.numel(), dim)
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1).to(rows.dtype)
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        counts = bincount(bag, minlength=bags).clamp(min=1)
        out = out / counts.unsqueeze(1).to(out.dtype)
    return out


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    elif tensor.numel() and int(tensor.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    if tensor.numel() and int(tensor.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, dtype=dt.int64, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
