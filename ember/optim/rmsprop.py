"""RMSprop (Hinton), with centering, momentum, weight decay and maximize."""
from .. import _creation
from ..backends.optimizers import rmsprop_steps
from .optimizer import Optimizer, check_lr, check_nonneg, mark_updated, step_arrays

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        check_nonneg("epsilon", eps)
        check_nonneg("momentum", momentum)
        check_nonneg("weight_decay", weight_decay)
        check_nonneg("alpha", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        state = {"square_avg": _creation.zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _creation.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _creation.zeros_like(p)
        return state

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        rmsprop(params, grads, states, lr=float(group["lr"]), alpha=group["alpha"],
                eps=group["eps"], weight_decay=group["weight_decay"],
                momentum=group["momentum"], centered=group["centered"],
                maximize=group["maximize"])


def rmsprop(params, grads, states, *, lr, alpha, eps, weight_decay, momentum, centered,
            maximize):
    """PyTorch's single-tensor RMSprop, in place, all the group's parameters in one backend
    call (backends/optimizers.rmsprop_steps)."""
    ws, gs, _ = step_arrays(params, grads, states, maximize, weight_decay)
    rmsprop_steps(ws, gs, [s["square_avg"]._data for s in states],
                  [s["grad_avg"]._data for s in states] if centered else None,
                  [s["momentum_buffer"]._data for s in states] if momentum > 0 else None,
                  lr=lr, alpha=alpha, eps=eps, momentum=momentum)
    mark_updated(params, states)
