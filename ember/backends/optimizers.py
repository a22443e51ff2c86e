"""Optimizer steps behind named functions: one parameter's update in place.

The compiled kernels (csrc/optimizers.c) take NumPy float32/float64 arrays of one dtype, C
contiguous, and walk them once; everything else (CuPy, float16/bfloat16 parameters, other
layouts, no build, EMBER_KERNELS=numpy) runs the reference below, which rounds at the same
steps, so the two give the same bits.
"""
import numpy as np

from . import array_module
from .cpu_kernels import compiled


def _takes(*arrays):
    """Whether the compiled kernels can update these arrays in place."""
    if compiled is None:
        return False
    first = arrays[0]
    return all(type(a) is np.ndarray and a.dtype == first.dtype and a.flags.c_contiguous
               for a in arrays) and first.dtype in (np.float32, np.float64)


def sgd_step(w, g, buf, *, momentum, dampening, lr, weight_decay, nesterov, maximize):
    """w -= lr * d for the gradient g, in place: d is g (negated with maximize, plus
    weight_decay * w), or with momentum the buffer buf = momentum * buf + (1 - dampening) * d
    (just d on the first step, when `buf` is None), and d = buf (Nesterov: d + momentum *
    buf). Returns the momentum buffer (new on the first step; None without momentum)."""
    first = buf is None
    if momentum != 0 and first:
        buf = array_module(w).empty_like(w)
    elif momentum == 0:
        buf = None
    arrays = (w, g) if buf is None else (w, g, buf)
    if _takes(*arrays):
        compiled.sgd_step(w, g, buf, momentum, dampening, lr, weight_decay, nesterov,
                          maximize, first)
        return buf
    if maximize:
        g = -g
    if weight_decay != 0:
        g = g + weight_decay * w
    if buf is not None:
        if first:
            buf[...] = g
        else:
            buf *= momentum
            if dampening:
                buf += (1 - dampening) * g
            else:
                buf += g
        g = g + momentum * buf if nesterov else buf
    if lr != 0:
        w -= lr * g if lr != 1 else g
    return buf
