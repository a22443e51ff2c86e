"""ember.autograd: backward, grad, grad modes, Function, functional, gradcheck, anomaly."""
from .. import _dtype as dt
from .. import _tensor
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: F401
                        is_inference_mode_enabled, no_grad, set_grad_enabled)
from .graph import run_backward

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "Variable"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _tensor.Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grads, is_grads_batched=False):
    result = []
    for i, out in enumerate(outputs):
        g = grads[i] if grads is not None and i < len(grads) else None
        if g is None:
            if out._requires_grad and out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out.dtype.category < 2:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   "outputs but got " + str(out.dtype).replace("ember",
                                                                              "torch"))
            from .._creation import ones_like
            g = ones_like(out)
        elif not isinstance(g, _tensor.Tensor):
            from .._creation import full_like
            g = full_like(out, g)
        else:
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{_size(g)} and output[{i}] has a shape of {_size(out)}.")
            if g.dtype is not out.dtype and g.dtype.category != out.dtype.category:
                raise RuntimeError(f"For complex Tensors, both grad_output and output are "
                                   "required to have the same dtype.")
        result.append(g)
    return result


def _size(t):
    return "torch.Size([" + ", ".join(map(str, t._data.shape)) + "])"


def _check_roots(outputs):
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate d(tensors)/d(leaf) into each leaf's `.grad` (weighted by grad_tensors)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _check_roots(tensors)
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    _check_roots(outputs)
    grads = _make_grads(outputs, _as_tuple(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                          accumulate=False)
    out = []
    for t, g in zip(inputs, result):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
        out.append(g)
    return tuple(out)


def Variable(data, requires_grad=False, volatile=False):
    """Deprecated: Variables and Tensors merged; this returns a Tensor."""
    t = data if isinstance(data, _tensor.Tensor) else _tensor._wrap(data, dt.get_default_dtype())
    if requires_grad:
        t.requires_grad_(True)
    return t


def set_detect_anomaly(mode, check_nan=True):
    from . import anomaly
    anomaly.enabled = bool(mode)
    anomaly.check_nan = check_nan
    return _AnomalyRestore(mode)


class _AnomalyRestore:
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        from . import anomaly
        anomaly.enabled = False


class detect_anomaly:
    """Context manager: record forward traces and check every gradient for NaN."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        from . import anomaly
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        from . import anomaly
        anomaly.enabled, anomaly.check_nan = self.prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan):
                return fn(*a, **k)
        return wrapper


def is_anomaly_enabled():
    from . import anomaly
    return anomaly.enabled
