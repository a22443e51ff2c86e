"""ember.func (torch.func): composable function transforms.

vmap is a batching transformation (`batching_rules.BATCHING_RULES`, a table keyed by op name
next to the op registry); grad, vjp, jacrev and hessian run ember's reverse-mode engine on
functions; jvp, jacfwd and linearize get forward-mode derivatives from two reverse passes
(the double-VJP trick). The submodules load on first use, so `import ember` stays light.
"""
import importlib

_HOMES = {
    "vmap": "vmap_transform",
    "grad": "transforms", "grad_and_value": "transforms", "vjp": "transforms",
    "jvp": "transforms", "jacrev": "transforms", "jacfwd": "transforms",
    "hessian": "transforms", "linearize": "transforms",
    "functional_call": "module_state", "stack_module_state": "module_state",
    "replace_all_batch_norm_modules_": "module_state", "debug_unwrap": "batched_tensor",
}

__all__ = sorted(_HOMES)


def __getattr__(name):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ember.func' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOMES))
