"""NAdam: Adam with Nesterov momentum (Dozat), optionally with decoupled weight decay."""
from ..backends.optimizer_families import nadam_steps
from .adam import AdamFamily
from .optimizer import check_adam_options, check_nonneg, mark_updated, new_scalar, step_arrays

__all__ = ["NAdam", "nadam"]


class NAdam(AdamFamily):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_adam_options(lr, eps, betas, weight_decay)
        check_nonneg("momentum_decay", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"mu_product": new_scalar(1), **super()._new_state(p, group)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        nadam(params, grads, states, beta1=beta1, beta2=beta2, lr=float(group["lr"]),
              weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
              eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"])


def nadam(params, grads, states, *, beta1, beta2, lr, weight_decay, momentum_decay, eps,
          decoupled_weight_decay, maximize):
    """PyTorch's single-tensor NAdam, in place, all the group's parameters in one backend
    call (backends/optimizer_families.nadam_steps)."""
    ws, gs, steps = step_arrays(params, grads, states, maximize)
    nadam_steps(ws, gs, [s["exp_avg"]._data for s in states],
                [s["exp_avg_sq"]._data for s in states],
                [s["mu_product"]._data for s in states], beta1=beta1, beta2=beta2, lr=lr,
                weight_decay=weight_decay, momentum_decay=momentum_decay, eps=eps,
                decoupled=decoupled_weight_decay, steps=steps)
    mark_updated(params, states)
