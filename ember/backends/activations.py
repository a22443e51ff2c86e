"""Activation kernels behind named functions: GELU forward and backward.

The compiled kernels (csrc/activations.c) take NumPy float32 and float64 arrays; float16 and
bfloat16 run through float32 (PyTorch's opmath). Everything else (CuPy arrays, no build,
EMBER_KERNELS=numpy) runs the reference below, in array-module code: the NumPy path each
kernel is tested against.

`gelu` returns (y, saved): what the reference keeps for the backward (Phi(x) and
exp(-x^2/2), or sigmoid(2u) and 1 minus it), None from the compiled kernel, which recomputes
them in one pass faster than it could read them back.
"""
import math

import numpy as np

from . import array_module
from .cpu_kernels import compiled, kernel_input
from .normal_cdf import normal_cdf_and_gauss

_K = math.sqrt(2 / math.pi)
_C = 0.044715
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _opmath(xp, a):
    """float16/bfloat16 computed in float32, as PyTorch's CPU kernels do."""
    return a.astype(np.float32) if a.dtype.itemsize < 4 else a


def gelu(x, approximate):
    """(GELU(x) in x's dtype, saved): approximate is 'none' (x Phi(x)) or 'tanh'."""
    xk = kernel_input(x, compiled)
    if xk is not None:
        y = np.empty_like(xk)
        compiled.gelu(xk, y, approximate == "tanh")
        return y.astype(x.dtype, copy=False), None
    xp = array_module(x)
    xo = _opmath(xp, x)
    if approximate == "none":
        saved = normal_cdf_and_gauss(xo)           # Phi(x), and exp(-x^2/2) for backward
        y = xo * saved[0]
    else:
        saved = _sigmoid2(xp, _K * (xo + _C * xo * xo * xo))
        y = xo * saved[0]
    return y.astype(x.dtype, copy=False), saved


def _sigmoid2(xp, u):
    """(s, 1 - s) for s = sigmoid(2u) = 0.5 (1 + tanh(u)), both without cancellation.
    NOTE: 0.5 x (1 + tanh(u)) loses the relative precision of 1 + tanh(u) for x < -2; x s
    keeps it. exp's argument is capped so that 1 - s = e s stays finite."""
    e = xp.exp(xp.minimum(-2 * u, 88.0 if u.dtype == np.float32 else 709.0))
    s = 1 / (1 + e)
    return s, e * s


def gelu_backward(g, x, approximate, saved=None):
    """g * GELU'(x) in g's dtype; `saved` is what `gelu` returned (recomputed when None)."""
    xk = kernel_input(x, compiled) if saved is None else None
    if xk is not None:
        gk = kernel_input(g, compiled).astype(xk.dtype, copy=False)
        out = np.empty_like(xk)
        compiled.gelu_backward(gk, xk, out, approximate == "tanh")
        return out.astype(g.dtype, copy=False)
    xp = array_module(x)
    xo, go = _opmath(xp, x), _opmath(xp, g)
    if approximate == "none":
        cdf, gauss = normal_cdf_and_gauss(xo) if saved is None else saved
        d = xo * _INV_SQRT_2PI
        d *= gauss
        d += cdf                                  # Phi(x) + x phi(x)
    else:
        x2 = xo * xo
        s, rest = _sigmoid2(xp, _K * (xo + _C * x2 * xo)) if saved is None else saved
        d = 2 * xo * s * rest * _K * (1 + 3 * _C * x2)     # x s' (s' = 2 s (1 - s) u')
        d += s
    d *= go
    return d.astype(g.dtype, copy=False)
