"""Optimizer: parameter groups, validation, per-parameter state, state_dict and hooks.

Each optimizer is this class plus a functional kernel that updates all parameters of a
group on their arrays directly (no autograd recording, no per-op dispatch), then marks them
and their state changed with autograd.graph.increment_version.
"""
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _creation
from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd import graph as _graph
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import increment_version
from ..autograd.hooks import add_hook
from ..autograd.node import reset_grads
from ..debug.checks import on_step, on_zero_grad
from ..debug.state import state as _guard

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    return add_hook(_global_step_post_hooks, hook)


class Optimizer:
    """Base class: holds `param_groups` (dicts of params + options) and `state`."""

    # PyTorch's refusal of sparse gradients ({} is the class name); None in the optimizers
    # that take them (SGD, Adagrad, SparseAdam).
    _sparse_grad_error = "{} does not support sparse gradients"

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n" + f"Parameter Group {i}"
            for key in sorted(group.keys()):
                if key != "params":
                    text += "\n" + f"    {key}: {group[key]}"
        return text + "\n)"

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not self.defaults.get("differentiable", None) and \
                    not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(map(id, params))):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = set()
        for group in self.param_groups:
            existing.update(map(id, group["params"]))
        if not existing.isdisjoint(set(map(id, params))):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        if _graph.profiler is not None:   # ember.profiler: a range, as in PyTorch
            from ..profiler import record_function   # (deferred: `import ember` skips profiler)
            with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
                return self._zero_grads(set_to_none)
        return self._zero_grads(set_to_none)

    def _zero_grads(self, set_to_none):
        if _guard.enabled:
            on_zero_grad([p for g in self.param_groups for p in g["params"]])
        reset_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ------------------------------------------------------------------ stepping and hooks
    def _run_step(self, closure, update):
        """Call pre-hooks, the closure (with grad enabled), `update()`, post-hooks."""
        if _graph.profiler is not None:   # ember.profiler: the step is a range, as in PyTorch
            from ..profiler import record_function   # (deferred: `import ember` skips profiler)
            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                return self._step_with_hooks(closure, update)
        return self._step_with_hooks(closure, update)

    def _step_with_hooks(self, closure, update):
        for hook in chain(_global_step_pre_hooks.values(),
                          self._optimizer_step_pre_hooks.values()):
            result = hook(self, (), {})
            if result is not None:
                raise RuntimeError("optimizer step pre-hooks must return None in ember")
        loss = None
        if _guard.enabled:
            on_step([p for g in self.param_groups for p in g["params"] if p._grad is not None])
        if closure is not None:
            with enable_grad():
                loss = closure()
        if self._sparse_grad_error is not None:
            self._refuse_sparse_grads()
        with no_grad():
            update()
        for hook in chain(self._optimizer_step_post_hooks.values(),
                          _global_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def _refuse_sparse_grads(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and p._grad.is_sparse:
                    raise RuntimeError(self._sparse_grad_error.format(type(self).__name__))

    def register_step_pre_hook(self, hook):
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        return add_hook(self._optimizer_step_post_hooks, hook)

    def step(self, closure=None):
        raise NotImplementedError

    # ------------------------------------------------------------------ the built-in steps
    # A built-in optimizer's step() is `_step_groups`: for each group, the parameters that have
    # a gradient, their gradients and their states (made on the first step by `_new_state`)
    # go to `_update`, which calls the optimizer's functional kernel with the group's options.
    def _step_groups(self, closure):
        def update():
            for group in self.param_groups:
                params, grads = grads_of(group)
                states = [self._init_state(p, group) for p in params]
                self._update(group, params, grads, states)
        return self._run_step(closure, update)

    def _init_state(self, p, group):
        state = self.state[p]
        if not state:
            state["step"] = new_scalar(0)
            state.update(self._new_state(p, group))
        return state

    def _new_state(self, p, group):
        """The state of `p` besides its step count, in PyTorch's key order."""
        return {}

    # ------------------------------------------------------------------ state dict
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{options..., 'params': [index...]}]}."""
        mapping, start = {}, 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {mapping[id(k)] if isinstance(k, Tensor) else k: v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {old: p for old, p in zip(chain.from_iterable(g["params"]
                                                               for g in saved_groups),
                                           chain.from_iterable(g["params"] for g in groups))}
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: self._cast_state(param, key, value)
                                for key, value in v.items()}
            else:
                state[k] = v
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            new_groups.append(saved)
        self.__setstate__({"state": state, "param_groups": new_groups,
                           "defaults": self.defaults})

    @staticmethod
    def _cast_state(param, key, value):
        if isinstance(value, Tensor):
            if key == "step":
                return value.clone()
            if param.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device).clone()
            return value.to(device=param.device).clone()
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, k, v) for k, v in value.items()}
        return deepcopy(value)


def check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= float(lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def grads_of(group):
    """(params, grads) of a group's parameters that have a gradient."""
    params, grads = [], []
    for p in group["params"]:
        if p._grad is not None:
            params.append(p)
            grads.append(p._grad)
    return params, grads


def step_arrays(params, grads, states, maximize, weight_decay=0):
    """The weights' arrays, the gradients' (negated under `maximize`, plus `weight_decay`
    times the weights) and each state's step count, counted first (a kernel over all the
    parameters at once takes these lists; call mark_updated after it)."""
    ws, gs, steps = [], [], []
    for p, g_t, state in zip(params, grads, states):
        w, g = p._data, g_t._data
        if maximize:
            g = -g
        if weight_decay != 0:
            g = g + weight_decay * w
        # (the count's 0-d array filled with its value + 1, read back: a quarter of the cost
        # of `count += 1` through NumPy's ufunc machinery; the same value, as a count is an
        # integer and the sum in double is exact before rounding to the array's type)
        count = state["step"]._data
        count.fill(count.item() + 1)
        ws.append(w)
        gs.append(g)
        steps.append(count.item())
    return ws, gs, steps


def mark_updated(params, states):
    """The parameters and their states changed in place (autograd.graph.increment_version)."""
    increment_version([t for p, state in zip(params, states) for t in (p, *state.values())])


def scalar_dtype():
    """dtype of 0-dim state scalars ('step', 'mu_product', 'eta', ...): float64 only under a
    float64 default dtype, as in PyTorch."""
    return dt.float64 if dt.get_default_dtype() is dt.float64 else dt.float32


def new_scalar(value):
    """A fresh 0-dim state tensor (PyTorch keeps 'step' as a tensor, not an int)."""
    return _creation.tensor(float(value), dtype=scalar_dtype())


def check_adam_options(lr, eps, betas, weight_decay):
    """The checks of the Adam family's constructors, in PyTorch's order."""
    check_lr(lr)
    check_nonneg("epsilon", eps)
    check_betas(betas)
    check_nonneg("weight_decay", weight_decay)


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def check_nonneg(name, value):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")
