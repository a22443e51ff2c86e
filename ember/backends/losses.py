"""Loss kernels behind named functions: nll_loss forward and backward (the gather of the
targets' log-probabilities behind cross_entropy, and its scatter back).

Array-module code for every backend, with no compiled kernel: both directions touch one
element per sample (a gather, and a scatter into a zero-filled gradient), which NumPy's
indexing does at memory speed; the work of cross_entropy is its log_softmax
(backends/softmax.py). float16 and bfloat16 are computed in float32 and rounded.

The input is (N, C, *), or (C,) for one sample (the target then one index, 0-d or of size
one); the target (N, *) holds class indices;
`weight` (C,) or None weighs the classes; targets equal to `ignore_index` count for nothing.
"""
import math

import numpy as np

from . import array_module


def _samples(x, target):
    """x as (N, C, L) and the target as (N, L)."""
    x3 = x.reshape((1,) + x.shape + (1,)) if x.ndim == 1 else \
        x.reshape(x.shape[:2] + (math.prod(x.shape[2:]),))
    return x3, target.reshape(x3.shape[:1] + x3.shape[2:])


def _weights(xp, t, weight, ignore_index, dtype):
    """(valid targets, their class indices with ignored ones at 0, their weights, 0 where
    ignored)."""
    valid = t != ignore_index
    safe = xp.where(valid, t, 0)
    w = valid.astype(dtype) if weight is None else \
        xp.where(valid, weight.astype(dtype, copy=False)[safe], 0)
    return valid, safe, w


def _indices(xp, t):
    return xp.arange(t.shape[0])[:, None], xp.arange(t.shape[1])[None, :]


def nll_loss(x, target, weight, reduction, ignore_index):
    """(loss, total_weight): -x[target] w[target] per sample ('none', the target's shape) or
    its sum ('sum') or weighted mean ('mean', divided by the sum of the targets' weights:
    nan when every target is ignored, as PyTorch's); total_weight is that sum, in x's dtype."""
    xp = array_module(x)
    ct = np.float32 if x.dtype.itemsize < 4 else x.dtype
    x3, t = _samples(x, target)
    valid, safe, w = _weights(xp, t, weight, ignore_index, ct)
    rows, cols = _indices(xp, t)
    picked = x3[rows, safe, cols].astype(ct, copy=False)
    # NOTE: an ignored sample gives 0 without reading its value (which may be -inf: 0 * inf)
    losses = xp.where(valid, -picked * w, 0).astype(ct, copy=False)
    total = w.sum(dtype=ct)
    if reduction == "none":
        out = losses.reshape(target.shape if x.ndim > 1 else ())
    else:
        out = losses.sum(dtype=ct)
        if reduction == "mean":
            out = out / total
    return xp.asarray(out).astype(x.dtype), xp.asarray(total).astype(x.dtype)


def nll_loss_backward(g, shape, dtype, target, weight, reduction, ignore_index, total_weight):
    """The gradient of nll_loss's loss with respect to its input (of `shape` and `dtype`) from
    the loss's gradient g: zero but at each kept target, -w[target] g (g / total_weight for
    'mean')."""
    xp = array_module(g)
    ct = np.float32 if np.dtype(dtype).itemsize < 4 else np.dtype(dtype)
    grad = xp.zeros(shape, dtype)
    g3, t = _samples(grad, target)
    valid, safe, w = _weights(xp, t, weight, ignore_index, ct)
    go = g.astype(ct, copy=False)
    if reduction == "none":
        scale = -go.reshape(t.shape)
    else:
        scale = -(go / total_weight.astype(ct, copy=False)) if reduction == "mean" else -go
    rows, cols = _indices(xp, t)
    g3[rows, safe, cols] = xp.where(valid, w * scale, 0).astype(dtype, copy=False)
    return grad
