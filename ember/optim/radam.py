"""RAdam: Adam with a rectified adaptive learning rate (Liu et al.)."""
from .adam import AdamFamily, adam_moments
from .optimizer import check_adam_options, param_steps

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
    """PyTorch's single-tensor RAdam on arrays, in place."""
    rho_inf = 2 / (1 - beta2) - 1
    for w, g, state, step in param_steps(params, grads, states, maximize):
        _, exp_avg, exp_avg_sq = adam_moments(
            w, g, state, beta1, beta2, lr, weight_decay, decoupled_weight_decay)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        update = exp_avg / bias_correction1
        update *= lr
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        # The variance of the adaptive rate is tractable only once rho_t exceeds 5; before
        # that the step is plain momentum SGD.
        if rho_t > 5.0:
            adaptive = exp_avg_sq ** 0.5
            adaptive += eps
            update *= bias_correction2 ** 0.5 / adaptive
            update *= ((rho_t - 4) * (rho_t - 2) * rho_inf
                       / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        w -= update
