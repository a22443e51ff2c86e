"""index_reduce / index_reduce_: reduce `source`'s slices into `input` at `index` along `dim`
with prod, mean, amax or amin (optionally leaving `input`'s own values out of the reduction).

The VJP follows PyTorch's rules: prod divides the result by each contributor, taking zeros
apart (a lone zero gets the product of the others, two or more zeros give 0); amax/amin share
the gradient equally among the contributors equal to the result; mean divides by the count."""
from .. import _dtype as dt
from .._inplace import write_out
from .._tensor import _wrap
from ..backends import array_module, numpy_backend
from ._dims import wrap_dim
from .index_ops import _check_source, _vector_index
from .registry import METHODS, PUBLIC, defop, dispatch, export
from .scatter import _fill_inplace

_REDUCES = ("prod", "mean", "amax", "amin")


def _identity(xp, dtype, reduce):
    """The value a slot starts from when include_self=False."""
    if reduce == "prod":
        return 1
    if reduce == "mean":
        return 0
    big = xp.inf if dtype.kind in "fc" else xp.iinfo(dtype).max
    return -big if reduce == "amax" else big


def _counts(xp, index, size, include_self):
    """Contributors per slot along the reduced dim (input's own value counted when kept)."""
    return xp.bincount(index, minlength=size) + (1 if include_self else 0)


@defop("index_reduce", save=(0, 1), save_output=True)
def _index_reduce(a, src, index, dim, reduce, include_self):
    xp = array_module(a, src)
    out = a.copy()
    slots = xp.moveaxis(out, dim, 0)   # (a view: writes land in `out`)
    pieces = xp.moveaxis(src, dim, 0)
    if not include_self:
        slots[index] = _identity(xp, out.dtype, reduce)
    numpy_backend.scatter_reduce(slots, index, pieces, "sum" if reduce == "mean" else reduce)
    if reduce == "mean":
        counts = _counts(xp, index, slots.shape[0], include_self)
        counts = xp.maximum(counts, 1).reshape((-1,) + (1,) * (slots.ndim - 1))
        if out.dtype.kind in "fc":
            slots /= counts.astype(out.dtype)
        else:   # NOTE: integer means round down, as PyTorch's do
            slots //= counts.astype(out.dtype)
    return out


def _along(t, dim, index):
    return PUBLIC["index_select"](t, dim, index)


def _scatter_sum(like, dim, index, values):
    return PUBLIC["index_add"](like.new_zeros(like.shape), dim, index, values)


@_index_reduce.defvjp
def _index_reduce_vjp(ctx, g):
    a, src = ctx.inputs
    result = ctx.output
    p = ctx.params
    dim, include_self, reduce = p["dim"], p["include_self"], p["reduce"]
    index = _wrap(p["index"], dt.int64, g._device)
    where = PUBLIC["where"]
    touched = _scatter_sum(a, dim, index, src.new_ones(src.shape)) > 0
    # `kept`: where input's own value is one of the contributors
    kept = touched.new_ones(touched.shape) if include_self else ~touched
    if reduce == "mean":
        counts = _scatter_sum(a, dim, index, src.new_ones(src.shape)) + (
            1 if include_self else 0)
        share = g / counts.clamp(min=1)
        return where(kept, share, 0), _along(share, dim, index)
    if reduce in ("amax", "amin"):
        # NOTE: PyTorch counts input's value among the ties even with include_self=False
        # (where it then gets no gradient): the sources' shares follow that count.
        a_equal = a == result
        src_hit = src == _along(result, dim, index)
        ties = a_equal.to(g.dtype) + _scatter_sum(a, dim, index, src_hit.to(g.dtype))
        share = g / ties.clamp(min=1)
        return where(a_equal & kept, share, 0), where(src_hit, _along(share, dim, index), 0)
    # prod: the product of the non-zero contributors and the number of zeros per slot
    a_zero, src_zero = (a == 0) & kept, src == 0
    nonzero_a = where(a_zero, 1, a)
    nonzero_src = where(src_zero, 1, src)
    others = dispatch(_index_reduce, (where(kept, nonzero_a, 1), nonzero_src), p, g.dtype)
    zeros = a_zero.to(g.dtype) + _scatter_sum(a, dim, index, src_zero.to(g.dtype))
    lone_zero = g * where(zeros == 1, others, 0)
    ga = where(a_zero, lone_zero, g * result / nonzero_a)
    ga = where(kept, ga, 0)
    gs = where(src_zero, _along(lone_zero, dim, index),
               _along(g * result, dim, index) / nonzero_src)
    return ga, gs


@export
def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    name = "index_reduce_"
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    idx = _vector_index(index, name)
    d = wrap_dim(dim, input._data.ndim)
    _check_source(input, d, idx, source, name)
    size = input._data.shape[d] if input._data.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    r = dispatch(_index_reduce, (input, source),
                 {"index": idx.astype("int64"), "dim": d, "reduce": reduce,
                  "include_self": include_self}, input.dtype)
    return r if out is None else write_out(r, out)


METHODS["index_reduce_"] = _fill_inplace(index_reduce)
