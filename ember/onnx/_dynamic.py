"""dynamic_axes: which sizes of the traced graph must stay symbolic.

An ember trace holds numbers, not symbolic sizes. So the exporter runs the model a second
time with every dynamic axis grown (by 1 for the first axis name, 2 for the second, ...)
and compares the two traces op by op: what stayed equal is static; what changed depends on a
dynamic axis and must be computed at run time. Reshape and Expand targets know how
(symbolic_shape.py); constants of one repeated value whose shape changed (an LSTM's zero
initial state) become ConstantOfShape of sizes read from the inputs; anything else that
changed raises rather than being frozen into the file.
"""
from itertools import combinations

import numpy as np

from .._device import CPU
from .._tensor import Tensor, _wrap
from .._tracing import CONSTANT, Value, flatten, map_tensors
from ._builder import host
from .errors import OnnxExporterError

# Params that hold run-time state (saved activations), not arguments.
RUNTIME_PARAMS = frozenset({"stash", "saved", "cached"})
# Params whose change the op's symbolic function handles itself.
_HANDLED = {"view": {"shape"}, "reshape": {"shape"}, "_reshape_alias": {"shape"},
            "view_copy": {"shape"}, "expand": {"shape"}}


def past_one(args, kwargs, dynamic_inputs):
    """(args, kwargs) with the dynamic axes of size 1 grown to 2. A model takes other paths
    for size 1 (an expand that is no copy, a broadcast): traced there, the graph would keep
    them for every size. (PyTorch's exporter specialises such an axis instead.)"""
    tensors = [t for t in flatten((tuple(args), dict(kwargs))) if isinstance(t, Tensor)]
    increments = {}
    for position, axes in dynamic_inputs.items():
        for axis, name in axes.items():
            if position < len(tensors) and tensors[position].shape[axis] == 1:
                increments[name] = 1
    if not increments:
        return tuple(args), dict(kwargs)
    names = {n for axes in dynamic_inputs.values() for n in axes.values()}
    return grown_inputs(args, kwargs, dynamic_inputs,
                        {n: increments.get(n, 0) for n in names})


def grown_inputs(args, kwargs, dynamic_inputs, increments):
    """(args, kwargs) with each dynamic axis of each input grown by its name's increment
    (the new rows repeat the first ones, so the values stay of the same kind)."""
    position = iter(range(1 << 30))

    def grow(t):
        axes = dynamic_inputs.get(next(position))
        if not axes:
            return t
        array = host(t.detach()._data)
        for axis, name in axes.items():
            size = array.shape[axis]
            if size == 0:
                raise OnnxExporterError(f"ember.onnx: the dynamic axis {axis} ('{name}') of an "
                                        "input has size 0 in the example; give a non-empty "
                                        "example")
            index = np.arange(size + increments[name]) % size
            array = np.take(array, index, axis=axis)
        return _wrap(np.ascontiguousarray(array), t.dtype, CPU).to(t.device)

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


class DynamicSizes:
    """The sizes of the dynamic axes in both traces, and the run-time expression of a size
    that changed between them: c times a product of dynamic axes' sizes (T * B for a
    (seq, batch) pair flattened), read from the graph inputs' Shape."""

    def __init__(self, trace, twin, dynamic_inputs):
        self.trace = trace
        self.axes = []          # (position, axis, size in trace, size in twin), one per name
        seen = set()
        for position, axes in dynamic_inputs.items():
            for axis, name in axes.items():
                if name not in seen:
                    seen.add(name)
                    self.axes.append((position, axis, trace.inputs[position].tensor.shape[axis],
                                      twin.inputs[position].tensor.shape[axis]))

    def solve(self, m, n):
        """(c, [(position, axis), ...]) with m = c * prod(sizes in trace) and n the same in
        the twin, fewest axes first; None when no such product exists."""
        for count in range(1, len(self.axes) + 1):
            for subset in combinations(self.axes, count):
                p1 = int(np.prod([s[2] for s in subset]))
                p2 = int(np.prod([s[3] for s in subset]))
                if p1 and m % p1 == 0 and (m // p1) * p2 == n and m // p1 > 0:
                    return m // p1, [(s[0], s[1]) for s in subset]
        return None

    def size(self, g, m, n):
        """The ONNX name of a 1-D int64 tensor holding the size that is m in the trace and n
        in the twin, computed from the inputs; None when no expression is found."""
        found = self.solve(m, n)
        if found is None:
            return None
        c, axes = found
        name = None
        for position, axis in axes:
            shape = g.op("Shape", g.input(self.trace.inputs[position]))
            part = g.op("Gather", shape, g.ints([axis], "axis"))
            name = part if name is None else g.op("Mul", name, part)
        return name if c == 1 else g.op("Mul", name, g.ints([c], "factor"))

    def label(self, m, n):
        """The position and axis whose size this is (c = 1, one axis), or None."""
        found = self.solve(m, n)
        return found[1][0] if found is not None and found[0] == 1 and len(found[1]) == 1 \
            else None


def constant_builders(trace, twin, sizes):
    """id(constant Value) -> function(g) giving its ONNX name computed at run time, for the
    constants whose shape follows a dynamic axis."""
    mine, theirs = trace.of_kind(CONSTANT), twin.of_kind(CONSTANT)
    if len(mine) != len(theirs):
        raise OnnxExporterError("ember.onnx: the model makes a different number of constants "
                                "when a dynamic axis changes size")
    builders = {}
    for value, other in zip(mine, theirs):
        a, b = host(value.tensor._data), host(other.tensor._data)
        if a.shape == b.shape:
            if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                raise OnnxExporterError("ember.onnx: a constant tensor's values depend on the "
                                        "size of a dynamic axis; export without dynamic_axes")
            continue
        if a.ndim != b.ndim or a.size == 0 or not (a == a.flat[0]).all() or \
                any(m != n and sizes.solve(m, n) is None for m, n in zip(a.shape, b.shape)):
            raise OnnxExporterError("ember.onnx: a constant tensor's shape depends on the size "
                                    "of a dynamic axis and it is not filled with one value; "
                                    "export without dynamic_axes")
        builders[id(value)] = _filled(sizes, a.shape, b.shape, a.flat[0], a.dtype)
    return builders


def _filled(sizes, shape, other, fill, dtype):
    def build(g):
        dims = [g.ints([m], "dim") if m == n else sizes.size(g, m, n)
                for m, n in zip(shape, other)]
        value = g.onnx.numpy_helper.from_array(np.asarray([fill], dtype=dtype))
        return g.op("ConstantOfShape", g.op("Concat", *dims, axis=0), value=value)
    return build


def dim_labels(value, other, fixed, sizes, input_dims):
    """The ONNX dims of a graph output: numbers, or names for the sizes that changed between
    the traces (the user's name from dynamic_axes, else the input axis's it equals)."""
    dims = []
    for i, (m, n) in enumerate(zip(value.tensor.shape, other.tensor.shape)):
        if i in fixed:
            dims.append(fixed[i])
        elif m == n:
            dims.append(m)
        else:
            found = sizes.label(m, n)
            dims.append(input_dims[found[0]][found[1]] if found else f"dim_{i}")
    return dims
