"""Copying and untracked variants of view ops: narrow_copy, unsafe_split / unsafe_chunk /
unsafe_split_with_sizes, slice_inverse, and nonzero_static (nonzero with a fixed row count).

PyTorch's "unsafe" splits return pieces that share the input's memory but are not tracked as
views (no `_base`, their own version counters): in-place writes to them are not checked by
autograd. ember's pieces are NumPy views of the input recorded like ordinary results, which
gives the same semantics."""
import operator

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import no_grad
from ..backends import array_module
from ._dims import wrap_dim
from ._grad_support import real_grad_only
from .registry import PUBLIC, Op, check_tensor, defop, dispatch, export
from .shape import _cat
from .splitting import _bounds, _split_forward
from .indexing_views import _narrow_range


# ---------------------------------------------------------------------- narrow_copy
@defop("narrow_copy", save=())
def _narrow_copy(a, dim, start, length):
    return a[(slice(None),) * dim + (slice(start, start + length),)].copy()


@_narrow_copy.defvjp
def _narrow_copy_vjp(ctx, g):
    p = ctx.params
    zeros = g.new_zeros(ctx.in_meta[0][0])
    return PUBLIC["slice_scatter"](zeros, g, p["dim"], p["start"], p["start"] + p["length"])


@export
def narrow_copy(input, dim, start, length):
    check_tensor("narrow_copy", input)
    if isinstance(start, Tensor):
        start = start.item()
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    # NOTE: torch's narrow_copy wraps a negative dim but only asserts a positive one
    if dim >= len(shape):
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    d = wrap_dim(dim, len(shape))
    first = _narrow_range(start, length, shape[d])
    return dispatch(_narrow_copy, (input,), {"dim": d, "start": first, "length": length},
                    input.dtype)


# ---------------------------------------------------------------------- unsafe splits
_UNSAFE = {}


def _unsafe_split_vjp(ctx, *grads):
    return dispatch(_cat, grads, {"dim": ctx.params["dim"]})


def _unsafe_op(node, n):
    """The Op for an untracked split with `n` outputs (the registry's ops have a fixed
    output count, as splitting.py's views do)."""
    op = _UNSAFE.get((node, n))
    if op is None:
        if n == 1:
            op = Op("unsafe_split", lambda a, **p: _split_forward(a, **p)[0], node, (), False, 1)
            op.defvjp(lambda ctx, g: _unsafe_split_vjp(ctx, g))
        else:
            op = Op("unsafe_split", _split_forward, node, (), False, n)
            op.defvjp(_unsafe_split_vjp)
        _UNSAFE[(node, n)] = op
    return op


def _unsafe_pieces(input, node, tracked_pieces, dim):
    """Pieces of the same sizes as the tracked split `tracked_pieces` (which ran PyTorch's
    argument checks), as untracked results of one `node`."""
    n = len(tracked_pieces)
    if n == 0:
        return ()
    d = wrap_dim(dim, input._data.ndim)
    bounds = _bounds([p._data.shape[d] for p in tracked_pieces])
    out = dispatch(_unsafe_op(node, n), (input,), {"dim": d, "bounds": bounds})
    return (out,) if n == 1 else tuple(out)


@export
def unsafe_split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, (list, tuple)):   # (unlike split, ints only)
        raise TypeError("unsafe_split(): argument 'split_size' (position 1) must be int, not "
                        f"{type(split_size_or_sections).__name__}")
    with no_grad():
        # (the builtin's SymInt: a NumPy integer or an integer tensor is an int by now)
        pieces = PUBLIC["split"](tensor, operator.index(split_size_or_sections), dim)
    return _unsafe_pieces(tensor, "UnsafeSplitBackward0", pieces, dim)


@export
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    with no_grad():
        pieces = PUBLIC["split_with_sizes"](input, split_sizes, dim)
    return _unsafe_pieces(input, "UnsafeSplitWithSizesBackward0", pieces, dim)


@export
def unsafe_chunk(input, chunks, dim=0):
    with no_grad():
        pieces = PUBLIC["chunk"](input, chunks, dim)
    return _unsafe_pieces(input, "UnsafeSplitBackward0", pieces, dim)


# ---------------------------------------------------------------------- slice_inverse
@export
def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """`src`'s geometry (size, strides, storage offset) laid over `input`'s memory: a view of
    `input` (PyTorch's functionalization uses it to undo a slice; the slice arguments only
    describe how `src` was made)."""
    check_tensor("slice_inverse", input)
    check_tensor("slice_inverse", src, "src", 2)
    out = PUBLIC["as_strided"](input, src.shape, src.stride(), src.storage_offset())
    return real_grad_only("slice_inverse", out, input, src)


# ---------------------------------------------------------------------- nonzero_static
@export
def nonzero_static(input, *, size, fill_value=-1):
    check_tensor("nonzero_static", input)
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    a = input._data
    xp = array_module(a)
    found = xp.argwhere(a).astype(np.int64, copy=False)[:size]
    out = xp.full((size, a.ndim), fill_value, dtype=np.int64)
    out[:found.shape[0]] = found
    return _wrap(out, dt.int64, input._device)
