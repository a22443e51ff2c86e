"""Rprop: resilient backpropagation, per-element step sizes driven by gradient signs."""
from .. import _creation
from ..backends.optimizer_families import rprop_steps
from .optimizer import Optimizer, check_lr, mark_updated, step_arrays

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"prev": _creation.zeros_like(p),
                "step_size": _creation.full_like(p, float(group["lr"]))}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop(params, grads, states, step_size_min=step_size_min, step_size_max=step_size_max,
              etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])


def rprop(params, grads, states, *, step_size_min, step_size_max, etaminus, etaplus,
          maximize):
    """PyTorch's single-tensor Rprop, in place, all the group's parameters in one backend
    call (backends/optimizer_families.rprop_steps)."""
    ws, gs, _ = step_arrays(params, grads, states, maximize)
    rprop_steps(ws, gs, [s["prev"]._data for s in states],
                [s["step_size"]._data for s in states], step_size_min=step_size_min,
                step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus)
    mark_updated(params, states)
