"""Softmax kernels behind named functions: softmax and log_softmax over one dim, and their
input gradients from the output.

The compiled kernels (csrc/softmax.c) take NumPy float32 and float64 arrays, seen as
(outer, n, inner) with the softmax over n; float16 and bfloat16 run through float32
(PyTorch's opmath). Everything else (CuPy arrays, no build, EMBER_KERNELS=numpy) runs the
reference below, in array-module code: the NumPy path each kernel is tested against.

Both paths use PyTorch's CPU formulas: the row maximum subtracted before exp, softmax as the
exps times one reciprocal of their sum over the last dim (divided by it over other dims),
log_softmax as (x - max) - log(sum), and the gradients y (g - sum(g y)) and g - exp(y) sum(g).
For float16 and bfloat16 they also round where PyTorch keeps an intermediate in the tensor's
type: the log-sum-exp of a last-dim log_softmax (and the sum before its log), the exps of a
softmax over another dim. (A unit in the last place of the output, but log_softmax's gradient
multiplies it by the sum of the incoming gradient.)
"""
import math

import numpy as np

from . import array_module
from .cpu_kernels import compiled, kernel_input


def _split(shape, dim):
    """(outer, n, inner): the sizes before, at and after `dim` (a 0-d array is one element)."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


_REDUCED = {"float16": 1, "bfloat16": 2}    # the kernels' codes (csrc/vector_math.h)


def softmax(x, dim, log=False):
    """softmax (log: log_softmax) of array x over its non-negative `dim`, in x's dtype."""
    sizes = _split(x.shape, dim)
    last = x.ndim > 0 and dim == x.ndim - 1
    reduced = _REDUCED.get(x.dtype.name, 0)
    xk = kernel_input(x, compiled)
    if xk is not None:
        y = np.empty_like(xk)
        compiled.softmax(xk, y, *sizes, log, last, reduced)
        return y.astype(x.dtype, copy=False)
    xp = array_module(x)
    if x.size == 0:
        return xp.empty(x.shape, x.dtype)
    # (along `dim` of x itself: results of x's shape, not views of a reshaped array, which
    # the engine would copy before keeping one as a .grad)
    xo, axis = (_opmath(x), dim) if x.ndim else (_opmath(x).reshape(1), 0)

    def rounded(a):     # to the tensor's type and back, for float16 and bfloat16
        return a.astype(x.dtype).astype(a.dtype) if reduced else a

    # NOTE: the maximum subtracted first keeps exp from overflowing; a row of -inf (or one
    # holding +inf or nan) gives nan throughout, as in PyTorch.
    shifted = xo - xo.max(axis=axis, keepdims=True)
    e = xp.exp(shifted)
    s = e.sum(axis=axis, keepdims=True)
    if log:
        y = shifted - (rounded(xp.log(rounded(s))) if last else xp.log(s))
    elif last:
        e *= 1 / s
        y = e
    else:
        y = rounded(e) / s
    y = y.astype(x.dtype, copy=False)
    return y if x.ndim else y.reshape(())


def softmax_backward(g, y, dim, log=False):
    """The input gradient of softmax (log: log_softmax) over `dim` from its output y and the
    output's gradient g, in g's dtype."""
    gk, yk = kernel_input(g, compiled), kernel_input(y, compiled)
    if gk is not None and yk is not None:
        kind = np.promote_types(gk.dtype, yk.dtype)
        gk, yk = gk.astype(kind, copy=False), yk.astype(kind, copy=False)
        dx = np.empty_like(gk)
        compiled.softmax_backward(gk, yk, dx, *_split(g.shape, dim), log)
        return dx.astype(g.dtype, copy=False)
    xp = array_module(g)
    go, yo, axis = (_opmath(g), _opmath(y), dim) if g.ndim else \
        (_opmath(g).reshape(1), _opmath(y).reshape(1), 0)
    if log:
        dx = go - xp.exp(yo) * go.sum(axis=axis, keepdims=True)
    else:
        dx = yo * (go - (go * yo).sum(axis=axis, keepdims=True))
    dx = dx.astype(g.dtype, copy=False)
    return dx if g.ndim else dx.reshape(())


def _opmath(a):
    """float16/bfloat16 computed in float32, as PyTorch's CPU kernels do."""
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a
