"""The update kernels of the optimizers without a compiled kernel: Adagrad, Adadelta, Adamax,
NAdam, RAdam, ASGD, Rprop and Adafactor, one function per family over all of a group's
parameters, plus the array work of Muon (Newton-Schulz) and L-BFGS (the flat gradient).

Why here: an optimizer (ember/optim/) holds options, validation and state; the arithmetic on
arrays belongs to the backend layer, as SGD's, Adam's and RMSprop's does (optimizers.py).
Each function takes lists of arrays (weights, gradients with maximize and coupled weight decay
already applied, state arrays, step counts), updates them in place, and is written on the
array module of its inputs, so one body serves NumPy and CuPy. Every step is PyTorch's
single-tensor algorithm, rounded where PyTorch rounds.
"""
import math

from . import array_module
from .optimizers import adam_moments, lerp_


def adagrad_steps(ws, gs, sums, *, lr, lr_decay, eps, steps):
    """w -= clr * g / (sqrt(sum) + eps) after sum += g * g, with the decayed learning rate
    clr = lr / (1 + (step - 1) * lr_decay)."""
    for w, g, total, step in zip(ws, gs, sums, steps):
        clr = lr / (1 + (step - 1) * lr_decay)
        total += g * g
        std = total ** 0.5
        std += eps
        w -= clr * (g / std)


def adadelta_steps(ws, gs, square_avgs, acc_deltas, *, lr, rho, eps):
    """Zeiler's step: the running averages of squared gradients and of squared updates set
    the step, delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g."""
    for w, g, square_avg, acc_delta in zip(ws, gs, square_avgs, acc_deltas):
        square_avg *= rho
        square_avg += (1 - rho) * (g * g)
        std = square_avg + eps
        std **= 0.5
        delta = acc_delta + eps
        delta **= 0.5
        delta /= std
        delta *= g
        acc_delta *= rho
        acc_delta += (1 - rho) * (delta * delta)
        w -= lr * delta


def adamax_steps(ws, gs, exp_avgs, exp_infs, *, lr, beta1, beta2, eps, steps):
    """Adam's first moment, the infinity norm max(beta2 * u, |g| + eps) for the second, then
    w -= lr / (1 - beta1**step) * m / u."""
    for w, g, exp_avg, exp_inf, step in zip(ws, gs, exp_avgs, exp_infs, steps):
        lerp_(exp_avg, g, 1 - beta1)
        exp_inf *= beta2
        bound = abs(g)
        bound += eps
        exp_inf.clip(bound, None, out=exp_inf)   # (in place: the elementwise maximum)
        clr = lr / (1 - beta1 ** step)
        w -= clr * (exp_avg / exp_inf)


def nadam_steps(ws, gs, exp_avgs, exp_avg_sqs, mu_products, *, beta1, beta2, lr,
                weight_decay, momentum_decay, eps, decoupled, steps):
    """Adam's moments, then Nesterov's look-ahead: the step mixes the gradient and the first
    moment with the momentum schedule mu_t = beta1 (1 - 0.96**(t psi) / 2) and its running
    product (`mu_products`: 0-dim arrays, written)."""
    for w, g, exp_avg, exp_avg_sq, mu_product, step in zip(ws, gs, exp_avgs, exp_avg_sqs,
                                                           mu_products, steps):
        g = adam_moments(w, g, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr,
                         weight_decay=weight_decay, decoupled=decoupled)
        bias_correction2 = 1 - beta2 ** step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # NOTE: mu_product is a float32 array (unless the default dtype is float64), so the
        # running product is rounded to it each step, as in PyTorch.
        mu_product *= mu
        mu_product_value = float(mu_product)
        denom = exp_avg_sq / bias_correction2
        denom **= 0.5
        denom += eps
        w += (-lr * (1.0 - mu) / (1.0 - mu_product_value)) * (g / denom)
        w += ((-lr * mu_next) / (1.0 - mu_product_value * mu_next)) * (exp_avg / denom)


