"""Normalisation kernels behind named functions: layer norm forward and backward, each group
of n trailing elements (a row) normalised on its own.

The compiled kernels (csrc/normalization.c) take NumPy float32 and float64 arrays; float16 and
bfloat16 run through float32 (PyTorch's opmath), and float32 accumulates in float, as
PyTorch's CPU kernel does. Everything else (CuPy arrays, no build, EMBER_KERNELS=numpy) runs
the reference below, in array-module code: the NumPy path each kernel is tested against.

Both paths compute the statistics in two passes (the mean, then the centred squares) and
xhat = (x - mean) rstd, y = xhat w + b; the backward is
dx = g w rstd - xhat (rstd sum(g w xhat) + grstd rstd^2) / n + (gmean - rstd sum(g w)) / n,
gmean and grstd being the gradients that reach the statistics (zero unless something used
them).
"""
import math

import numpy as np

from . import array_module
from .cpu_kernels import compiled, note_fallback


def _kernel_inputs(*arrays):
    """The arrays as C-contiguous NumPy arrays of one float kind (float16/bfloat16 as float32)
    for the compiled kernels, None kept; or None when the kernels cannot take them."""
    if compiled is None:
        note_fallback()
        return None
    if any(a is not None and type(a) is not np.ndarray for a in arrays):
        return None
    kind = np.result_type(*(np.float32 if a.dtype.itemsize < 4 else a.dtype
                            for a in arrays if a is not None))
    # (not np.ascontiguousarray: it makes a 0-d array 1-d)
    return [None if a is None else np.require(a, kind, "C") for a in arrays]


def _opmath(a):
    """float16/bfloat16 computed in float32, as PyTorch's CPU kernels do."""
    return a if a is None or a.dtype.itemsize >= 4 else a.astype(np.float32)


def layer_norm(x, w, b, eps, n, keep_xhat=False):
    """(y, mean, rstd, xhat): x normalised over its trailing elements in groups of n > 0
    (x.size / n rows), times w and plus b (n elements, either may be None). y has x's shape
    and dtype; mean and rstd (shape (rows,)) the compute dtype. xhat is the normalised input
    as (rows, n) when keep_xhat asks the reference for it (its backward then skips
    recomputing it), else None."""
    args = _kernel_inputs(x, w, b) if x.size else None
    if args is not None:
        xk, wk, bk = args
        m = xk.size // n
        y, mean, rstd = np.empty_like(xk), np.empty(m, xk.dtype), np.empty(m, xk.dtype)
        compiled.layer_norm(xk, wk, bk, y, mean, rstd, eps)
        return y.astype(x.dtype, copy=False), mean, rstd, None
    xp = array_module(x)
    x2 = _opmath(x).reshape(-1, n)
    # NOTE: row sums as a matrix-vector product: BLAS beats a ufunc reduce over short rows.
    mean = (x2 @ xp.ones(n, x2.dtype))[:, None] / n
    xhat = x2 - mean
    rstd = 1 / xp.sqrt(xp.einsum("ij,ij->i", xhat, xhat)[:, None] / n + eps)
    xhat *= rstd
    if w is None and b is None:
        y = xhat
    elif w is not None:
        y = xhat * _opmath(w).reshape(n)
        if b is not None:
            y += _opmath(b).reshape(n)
    else:
        y = xhat + _opmath(b).reshape(n)
    return (y.reshape(x.shape).astype(x.dtype, copy=False), mean[:, 0], rstd[:, 0],
            xhat if keep_xhat and y is not xhat else None)


