"""ASGD: averaged stochastic gradient descent (Polyak and Juditsky)."""
from .. import _creation
from ..backends.optimizer_families import asgd_steps
from .optimizer import Optimizer, check_lr, check_nonneg, mark_updated, new_scalar, step_arrays

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
    """PyTorch's single-tensor ASGD, in place, all the group's parameters in one backend
    call (backends/optimizer_families.asgd_steps), which also sets each state's eta and mu
    for the next step."""
    ws, gs, steps = step_arrays(params, grads, states, maximize, weight_decay)
    asgd_steps(ws, gs, [s["ax"]._data for s in states], [s["eta"]._data for s in states],
               [s["mu"]._data for s in states], lambd=lambd, lr=lr, t0=t0, alpha=alpha,
               steps=steps)
    mark_updated(params, states)
