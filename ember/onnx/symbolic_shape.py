"""Symbolic functions of views, joins, splits and indexing (see symbolic_table.py).

Shapes in an ember trace are numbers. Where a dynamic axis makes a shape argument differ
between the two traces the exporter runs (see _dynamic.py), the op says here how ONNX gets
the size at run time: Reshape's 0 (copy the input's size) and -1 (infer one size), Expand's 1
(keep the input's size); any other case raises instead of freezing the size.
"""
import numpy as np

from .._tracing import Value, flatten
from .errors import OnnxExporterError
from .symbolic_table import operands, symbolic

_INT_MAX = np.iinfo(np.int64).max
_INT_MIN = np.iinfo(np.int64).min


def _dynamic_error(g, what):
    return OnnxExporterError(
        f"ember.onnx: '{g.call.name}' {what} depends on the size of a dynamic axis in a way "
        "ember cannot express in ONNX; export without dynamic_axes for this model")


def _twin_input_shape(g, position=0):
    return tuple(g.twin.inputs[position].tensor.shape)


def _twin_shapes(g, x):
    """Where the target shape varies between the traces: the twin's target and x's shape in
    both traces."""
    return list(g.twin_param("shape")), tuple(x.tensor.shape), _twin_input_shape(g)


def _target(g, pieces):
    """A shape input from numbers and run-time sizes (1-D ONNX names)."""
    if all(isinstance(p, (int, np.integer)) for p in pieces):
        return g.ints(pieces, "shape")
    return g.op("Concat", *[g.ints([p], "dim") if isinstance(p, (int, np.integer)) else p
                            for p in pieces], axis=0)


@symbolic("view", "reshape", "_reshape_alias", "view_copy")
def _view(g, call):
    x, shape = call.inputs[0], list(call.params["shape"])
    if g.varying("shape"):
        other, in_a, in_b = _twin_shapes(g, x)
        if len(shape) != len(other):
            raise _dynamic_error(g, "target shape")
        free = []
        for i, (a, b) in enumerate(zip(shape, other)):
            if a == b:
                continue
            if i < len(in_a) and in_a[i] == a and in_b[i] == b:
                shape[i] = 0                           # Reshape: the input's own size
                continue
            size = g.sizes.size(g, a, b)               # c * (sizes of dynamic axes)
            if size is None:
                free.append(i)
                shape[i] = -1                          # Reshape infers one size
            else:
                shape[i] = size
        if len(free) > 1:
            raise _dynamic_error(g, "target shape")
        return [g.op("Reshape", g.input(x), _target(g, shape))]
    # (allowzero: a real 0 in a static shape is an empty axis, not "copy")
    return [g.op("Reshape", g.input(x), g.ints(shape, "shape"),
                 allowzero=1 if 0 in shape else None)]


@symbolic("expand")
def _expand(g, call):
    x, shape = call.inputs[0], list(call.params["shape"])
    if g.varying("shape"):
        other, in_a, in_b = _twin_shapes(g, x)
        lead = len(shape) - len(in_a)
        for i, (a, b) in enumerate(zip(shape, other)):
            j = i - lead
            if a == b:
                continue
            if j >= 0 and in_a[j] == a and in_b[j] == b:
                shape[i] = 1                           # Expand keeps the input's size
                continue
            size = g.sizes.size(g, a, b)
            if size is None:
                raise _dynamic_error(g, "target shape")
            shape[i] = size
    return [g.op("Expand", g.input(x), _target(g, shape))]


@symbolic("transpose")
def _transpose(g, call):
    x = call.inputs[0]
    perm = list(range(g.rank(x)))
    d0, d1 = call.params["dim0"] % max(len(perm), 1), call.params["dim1"] % max(len(perm), 1)
    if not perm:
        return [g.input(x)]
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return [g.op("Transpose", g.input(x), perm=perm)]


@symbolic("permute")
def _permute(g, call):
    x = call.inputs[0]
    rank = g.rank(x)
    return [g.op("Transpose", g.input(x), perm=[d % rank for d in call.params["dims"]])]


@symbolic("unsqueeze")
def _unsqueeze(g, call):
    x = call.inputs[0]
    dim = call.params["dim"] % (g.rank(x) + 1)
    return [g.op("Unsqueeze", g.input(x), g.ints([dim], "axes"))]


@symbolic("squeeze", "squeeze_dim", "squeeze_dims")
def _squeeze(g, call):
    x = call.inputs[0]
    shape = tuple(x.tensor.shape)
    dims = call.params.get("dims")
    dims = range(len(shape)) if dims is None else ([dims] if isinstance(dims, int) else dims)
    axes = sorted({d % len(shape) for d in dims if shape[d] == 1}) if shape else []
    if g.twin is not None and any(_twin_input_shape(g)[d] != 1 for d in axes):
        raise _dynamic_error(g, "squeezed axis")
    if not axes:
        return [g.op("Identity", g.input(x))]
    return [g.op("Squeeze", g.input(x), g.ints(axes, "axes"))]