def radam_steps(ws, gs, exp_avgs, exp_avg_sqs, *, beta1, beta2, lr, weight_decay, eps,
                decoupled, steps):
    """Adam's moments, then the bias-corrected first moment as the step, scaled by the
    rectified adaptive rate once its variance is tractable."""
    rho_inf = 2 / (1 - beta2) - 1
    for w, g, exp_avg, exp_avg_sq, step in zip(ws, gs, exp_avgs, exp_avg_sqs, steps):
        adam_moments(w, g, exp_avg, exp_avg_sq, beta1=beta1, beta2=beta2, lr=lr,
                     weight_decay=weight_decay, decoupled=decoupled)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / bias_correction1
        update *= lr
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        # The variance of the adaptive rate is tractable only once rho_t exceeds 5; before
        # that the step is plain momentum SGD.
        if rho_t > 5.0:
            adaptive = exp_avg_sq ** 0.5
            adaptive += eps
            update *= bias_correction2 ** 0.5 / adaptive
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf
                       / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        w -= update


def asgd_steps(ws, gs, axs, etas, mus, *, lambd, lr, t0, alpha, steps):
    """w <- w (1 - lambd eta) - eta g, and the running average ax of w from step t0 on.
    `etas` and `mus` are 0-dim arrays, read and then set for the next step."""
    for w, g, ax, eta, mu, step in zip(ws, gs, axs, etas, mus, steps):
        eta_value = float(eta)
        w *= 1 - lambd * eta_value
        w -= eta_value * g
        mu_value = float(mu)
        if mu_value != 1:
            ax += (w - ax) * mu_value
        else:
            ax[...] = w
        # NOTE: eta and mu are arrays of the scalar dtype (float32 by default): storing them
        # rounds, and the next step reads the rounded values, as in PyTorch.
        eta.fill(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill(1 / max(1, step - t0))


def rprop_steps(ws, gs, prevs, step_sizes, *, step_size_min, step_size_max, etaminus,
                etaplus):
    """Per-element step sizes, grown by etaplus while the gradient keeps its sign and shrunk
    by etaminus when it flips, then w -= sign(g) * step_size. `prevs` keep the last sign's
    gradient (written)."""
    for w, g, prev, step_size in zip(ws, gs, prevs, step_sizes):
        xp = array_module(w)
        sign = xp.sign(g * prev)
        # NOTE: applied one after another like PyTorch's masked assignments, so that NaN
        # signs stay NaN (a single three-way where would turn them into 1).
        factor = xp.where(sign > 0, etaplus, sign)
        factor = xp.where(factor < 0, etaminus, factor)
        factor = xp.where(factor == 0, 1, factor).astype(w.dtype, copy=False)
        step_size *= factor
        xp.clip(step_size, step_size_min, step_size_max, out=step_size)
        # After a sign change the gradient is forgotten: no step now, no sign next time.
        g = xp.where(factor == w.dtype.type(etaminus), 0, g).astype(w.dtype, copy=False)
        w -= xp.sign(g) * step_size
        prev[...] = g


def _rms(a):
    """Root mean square of an array, summed in float64."""
    return math.sqrt(float((a.astype("float64") ** 2).sum()) / max(a.size, 1))


def _second_moment(g, row, col, variance, mix, tiny):
    """Adafactor's running second-moment estimate of g, its state updated in place: the
    factored row @ col / mean(row) for a matrix (row and col given), else `variance`."""
    if row is not None:
        square = g * g
        row += (square.mean(axis=-1, keepdims=True) - row) * mix
        col += (square.mean(axis=-2, keepdims=True) - col) * mix
        return (row @ col) / row.mean(axis=-2, keepdims=True).clip(tiny, None)
    variance += (g * g - variance) * mix
    return variance.copy()


def adafactor_steps(ws, gs, row_vars, col_vars, variances, tinys, *, lr, beta2_decay, eps2,
                    d, weight_decay, steps):
    """Adafactor (Shazeer & Stern) as PyTorch defines it: a step relative to the weights' RMS
    (at least eps2), along g / sqrt(second moment) clipped by its own RMS over d. Each
    parameter has either a factored second moment (row_vars, col_vars) or a full one
    (variances), the other entries None; `tinys` are eps1 or the dtype's eps."""
    for w, g, row, col, variance, tiny, t in zip(ws, gs, row_vars, col_vars, variances, tinys,
                                                 steps):
        mix = t ** beta2_decay            # 1 - beta2_t, decaying from 1
        rho = min(lr, 1 / math.sqrt(t))   # relative step size
        alpha = max(eps2, _rms(w)) * rho
        if weight_decay != 0:
            w *= 1 - lr * weight_decay
        estimate = _second_moment(g, row, col, variance, mix, tiny)
        # NOTE: eps1 is squared under the square root, so that it bounds sqrt(V) by eps1
        step = g / estimate.clip(tiny * tiny, None) ** 0.5
        clip = max(1.0, _rms(step) / d)
        w -= (alpha / clip) * step.astype(w.dtype, copy=False)


def newton_schulz(g, a, b, c, steps, eps):
    """k Newton-Schulz iterations X <- aX + (bA + cA^2)X, A = XX^T, from X = G/|G| in
    bfloat16, on a 2-D array: an approximate U V^T of G = U S V^T (singular values land near
    0.5-1.5), as a C-contiguous bfloat16 array.

    NOTE: each bfloat16 product is PyTorch's: sums of float32 products, `beta * M + alpha *
    A @ B` formed in float32 and rounded to bfloat16 once (not after the product too)."""
    import ml_dtypes   # (deferred: its import takes 0.7 s, which `import ember` skips)

    xp = array_module(g)
    f32, bf16 = xp.float32, ml_dtypes.bfloat16

    def rounded(v):   # float32 values to the nearest bfloat16, kept as float32
        return v.astype(bf16).astype(f32)

    tall = g.shape[0] > g.shape[1]
    x = rounded(g.astype(f32))
    if tall:   # iterate on the wide side: the Gram matrix is the smaller one
        x = x.T
    norm = rounded(xp.sqrt(xp.sum(x * x, dtype=f32)))
    x = rounded(x / max(norm, f32(eps)))
    for _ in range(steps):
        gram = rounded(x @ x.T)
        poly = rounded(f32(b) * gram + f32(c) * (gram @ gram))
        x = rounded(f32(a) * x + poly @ x)
    x = x.T if tall else x
    return xp.ascontiguousarray(x).astype(bf16)


def flat_gradient(weights, grads):
    """The gradients laid end to end in one 1-D array; a None gradient counts as zeros of its
    weight's size and dtype (L-BFGS's view of the parameters as one vector)."""
    xp = array_module(weights[0])
    return xp.concatenate([xp.zeros(w.size, dtype=w.dtype) if g is None else g.reshape(-1)
                           for w, g in zip(weights, grads)])


def lbfgs_direction(flat_grad, old_dirs, old_stps, ro, al, h_diag):
    """L-BFGS's two-loop recursion: -H g for the curvature pairs (y in old_dirs, s in
    old_stps, ro = 1 / y.s) and the initial scaling h_diag; `al` (one slot per pair of the
    history) receives the first loop's coefficients, which PyTorch keeps in the state."""
    q = -flat_grad
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = (old_stps[i] @ q) * ro[i]
        q += float(-al[i]) * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        be_i = (old_dirs[i] @ r) * ro[i]
        r += float(al[i] - be_i) * old_stps[i]
    return r


def scalar_array(value, dtype):
    """`value` (a 0-dim array or an array scalar) as a 0-dim array of `dtype` on its own
    array module."""
    return array_module(value).asarray(value, dtype=dtype)
