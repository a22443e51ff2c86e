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
    gm = xp.moveaxis(g, dim, 0)
    res = xp.zeros((size,) + gm.shape[1:], dtype=g.dtype)
    for k in range(idx.shape[0]):
        vals = gm if w is None else gm * w[k].reshape((-1,) + (1,) * (gm.ndim - 1))
        _sorted_scatter_add(xp, res, idx[k], vals)
    return xp.moveaxis(res, 0, dim)


def _sorted_scatter_add(xp, res, index, vals):
    """res[index] += vals along axis 0; runs of equal (sorted) indices sum with reduceat."""
    if index.size == 0:
        return
    reduceat = getattr(xp.add, "reduceat", None)
    if reduceat is None or (index.size > 1 and bool((index[1:] < index[:-1]).any())):
        xp.add.at(res, index, vals)
        return
    starts = xp.flatnonzero(xp.concatenate([xp.ones(1, bool), index[1:] != index[:-1]]))
    res[index[starts]] += reduceat(vals, starts, axis=0)


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
