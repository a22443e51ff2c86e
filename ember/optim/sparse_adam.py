"""SparseAdam: Adam that updates only the entries a sparse gradient touches (the moments
and the parameter rows elsewhere are left as they are; PyTorch's "lazy" Adam)."""
import math

from .. import _creation
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, check_betas

__all__ = ["SparseAdam", "sparse_adam"]


class SparseAdam(Optimizer):
    _sparse_grad_error = None

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [i for group in self.param_groups
                          for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does "
                             "not support complex parameters")

    def step(self, closure=None):
        def update():
            for group in self.param_groups:
                params, grads, states = [], [], []
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    if not p._grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, "
                                           "please consider Adam instead")
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = _creation.zeros_like(p)
                        state["exp_avg_sq"] = _creation.zeros_like(p)
                    state["step"] += 1
                    params.append(p)
                    grads.append(p._grad)
                    states.append(state)
                beta1, beta2 = group["betas"]
                sparse_adam(params, grads, states, lr=float(group["lr"]), beta1=beta1,
                            beta2=beta2, eps=group["eps"], maximize=group["maximize"])
        return self._run_step(closure, update)


def sparse_adam(params, grads, states, *, lr, beta1, beta2, eps, maximize):
    """The kernel: at the coalesced gradient's coordinates, the moments move toward the
    gradient and the parameter takes Adam's bias-corrected step (written by index_put_)."""
    for p, grad, state in zip(params, grads, states):
        c = grad.coalesce()
        g = c._values()
        if g.numel() == 0:
            continue
        if maximize:
            g = -g
        where = tuple(c._indices())
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        with no_grad():
            old_avg, old_sq = exp_avg[where], exp_avg_sq[where]
            # old <- old + (1 - beta) * (new - old), PyTorch's form of b * old + (1 - b) * new
            numer = (g - old_avg) * (1 - beta1) + old_avg
            new_sq = (g * g - old_sq) * (1 - beta2) + old_sq
            denom = new_sq.sqrt() + eps
            exp_avg.index_put_(where, numer)
            exp_avg_sq.index_put_(where, new_sq)
            step = state["step"]
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p.index_put_(where, (numer / denom) * -step_size, accumulate=True)
