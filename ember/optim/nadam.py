"""NAdam: Adam with Nesterov momentum (Dozat), optionally with decoupled weight decay."""
from .adam import AdamFamily, adam_moments
from .optimizer import check_adam_options, check_nonneg, new_scalar, param_steps

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
    """PyTorch's single-tensor NAdam on arrays, in place."""
    for w, g, state, step in param_steps(params, grads, states, maximize):
        g, exp_avg, exp_avg_sq = adam_moments(
            w, g, state, beta1, beta2, lr, weight_decay, decoupled_weight_decay)
        bias_correction2 = 1 - beta2 ** step
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # NOTE: mu_product is a float32 tensor (unless the default dtype is float64), so the
        # running product is rounded to it each step, as in PyTorch.
        mu_product = state["mu_product"]._data
        mu_product *= mu
        mu_product_value = float(mu_product)
        denom = exp_avg_sq / bias_correction2
        denom **= 0.5
        denom += eps
        w += (-lr * (1.0 - mu) / (1.0 - mu_product_value)) * (g / denom)
        w += ((-lr * mu_next) / (1.0 - mu_product_value * mu_next)) * (exp_avg / denom)
