"""Rprop: resilient backpropagation, per-element step sizes driven by gradient signs."""
from .. import _creation
from ..backends import array_module
from .optimizer import Optimizer, check_lr, param_steps

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"prev": _creation.zeros_like(p),
                "step_size": _creation.full_like(p, float(group["lr"]))}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop(params, grads, states, step_size_min=step_size_min, step_size_max=step_size_max,
              etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])


def rprop(params, grads, states, *, step_size_min, step_size_max, etaminus, etaplus,
          maximize):
    """PyTorch's single-tensor Rprop on arrays, in place."""
    for w, g, state, _ in param_steps(params, grads, states, maximize):
        xp = array_module(w)
        prev, step_size = state["prev"]._data, state["step_size"]._data
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
