"""Adadelta (Zeiler): step sizes from running averages of squared gradients and updates."""
from .. import _creation
from ..backends.optimizer_families import adadelta_steps
from .optimizer import Optimizer, check_lr, check_nonneg, mark_updated, step_arrays

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonneg("epsilon", eps)
        check_nonneg("weight_decay", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"square_avg": _creation.zeros_like(p), "acc_delta": _creation.zeros_like(p)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        adadelta(params, grads, states, lr=float(group["lr"]), rho=group["rho"], eps=group["eps"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"])


def adadelta(params, grads, states, *, lr, rho, eps, weight_decay, maximize):
    """PyTorch's single-tensor Adadelta, in place, all the group's parameters in one backend
    call (backends/optimizer_families.adadelta_steps)."""
    ws, gs, _ = step_arrays(params, grads, states, maximize, weight_decay)
    adadelta_steps(ws, gs, [s["square_avg"]._data for s in states],
                   [s["acc_delta"]._data for s in states], lr=lr, rho=rho, eps=eps)
    mark_updated(params, states)
