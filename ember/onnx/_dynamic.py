"""dynamic_axes: which sizes of the traced graph must stay symbolic.

An ember trace holds numbers, not symbolic sizes. So the exporter runs the model a second
time with every dynamic axis grown (by 1 for the first axis name, 2 for the second, ...)
and compares the two traces op by op: what stayed equal is static; what changed depends on a
dynamic axis and must be computed at run time. Reshape and Expand targets know how
(symbolic_shape.py); constants of one repeated value whose shape changed (an LSTM's zero
initial state) become ConstantOfShape of sizes read from the inputs; anything else that
changed raises rather than being frozen into the file.
"""
import numpy as np

from .._tensor import Tensor
from .._tracing import CONSTANT, Value, map_tensors
from .errors import OnnxExporterError

# Params that hold run-time state (saved activations), not arguments.
RUNTIME_PARAMS = frozenset({"stash", "saved", "cached"})
# Params whose change the op's symbolic function handles itself.
_HANDLED = {"view": {"shape"}, "reshape": {"shape"}, "_reshape_alias": {"shape"},
            "view_copy": {"shape"}, "expand": {"shape"}}


def grown_inputs(args, kwargs, dynamic_inputs, increments):
    """(args, kwargs) with each dynamic axis of each input grown by its name's increment
    (the new rows repeat the first ones, so the values stay of the same kind)."""
    position = iter(range(1 << 30))

    def grow(t):
        axes = dynamic_inputs.get(next(position))
        if not axes:
            return t
        array = t.detach()._data
        for axis, name in axes.items():
            size = array.shape[axis]
            if size == 0:
                raise OnnxExporterError(f"ember.onnx: the dynamic axis {axis} ('{name}') of an "
                                        "input has size 0 in the example; give a non-empty "
                                        "example")
            index = np.arange(size + increments[name]) % size
            array = np.take(array, index, axis=axis)
        from .._tensor import _wrap
        return _wrap(np.ascontiguousarray(array), t.dtype, t._device)

    return map_tensors((tuple(args), dict(kwargs)), grow)


def unresolved(call, key):
    """Param `key` of `call` without the arrays the trace resolved to traced values (their
    changes are the graph's own, computed at run time)."""
    value, ref = call.params.get(key), call.param_refs.get(key)
    if isinstance(ref, Value):
        return None
    if isinstance(ref, tuple) and isinstance(value, tuple):
        return tuple(None if r is not None else v for v, r in zip(value, ref))
    return value


def same(a, b):
    if isinstance(a, Value) or isinstance(b, Value) or isinstance(a, Tensor):
        return True      # tensors are compared through their own shapes and producers
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and np.array_equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def pair_calls(trace, twin):
    """The second trace's call for each call of the first; raises where the two runs took
    different paths or where an op's arguments changed in a way nobody handles."""
    if [c.name for c in trace.calls] != [c.name for c in twin.calls]:
        raise OnnxExporterError(
            "ember.onnx: the model runs different ops when a dynamic axis changes size "
            "(control flow on a size); export it without dynamic_axes")
    pairs = {}
    for call, other in zip(trace.calls, twin.calls):
        handled = _HANDLED.get(call.name, ())
        changed = [k for k in call.params if k not in RUNTIME_PARAMS and k not in handled
                   and not same(unresolved(call, k), unresolved(other, k))]
        if not same(call.inputs, other.inputs):
            changed.append("a number among its inputs")
        if changed:
            raise OnnxExporterError(
                f"ember.onnx: the argument {changed[0]!r} of '{call.name}' depends on the size "
                "of a dynamic axis, which ember cannot express in ONNX; export without "
                "dynamic_axes for this model")
        pairs[id(call)] = other
    return pairs


def constant_builders(trace, twin, dynamic_inputs):
    """id(constant Value) -> function(g) giving its ONNX name computed at run time, for the
    constants whose shape follows a dynamic axis."""
    mine, theirs = trace.of_kind(CONSTANT), twin.of_kind(CONSTANT)
    if len(mine) != len(theirs):
        raise OnnxExporterError("ember.onnx: the model makes a different number of constants "
                                "when a dynamic axis changes size")
    builders = {}
    for value, other in zip(mine, theirs):
        a, b = value.tensor._data, other.tensor._data
        if a.shape == b.shape:
            if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                raise OnnxExporterError("ember.onnx: a constant tensor's values depend on the "
                                        "size of a dynamic axis; export without dynamic_axes")
            continue
        if a.ndim != b.ndim or a.size == 0 or not (a == a.flat[0]).all():
            raise OnnxExporterError("ember.onnx: a constant tensor's shape depends on the size "
                                    "of a dynamic axis and it is not filled with one value; "
                                    "export without dynamic_axes")
        sources = []
        for i, (m, n) in enumerate(zip(a.shape, b.shape)):
            sources.append(m if m == n else _input_axis(trace, twin, dynamic_inputs, m, n))
        builders[id(value)] = _filled(sources, a.flat[0], a.dtype)
    return builders


def _input_axis(trace, twin, dynamic_inputs, m, n):
    for position, axes in dynamic_inputs.items():
        for axis in axes:
            if trace.inputs[position].tensor.shape[axis] == m and \
                    twin.inputs[position].tensor.shape[axis] == n:
                return (position, axis)
    raise OnnxExporterError("ember.onnx: a constant tensor's size follows a dynamic axis "
                            "without being equal to it; export without dynamic_axes")


def _filled(sources, fill, dtype):
    def build(g):
        dims = []
        for s in sources:
            if isinstance(s, tuple):
                position, axis = s
                shape = g.op("Shape", g.input(g.trace.inputs[position]))
                dims.append(g.op("Gather", shape, g.ints([axis], "axis")))
            else:
                dims.append(g.ints([s], "dim"))
        shape = g.op("Concat", *dims, axis=0)
        value = g.onnx.numpy_helper.from_array(np.asarray([fill], dtype=dtype))
        return g.op("ConstantOfShape", shape, value=value)
    return build


def dim_labels(value, other, fixed, dynamic_inputs, trace, twin, input_dims):
    """The ONNX dims of a graph output: numbers, or names for the sizes that changed between
    the traces (the user's name from dynamic_axes, else the input axis's it equals)."""
    dims = []
    for i, (m, n) in enumerate(zip(value.tensor.shape, other.tensor.shape)):
        if i in fixed:
            dims.append(fixed[i])
        elif m == n:
            dims.append(m)
        else:
            try:
                position, axis = _input_axis(trace, twin, dynamic_inputs, m, n)
                dims.append(input_dims[position][axis])
            except OnnxExporterError:
                dims.append(f"dim_{i}")
    return dims
