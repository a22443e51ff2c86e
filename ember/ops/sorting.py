"""Sorting and searching: sort, argsort, msort, topk, unique, unique_consecutive,
searchsorted, bucketize.

Sorts are stable, NaN ordered above +inf (last ascending, first descending), as PyTorch's.
The gradient of a sort-like op goes back through its indices.
"""
import math

import numpy as np

from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module
from . import return_types
from ._dims import wrap_dim
from ._elementwise import not_implemented
from .reduction import one_dim
from ._reduce_ops import scatter_dim, stable_argsort
from .registry import check_tensor, defop, dispatch, export


def sort_order(xp, a, dim, descending):
    """Stable sorting indices along dim (ties keep input order in both directions)."""
    if not descending:
        return stable_argsort(xp, a, dim)
    # NOTE: negating keys breaks for unsigned ints and NaN; instead sort the reversed
    # array ascending and reverse the result, which keeps ties in input order.
    n = a.shape[dim]
    rev = xp.flip(a, axis=dim)
    return (n - 1) - xp.flip(stable_argsort(xp, rev, dim), axis=dim)


@defop("sort", save=(), save_output=True, num_outputs=2)
def _sort(a, dim, descending, k=None):
    xp = array_module(a)
    a1 = a.reshape(1) if a.ndim == 0 else a
    order = sort_order(xp, a1, dim, descending)
    if k is not None:
        order = xp.take(order, xp.arange(k), axis=dim)
    values = xp.take_along_axis(a1, order, axis=dim)
    if a.ndim == 0:
        return values.reshape(()), order.reshape(())
    return values, order


@_sort.defvjp
def _sort_vjp(ctx, g, _):
    index = ctx.outputs[1]._data
    if index.ndim == 0:
        return g
    return scatter_dim(g, index, ctx.params["dim"], ctx.in_meta[0][0])


_topk = defop("topk", save=(), save_output=True, num_outputs=2)(_sort.forward)
_topk.defvjp(_sort_vjp)


def _dim(input, dim):
    return one_dim(dim, input._data.ndim)


def _pair(name, values, indices, out):
    if out is not None:
        values, indices = write_out(values, out[0]), write_out(indices, out[1])
    return getattr(return_types, name)((values, indices))


def _sortable(input, dim):
    """The wrapped dim, after torch's checks in its order: the dim, then the dtype (complex
    numbers have no order to sort by)."""
    d = _dim(input, dim)
    if input.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    return d


@export
def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    check_tensor("sort", input)
    values, indices = dispatch(_sort, (input,), {"dim": _sortable(input, dim),
                                                 "descending": descending}, input.dtype)
    return _pair("sort", values, indices, out)


@export
def argsort(input, dim=-1, descending=False, stable=False):
    check_tensor("argsort", input)
    d = _sortable(input, dim)
    a = input._data
    xp = array_module(a)
    if a.ndim == 0:
        return _wrap(xp.zeros((), dtype=xp.int64), dt.int64, input._device)
    order = sort_order(xp, a, d, descending).astype(xp.int64)
    return _wrap(order, dt.int64, input._device)


@export
def msort(input, *, out=None):
    check_tensor("msort", input)
    r = sort(input, 0).values
    return r if out is None else write_out(r, out)


@export
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    d = _dim(input, dim)
    size = input._data.shape[d] if input._data.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if input.dtype is dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if input.dtype.category == dt.COMPLEX:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if not input._data.ndim:
        k = 1   # (PyTorch: a 0-d input is its own top element, for k=0 as well)
    values, indices = dispatch(_topk, (input,), {"dim": d, "descending": largest, "k": k},
                               input.dtype)
    return _pair("topk", values, indices, out)


# ---------------------------------------------------------------------- unique
def _unique_results(input, values, inverse, counts, return_inverse, return_counts):
    device = input._device
    out = _wrap(values, input.dtype, device)
    if not (return_inverse or return_counts):
        return out
    extra = []
    if return_inverse:
        extra.append(_wrap(inverse.astype("int64"), dt.int64, device))
    if return_counts:
        extra.append(_wrap(counts.astype("int64"), dt.int64, device))
    return (out,) + tuple(extra)


