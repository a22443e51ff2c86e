"""Adamax: Adam with the infinity norm of past gradients in place of the second moment."""
from .. import _creation
from ..backends.optimizers import lerp_
from .optimizer import Optimizer, check_adam_options, param_steps

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
    """PyTorch's single-tensor Adamax on arrays, in place."""
    for w, g, state, step in param_steps(params, grads, states, maximize, weight_decay):
        exp_avg, exp_inf = state["exp_avg"]._data, state["exp_inf"]._data
        lerp_(exp_avg, g, 1 - beta1)
        exp_inf *= beta2
        bound = abs(g)
        bound += eps
        exp_inf.clip(bound, None, out=exp_inf)   # (in place: the elementwise maximum)
        clr = lr / (1 - beta1 ** step)
        w -= clr * (exp_avg / exp_inf)