def _tensors(call):
    return [v for v in flatten(call.inputs) if isinstance(v, Value)]


@symbolic("cat")
def _cat(g, call):
    return [g.op("Concat", *operands(g, *_tensors(call)), axis=call.params["dim"])]


@symbolic("stack")
def _stack(g, call):
    dim = call.params["dim"] % (g.out_shape().__len__())
    axes = g.ints([dim], "axes")
    parts = [g.op("Unsqueeze", name, axes) for name in operands(g, *_tensors(call))]
    return [g.op("Concat", *parts, axis=dim)]


@symbolic("split", "split_with_sizes")
def _split(g, call):
    sizes = [hi - lo for lo, hi in call.params["bounds"]]
    x = g.input(call.inputs[0])
    if len(sizes) == 1:
        return [g.op("Identity", x)]
    return g.op("Split", x, g.ints(sizes, "split"), axis=call.params["dim"],
                outputs=len(sizes))


@symbolic("unbind")
def _unbind(g, call):
    dim, count = call.params["dim"], call.params["count"]
    x = g.input(call.inputs[0])
    axes = g.ints([dim], "axes")
    if count == 1:
        return [g.op("Squeeze", x, axes)]
    parts = g.op("Split", x, g.ints([1] * count, "split"), axis=dim, outputs=count)
    return [g.op("Squeeze", p, axes) for p in parts]


@symbolic("index_select")
def _index_select(g, call):
    x = call.inputs[0]
    index = call.inputs[1] if len(call.inputs) > 1 else call.params["index"]
    if isinstance(index, Value):
        index, = operands(g, index, dtype=np.dtype(np.int64))
    else:   # (an index array fixed when the op was called: reflection padding's)
        index = g.const(np.asarray(index, dtype=np.int64), "indices")
    return [g.op("Gather", g.input(x), index, axis=call.params["dim"])]


@symbolic("flip")
def _flip(g, call):
    dims = list(call.params["dims"])
    n = len(dims)
    return [g.op("Slice", g.input(call.inputs[0]), g.ints([-1] * n, "starts"),
                 g.ints([_INT_MIN] * n, "ends"), g.ints(dims, "axes"), g.ints([-1] * n))]


@symbolic("repeat")
def _repeat(g, call):
    x = call.inputs[0]
    reps = list(call.params["reps"])
    name = g.input(x)
    extra = len(reps) - g.rank(x)
    if extra > 0:
        name = g.op("Unsqueeze", name, g.ints(range(extra), "axes"))
    return [g.op("Tile", name, g.ints(reps, "repeats"))]


@symbolic("constant_pad_nd")
def _constant_pad(g, call):
    """PyTorch's pad lists (begin, end) pairs from the last axis backwards; ONNX's all the
    begins, then all the ends, from the first axis."""
    x = call.inputs[0]
    pad = list(call.params["pad"])
    rank = g.rank(x)
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        begins[rank - 1 - i] = pad[2 * i]
        ends[rank - 1 - i] = pad[2 * i + 1]
    value = call.params.get("value", 0)
    return [g.op("Pad", g.input(x), g.ints(begins + ends, "pads"),
                 g.input(0 if value is None else value), mode="constant")]


@symbolic("roll")
def _roll(g, call):
    """Each (shift, dim) as the two slices of the axis, swapped; no dims rolls the flat
    tensor."""
    x = call.inputs[0]
    shape = tuple(x.tensor.shape)
    shifts, dims = call.params["shifts"], call.params["dims"]
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    g.check_static(0, range(len(shape)) if not dims else dims, "rolled axes")
    name = g.input(x)
    if not dims:
        name, shape, dims = g.op("Reshape", name, g.ints([-1], "shape")), \
            (int(np.prod(shape)),), [0]
    for shift, dim in zip(shifts, dims):
        n = shape[dim]
        s = shift % n if n else 0
        if s:
            axis = g.ints([dim], "axes")
            tail = g.op("Slice", name, g.ints([n - s], "starts"), g.ints([n], "ends"), axis)
            head = g.op("Slice", name, g.ints([0], "starts"), g.ints([n - s], "ends"), axis)
            name = g.op("Concat", tail, head, axis=dim)
    if not call.params["dims"]:
        name = g.op("Reshape", name, g.ints(x.tensor.shape, "shape"))
    return [name]
