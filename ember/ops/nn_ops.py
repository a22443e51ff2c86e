"""Fused nn primitives: layer norm and batch norm (one pass per statistic instead of a chain of
pointwise ops) and embedding (a row gather whose gradient is a row scatter-add); GELU is
ops/activation.py's.

The norm ops return (mean, var-or-rstd, y). The statistics come first on purpose: the node
saves its outputs, and PyTorch checks a saved output's version; putting a statistic first
means an in-place op on `y` (`ReLU(inplace=True)` after a BatchNorm) stays legal, as in
PyTorch, whose norm backward never reads the output.

Each norm VJP has two bodies with the same formula: a fused kernel (backends/normalization.py,
called through the door as its own op) used by a plain `backward()` (grad mode off), and the
ember-op version used under `create_graph=True`, so double backward differentiates it like
any other VJP.
"""

import numpy as np

from .._creation import zeros
from ..autograd.grad_mode import state
from ..backends import array_module
from ..backends import normalization, reduction
from .histograms import bincount
from .registry import defop, dispatch

# ---------------------------------------------------------------------- layer norm
@defop("native_layer_norm", node="NativeLayerNormBackward0", save=(0, 1), save_output=True,
       num_outputs=3)
def _layer_norm(x, w, b, nd=1, eps=1e-5, saved=None):
    """Normalise over the last `nd` dims; returns (mean, rstd, y), stats in keepdim shape and,
    as PyTorch's, in x's dtype (computed in float32 for float16 and bfloat16).

    `saved` (a list the caller passes when a backward will follow) receives what the NumPy
    reference can hand its backward (the normalised input); the kernels recompute it."""
    xp = array_module(x)
    shape = x.shape
    lead = shape[:x.ndim - nd]
    n = int(np.prod(shape[x.ndim - nd:], dtype=np.int64))
    stat_shape = lead + (1,) * nd
    if n == 0:
        mean = xp.full(stat_shape, np.nan, x.dtype)
        return mean, mean.copy(), x.copy()
    y, mean, rstd, xhat = normalization.layer_norm(
        x, w, b, eps, n,
        # (float16's backward reads the statistics rounded to float16, as PyTorch's does)
        keep_xhat=saved is not None and x.dtype.itemsize >= 4)
    if saved is not None and xhat is not None:
        saved.append(xhat)
    return (mean.reshape(stat_shape).astype(x.dtype, copy=False),
            rstd.reshape(stat_shape).astype(x.dtype, copy=False), y)


@_layer_norm.defvjp
def _layer_norm_vjp(ctx, gmean, grstd, gy):
    x, w = ctx.inputs[0], ctx.inputs[1]
    nd = ctx.params.get("nd", 1)
    mean, rstd, _ = ctx.outputs
    if state.enabled:
        return _layer_norm_vjp_ops(ctx, x, w, mean, rstd, gmean, grstd, gy, nd)
    saved = ctx.params.get("saved")
    needs = _needs(ctx.edges, w)
    grads = dispatch(_layer_norm_backward, (gy, x, w, mean, rstd, gmean, grstd),
                     {"xhat": saved[0] if saved else None, "needs": needs,
                      "param_shape": x.shape[x.dim() - nd:]})
    return _needed(grads, needs)


@defop("native_layer_norm_backward", num_outputs=3)
def _layer_norm_backward(gy, x, w, mean, rstd, gmean, grstd, xhat, needs, param_shape):
    """The fused kernel of a plain backward, as an op (its door call is what a backward
    recorded by ember.compile replays); an empty array stands for a gradient not needed."""
    return _or_empty(normalization.layer_norm_backward(gy, x, w, mean, rstd, gmean, grstd,
                                                       xhat, needs, param_shape), x)


def _needs(edges, w):
    """Which of (dx, dw, db) a norm's VJP must compute."""
    return (edges[0] is not None, w is not None and edges[1] is not None,
            len(edges) > 2 and edges[2] is not None)


def _or_empty(grads, x):
    return tuple(array_module(x).empty(0, x.dtype) if g is None else g for g in grads)


def _needed(grads, needs):
    return tuple(g if need else None for g, need in zip(grads, needs))


def _layer_norm_vjp_ops(ctx, x, w, mean, rstd, gmean, grstd, gy, nd):
    dims = tuple(range(x.dim() - nd, x.dim()))
    batch = tuple(range(x.dim() - nd))
    n = 1
    for s in x.shape[x.dim() - nd:]:
        n *= s
    xhat = (x - mean) * rstd
    gx = gy * w if w is not None else gy
    dx = dw = db = None
    if ctx.edges[0] is not None:
        dx = rstd * (gx - gx.mean(dims, keepdim=True)
                     - xhat * (gx * xhat).mean(dims, keepdim=True))
        dx = dx + gmean / n - grstd * rstd * rstd * xhat / n
    if w is not None and ctx.edges[1] is not None:
        dw = (gy * xhat).sum(batch) if batch else gy * xhat
    if len(ctx.edges) > 2 and ctx.edges[2] is not None:
        db = gy.sum(batch) if batch else gy
    return dx, dw, db


