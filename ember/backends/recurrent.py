"""Recurrent-cell kernels behind named functions: an LSTM step's gate arithmetic, forward and
backward.

The compiled kernels (csrc/recurrent.c) take float32 NumPy arrays in one pass; everything
else (float64, CuPy, no build, EMBER_KERNELS=numpy) runs the reference below, in
array-module code: the NumPy path the kernels are tested against.
"""
import numpy as np

from . import array_module
from .cpu_kernels import compiled, note_fallback


def _compiled_for(*arrays):
    if compiled is None:
        note_fallback()
        return False
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous
               for a in arrays if a is not None)


def lstm_gates(act, c, h_out, c_out, tc_out):
    """One step's gate arithmetic: `act` (B, 4H) holds the pre-activations x W_ih^T + h W_hh^T
    + biases and becomes the activations [i, f, g, o] in place; h', c' and tanh(c') go to the
    three (B, H) outputs."""
    if _compiled_for(act, c, h_out, c_out, tc_out):
        compiled.lstm_gates(act, c, h_out, c_out, tc_out, *c.shape)
        return
    xp = array_module(act)
    n = c.shape[-1]
    g = xp.tanh(act[:, 2 * n:3 * n])
    xp.negative(act, out=act)      # sigmoid = 1 / (1 + exp(-x)) in place; g's slot too, as
    xp.exp(act, out=act)           # one pass over the whole row is cheaper than three
    act += 1                       # passes over its pieces
    xp.reciprocal(act, out=act)
    act[:, 2 * n:3 * n] = g
    xp.multiply(act[:, n:2 * n], c, out=c_out)
    c_out += act[:, :n] * g
    xp.tanh(c_out, out=tc_out)
    xp.multiply(act[:, 3 * n:], tc_out, out=h_out)


def lstm_gate_grads(act, tc, c, grad_h, grad_c, d):
    """The backward of `lstm_gates`: the gradient of the pre-activations into `d` (B, 4H);
    returns the gradient of the previous cell state. grad_c may be None (zero)."""
    if _compiled_for(act, tc, c, grad_h, grad_c, d):
        grad_c_prev = np.empty_like(c)
        compiled.lstm_gate_grads(act, tc, c, grad_h, np.zeros_like(c) if grad_c is None
                                 else grad_c, d, grad_c_prev, *c.shape)
        return grad_c_prev
    xp = array_module(act)
    n = c.shape[-1]
    i, f, g, o = act[:, :n], act[:, n:2 * n], act[:, 2 * n:3 * n], act[:, 3 * n:]
    slope_c = tc * tc
    xp.subtract(1, slope_c, out=slope_c)
    grad_c = grad_h * o * slope_c if grad_c is None else grad_c + grad_h * o * slope_c
    xp.multiply(grad_c, g, out=d[:, :n])
    xp.multiply(grad_c, c, out=d[:, n:2 * n])
    xp.multiply(grad_c, i, out=d[:, 2 * n:3 * n])
    xp.multiply(grad_h, tc, out=d[:, 3 * n:])
    # d(pre-activation) = d(activation) * activation': s(1 - s) for the sigmoid gates,
    # 1 - t^2 for the tanh cell gate.
    slope = 1 - act
    slope *= act
    xp.multiply(g, g, out=slope[:, 2 * n:3 * n])
    xp.subtract(1, slope[:, 2 * n:3 * n], out=slope[:, 2 * n:3 * n])
    d *= slope
    return grad_c * f
