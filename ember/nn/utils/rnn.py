"""nn.utils.rnn: PackedSequence and the pad/pack helpers around it.

Packing and padding are each one gather (`index_select`) with an index computed from the
lengths, so they cost a handful of ops whatever the batch size and differentiate through
index_select's VJP.  The padding value enters as one extra row appended to the data: padded
positions gather that row.
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import _dtype as dt
from ..._creation import as_tensor, empty_like, full, tensor, zeros
from ..._ranges import arange
from ..._signatures import checked
from ..._tensor import Tensor
from ...ops.select import where
from ...ops.shape import cat
from ...ops.sorting import sort
from .._functional._util import builtin_parser

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(_PackedSequenceBase):
    """The time steps of a batch of variable-length sequences, stored back to back.

    `data` holds step 0 of every sequence, then step 1 of those still running, ...;
    `batch_sizes[t]` is how many sequences step t holds (a CPU int64 tensor);
    `sorted_indices`/`unsorted_indices` map between the caller's batch order and the
    decreasing-length order the data is in (None when the batch was already sorted).
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data, convert_indices=None):
        if data is self.data:
            return self
        f = convert_indices or (lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, f),
                          _bind(self.unsorted_indices, f))

    def pin_memory(self):
        return self

    def to(self, *args, **kwargs):
        return self._with_data(self.data.to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._with_data(self.data.cuda(*args, **kwargs))

    def cpu(self, *args, **kwargs):
        return self._with_data(self.data.cpu(*args, **kwargs))

    def double(self):
        return self.to(dtype=dt.float64)

    def float(self):
        return self.to(dtype=dt.float32)

    def half(self):
        return self.to(dtype=dt.float16)

    def long(self):
        return self.to(dtype=dt.int64)

    def int(self):
        return self.to(dtype=dt.int32)

    def short(self):
        return self.to(dtype=dt.int16)

    def char(self):
        return self.to(dtype=dt.int8)

    def byte(self):
        return self.to(dtype=dt.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))
    return output


def _lengths_tensor(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device} "
                               f"{dt.type_name(lengths.dtype)} tensor")
        return lengths.to(dtype=dt.int64)
    lengths = as_tensor(lengths, dtype=dt.int64)
    if lengths.dim() != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    return lengths


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T x B x * or B x T x *) of sequences of the given lengths."""
    lengths = _lengths_tensor(lengths)
    batch_dim = 0 if batch_first else 1
    batch = input.shape[batch_dim]
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.shape[0]} (batch_size={batch})")
    if enforce_sorted:
        sorted_indices = None
        if batch > 1 and bool((lengths[1:] > lengths[:-1]).any()):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if batch and int(lengths[-1]) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    steps = input.shape[1 - batch_dim]
    if batch and int(lengths[0]) > steps:
        raise RuntimeError(f"Expected all lengths to be at most the padded sequence length "
                           f"({steps}), but got a length of {int(lengths[0])}")
    # present[t, b]: sequence b still runs at step t; its nonzero (t, b) pairs come out in
    # the packed order (time-major, then batch).
    present = arange(steps).unsqueeze(1) < lengths.unsqueeze(0)
    t, b = present.nonzero().unbind(1)
    rows = b * steps + t if batch_first else t * batch + b
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, rows.to(input.device))
    batch_sizes = present.sum(1)[:int(lengths[0]) if batch else 0]
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo pack_padded_sequence: (padded batch, lengths) in the caller's batch order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    max_len = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    batch = int(batch_sizes[0]) if batch_sizes.shape[0] else 0
    bs = batch_sizes.to(dtype=dt.int64)
    lengths = (bs.unsqueeze(0) > arange(batch).unsqueeze(1)).sum(1)
    columns = arange(batch)
    if sequence.unsorted_indices is not None:
        columns = sequence.unsorted_indices.cpu()
        lengths = lengths[columns]
    offsets = bs.cumsum(0) - bs
    steps = arange(max_len).unsqueeze(1)                       # (T, 1)
    real = steps < lengths.unsqueeze(0)                               # (T, B)
    # Position of (t, b) in the packed data, or the appended padding row.
    offsets = cat([offsets, zeros(max_len - offsets.shape[0], dtype=dt.int64)])
    index = where(real, offsets[steps] + columns.unsqueeze(0), data.shape[0])
    if batch_first:
        index = index.t()
    padded = _gather_with_padding(data, index, padding_value)
    return padded, lengths


# torch.full behind its parser: the caller's padding_value reaches it unchecked
_checked_full = checked(full, builtin_parser("full"), method=False)


def _gather_with_padding(data, index, padding_value):
    """data rows picked by `index` (shape (A, B)); index len(data) picks `padding_value`."""
    pad = _checked_full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                        device=data.device)
    source = cat([data, pad])
    out = source.index_select(0, index.reshape(-1).to(data.device))
    return out.view(tuple(index.shape) + tuple(data.shape[1:]))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shape (L_i, *) into (T, B, *) (or (B, T, *)), padded."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        other = tuple(s.shape[1:])
        if other != trailing:
            d = next((i for i, (a, b) in enumerate(zip(trailing, other)) if a != b), None)
            if d is None:
                raise RuntimeError("pad_sequence: all sequences must have the same number of "
                                   "dimensions")
            raise RuntimeError(f"The size of tensor a ({trailing[d]}) must match the size of "
                               f"tensor b ({other[d]}) at non-singleton dimension {d + 1}")
    lengths = tensor([s.shape[0] for s in sequences], dtype=dt.int64)
    total = int(lengths.sum())
    max_len = int(lengths.max())
    starts = lengths.cumsum(0) - lengths
    steps = arange(max_len).unsqueeze(1)                       # (T, 1)
    if padding_side == "right":
        real = steps < lengths
        pos = starts + steps
    else:
        shift = max_len - lengths
        real = steps >= shift
        pos = starts + steps - shift
    index = where(real, pos, total)                             # (T, B)
    if batch_first:
        index = index.t()
    return _gather_with_padding(cat(sequences), index, padding_value)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences in a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """pad_sequence followed by pack_padded_sequence."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
