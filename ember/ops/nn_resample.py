"""Resampling primitives for nn.functional: a weighted multi-tap gather along one dim (the
separable core of interpolate: nearest is one tap, linear two, cubic four) and its
transpose, plus constant_pad_nd.

The tap tables (indices and weights, shape (K, out)) are precomputed by the caller, so the
forward is K array gathers and the VJP is the transposed op; each op's VJP is the other, so
double backward is free.
"""
import builtins

from .._tensor import Tensor
from ..backends import array_module
from ..backends.numpy_backend import scatter_add
from .registry import defop, dispatch, export


def _bshape(ndim, dim, n):
    shape = [1] * ndim
    shape[dim] = n
    return tuple(shape)


@defop("interp_taps", node="UpsampleBackward0", save=())
def _interp_taps(x, idx, w, dim):
    xp = array_module(x)
    out = None
    for k in range(idx.shape[0]):
        term = xp.take(x, idx[k], axis=dim)
        if w is not None:
            term *= w[k].reshape(_bshape(x.ndim, dim, w.shape[1]))
        out = term if out is None else xp.add(out, term, out=out)
    return out


@defop("interp_taps_backward", node="UpsampleBackwardBackward0", save=())
def _interp_taps_t(g, idx, w, dim, size):
    """The adjoint of interp_taps: each output position's value scattered (weighted) back to
    its source positions along `dim`, which has `size` entries."""
    xp = array_module(g)
    # NOTE: the scatter runs over rows of a C-contiguous (out, rest) array; on the strided
    # moveaxis view it was several times slower.
    gm = xp.ascontiguousarray(xp.moveaxis(g, dim, 0))
    rest = gm.shape[1:]
    gm = gm.reshape(gm.shape[0], -1)
    res = xp.zeros((size, gm.shape[1]), dtype=g.dtype)
    for k in range(idx.shape[0]):
        vals = gm if w is None else gm * w[k][:, None]
        _sorted_scatter_add(xp, res, idx[k], vals)
    return xp.moveaxis(res.reshape((size,) + rest), 0, dim)


def _sorted_scatter_add(xp, res, index, vals):
    """res[index] += vals along axis 0 for a sorted `index`.

    NOTE: ufunc.at and reduceat are slow over rows; instead the j-th member of every run of
    equal indices is added in one fancy-index step (no index repeats within a step), one
    step per run position (runs are short: about out/in for upsampling)."""
    n = index.size
    if n == 0:
        return
    change = xp.ones(n, dtype=bool)
    change[1:] = index[1:] != index[:-1]
    starts = xp.flatnonzero(change)
    longest = int(xp.diff(xp.append(starts, n)).max())
    if longest == 1:
        res[index] += vals
        return
    if longest > 16 or (n > 1 and bool((index[1:] < index[:-1]).any())):
        scatter_add(res, index, vals)
        return
    rank = xp.arange(n) - starts[xp.cumsum(change) - 1]
    for j in range(longest):
        sel = xp.flatnonzero(rank == j)
        res[index[sel]] += vals[sel]


@_interp_taps.defvjp
def _interp_taps_vjp(ctx, g):
    p = ctx.params
    size = ctx.in_meta[0][0][p["dim"]]
    return (dispatch(_interp_taps_t, (g,), {**p, "size": size}),)


@_interp_taps_t.defvjp
def _interp_taps_t_vjp(ctx, g):
    p = ctx.params
    return (dispatch(_interp_taps, (g,), {"idx": p["idx"], "w": p["w"], "dim": p["dim"]}),)


def interp_taps(x, dim, idx, w=None):
    """sum_k x.index_select(dim, idx[k]) * w[k] (broadcast along `dim`), one op."""
    return dispatch(_interp_taps, (x,), {"idx": idx, "w": w, "dim": dim})


# ---------------------------------------------------------------------- constant padding
def _pad_slices(shape, pad):
    """Output shape and the (source, destination) slices of a constant pad; `pad` is
    PyTorch's flat (last-dim-first) pairs, negative entries crop."""
    nd = len(shape)
    out = list(shape)
    src = [slice(None)] * nd
    dst = [slice(None)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = shape[d]
        out[d] = n + lo + hi
        src[d] = slice(builtins.max(-lo, 0), n - builtins.max(-hi, 0))
        dst[d] = slice(builtins.max(lo, 0), out[d] - builtins.max(hi, 0))
    return tuple(out), tuple(src), tuple(dst)


@defop("constant_pad_nd", node="ConstantPadNdBackward0", save=())
def _constant_pad_nd(x, pad, value=0):
    if not pad:   # (a copy; a 0-d input's slices would be NumPy scalars)
        return x.copy()
    xp = array_module(x)
    shape, src, dst = _pad_slices(x.shape, pad)
    out = xp.full(shape, value, dtype=x.dtype)
    if builtins.min(shape, default=1) > 0 and x.size:
        s, d = x[src], out[dst]
        if s.size and d.size:
            d[...] = s
    return out


@_constant_pad_nd.defvjp
def _constant_pad_nd_vjp(ctx, g):
    pad = ctx.params["pad"]
    return (dispatch(_constant_pad_nd, (g,), {"pad": tuple(-p for p in pad), "value": 0}),)


@export(method=False)
def constant_pad_nd(input, pad, value=0):
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.dim()}")
    shape, _, _ = _pad_slices(input.shape, pad)
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        if shape[d] < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if isinstance(value, Tensor):
        value = value.item()
    return dispatch(_constant_pad_nd, (input,), {"pad": pad, "value": value},
                    dtype=input.dtype)


__all__ = ["interp_taps", "constant_pad_nd"]
