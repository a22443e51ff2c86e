"""Adam and AdamW (AdamW = Adam with decoupled weight decay), with amsgrad and maximize."""

from .. import _creation
from ..backends.optimizers import adam_steps
from .optimizer import Optimizer, check_adam_options, mark_updated, step_arrays

__all__ = ["Adam", "AdamW", "adam"]


class AdamFamily(Optimizer):
    """What Adam, NAdam and RAdam share: the two moments in each parameter's state, and
    decoupled_weight_decay's default for an optimizer pickled before the option existed."""

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", False)

    def _new_state(self, p, group):
        return {"exp_avg": _creation.zeros_like(p), "exp_avg_sq": _creation.zeros_like(p)}


class Adam(AdamFamily):
    _sparse_grad_error = ("Adam does not support sparse gradients, please consider SparseAdam "
                          "instead")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_adam_options(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        state = super()._new_state(p, group)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _creation.zeros_like(p)
        return state

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        adam(params, grads, states, amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2,
             lr=float(group["lr"]), weight_decay=group["weight_decay"], eps=group["eps"],
             maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        Optimizer.__setstate__(self, state)
        for group in self.param_groups:
            group.setdefault("decoupled_weight_decay", True)


def adam(params, grads, states, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize,
         decoupled_weight_decay):
    """The Adam kernel on arrays: PyTorch's single-tensor algorithm, one pass per parameter,
    all the group's parameters in one call (backends/optimizers.adam_steps)."""
    ws, gs, steps = step_arrays(params, grads, states, maximize)
    adam_steps(ws, gs, [s["exp_avg"]._data for s in states],
               [s["exp_avg_sq"]._data for s in states],
               [s["max_exp_avg_sq"]._data for s in states] if amsgrad else None,
               beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps,
               steps=steps, decoupled=decoupled_weight_decay, amsgrad=amsgrad)
    mark_updated(params, states)
