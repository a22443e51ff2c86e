"""Adadelta (Zeiler): step sizes from running averages of squared gradients and updates."""
from .. import _creation
from .optimizer import Optimizer, check_lr, check_nonneg, param_steps

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
    """PyTorch's single-tensor Adadelta on arrays, in place."""
    for w, g, state, _ in param_steps(params, grads, states, maximize, weight_decay):
        square_avg, acc_delta = state["square_avg"]._data, state["acc_delta"]._data
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
