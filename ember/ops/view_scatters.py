"""Writes into a region a view would pick, returning a new tensor: select_scatter,
slice_scatter and diagonal_scatter (each differentiable to both operands), and the in-place
fill_diagonal_ (recorded as PyTorch's CopySlices)."""
import math

import numpy as np

from .._data import check_fill
from .._inplace import bump_version
from .._tensor import Tensor
from ..autograd.grad_mode import state
from ..backends import array_module, numpy_backend
from ._dims import size_list, wrap_dim
from .conversion import cast
from .indexing_views import _diagonal_dims, diagonal
from .inplace import apply_inplace
from .registry import METHODS, defop, dispatch, export


# ---------------------------------------------------------------------- *_scatter
def _region(a, index, diag):
    """The part of `a` (array or Tensor) a *_scatter writes: basic indexing or a diagonal."""
    if diag is None:
        return a[index]
    if isinstance(a, Tensor):
        return diagonal(a, *diag)
    return numpy_backend.diagonal_view(a, *diag)


def _scatter_forward(a, src, index=None, diag=None):
    out = a.copy()
    _region(out, index, diag)[...] = src
    return out


def _scatter_vjp(ctx, g):
    p = ctx.params
    ga = dispatch(ctx.op, (g, 0), p) if ctx.edges[0] is not None else None
    gs = None
    if ctx.edges[1] is not None:
        gs = cast(_region(g, p["index"], p["diag"]), ctx.in_meta[1][1])
    return ga, gs


_SCATTERS = {}
for _name, _node in (("select_scatter", "SelectScatterBackward0"),
                     ("slice_scatter", "SliceScatterBackward0"),
                     ("diagonal_scatter", "DiagonalScatterBackward0")):
    _SCATTERS[_name] = defop(_name, node=_node, save=())(_scatter_forward)
    _SCATTERS[_name].defvjp(_scatter_vjp)


def _scattered(name, input, src, index=None, diag=None):
    expect = _region(input._data, index, diag).shape
    if tuple(src._data.shape) != expect:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{size_list(src._data.shape)}, slice size = {size_list(expect)}")
    return dispatch(_SCATTERS[name], (input, src), {"index": index, "diag": diag},
                    input.dtype)


@export
def select_scatter(input, src, dim, index):
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{size_list(shape)} at dimension {dim}")
    return _scattered("select_scatter", input, src, (slice(None),) * d + (index,))


@export
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, input._data.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _scattered("slice_scatter", input, src, (slice(None),) * d + (slice(start, end, step),))


@export
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = _diagonal_dims(input._data.ndim, offset, dim1, dim2)
    return _scattered("diagonal_scatter", input, src, None, (offset, d1, d2))


# ---------------------------------------------------------------------- fill_diagonal_
def _diagonal_positions(shape, wrap):
    """C-order flat positions fill_diagonal_ writes (PyTorch's rules: the main diagonal of
    a tall matrix restarts every width + 1 rows with `wrap`; >2-D needs equal sizes)."""
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    numel = math.prod(shape)
    n = min(shape)
    step = sum(math.prod(shape[i + 1:]) for i in range(len(shape)))
    if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:
        n = -(-numel // step)
    return np.arange(n, dtype=np.int64) * step


@defop("fill_diagonal", node="CopySlices", save=())
def _fill_diagonal(a, pos, value):
    out = array_module(a).ascontiguousarray(a).copy()
    out.reshape(-1)[pos] = value
    return out


@_fill_diagonal.defvjp
def _fill_diagonal_vjp(ctx, g):
    # the filled positions no longer depend on the input
    return dispatch(_fill_diagonal, (g,), {"pos": ctx.params["pos"], "value": 0})


def fill_diagonal_(self, fill_value, wrap=False):
    shape = self._data.shape
    pos = _diagonal_positions(shape, wrap)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    value = check_fill(fill_value, self.dtype, len(pos))
    if state.enabled and self._requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        xp_pos = array_module(self._data).asarray(pos)
        return apply_inplace(self, lambda s: dispatch(
            _fill_diagonal, (s,), {"pos": xp_pos, "value": value}), (), {})
    if len(pos):
        self._data[np.unravel_index(pos, shape)] = value
    bump_version(self)
    return self


METHODS["fill_diagonal_"] = fill_diagonal_
