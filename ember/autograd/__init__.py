"""ember.autograd: backward, grad, grad modes, Function, functional, gradcheck, anomaly."""
import functools
import importlib
import operator
import warnings

from .. import _creation   # (factories read at call time: ember.compile patches them)
from .. import _tensor
from . import anomaly as _anomaly
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .graph import run_backward
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from . import function, graph  # noqa: F401
from .engine_settings import (DeviceType, enforce_grad_layout_policy,  # noqa: F401
                              handle_torch_function, has_torch_function, is_multithreading_enabled,
                              is_tensor_like, is_view_replay_enabled, kineto_available,
                              set_multithreading_enabled, variable)

__all__ = ["Variable", "Function", "backward", "grad_mode", "grad", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "set_detect_anomaly", "detect_anomaly", "gradcheck", "gradgradcheck", "functional"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _tensor.Tensor):
        return (x,)
    return tuple(x)


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t._data.shape)) + "])"


def _make_grads(outputs, grads):
    """The seed gradient of each output: given (checked, cast) or implicit ones."""
    result = []
    for i, out in enumerate(outputs):
        g = grads[i] if grads is not None and i < len(grads) else None
        if g is not None and not isinstance(g, _tensor.Tensor):
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if g is None:
            if not out._requires_grad:   # (the engine's check of the roots then refuses it)
                result.append(None)
                continue
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   "outputs but got " + str(out.dtype).replace("ember",
                                                                              "torch"))
            g = _creation.ones_like(out)
        else:
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{_size(g)} and output[{i}] has a shape of {_size(out)}.")
            if g.dtype is not out.dtype:
                if g.dtype.is_complex != out.dtype.is_complex:
                    raise RuntimeError("For complex Tensors, both grad_output and output are "
                                       "required to have the same dtype. Mismatch in dtype: "
                                       f"grad_output[{i}] has a dtype of "
                                       f"{str(g.dtype).replace('ember', 'torch')} and "
                                       f"output[{i}] has a dtype of "
                                       f"{str(out.dtype).replace('ember', 'torch')}.")
                g = g.to(out.dtype)
        result.append(g)
    return result


def _check_roots(outputs):
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def _engine_flag(value):
    """retain_graph or create_graph as PyTorch's engine binding reads it, through __index__
    into an unsigned char: a bool, an int in [0, 255] or a one-element integer tensor."""
    if isinstance(value, bool):
        return value
    try:
        number = operator.index(value)
    except TypeError as exc:
        if isinstance(value, _tensor.Tensor):
            raise
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an "
                        "integer") from exc
    if not 0 <= number <= 255:
        raise OverflowError("unsigned byte integer is "
                            f"{'less than minimum' if number < 0 else 'greater than maximum'}")
    return bool(number)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaf) into each leaf's `.grad` (weighted by grad_tensors).

    The checks come in PyTorch's order: the gradients' types and shapes, the two flags, then
    the roots and `inputs` (PyTorch's engine)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if not tensors:
        return
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    retain_graph, create_graph = _engine_flag(retain_graph), _engine_flag(create_graph)
    _check_roots(tensors)
    for t in inputs or ():
        if not t._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if create_graph:
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if outputs:
        _check_roots(outputs)  # PyTorch complains about the outputs first
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grad_outputs = _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if outputs:
        _check_roots(outputs)
        grads = _make_grads(outputs, grad_outputs)
        result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                              accumulate=False)
    else:
        result = [None] * len(inputs)
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            if materialize_grads:
                g = _creation.zeros_like(t)
        elif not create_graph and g._requires_grad:
            g = g.detach()
        out.append(g)
    return tuple(out)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """is_grads_batched: one backward per row of the leading dim of grad_outputs, stacked."""
    from ..ops.shape import stack   # (cycle: ember.autograd loads before the ops)
    n = grad_outputs[0]._data.shape[0]
    rows = []
    for b in range(n):
        rows.append(grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=True,
                         create_graph=create_graph, allow_unused=allow_unused,
                         materialize_grads=materialize_grads))
    return tuple(None if rows[0][i] is None else stack([r[i] for r in rows])
                 for i in range(len(inputs)))


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: Variables and Tensors merged. `Variable(t)` returns a Tensor sharing t's
    data, and every Tensor is an instance of Variable (as in PyTorch)."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, _tensor.Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = _tensor._wrap(data._data, data.dtype, data._device)
        if requires_grad:
            t.requires_grad_(True)
        return t


# ---------------------------------------------------------------------- anomaly mode
class detect_anomaly:
    """Context manager / decorator: record forward traces, report failing backward nodes and
    NaN gradients with the forward line that produced them."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = None
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self:
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off now; as a context manager, restore the old mode after."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev
        return False


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


from . import functional  # noqa: E402
from . import tensor_methods  # noqa: E402,F401  (attaches backward, hooks to Tensor)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401


def __getattr__(name):
    # These submodules load on first use (torch.autograd.profiler after a plain `import torch`).
    if name in ("profiler", "profiler_util", "forward_ad"):
        return importlib.import_module(f"{__name__}.{name}")
    if name == "ProfilerActivity":   # (torch.autograd's is torch.profiler's enum)
        from ..profiler import ProfilerActivity   # (deferred: ember.profiler loads on first use)
        return ProfilerActivity
    raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")