def layer_norm_backward(g, x, w, mean, rstd, gmean=None, grstd=None, xhat=None,
                        needs=(True, True, True), param_shape=None):
    """(dx, dw, db) of layer_norm for x from y's gradient g (x's shape) and the statistics'
    gradients gmean, grstd (one per row, or None); mean and rstd as layer_norm gave them,
    xhat what it kept (or None). `needs` says which of the three to compute (None for the
    others, and dw without a weight). dx has g's shape and dtype, dw and db `param_shape` (the
    n normalised elements' shape) and the compute dtype. The results are fresh arrays, never
    views (the engine keeps such a gradient as .grad without copying it)."""
    need_dx, need_dw, need_db = needs
    need_dw = need_dw and w is not None
    m = mean.size
    if param_shape is None:
        param_shape = (x.size // m if m else 0,)
    param_shape = tuple(param_shape)
    args = _kernel_inputs(g, x, w, mean, rstd, gmean, grstd) if x.size else None
    if args is not None:
        gk, xk, wk, mk, rk, gmk, grk = args
        dx, dw, db = _kernel_outputs(gk, param_shape, need_dx, need_dw, need_db)
        compiled.layer_norm_backward(gk, xk, wk, mk, rk, gmk, grk, dx, dw, db)
        return (None if dx is None else dx.astype(g.dtype, copy=False)), dw, db
    return _layer_norm_backward_numpy(g, x, w, mean, rstd, gmean, grstd, xhat,
                                      (need_dx, need_dw, need_db), param_shape)


def _layer_norm_backward_numpy(g, x, w, mean, rstd, gmean, grstd, xhat, needs, param_shape):
    """layer_norm_backward in array ops (any backend, any dtype): the kernels' reference."""
    need_dx, need_dw, need_db = needs
    m, n = mean.size, math.prod(param_shape)
    xp = array_module(x)
    g2, x2 = _opmath(g).reshape(m, n), _opmath(x).reshape(m, n)
    wv = None if w is None else _opmath(w).reshape(n)
    mean, rstd = _opmath(mean).reshape(m, 1), _opmath(rstd).reshape(m, 1)
    keep = xhat is not None         # NOTE: a kept xhat may be read again (retain_graph=True)
    if not keep:
        xhat = x2 - mean
        xhat *= rstd
    # NOTE: every reduction is a BLAS matrix-vector product with a ones vector or the weight.
    # (g xhat goes into a buffer of g's shape that becomes dx: a fresh array, not a view)
    full = xp.empty(g.shape, g2.dtype)
    gxhat = full.reshape(m, n)
    xp.multiply(g2, xhat, out=gxhat)
    dw = _shaped(xp.ones(m, g2.dtype) @ gxhat, param_shape) if need_dw else None
    db = _shaped(xp.ones(m, g2.dtype) @ g2, param_shape) if need_db else None
    dx = None
    if need_dx:
        if wv is not None:
            a, s = (g2 @ wv)[:, None], (gxhat @ wv)[:, None]
        else:
            ones = xp.ones(n, g2.dtype)
            a, s = (g2 @ ones)[:, None], (gxhat @ ones)[:, None]
        gm = 0 if gmean is None else _opmath(gmean).reshape(m, 1)
        gr = 0 if grstd is None else _opmath(grstd).reshape(m, 1)
        c1 = (gm - rstd * a) / n
        c2 = (rstd * s + gr * rstd * rstd) / n
        dx = gxhat                  # (the buffer reused: one large allocation fewer)
        if wv is not None:
            xp.multiply(g2, wv, out=dx)
            dx *= rstd
        else:
            xp.multiply(g2, rstd, out=dx)
        if keep:
            dx -= xhat * c2
        else:
            xhat *= c2
            dx -= xhat
        dx += c1
        dx = full.astype(g.dtype, copy=False)
    return dx, dw, db


def _kernel_outputs(gk, param_shape, need_dx, need_dw, need_db):
    """Fresh (dx, dw, db) for a backward kernel to fill: dx like the gradient, dw and db of
    `param_shape`, None for what is not needed."""
    return (np.empty_like(gk) if need_dx else None,
            np.empty(param_shape, gk.dtype) if need_dw else None,
            np.empty(param_shape, gk.dtype) if need_db else None)


def _shaped(a, shape):
    return a if a.shape == shape else a.reshape(shape)


def batch_norm(x, w, b, eps):
    """(y, mean, var): training-mode batch norm of x (N, C, *) over every dim but 1, times w
    and plus b (C elements, either may be None). y has x's shape and dtype; mean and the
    biased variance (shape (C,)) the compute dtype, their sums taken in float64 as PyTorch's
    CPU kernel takes them. y = (x - mean) w / sqrt(var + eps) + b."""
    nb, c = x.shape[0], x.shape[1]
    args = _kernel_inputs(x, w, b) if x.size else None
    if args is not None:
        xk, wk, bk = args
        y, mean, var = np.empty_like(xk), np.empty(c, xk.dtype), np.empty(c, xk.dtype)
        compiled.batch_norm(xk, wk, bk, y, mean, var, nb, xk.size // (nb * c), eps)
        return y.astype(x.dtype, copy=False), mean, var
    xp = array_module(x)
    x3 = _opmath(x).reshape(nb, c, -1)
    ct, n = x3.dtype, x3.shape[0] * x3.shape[2]
    mean = (x3.sum(axis=(0, 2), dtype=np.float64) / n).astype(ct)
    y = x3 - mean[:, None]
    var = xp.square(y).sum(axis=(0, 2), dtype=np.float64) / n
    scale = (1 / xp.sqrt(var + eps)).astype(ct)
    if w is not None:
        scale = scale * _opmath(w)
    y *= scale[:, None]
    if b is not None:
        y += _opmath(b)[:, None]
    return y.reshape(x.shape).astype(x.dtype, copy=False), mean, var.astype(ct)


def batch_norm_backward(g, x, w, mean, var, eps, gmean=None, gvar=None,
                        needs=(True, True, True)):
    """(dx, dw, db) of batch_norm for x (N, C, *) from y's gradient g and the statistics'
    gradients gmean, gvar ((C,) or None); mean and var as batch_norm gave them. With
    gsum = sum(g), dot = sum(g (x - mean)) per channel (float64 sums) and invstd =
    1 / sqrt(var + eps):
      dx = g scale - (x - mean) (scale invstd^2 dot - 2 gvar) / n + (gmean - scale gsum) / n,
      scale = invstd w; dw = dot invstd, db = gsum.
    `needs` says which to compute (None for the others, and dw without a weight); dx has g's
    shape and dtype (a fresh array), dw and db (C,) the compute dtype."""
    need_dx, need_dw, need_db = needs
    need_dw = need_dw and w is not None
    nb, c = x.shape[0], x.shape[1]
    args = _kernel_inputs(g, x, w, mean, var, gmean, gvar) if x.size else None
    if args is not None:
        gk, xk, wk, mk, vk, gmk, gvk = args
        dx, dw, db = _kernel_outputs(gk, c, need_dx, need_dw, need_db)
        compiled.batch_norm_backward(gk, xk, wk, mk, vk, gmk, gvk, dx, dw, db, nb,
                                     xk.size // (nb * c), eps)
        return (None if dx is None else dx.astype(g.dtype, copy=False)), dw, db
    xp = array_module(x)
    x3, g3 = _opmath(x).reshape(nb, c, -1), _opmath(g).reshape(nb, c, -1)
    ct, n = x3.dtype, x3.shape[0] * x3.shape[2]
    invstd = (1 / xp.sqrt(_opmath(var).astype(np.float64) + eps)).astype(ct)
    xc = x3 - _opmath(mean)[:, None]
    gsum = g3.sum(axis=(0, 2), dtype=np.float64).astype(ct)
    dot = (g3 * xc).sum(axis=(0, 2), dtype=np.float64).astype(ct)
    dw = dot * invstd if need_dw else None
    db = gsum if need_db else None
    dx = None
    if need_dx:
        scale = invstd * _opmath(w) if w is not None else invstd
        gm = 0 if gmean is None else _opmath(gmean)
        gv = 0 if gvar is None else _opmath(gvar)
        c1 = (gm - scale * gsum) / n
        c2 = (scale * invstd * invstd * dot - 2 * gv) / n
        full = xp.empty(g.shape, ct)      # (dx: a fresh array of g's shape, not a view)
        gx = full.reshape(g3.shape)
        xp.multiply(g3, scale[:, None], out=gx)
        xc *= c2[:, None]
        gx -= xc
        gx += c1[:, None]
        dx = full.astype(g.dtype, copy=False)
    return dx, dw, db
