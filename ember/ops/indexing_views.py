"""Views of a part of a tensor: basic indexing (select, narrow, slicing, `x[...]`), the
diagonal (diagonal, with diag_embed its gradient) and unfold's sliding windows.

Like the core views (views.py) they share memory and the version counter with their base;
each gradient writes `g` back into zeros of the base's shape at the viewed positions.
"""
from .. import _dtype as dt
from .._tensor import Tensor, _wrap
from ..backends import array_module, numpy_backend
from ._dims import wrap_dim
from .registry import check_tensor, defop, dispatch, export
from .views import _alias_ops, reshape


# ---------------------------------------------------------------------- basic indexing views
# A basic key is a tuple of ints, slices and None ending in Ellipsis (so NumPy returns a 0-d
# view rather than a scalar copy). One forward and VJP serve select, narrow, slicing and
# `x[...]`; the op names only give each result PyTorch's grad_fn name.
def _basic_view_forward(a, key):
    return a[key]


def _basic_view_vjp(ctx, g):
    return dispatch(_slice_backward, (g,), {"shape": ctx.in_meta[0][0],
                                            "key": ctx.params["key"]})


_select_view, _slice_view, _index_unsqueeze, _alias_view = _alias_ops(
    (("select", "SelectBackward0"), ("slice", "SliceBackward0"),
     ("index_unsqueeze", "UnsqueezeBackward0"), ("alias", "AliasBackward0")),
    _basic_view_forward, _basic_view_vjp)
BASIC_VIEW_OPS = {"select": _select_view, "slice": _slice_view, "unsqueeze": _index_unsqueeze,
                  "alias": _alias_view}


@defop("slice_backward", save=())
def _slice_backward(g, shape, key):
    """The gradient of a basic view: zeros of the base's shape, `g` written at `key`."""
    out = array_module(g).zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


@_slice_backward.defvjp
def _slice_backward_vjp(ctx, g):
    return dispatch(_slice_view, (g,), {"key": ctx.params["key"]})


def basic_view(input, key, kind):
    return dispatch(BASIC_VIEW_OPS[kind], (input,), {"key": key})


@export
def select(input, dim, index):
    shape = input._data.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    index = index if type(index) is int else index.__index__()
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape)} at dimension {dim}")
    return dispatch(_select_view, (input,), {"key": (slice(None),) * dim + (index, ...)})


def _narrow_start(start):
    """narrow's start: an integer, or a 0-d integral tensor (torch's Tensor overload)."""
    if not isinstance(start, Tensor):
        return start if type(start) is int else start.__index__()
    if start._data.ndim or start.dtype.category != dt.INTEGER:
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return int(start._data)


def _narrow_range(start, length, size):
    """narrow's start in range (then wrapped), and start + length within the dimension."""
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:   # (narrow_copy reaches here with length < 0)
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return start


@export
def narrow(input, dim, start, length):
    # torch's order: the start tensor, the 0-d input, the length, then the dim
    start = _narrow_start(start)
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = wrap_dim(dim, len(shape))
    start = _narrow_range(start, length, shape[dim])
    key = (slice(None),) * dim + (slice(start, start + length), ...)
    return dispatch(_slice_view, (input,), {"key": key})


# ---------------------------------------------------------------------- diagonal
def _diagonal_dims(ndim, offset, dim1, dim2):
    # (a 0-d tensor's dims wrap as a 1-d tensor's: -1 is 0, the same dim as 0)
    d1, d2 = (wrap_dim(d, ndim) % max(ndim, 1) for d in (dim1, dim2))
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


# (the view's forward is the backend's kernel itself)
_diagonal = defop("diagonal", save=(), view=True)(numpy_backend.diagonal_view)


@_diagonal.defvjp
def _diagonal_vjp(ctx, g):
    p = ctx.params
    return dispatch(_diag_embed, (g,), {"shape": ctx.in_meta[0][0], "offset": p["offset"],
                                        "dim1": p["dim1"], "dim2": p["dim2"]})


@defop("diag_embed", save=())
def _diag_embed(a, shape, offset, dim1, dim2):
    """Zeros of `shape` with `a` written on the (offset, dim1, dim2) diagonal."""
    out = array_module(a).zeros(shape, dtype=a.dtype)
    numpy_backend.diagonal_view(out, offset, dim1, dim2)[...] = a
    return out


@_diag_embed.defvjp
def _diag_embed_vjp(ctx, g):
    p = ctx.params
    return dispatch(_diagonal, (g,), {"offset": p["offset"], "dim1": p["dim1"],
                                      "dim2": p["dim2"]})


@export
def diagonal(input, offset=0, dim1=0, dim2=1):
    if input.__class__ is not Tensor:
        check_tensor("diagonal", input)
    d1, d2 = _diagonal_dims(input._data.ndim, offset, dim1, dim2)
    return dispatch(_diagonal, (input,), {"offset": offset, "dim1": d1, "dim2": d2})


@export
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    check_tensor("diag_embed", input)
    shape = input._data.shape
    n = (shape[-1] if shape else 1) + abs(offset)
    ndim = len(shape) + 1
    d1, d2 = _diagonal_dims(ndim, offset, dim1, dim2)
    rest = iter(shape[:-1])
    out_shape = tuple(n if i in (d1, d2) else next(rest) for i in range(ndim))
    if not shape:
        input = reshape(input, (1,))
    return dispatch(_diag_embed, (input,), {"shape": out_shape, "offset": offset, "dim1": d1,
                                            "dim2": d2})


# ---------------------------------------------------------------------- unfold, movedim
# (the view's forward is the backend's kernel itself)
_unfold = defop("unfold", save=(), view=True)(numpy_backend.sliding_windows)


@_unfold.defvjp
def _unfold_vjp(ctx, g):
    p = ctx.params
    dim, size, step = p["dim"], p["size"], p["step"]
    shape = ctx.in_meta[0][0]
    if not shape:
        return g.reshape(())
    xp = array_module(g._data)
    count = g._data.shape[dim]
    # Position along `dim` of every window element; overlapping windows accumulate.
    index = (xp.arange(count)[:, None] * step + xp.arange(size)[None, :]).reshape(-1)
    flat = g.movedim(-1, dim + 1).flatten(dim, dim + 1)
    return g.new_zeros(shape).index_add(dim, _wrap(index, dt.int64, g._device), flat)


@export(function=False)
def unfold(self, dimension, size, step):
    shape = self._data.shape
    dim = wrap_dim(dimension, len(shape))
    extent = shape[dim] if shape else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > extent:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {extent} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not shape:
        return reshape(self, (1,))
    return dispatch(_unfold, (self,), {"dim": dim, "size": size, "step": step})
