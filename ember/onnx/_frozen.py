"""Values the trace would freeze into the graph although they depend on the inputs.

A trace sees only what passes the op registry's door. A tensor the model computes from its
inputs some other way (argmax, nonzero, unique, any/all, a mask or index array carried into
an op's arguments, as `y[y > 0] = 0` carries its mask) reaches the trace as a constant or a
param, and an ONNX graph holding it would give the example's answer for every input. So the
exporter runs the model once more on the example inputs with their values rotated (the same
values, so the same domain, in other places) and compares: a constant tensor or an array
argument that changed raises; a Python number that changed (`.item()`, `float(t)`) is frozen
with a warning, as PyTorch's tracer does.
"""
import warnings

import numpy as np

from .._device import CPU
from .._tensor import Tensor, _wrap
from .._tracing import CONSTANT, map_tensors
from ._builder import host
from ._dynamic import RUNTIME_PARAMS, same, unresolved
from .errors import OnnxExporterError


def rotated_inputs(args, kwargs):
    """(args, kwargs) with every tensor's values moved one place along its flattened order."""
    def rotate(t):
        array = host(t.detach()._data)
        if array.size < 2:
            return t
        moved = np.roll(np.ascontiguousarray(array).reshape(-1), 1).reshape(array.shape)
        return _wrap(moved, t.dtype, CPU).to(t.device)
    return map_tensors((tuple(args), dict(kwargs)), rotate)


def _has_array(value):
    if isinstance(value, (np.ndarray, Tensor)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_array(v) for v in value)
    return False


def _frozen_error(what, name):
    return OnnxExporterError(
        f"ember.onnx: {what} of '{name}' is computed from the model's inputs outside ember's "
        "op registry (argmax, nonzero, unique, any/all, or an index or mask array) or drawn "
        "at random (dropout in training mode: call model.eval() first), so its values would "
        "be frozen into the ONNX graph; ember cannot export this model")


def check(trace, other):
    """Raise (or warn) for the values of `trace` that changed in `other`, the same model
    traced on rotated inputs."""
    if [c.name for c in trace.calls] != [c.name for c in other.calls]:
        warnings.warn("ember.onnx: the model runs other ops for other input values (control "
                      "flow on values); the exported graph follows the example's path",
                      UserWarning, stacklevel=4)
        return
    for call, twin in zip(trace.calls, other.calls):
        for key in call.params:
            value = unresolved(call, key)
            if key in RUNTIME_PARAMS or same(value, unresolved(twin, key)):
                continue
            if _has_array(value):
                raise _frozen_error(f"the argument {key!r}", call.name)
            _warn_number(call.name)
        for value, theirs in zip(call.inputs, twin.inputs):
            if not same(value, theirs):
                _warn_number(call.name)
    mine, theirs = trace.of_kind(CONSTANT), other.of_kind(CONSTANT)
    if len(mine) != len(theirs):
        raise _frozen_error("a tensor argument", "the model")
    for value, twin in zip(mine, theirs):
        a, b = host(value.tensor._data), host(twin.tensor._data)
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            raise _frozen_error("a tensor argument", _reader(trace, value))


def _reader(trace, value):
    for call in trace.calls:
        if any(v is value for v in call.sources()):
            return call.name
    return "the model's output"


def _warn_number(name):
    warnings.warn(f"ember.onnx: a Python number computed from the inputs (.item(), float(t)) "
                  f"is an argument of '{name}'; the exported graph keeps the example's value",
                  UserWarning, stacklevel=5)

