"""A whole GRU layer (every step of one direction) behind named functions, forward and
backward.

The compiled kernels (csrc/gru.c) take float32 NumPy arrays and run every step without a trip
through Python, on the thread team (each thread runs every step for a share of the batch
rows), their per-step products on csrc/gemm.c's kernel or BLAS's sgemm, as the LSTM layer's
do (backends/recurrent.py). Everything else (float64, CuPy, no build, EMBER_KERNELS=numpy)
runs the reference below, in array-module code: the NumPy path the kernels are tested
against.

Gate order is PyTorch's (reset r, update z, new n); `acts`, what the backward reads, holds
per step and row [r | z | n | W_hn h + b_hn] (B, 4H).
"""
import numpy as np

from . import array_module
from .._threads import blas_on_one_thread
from .cpu_kernels import compiled, note_fallback
from .recurrent import _blas_sgemm


def _compiled_for(*arrays):
    if compiled is None:
        note_fallback()
        return False
    return all(type(a) is np.ndarray and a.dtype == np.float32 for a in arrays
               if a is not None)


def _sigmoid_(x, xp):
    """x = 1 / (1 + exp(-x)) in place (the kernel's formula, rounding for rounding)."""
    xp.negative(x, out=x)
    xp.exp(x, out=x)
    x += 1
    xp.reciprocal(x, out=x)


def gru_layer(gates_x, h0, w_hh, b_hh, reverse):
    """Every step of one GRU layer and direction: (hs, h_T, acts).

    gates_x: the input projection plus b_ih of every step, (T, B, 3H); h0 (B, H); w_hh (3H, H);
    b_hh (3H,) or None. hs is (T, B, H); `acts` (T, B, 4H) is what `gru_layer_backward`
    reads."""
    xp = array_module(gates_x)
    T = gates_x.shape[0]
    B, n = h0.shape
    acts = xp.empty((T, B, 4 * n), dtype=gates_x.dtype)
    hs = xp.empty((T, B, n), dtype=gates_x.dtype)
    if T and _compiled_for(gates_x, h0, w_hh, b_hh):
        bias = np.zeros(3 * n, np.float32) if b_hh is None else np.ascontiguousarray(b_hh)
        gates_x, h0 = np.ascontiguousarray(gates_x), np.ascontiguousarray(h0)
        w_t = np.ascontiguousarray(w_hh.T)
        sgemm = _blas_sgemm()
        with blas_on_one_thread():   # (sgemm's case: one small GEMM per step, see _threads)
            compiled.gru_layer(sgemm, gates_x, h0, w_t, bias, acts, hs, reverse, T, B, n)
        return hs, hs[0 if reverse else T - 1], acts
    h = h0
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        act, x = acts[t], gates_x[t]
        act[:, :3 * n] = xp.matmul(h, w_hh.T)   # (assigned: out= would be a strided slice)
        if b_hh is not None:
            act[:, :3 * n] += b_hh
        act[:, 3 * n:] = act[:, 2 * n:3 * n]              # W_hn h + b_hn, kept
        act[:, :2 * n] += x[:, :2 * n]
        _sigmoid_(act[:, :2 * n], xp)
        r, z, g = act[:, :n], act[:, n:2 * n], act[:, 2 * n:3 * n]
        xp.multiply(r, act[:, 3 * n:], out=g)
        g += x[:, 2 * n:]
        xp.tanh(g, out=g)
        # h' = n + z (h - n), as PyTorch's CPU cell rounds (h - n) * z + n
        xp.subtract(h, g, out=hs[t])
        hs[t] *= z
        hs[t] += g
        h = hs[t]
    return hs, h, acts


def gru_layer_backward(grad_out, grad_h, h0, w_hh, acts, hs, reverse):
    """The backward of `gru_layer`: (dx, dgh, dh0). dx (T, B, 3H) is the gradient of gates_x;
    dgh (T, B, 3H) that of each step's recurrent product plus b_hh (its r and z blocks are
    dx's; its n block is r times dx's), from which W_hh's and b_hh's gradients are sums over
    the steps. The steps run backwards one at a time (each needs the next one's hidden-state
    gradient)."""
    xp = array_module(grad_out)
    T = acts.shape[0]
    n = h0.shape[1]
    dx = xp.empty((T, h0.shape[0], 3 * n), dtype=acts.dtype)
    dgh = xp.empty_like(dx)
    if T and _compiled_for(grad_out, grad_h, h0, w_hh, acts, hs):
        # (the incoming gradients are often views: a batch_first output, a sliced last step)
        grad_out, grad_h, h0, w_hh = (np.ascontiguousarray(a)
                                      for a in (grad_out, grad_h, h0, w_hh))
        dh = np.empty_like(h0)
        sgemm = _blas_sgemm()
        with blas_on_one_thread():
            compiled.gru_layer_backward(sgemm, grad_out, grad_h, h0, w_hh, acts, hs, dx, dgh,
                                        dh, reverse, T, *h0.shape)
        return dx, dgh, dh
    dh = grad_h
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        first = t == (T - 1 if reverse else 0)
        h_prev = h0 if first else hs[t + 1 if reverse else t - 1]
        act = acts[t]
        r, z, g, hn = (act[:, k * n:(k + 1) * n] for k in range(4))
        dh = dh + grad_out[t]
        da_n = (dh * (1 - z)) * (1 - g * g)
        dx[t, :, :n] = (da_n * hn) * ((1 - r) * r)
        dx[t, :, n:2 * n] = (dh * (h_prev - g)) * ((1 - z) * z)
        dx[t, :, 2 * n:] = da_n
        dgh[t, :, :2 * n] = dx[t, :, :2 * n]
        xp.multiply(da_n, r, out=dgh[t, :, 2 * n:])
        dh = dh * z
        dh += xp.matmul(dgh[t], w_hh)
    return dx, dgh, dh