# ---------------------------------------------------------------------- batch norm
@defop("native_batch_norm", node="NativeBatchNormBackward0", save=(0, 1), save_output=True,
       num_outputs=3)
def _batch_norm(x, w, b, eps=1e-5):
    """Training-mode batch norm over dims (0, 2, 3, ...); returns (mean, biased var, y)."""
    y, mean, var = normalization.batch_norm(x, w, b, eps)
    return mean, var, y


@_batch_norm.defvjp
def _batch_norm_vjp(ctx, gmean, gvar, gy):
    x, w = ctx.inputs[0], ctx.inputs[1]
    eps = ctx.params.get("eps", 1e-5)
    mean, var, _ = ctx.outputs
    if state.enabled:
        return _batch_norm_vjp_ops(ctx, x, w, mean, var, gmean, gvar, gy, eps)
    needs = _needs(ctx.edges, w)
    grads = dispatch(_batch_norm_backward, (gy, x, w, mean, var, gmean, gvar),
                     {"eps": eps, "needs": needs})
    return _needed(grads, needs)


@defop("native_batch_norm_backward", num_outputs=3)
def _batch_norm_backward(gy, x, w, mean, var, gmean, gvar, eps, needs):
    """The fused kernel of a plain backward, as an op (see _layer_norm_backward)."""
    return _or_empty(normalization.batch_norm_backward(gy, x, w, mean, var, eps, gmean, gvar,
                                                       needs), x)


def _batch_norm_vjp_ops(ctx, x, w, mean, var, gmean, gvar, gy, eps):
    shape = (1, -1) + (1,) * (x.dim() - 2)
    dims = (0,) + tuple(range(2, x.dim()))
    n = x.numel() // x.shape[1]
    invstd = (var + eps).rsqrt().reshape(shape)
    xc = x - mean.reshape(shape)
    xhat = xc * invstd
    gsum = gy.sum(dims, keepdim=True)
    dot = (gy * xhat).sum(dims, keepdim=True)
    dx = dw = db = None
    if ctx.edges[0] is not None:
        scale = invstd * w.reshape(shape) if w is not None else invstd
        dx = scale * (gy - gsum / n - xhat * dot / n)
        dx = dx + gmean.reshape(shape) / n + gvar.reshape(shape) * 2 * xc / n
    if w is not None and ctx.edges[1] is not None:
        dw = dot.reshape(-1)
    if len(ctx.edges) > 2 and ctx.edges[2] is not None:
        db = gsum.reshape(-1)
    return dx, dw, db


# ---------------------------------------------------------------------- embedding
@defop("embedding", node="EmbeddingBackward0", save=(1,))
def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    xp = array_module(weight)
    return xp.take(weight, indices, axis=0)


@_embedding.defvjp
def _embedding_vjp(ctx, g):
    """Rows of g summed into their weight rows; the padding row gets nothing; with
    scale_grad_by_freq each row's gradient is divided by its index's count in the batch.
    A plain backward sums the rows in one kernel (PyTorch's embedding_dense_backward);
    create_graph and scale_grad_by_freq take the same sums in ember ops."""
    indices = ctx.inputs[1]
    rows, dim = ctx.in_meta[0][0]
    padding_idx = ctx.params.get("padding_idx", -1)
    if not state.enabled and not ctx.params.get("scale_grad_by_freq", False):
        return dispatch(_embedding_dense_backward, (g, indices),
                        {"rows": rows, "padding_idx": padding_idx}), None
    flat = indices.reshape(-1)
    g2 = g.reshape(-1, dim)
    if ctx.params.get("scale_grad_by_freq", False):
        counts = bincount(flat, minlength=rows)
        g2 = g2 / counts.index_select(0, flat).to(g2.dtype).unsqueeze(1)
    if padding_idx >= 0:
        keep = (flat != padding_idx).to(g2.dtype).unsqueeze(1)
        g2 = g2 * keep
    grad = zeros((rows, dim), dtype=g.dtype, device=g.device)
    return grad.index_add(0, flat, g2), None


@defop("embedding_dense_backward")
def _embedding_dense_backward(g, indices, rows, padding_idx):
    return reduction.index_row_sum(g.reshape(-1, g.shape[-1]), indices.reshape(-1), rows,
                                   padding_idx)
