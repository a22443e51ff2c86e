"""Symbolic functions of indexing and of writes through an index (see symbolic_table.py).

ember's indexing ops carry their key as a param: ints, slices, None and Ellipsis (basic
indexing), and arrays (advanced). An array that is a traced tensor's (a mask made by `x > 0`)
is found through Call.param_refs and read at run time; any other array is a constant.
"""
import numpy as np

from .._tracing import Value
from .errors import OnnxExporterError
from .symbolic_table import operands, symbolic

_INT_MAX = np.iinfo(np.int64).max


def _is_array(k):
    return isinstance(k, (np.ndarray, list)) or hasattr(k, "__array__")


@symbolic("select", "slice", "index", "index_unsqueeze", "alias")
def _index(g, call):
    """x[key] for keys of ints, slices, None and Ellipsis (one Slice, then Squeeze for the
    ints and Unsqueeze for the Nones), or one index array or mask."""
    x = call.inputs[0]
    key = call.params.get("key", ())
    key = key if isinstance(key, tuple) else (key,)
    if any(_is_array(k) for k in key):
        return [_advanced(g, call, x, key)]
    return [basic_index(g, g.input(x), key, g.rank(x))]


def basic_index(g, name, key, rank):
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if any(k is Ellipsis for k in key):
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (rank - used) + key[at + 1:]
    key = key + (slice(None),) * (rank - sum(1 for k in key if k is not None))
    starts, ends, axes, steps, squeeze, unsqueeze = [], [], [], [], [], []
    dim = out = 0
    for k in key:
        if k is None:
            unsqueeze.append(out)
            out += 1
            continue
        if isinstance(k, (bool, np.bool_)):
            raise OnnxExporterError("ember.onnx: indexing with a bool is not supported")
        if isinstance(k, (int, np.integer)):
            k = int(k)
            starts.append(k)
            ends.append(k + 1 if k != -1 else _INT_MAX)
            axes.append(dim)
            steps.append(1)
            squeeze.append(dim)
        elif k != slice(None):
            step = 1 if k.step is None else k.step
            starts.append(k.start if k.start is not None else (0 if step > 0 else -1))
            ends.append(k.stop if k.stop is not None else
                        (_INT_MAX if step > 0 else np.iinfo(np.int64).min))
            axes.append(dim)
            steps.append(step)
            out += 1
        else:
            out += 1
        dim += 1
    if axes:
        name = g.op("Slice", name, g.ints(starts, "starts"), g.ints(ends, "ends"),
                    g.ints(axes, "axes"), g.ints(steps, "steps"))
    if squeeze:
        name = g.op("Squeeze", name, g.ints(squeeze, "axes"))
    if unsqueeze:
        name = g.op("Unsqueeze", name, g.ints(unsqueeze, "axes"))
    if not axes and not squeeze and not unsqueeze:
        name = g.op("Identity", name)
    return name


def _single_array(call, key, what):
    """(position, array, traced Value or None) of a key with one array and full slices."""
    positions = [i for i, k in enumerate(key) if _is_array(k)]
    rest_full = all((isinstance(k, slice) and k == slice(None)) or k is Ellipsis
                    for i, k in enumerate(key) if i not in positions)
    ellipsis_first = any(k is Ellipsis for k in key[:positions[0]]) if positions else False
    if len(positions) != 1 or not rest_full or ellipsis_first:
        raise OnnxExporterError(f"ember.onnx: {what} with more than one index array, or with "
                                "an index array beside other indices, is not supported")
    refs = call.param_refs.get("key" if "key" in call.params else "adv") or ()
    ref = refs[positions[0]] if positions[0] < len(refs) else None
    return positions[0], np.asarray(key[positions[0]]), ref


def _mask_indices(g, mask_name):
    """NonZero's (rank, n) coordinates as GatherND/ScatterND's (n, rank) indices."""
    return g.op("Transpose", g.op("NonZero", mask_name), perm=[1, 0])


def _advanced(g, call, x, key):
    axis, array, ref = _single_array(call, key, "indexing")
    if array.dtype == np.bool_:
        if axis != 0:
            raise OnnxExporterError("ember.onnx: a boolean mask after other indices is not "
                                    "supported")
        mask = g.input(ref) if ref is not None else g.const(array, "mask")
        return g.op("GatherND", g.input(x), _mask_indices(g, mask))
    index = g.input(ref) if ref is not None else g.const(array.astype(np.int64), "indices")
    if ref is not None and ref.tensor._data.dtype != np.int64:
        index = g.cast(index, np.int64)
    return g.op("Gather", g.input(x), index, axis=axis)


