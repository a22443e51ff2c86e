"""Adagrad (Duchi et al.), with learning-rate decay and an initial accumulator value."""
from .. import _creation
from ..autograd.grad_mode import no_grad
from ..backends.optimizer_families import adagrad_steps
from .optimizer import Optimizer, check_lr, check_nonneg, mark_updated, step_arrays

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    _sparse_grad_error = None   # (sparse gradients are taken: see _sparse_adagrad)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        check_nonneg("lr_decay", lr_decay)
        check_nonneg("weight_decay", weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        check_nonneg("epsilon", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # Unlike most optimizers, Adagrad creates its state eagerly (share_memory relies on it).
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _new_state(self, p, group):
        return {"sum": _creation.full_like(p, group["initial_accumulator_value"])}

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        adagrad(params, grads, states, lr=float(group["lr"]), weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])


def adagrad(params, grads, states, *, lr, weight_decay, lr_decay, eps, maximize):
    """PyTorch's single-tensor Adagrad, in place: all the group's parameters in one backend
    call (backends/optimizer_families.adagrad_steps); a group holding a sparse gradient goes
    parameter by parameter, in order, the sparse ones through _sparse_adagrad."""
    if not any(g_t.is_sparse for g_t in grads):
        _dense_adagrad(params, grads, states, lr, weight_decay, lr_decay, eps, maximize)
        return
    for p, g_t, state in zip(params, grads, states):
        if g_t.is_sparse:
            state["step"].add_(1)
            clr = lr / (1 + (float(state["step"]) - 1) * lr_decay)
            _sparse_adagrad(p, g_t, state, clr, weight_decay, eps, maximize)
        else:
            _dense_adagrad([p], [g_t], [state], lr, weight_decay, lr_decay, eps, maximize)


def _dense_adagrad(params, grads, states, lr, weight_decay, lr_decay, eps, maximize):
    ws, gs, steps = step_arrays(params, grads, states, maximize, weight_decay)
    adagrad_steps(ws, gs, [s["sum"]._data for s in states], lr=lr, lr_decay=lr_decay, eps=eps,
                  steps=steps)
    mark_updated(params, states)


def _sparse_adagrad(p, grad, state, clr, weight_decay, eps, maximize):
    """Adagrad on the rows a sparse gradient touches: only those entries of the squared-sum
    and of the parameter change (written by index_put_, which counts the versions)."""
    if weight_decay != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    c = grad.coalesce()
    where = tuple(c._indices())
    g = c._values()
    if maximize:
        g = -g
    total = state["sum"]
    with no_grad():
        total.index_put_(where, g * g, accumulate=True)
        std = total[where].sqrt() + eps
        p.index_put_(where, (g / std) * -clr, accumulate=True)
