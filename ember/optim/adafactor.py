"""Adafactor (Shazeer & Stern, 2018) as PyTorch 2.13 defines it: the second moment of a
matrix gradient is kept factored (one running mean per row and one per column of its last
two dims), the step size is relative to the parameter's RMS, and the update is clipped by
its own RMS."""
import math

from .. import _creation
from .._dtype import finfo
from .._tensor import Tensor
from .optimizer import Optimizer, param_steps

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        if getattr(p._grad, "is_sparse", False):
            raise RuntimeError("Adafactor does not support sparse gradients")
        return super()._init_state(p, group)

    def _new_state(self, p, group):
        g = p._grad
        if g.dim() > 1:
            # the factored second moment: means over the last dim (rows) and the one before
            # it (columns), each keeping its reduced dim as size 1
            return {"row_var": g.new_zeros(g.shape[:-1] + (1,)),
                    "col_var": g.new_zeros(g.shape[:-2] + (1, g.shape[-1]))}
        return {"variance": _creation.zeros_like(g)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        eps1, eps2 = group["eps"]
        adafactor(params, grads, states, lr=float(group["lr"]), beta2_decay=group["beta2_decay"],
                  eps1=eps1, eps2=eps2, d=group["d"], weight_decay=group["weight_decay"],
                  maximize=group["maximize"])


def _rms(a):
    return math.sqrt(float((a.astype("float64") ** 2).sum()) / max(a.size, 1))


def adafactor(params, grads, states, *, lr, beta2_decay, eps1, eps2, d, weight_decay,
              maximize):
    """PyTorch's single-tensor Adafactor on arrays, in place."""
    for p, (w, g, state, t) in zip(params, param_steps(params, grads, states, maximize)):
        tiny = finfo(p.dtype).eps if eps1 is None else eps1
        mix = t ** beta2_decay            # 1 - beta2_t, decaying from 1
        rho = min(lr, 1 / math.sqrt(t))   # relative step size
        alpha = max(eps2, _rms(w)) * rho
        if weight_decay != 0:
            w *= 1 - lr * weight_decay
        if g.ndim > 1:
            row, col = state["row_var"]._data, state["col_var"]._data
            square = g * g
            row += (square.mean(axis=-1, keepdims=True) - row) * mix
            col += (square.mean(axis=-2, keepdims=True) - col) * mix
            estimate = (row @ col) / row.mean(axis=-2, keepdims=True).clip(tiny, None)
        else:
            variance = state["variance"]._data
            variance += (g * g - variance) * mix
            estimate = variance.copy()
        # NOTE: eps1 is squared under the square root, so that it bounds sqrt(V) by eps1
        step = g / estimate.clip(tiny * tiny, None) ** 0.5
        clip = max(1.0, _rms(step) / d)
        w -= (alpha / clip) * step.astype(w.dtype, copy=False)
