"""ASGD: averaged stochastic gradient descent (Polyak and Juditsky)."""
from .. import _creation
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, check_lr, check_nonneg, new_scalar, param_steps

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"eta": new_scalar(float(group["lr"])), "mu": new_scalar(1),
                "ax": _creation.zeros_like(p)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        asgd(params, grads, states, lambd=group["lambd"], lr=float(group["lr"]), t0=group["t0"],
             alpha=group["alpha"], weight_decay=group["weight_decay"],
             maximize=group["maximize"])


def asgd(params, grads, states, *, lambd, lr, t0, alpha, weight_decay, maximize):
    """PyTorch's single-tensor ASGD on arrays, in place."""
    for w, g, state, step in param_steps(params, grads, states, maximize, weight_decay):
        eta = float(state["eta"]._data)
        w *= 1 - lambd * eta
        w -= eta * g
        ax, mu = state["ax"]._data, float(state["mu"]._data)
        if mu != 1:
            ax += (w - ax) * mu
        else:
            ax[...] = w
        # NOTE: eta and mu live in 0-dim tensors of the scalar dtype (float32 by default):
        # storing them rounds, and the next step reads the rounded values, as in PyTorch.
        with no_grad():
            state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
            state["mu"].fill_(1 / max(1, step - t0))