@symbolic("copy_slices", "index_put")
def _put(g, call):
    """out = a; out[basic][adv] = v (or += with accumulate)."""
    a, v = call.inputs[:2]
    p = call.params
    basic = p["basic"] if isinstance(p["basic"], tuple) else (p["basic"],)
    adv = p["adv"]
    reduction = "add" if p.get("accumulate") else None
    a_name, v_name = operands(g, a, v)
    shape = tuple(a.tensor.shape)
    g.check_static(0, range(len(shape)), "target (an indexed assignment)")
    positions = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)[basic]
    refs = call.param_refs.get("adv")
    if adv is not None and refs is not None and any(r is not None for r in refs):
        return [_put_traced(g, call, a_name, v_name, positions, shape, reduction)]
    if adv is not None:
        positions = positions[adv]
    flat = g.op("Reshape", a_name, g.ints([-1], "shape"))
    updates = g.op("Expand", v_name, g.ints(positions.shape, "shape"))
    written = g.op("ScatterElements", flat, g.const(positions.reshape(-1), "positions"),
                   g.op("Reshape", updates, g.ints([-1], "shape")), axis=0,
                   reduction=reduction)
    return [g.op("Reshape", written, g.ints(shape, "shape"))]


def _put_traced(g, call, a_name, v_name, positions, shape, reduction):
    """A write through a traced mask or index (`y[y > 0] = 0`, `y[idx] = v`) into the whole
    tensor: Where for a mask and a broadcast value, else ScatterND at the coordinates."""
    if positions.shape != shape:
        raise OnnxExporterError("ember.onnx: an assignment through a traced index after "
                                "other indices is not supported")
    key = call.params["adv"] if isinstance(call.params["adv"], tuple) else (call.params["adv"],)
    axis, array, ref = _single_array(call, key, "indexed assignment")
    v = call.inputs[1]
    if array.dtype == np.bool_:
        mask = g.input(ref)
        count = int(array.sum())
        v_shape = tuple(v.tensor.shape) if isinstance(v, Value) else ()
        if axis == 0 and array.shape == shape and reduction is None and \
                (len(v_shape) == 0 or v_shape != (count,) or count == 1):
            return g.op("Where", mask, v_name, a_name)
        if axis != 0:
            raise OnnxExporterError("ember.onnx: an assignment through a mask after other "
                                    "indices is not supported")
        return g.op("ScatterND", a_name, _mask_indices(g, mask), v_name, reduction=reduction)
    if axis != 0:
        raise OnnxExporterError("ember.onnx: an assignment through a traced index array on "
                                "an axis other than the first is not supported")
    index = g.cast(g.input(ref), np.int64)
    rows = g.op("Unsqueeze", index, g.ints([-1], "axes"))
    target = list(array.shape) + list(shape[1:])
    updates = g.op("Expand", v_name, g.ints(target, "shape"))
    return g.op("ScatterND", a_name, rows, updates, reduction=reduction)


@symbolic("masked_fill")
def _masked_fill(g, call):
    a, value = call.inputs[:2]
    mask = g.param("mask", np.dtype(np.bool_))
    a, value = operands(g, a, value)
    return [g.op("Where", mask, value, a)]


@symbolic("gather")
def _gather(g, call):
    a = call.inputs[0]
    if g.rank(a) == 0:
        return [g.op("Identity", g.input(a))]
    return [g.op("GatherElements", g.input(a), g.param("index", np.dtype(np.int64)),
                 axis=call.params["dim"])]


_REDUCTIONS = {None: None, "sum": "add", "add": "add", "prod": "mul", "multiply": "mul",
               "amax": "max", "amin": "min"}


@symbolic("scatter", "scatter_add")
def _scatter(g, call):
    """ScatterElements; PyTorch reads only the part of src the index covers."""
    a, src = call.inputs[:2]
    p = call.params
    mode = "sum" if call.name == "scatter_add" else p.get("mode")
    if mode not in _REDUCTIONS:
        raise OnnxExporterError(f"ember.onnx: scatter with reduce='{mode}' is not supported")
    index_shape = np.shape(p["index"])
    a_name, src_name = operands(g, a, src)
    if isinstance(src, Value) and tuple(src.tensor.shape) != index_shape:
        n = len(index_shape)
        src_name = g.op("Slice", src_name, g.ints([0] * n, "starts"),
                        g.ints(index_shape, "ends"), g.ints(range(n), "axes"))
    elif not isinstance(src, Value):
        src_name = g.op("Expand", src_name, g.ints(index_shape, "shape"))
    return [g.op("ScatterElements", a_name, g.param("index", np.dtype(np.int64)), src_name,
                 axis=p["dim"], reduction=_REDUCTIONS[mode])]