def _unique_args(public, fname, input, dim, **flags):
    """PyTorch's checks before a unique kernel runs, in its order: its Python function's
    boolean_dispatch tests return_inverse, then return_counts, for truth; then the input's
    type (named as `public`); the builtin's parser wants an int dim and Python bools; the
    kernel refuses complex dtypes, wraps dim (a 0-d tensor has no dimension at all) and
    refuses other empty dims. Returns the wrapped dim or None."""
    bool(flags["return_inverse"])
    bool(flags["return_counts"])
    check_tensor(public, input)
    if dim is not None and (type(dim) is bool or not isinstance(dim, int)):
        raise TypeError(f"{fname}(): argument 'dim' (position 2) must be int, not "
                        f"{type_name(dim)}")
    for name, value in flags.items():
        if type(value) is not bool:
            raise TypeError(f"{fname}(): argument '{name}' must be bool, not "
                            f"{type_name(value)}")
    if input.dtype.category == dt.COMPLEX:
        raise not_implemented("unique" if fname != "unique_dim" else fname, input.dtype)
    if dim is None:
        return None
    shape = input._data.shape
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, len(shape))
    if any(n == 0 for i, n in enumerate(shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    return d


@export
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    d = _unique_args("unique", "_unique2" if dim is None else "unique_dim", input, dim,
                     sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)
    a = input._data
    xp = array_module(a)
    if dim is None:
        flat = a.reshape(-1)
        values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True,
                                            equal_nan=False)
        inverse = inverse.reshape(a.shape)
    else:
        # (bools as bytes: CuPy's unique along a dim subtracts rows, which it refuses for bool)
        rows = a.view(np.uint8) if a.dtype == np.bool_ else a
        values, inverse, counts = xp.unique(rows, return_inverse=True, return_counts=True,
                                            axis=d, equal_nan=False)
        values = values.view(np.bool_) if a.dtype == np.bool_ else values
        inverse = inverse.reshape(-1)
    return _unique_results(input, values, inverse, counts, return_inverse, return_counts)


@export
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    d = _unique_args("unique_consecutive", "unique_consecutive", input, dim,
                     return_inverse=return_inverse,
                     return_counts=return_counts)
    a = input._data
    xp = array_module(a)
    if d is None:
        rows = a.reshape(-1, 1)
    else:
        moved = xp.moveaxis(a, d, 0)
        rows = moved.reshape(a.shape[d], math.prod(moved.shape[1:]))
    n = rows.shape[0]
    change = xp.ones(n, dtype=bool)
    if n > 1:
        change[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = xp.flatnonzero(change)
    values = rows[starts]
    if d is None:
        values = values.reshape(-1)
    else:
        shape = list(xp.moveaxis(a, d, 0).shape)
        shape[0] = len(starts)
        values = xp.moveaxis(values.reshape(shape), 0, d)
    inverse = xp.cumsum(change) - 1
    if d is None:
        inverse = inverse.reshape(a.shape)
    counts = xp.diff(xp.append(starts, n))
    return _unique_results(input, values, inverse, counts, return_inverse, return_counts)


# ---------------------------------------------------------------------- searching
def _side(right, side):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        return side
    return "right" if right else "left"


def _search(xp, seq, values, side):
    """Insertion points of `values` in the rows of `seq` (sorted along its last dim)."""
    if seq.ndim == 1:
        return xp.searchsorted(seq, values, side=side)
    # batched: count the boundaries below each value, row by row
    below = seq[..., None, :] < values[..., :, None] if side == "left" else \
        seq[..., None, :] <= values[..., :, None]
    return below.sum(axis=-1)


@export(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    side = _side(right, side)
    seq = sorted_sequence._data
    xp = array_module(seq)
    scalar = not isinstance(input, Tensor)
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    values = xp.asarray(input) if scalar else input._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor "
            f"{list(values.shape)}")
    result = dt.int32 if out_int32 else dt.int64
    r = _wrap(xp.asarray(_search(xp, seq, values, side)).astype(result.np), result,
              sorted_sequence._device)
    return r if out is None else write_out(r, out)


@export(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries._data.ndim != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)
