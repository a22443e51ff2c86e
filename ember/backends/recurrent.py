"""Recurrent-cell kernels behind named functions: an LSTM step's gate arithmetic and a whole
LSTM layer (every step of one direction), forward and backward.

The compiled kernels (csrc/recurrent.c) take float32 NumPy arrays; the layer kernels run every
step without a trip through Python, on the thread team (each thread runs every step for a
share of the batch rows), their per-step products on csrc/gemm.c's kernel, or on BLAS's sgemm
(SciPy's cython_blas, found on first use) where that kernel does not exist for the CPU.
Everything else (float64, CuPy, no build, EMBER_KERNELS=numpy) runs the reference below, in
array-module code: the NumPy path the kernels are tested against.
"""
import numpy as np

from . import array_module
from .._threads import blas_on_one_thread
from .cpu_kernels import compiled, note_fallback


def _compiled_for(*arrays):
    if compiled is None:
        note_fallback()
        return False
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous
               for a in arrays if a is not None)


def lstm_gates(act, gates_x, c, h_out, c_out, tc_out):
    """One step's gate arithmetic: `act` (B, 4H) holds the recurrent product h W_hh^T, to which
    the input projection plus biases `gates_x` (B, 4H) is added; it becomes the activations
    [i, f, g, o] in place; h', c' and tanh(c') go to the three (B, H) outputs."""
    if _compiled_for(act, gates_x, c, h_out, c_out, tc_out):
        compiled.lstm_gates(act, gates_x, c, h_out, c_out, tc_out, *c.shape)
        return
    xp = array_module(act)
    n = c.shape[-1]
    act += gates_x
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


_sgemm = []


def _blas_sgemm():
    """SciPy's BLAS sgemm as a capsule for the compiled layer kernels (imported on first use:
    scipy.linalg costs import time)."""
    if not _sgemm:
        from scipy.linalg import cython_blas   # (deferred: scipy.linalg costs ~0.2 s)

        from .._threads import blas_loaded   # (cycle: ember._threads imports ember.backends)
        blas_loaded()      # SciPy's OpenBLAS is a library of its own: same thread count
        _sgemm.append(cython_blas.__pyx_capi__["sgemm"])
    return _sgemm[0]


def lstm_layer(gates_x, h0, c0, w_hh, reverse):
    """Every step of one LSTM layer and direction: (hs, h_T, c_T, saved).

    gates_x: the input projection plus biases of every step, (T, B, 4H); hs is (T, B, H).
    `saved` (the activations, cell states and tanh(c) of every step) is what
    `lstm_layer_backward` reads."""
    xp = array_module(gates_x)
    T = gates_x.shape[0]
    B, n = c0.shape
    acts = xp.empty((T, B, 4 * n), dtype=gates_x.dtype)
    hs, cs, tcs = (xp.empty((T, B, n), dtype=gates_x.dtype) for _ in range(3))
    saved = (acts, cs, tcs)
    if T and _compiled_for(acts) and all(
            type(a) is np.ndarray and a.dtype == np.float32 for a in (gates_x, h0, c0, w_hh)):
        gates_x, h0, c0 = (np.ascontiguousarray(a) for a in (gates_x, h0, c0))
        w_t = np.ascontiguousarray(w_hh.T)
        sgemm = _blas_sgemm()
        with blas_on_one_thread():   # (sgemm's case: one small GEMM per step, see _threads)
            compiled.lstm_layer(sgemm, gates_x, h0, c0, w_t, acts, hs, cs, tcs, reverse,
                                T, B, n)
        last = 0 if reverse else T - 1
        return hs, hs[last], cs[last], saved
    h, c = h0, c0
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        act = acts[t]
        xp.matmul(h, w_hh.T, out=act)
        lstm_gates(act, gates_x[t], c, hs[t], cs[t], tcs[t])
        h, c = hs[t], cs[t]
    return hs, h, c, saved


def lstm_layer_backward(grad_out, grad_h, grad_c, c0, w_hh, saved, reverse):
    """The backward of `lstm_layer` up to W_hh: (d, dh0, dc0), d being the gradient of the
    pre-activations of every step (T, B, 4H). The steps run backwards one at a time (each
    needs the next one's hidden-state gradient)."""
    xp = array_module(grad_out)
    acts, cs, tcs = saved
    T = acts.shape[0]
    d = xp.empty_like(acts)
    if T and _compiled_for(c0, w_hh, *saved) and all(
            type(g) is np.ndarray and g.dtype == np.float32 for g in (grad_out, grad_h, grad_c)):
        # (the incoming gradients are often views: a batch_first output, a sliced last step)
        grad_out, grad_h, grad_c = (np.ascontiguousarray(g) for g in (grad_out, grad_h, grad_c))
        dh, dc = xp.empty_like(c0), xp.empty_like(c0)
        sgemm = _blas_sgemm()
        with blas_on_one_thread():
            compiled.lstm_layer_backward(sgemm, grad_out, grad_h, grad_c, c0, w_hh, acts,
                                         cs, tcs, d, dh, dc, reverse, T, *c0.shape)
        return d, dh, dc
    dh, dc = grad_h, grad_c
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        first = t == (T - 1 if reverse else 0)
        c_prev = c0 if first else cs[t + 1 if reverse else t - 1]
        dh = dh + grad_out[t]
        dc = lstm_gate_grads(acts[t], tcs[t], c_prev, dh, dc, d[t])
        dh = xp.matmul(d[t], w_hh)
    return d, dh, dc
