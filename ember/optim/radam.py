"""RAdam: Adam with a rectified adaptive learning rate (Liu et al.)."""
from ..backends.optimizer_families import radam_steps
from .adam import AdamFamily
from .optimizer import check_adam_options, mark_updated, step_arrays

__all__ = ["RAdam", "radam"]


class RAdam(AdamFamily):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_adam_options(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        radam(params, grads, states, beta1=beta1, beta2=beta2, lr=float(group["lr"]),
              weight_decay=group["weight_decay"], eps=group["eps"],
              decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"])


def radam(params, grads, states, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay, maximize):
    """PyTorch's single-tensor RAdam, in place, all the group's parameters in one backend
    call (backends/optimizer_families.radam_steps)."""
    ws, gs, steps = step_arrays(params, grads, states, maximize)
    radam_steps(ws, gs, [s["exp_avg"]._data for s in states],
                [s["exp_avg_sq"]._data for s in states], beta1=beta1, beta2=beta2, lr=lr,
                weight_decay=weight_decay, eps=eps, decoupled=decoupled_weight_decay,
                steps=steps)
    mark_updated(params, states)
