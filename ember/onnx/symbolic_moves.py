"""Ops that only move elements (diagonal, unfold, rot90, take, im2col, the *_scatter ops...):
one Gather at positions worked out by the op itself.

Each of these ops' outputs holds input elements (or zeros) at places that depend only on the
shapes and params. So the exporter runs the op's own forward on index arrays (input k
numbered after inputs 0..k-1, from 1; 0 stands for "zero") and writes the result as a Gather
from [0, every input's elements flattened] at those positions: exactly the op's movement,
with no second implementation of it to drift. The positions are the example's, so input
sizes that follow a dynamic axis are refused.
"""
import numpy as np

from .._tracing import Value
from .errors import OnnxExporterError
from .symbolic_table import operands, symbolic

_MOVES = ("diagonal", "diagonal_copy", "linalg_diagonal", "unfold", "rot90", "take",
          "narrow_copy", "im2col", "diag_embed", "block_diag", "as_strided", "select_scatter",
          "slice_scatter", "diagonal_scatter", "as_strided_scatter", "index_copy")


@symbolic(*_MOVES)
def _moved(g, call):
    if call.param_refs:
        raise OnnxExporterError(f"ember.onnx: '{call.name}' with an index computed by the "
                                "model is not supported (its positions are read at export)")
    tensors = [(i, x) for i, x in enumerate(call.inputs) if isinstance(x, Value)]
    arrays, start = list(call.inputs), 1
    for position, (i, x) in enumerate(tensors):
        g.check_static(i, range(g.rank(x)), "shape (the moved positions are the example's)")
        size = int(np.prod(x.tensor.shape))
        arrays[i] = np.arange(start, start + size, dtype=np.int64).reshape(x.tensor.shape)
        start += size
    params = {k: (np.dtype(np.int64) if k == "dtype" else v) for k, v in call.params.items()}
    positions = np.asarray(call.op.forward(*arrays, **params))
    if positions.dtype.kind not in "iu":
        raise OnnxExporterError(f"ember.onnx: '{call.name}' does not only move elements")
    dtype = g.out_dtype()
    flat = [g.const(np.zeros(1, dtype), "zero")]
    for _, x in tensors:
        flat.append(g.op("Reshape", operands(g, x, dtype=dtype)[0], g.ints([-1], "shape")))
    source = g.op("Concat", *flat, axis=0)
    return [g.op("Gather", source, g.const(np.ascontiguousarray(positions), "positions"),
                 axis=0)]


@symbolic("fill", "fill_scalar", "zero")
def _fill(g, call):
    """The input's shape filled with one value (at run time: the shape may be dynamic)."""
    a = call.inputs[0]
    value = 0 if call.name == "zero" else call.inputs[1] if len(call.inputs) > 1 \
        else call.params["value"]
    name, = operands(g, value)
    return [g.op("Expand", name, g.op("Shape", g.input(a)))]


@symbolic("index_fill")
def _index_fill(g, call):
    """a with the entries at `index` along `dim` set to value: Where over a static mask."""
    a, value = call.inputs[:2]
    p = call.params
    if call.param_refs:
        raise OnnxExporterError("ember.onnx: index_fill with an index computed by the model "
                                "is not supported")
    shape = tuple(a.tensor.shape)
    g.check_static(0, [p["dim"] % len(shape)], "filled axis")
    line = np.zeros(shape[p["dim"]], dtype=bool)
    line[np.asarray(p["index"])] = True
    mask = line.reshape([-1] + [1] * (len(shape) - 1 - p["dim"] % len(shape)))
    a_name, value_name = operands(g, a, value)
    return [g.op("Where", g.const(mask, "mask"), value_name, a_name)]


@symbolic("masked_select")
def _masked_select(g, call):
    a = call.inputs[0]
    mask = g.param("mask", np.dtype(np.bool_))
    a_name, = operands(g, a)
    full = g.op("Where", mask, a_name, a_name)   # (a broadcast to the common shape)
    mask = g.op("Expand", mask, g.op("Shape", full))
    return [g.op("GatherND", full, g.op("Transpose", g.op("NonZero", mask), perm=[1, 0]))]
