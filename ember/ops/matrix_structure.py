"""Matrix structure: triangles (tril, triu and their index lists tril_indices, triu_indices),
diagonals (diag, diagflat, trace), block_diag and the Vandermonde matrix (vander).

tril, triu, diag and trace are registry ops whose gradients mask or embed `g`; block_diag
cuts `g` into its blocks; vander is a composite (a cumulative product) and differentiates for
free."""
import operator

import numpy as np

from .. import _dtype as dt
from .._creation import _finish, ones
from .._device import placement
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._arguments import int_arg
from ._elementwise import not_implemented
from ._promote import compute_dtype
from .indexing_views import _diag_embed, diag_embed
from .registry import check_tensor, defop, dispatch, export
from .shape import cat
from .views import expand, reshape


# ---------------------------------------------------------------------- tril / triu / diag
@defop("tril", save=())
def _tril(a, diagonal):
    return array_module(a).tril(a, diagonal)


@_tril.defvjp
def _tril_vjp(ctx, g):
    return dispatch(_tril, (g,), ctx.params)


@defop("triu", save=())
def _triu(a, diagonal):
    return array_module(a).triu(a, diagonal)


@_triu.defvjp
def _triu_vjp(ctx, g):
    return dispatch(_triu, (g,), ctx.params)


@export(inplace=True)
def tril(input, diagonal=0, *, out=None):
    check_tensor("tril", input)
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    r = dispatch(_tril, (input,), {"diagonal": operator.index(diagonal)})
    return r if out is None else write_out(r, out)


@export(inplace=True)
def triu(input, diagonal=0, *, out=None):
    check_tensor("triu", input)
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    r = dispatch(_triu, (input,), {"diagonal": operator.index(diagonal)})
    return r if out is None else write_out(r, out)


@export
def diag(input, diagonal=0, *, out=None):
    check_tensor("diag", input)
    n = input._data.ndim
    if n == 1:
        r = diag_embed(input, diagonal, 0, 1)
    elif n == 2:
        r = diagonal_copy(input, diagonal)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    return r if out is None else write_out(r, out)


@defop("diagonal_copy", node="DiagonalBackward0_copy", save=())
def _diagonal_copy(a, offset, dim1, dim2):
    return array_module(a).diagonal(a, offset, dim1, dim2).copy()


@_diagonal_copy.defvjp
def _diagonal_copy_vjp(ctx, g):
    return dispatch(_diag_embed, (g,), dict(ctx.params, shape=ctx.in_meta[0][0]))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return dispatch(_diagonal_copy, (input,), {"offset": offset, "dim1": dim1, "dim2": dim2})


@export
def diagflat(input, offset=0):
    check_tensor("diagflat", input)
    return diag_embed(reshape(input, (-1,)), offset, 0, 1)


@defop("trace", save=())
def _trace(a, acc):
    return array_module(a).trace(a, dtype=acc)


@_trace.defvjp
def _trace_vjp(ctx, g):
    shape = ctx.in_meta[0][0]
    k = min(shape)
    return dispatch(_diag_embed, (expand(g, (k,)),), {"shape": shape, "offset": 0,
                                                      "dim1": 0, "dim2": 1})


@export
def trace(input):
    check_tensor("trace", input)
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    if input.dtype is dt.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    result = dt.int64 if input.dtype.category == dt.INTEGER else input.dtype
    return dispatch(_trace, (input,), {"acc": compute_dtype(result).np}, result)


# ---------------------------------------------------------------------- tril/triu_indices
def _triangle_indices(name, numpy_indices, row, col, offset, dtype, device):
    row = int_arg(name, row, "row", 1)
    col = int_arg(name, col, "col", 2)
    offset = int_arg(name, offset, "offset", 3)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")  # (sic: PyTorch's spacing)
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = dt.int64 if dtype is None else dtype
    if dtype not in (dt.int32, dt.int64):
        raise not_implemented(name, dtype)
    rows, cols = numpy_indices(row, offset, col)
    return _finish(np.stack([rows, cols]).astype(dtype.np), dtype, placement(device), False)


@export(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None,
                 pin_memory=False):
    return _triangle_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device)


@export(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None,
                 pin_memory=False):
    return _triangle_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device)


# ---------------------------------------------------------------------- block_diag
def _as_2d(shape):
    """PyTorch's block of a 0-d (1 x 1), 1-d (1 x n) or 2-d input."""
    return (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape


@defop("block_diag", node="BlockDiagBackward0", save=())
def _block_diag(*blocks, dtype):
    xp = array_module(*blocks)
    sizes = [_as_2d(b.shape) for b in blocks]
    out = xp.zeros((sum(r for r, _ in sizes), sum(c for _, c in sizes)), dtype=dtype)
    r0 = c0 = 0
    for b, (r, c) in zip(blocks, sizes):
        out[r0:r0 + r, c0:c0 + c] = b.reshape(r, c)
        r0, c0 = r0 + r, c0 + c
    return out


@_block_diag.defvjp
def _block_diag_vjp(ctx, g):
    grads = []
    r0 = c0 = 0
    for shape in ctx.in_meta[0]:
        r, c = _as_2d(shape)
        grads.append(g[r0:r0 + r, c0:c0 + c].reshape(shape))
        r0, c0 = r0 + r, c0 + c
    return tuple(grads)


@export(method=False)
def block_diag(*tensors):
    if not tensors:
        return _finish(np.empty((1, 0), dt.get_default_dtype().np), dt.get_default_dtype(),
                       placement("cpu"), False)   # (not a default-device factory)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    device = tensors[0]._device
    for i, t in enumerate(tensors):
        if t._device != device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same "
                               f"device. Input 0 is on device {device} and input {i} is on "
                               f"device {t._device}")
        if t._data.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    dtype = dt.result_type_of(tensors)
    return dispatch(_block_diag, tensors, {"dtype": dtype.np}, dtype)


# ---------------------------------------------------------------------- vander
@export(method=False)
def vander(x, N=None, increasing=False):
    check_tensor("vander", x, "x")
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    length = x._data.shape[0]
    if N is None:
        N = length
    N = operator.index(N)   # (the parser took a NumPy integer or 0-d integer tensor)
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    d = dt.promote_types(x.dtype, dt.int64)   # integers give int64, as cumprod's would
    columns = [ones(length, min(N, 1), dtype=d, device=x.device)]
    if N > 1:
        columns.append(x.to(d).unsqueeze(1).expand(length, N - 1).cumprod(1))
    r = cat(columns, 1) if len(columns) > 1 else columns[0]
    return r if increasing else r.flip(1)
