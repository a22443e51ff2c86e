"""Optimizer steps behind named functions: one parameter's update in place, and the same
over all of a group's parameters in one compiled call (the `*_steps` functions).

The compiled kernels (csrc/optimizers.c) take NumPy float32/float64 arrays of one dtype, C
contiguous, and walk them once; everything else (CuPy, float16/bfloat16 parameters, other
layouts, no build, EMBER_KERNELS=numpy) runs the reference below, which rounds at the same
steps, so the two give the same bits.
"""
import math

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
    (buf,), (first,) = _momentum_buffers([w], [buf], momentum)
    _sgd_update(w, g, buf, first, momentum=momentum, dampening=dampening, lr=lr,
                weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
    return buf


def sgd_steps(ws, gs, bufs, *, momentum, dampening, lr, weight_decay, nesterov, maximize):
    """sgd_step over lists of parameters (`bufs`: each one's momentum buffer, None on its
    first step): one compiled call (PyTorch's foreach form), which checks every parameter's
    arrays first and declines, writing nothing, when one cannot take the kernel; then one
    step each. Returns the momentum buffers, new ones made here (all None without
    momentum)."""
    bufs, firsts = _momentum_buffers(ws, bufs, momentum)
    options = dict(momentum=momentum, dampening=dampening, lr=lr, weight_decay=weight_decay,
                   nesterov=nesterov, maximize=maximize)
    if compiled is not None and compiled.sgd_steps(
            ws, gs, None if momentum == 0 else bufs, firsts, momentum, dampening, lr,
            weight_decay, nesterov, maximize):
        return bufs
    for w, g, buf, first in zip(ws, gs, bufs, firsts):
        _sgd_update(w, g, buf, first, **options)
    return bufs


def _momentum_buffers(ws, bufs, momentum):
    """The momentum buffers of the weights `ws` (None without momentum; a new, unfilled one
    where `bufs` has None) and whether each is new."""
    if momentum == 0:
        return [None] * len(ws), [False] * len(ws)
    firsts = [buf is None for buf in bufs]
    return [array_module(w).empty_like(w) if buf is None else buf
            for w, buf in zip(ws, bufs)], firsts


def _sgd_update(w, g, buf, first, *, momentum, dampening, lr, weight_decay, nesterov,
                maximize):
    """One parameter's SGD step in place, `buf` its momentum buffer (None without momentum),
    filled with d when `first`."""
    arrays = (w, g) if buf is None else (w, g, buf)
    if _takes(*arrays):
        compiled.sgd_steps([w], [g], None if buf is None else [buf], [first], momentum,
                           dampening, lr, weight_decay, nesterov, maximize)
        return
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


def lerp_(start, end, weight):
    """start += weight * (end - start) in place, with PyTorch's lerp, whose formula turns at
    weight 0.5 for accuracy (so results agree to the last bit)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def adam_moments(w, g, exp_avg, exp_avg_sq, *, beta1, beta2, lr, weight_decay, decoupled):
    """What Adam, NAdam and RAdam share, in place: weight decay (on w when `decoupled`, else
    added to the gradient), then both moment estimates. Returns the gradient used."""
    if weight_decay != 0:
        if decoupled:
            w *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * w
    lerp_(exp_avg, g, 1 - beta1)
    exp_avg_sq *= beta2
    exp_avg_sq += (1 - beta2) * (g * g)
    return g


def adam_step(w, g, exp_avg, exp_avg_sq, max_exp_avg_sq, *, beta1, beta2, lr, weight_decay,
              eps, step, decoupled, amsgrad):
    """One parameter's Adam/AdamW step in place, PyTorch's single-tensor algorithm: weight
    decay (on w when `decoupled`, else added to g), both moments, the running maximum of the
    second under amsgrad, then w -= lr / (1 - beta1**step) * m / (sqrt(v) /
    sqrt(1 - beta2**step) + eps). `g` is not written."""
    arrays = (w, g, exp_avg, exp_avg_sq) + ((max_exp_avg_sq,) if amsgrad else ())
    if _takes(*arrays):
        compiled.adam_step(w, g, exp_avg, exp_avg_sq, max_exp_avg_sq if amsgrad else None,
                           beta1, beta2, lr, weight_decay, eps, step, decoupled, amsgrad)
        return
    adam_moments(w, g, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr,
                 weight_decay=weight_decay, decoupled=decoupled)
    if amsgrad:
        np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = max_exp_avg_sq ** 0.5
    else:
        denom = exp_avg_sq ** 0.5
    denom /= math.sqrt(1 - beta2 ** step)
    denom += eps
    w -= lr / (1 - beta1 ** step) * (exp_avg / denom)


def adam_steps(ws, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, *, beta1, beta2, lr,
               weight_decay, eps, steps, decoupled, amsgrad):
    """adam_step over lists of parameters, each with its own step count: one compiled call
    (PyTorch's foreach form, without the per-parameter Python), which checks every
    parameter's arrays first and declines, writing nothing, when one cannot take the
    kernel; then one adam_step each."""
    if compiled is not None and compiled.adam_steps(
            ws, gs, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None, beta1, beta2,
            lr, weight_decay, eps, steps, decoupled, amsgrad):
        return
    maxima = max_exp_avg_sqs if amsgrad else [None] * len(ws)
    for w, g, m, v, vmax, step in zip(ws, gs, exp_avgs, exp_avg_sqs, maxima, steps):
        adam_step(w, g, m, v, vmax, beta1=beta1, beta2=beta2, lr=lr,
                  weight_decay=weight_decay, eps=eps, step=step, decoupled=decoupled,
                  amsgrad=amsgrad)


def rmsprop_step(w, g, square_avg, grad_avg, buf, *, lr, alpha, eps, momentum):
    """One parameter's RMSprop step in place, PyTorch's single-tensor algorithm on the
    gradient g (maximize and weight decay already applied): the running square average,
    centered by the running gradient average when `grad_avg` is given, then w -= lr * g /
    (sqrt(avg) + eps), through the momentum buffer `buf` when given. `g` is not written."""
    arrays = (w, g, square_avg) + tuple(a for a in (grad_avg, buf) if a is not None)
    if _takes(*arrays):
        compiled.rmsprop_steps([w], [g], [square_avg], [grad_avg], [buf], lr, alpha, eps,
                               momentum)
        return
    square_avg *= alpha
    square_avg += (1 - alpha) * (g * g)
    if grad_avg is not None:
        lerp_(grad_avg, g, 1 - alpha)
        avg = square_avg - grad_avg * grad_avg
        avg **= 0.5
    else:
        avg = square_avg ** 0.5
    avg += eps
    if buf is not None:
        buf *= momentum
        buf += g / avg
        w -= lr * buf
    else:
        w -= lr * (g / avg)


def rmsprop_steps(ws, gs, square_avgs, grad_avgs, bufs, *, lr, alpha, eps, momentum):
    """rmsprop_step over lists of parameters (`grad_avgs` None uncentered, `bufs` None
    without momentum): one compiled call (PyTorch's foreach form), which checks every
    parameter's arrays first and declines, writing nothing, when one cannot take the kernel;
    then one rmsprop_step each."""
    if compiled is not None and compiled.rmsprop_steps(ws, gs, square_avgs, grad_avgs, bufs,
                                                       lr, alpha, eps, momentum):
        return
    grad_avgs = [None] * len(ws) if grad_avgs is None else grad_avgs
    bufs = [None] * len(ws) if bufs is None else bufs
    for w, g, square_avg, grad_avg, buf in zip(ws, gs, square_avgs, grad_avgs, bufs):
        rmsprop_step(w, g, square_avg, grad_avg, buf, lr=lr, alpha=alpha, eps=eps,
                     momentum=momentum)
