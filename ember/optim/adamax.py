"""Adamax: Adam with the infinity norm of past gradients in place of the second moment."""
from .. import _creation
from ..backends.optimizer_families import adamax_steps
from .optimizer import Optimizer, check_adam_options, mark_updated, step_arrays

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_adam_options(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"exp_avg": _creation.zeros_like(p), "exp_inf": _creation.zeros_like(p)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        adamax(params, grads, states, eps=group["eps"], beta1=beta1, beta2=beta2,
               lr=float(group["lr"]), weight_decay=group["weight_decay"],
               maximize=group["maximize"])


def adamax(params, grads, states, *, eps, beta1, beta2, lr, weight_decay, maximize):
    """PyTorch's single-tensor Adamax, in place, all the group's parameters in one backend
    call (backends/optimizer_families.adamax_steps)."""
    ws, gs, steps = step_arrays(params, grads, states, maximize, weight_decay)
    adamax_steps(ws, gs, [s["exp_avg"]._data for s in states],
                 [s["exp_inf"]._data for s in states], lr=lr, beta1=beta1, beta2=beta2,
                 eps=eps, steps=steps)
    mark_updated(params, states)
