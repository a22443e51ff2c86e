"""Adafactor (Shazeer & Stern, 2018) as PyTorch 2.13 defines it: the second moment of a
matrix gradient is kept factored (one running mean per row and one per column of its last
two dims), the step size is relative to the parameter's RMS, and the update is clipped by
its own RMS."""
from .. import _creation
from .._dtype import finfo
from .._tensor import Tensor
from ..backends.optimizer_families import adafactor_steps
from .optimizer import Optimizer, mark_updated, step_arrays

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        if getattr(p._grad, "is_sparse", False):
            raise RuntimeError("Adafactor does not support sparse gradients")
        return super()._init_state(p, group)

    def _new_state(self, p, group):
        g = p._grad
        if g.dim() > 1:
            # the factored second moment: means over the last dim (rows) and the one before
            # it (columns), each keeping its reduced dim as size 1
            return {"row_var": g.new_zeros(g.shape[:-1] + (1,)),
                    "col_var": g.new_zeros(g.shape[:-2] + (1, g.shape[-1]))}
        return {"variance": _creation.zeros_like(g)}

    def step(self, closure=None):
        return self._step_groups(closure)

    def _update(self, group, params, grads, states):
        eps1, eps2 = group["eps"]
        adafactor(params, grads, states, lr=float(group["lr"]), beta2_decay=group["beta2_decay"],
                  eps1=eps1, eps2=eps2, d=group["d"], weight_decay=group["weight_decay"],
                  maximize=group["maximize"])


def adafactor(params, grads, states, *, lr, beta2_decay, eps1, eps2, d, weight_decay,
              maximize):
    """PyTorch's single-tensor Adafactor, in place, all the group's parameters in one backend
    call (backends/optimizer_families.adafactor_steps)."""
    ws, gs, steps = step_arrays(params, grads, states, maximize)
    tinys = [finfo(p.dtype).eps if eps1 is None else eps1 for p in params]
    adafactor_steps(ws, gs, *_second_moments(states), tinys, lr=lr, beta2_decay=beta2_decay,
                    eps2=eps2, d=d, weight_decay=weight_decay, steps=steps)
    mark_updated(params, states)


def _second_moments(states):
    """The states' row_var, col_var and variance arrays, as three lists (None where a
    state has not got one: a matrix's second moment is factored, a vector's is not)."""
    return ([s["row_var"]._data if "row_var" in s else None for s in states],
            [s["col_var"]._data if "col_var" in s else None for s in states],
            [s["variance"]._data if "variance" in s else None for s in states])
