"""The ONNX graph under construction: names, nodes and initializers.

The symbolic functions (symbolic_table.py) see only this class: `g.input(x)` gives the ONNX
name of a traced value (or of a Python scalar made a constant), `g.op(...)` adds a node,
`g.const(...)` an initializer.
"""
import numpy as np

from .._tracing import CONSTANT, Value
from .errors import OnnxExporterError


class GraphBuilder:
    """One export's graph: the ONNX name of every traced value, the nodes and initializers
    written so far, and the call being translated (with its twin under dynamic axes)."""

    def __init__(self, onnx, opset, trace):
        self.onnx = onnx
        self.opset = opset
        self.trace = trace
        self.nodes = []
        self.initializers = []
        self.names = {}         # id(Value) -> ONNX name
        self.taken = set()
        self.dynamic = {}       # id(Value of a constant) -> builder of its runtime value
        self.sizes = None       # _dynamic.DynamicSizes when there are dynamic axes
        self.call = None        # the op call being translated (for the dynamic-axes checks)
        self.twin = None        # the same call in the second trace (dynamic axes), or None

    # --- names
    def fresh(self, base):
        base = base.replace("/", "_")
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def bind(self, value, name):
        self.names[id(value)] = name

    def input(self, x, dtype=None):
        """The ONNX name of `x`: a traced Value, or a Python scalar as a constant of numpy
        `dtype` (default: the dtype of the op call's first output)."""
        if isinstance(x, Value):
            name = self.names.get(id(x))
            if name is None:
                if x.kind != CONSTANT:
                    raise OnnxExporterError(
                        f"ember.onnx: the value {x!r} used by '{self.call.name}' was made by "
                        "an op that was not exported (an output the ONNX graph does not "
                        "compute)")
                make = self.dynamic.get(id(x))
                name = make(self) if make is not None else self.const(x.tensor._data, "val")
                self.bind(x, name)
            return name
        if dtype is None:
            dtype = self.call.outputs[0].tensor._data.dtype
        return self.const(np.asarray(x, dtype=dtype), "scalar")

    def param(self, key, dtype=None):
        """The ONNX name of the array param `key`: the traced value it is the array of (see
        Call.param_refs), else a constant of its values (as `dtype` when given)."""
        ref = self.call.param_refs.get(key)
        if isinstance(ref, Value):
            name = self.input(ref)
            if dtype is not None and ref.tensor._data.dtype != dtype:
                name = self.cast(name, dtype)
            return name
        array = host(self.call.params[key])
        return self.const(array if dtype is None else array.astype(dtype), key)

    # --- graph pieces
    def const(self, array, hint="val"):
        name = self.fresh(hint)
        array = np.ascontiguousarray(host(array))
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def ints(self, values, hint="val"):
        return self.const(np.asarray(list(values), dtype=np.int64), hint)

    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Add one node; its output name (or the list of them when outputs > 1). An input
        given as None is an omitted optional input ("")."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        ins = ["" if i is None else i for i in inputs]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op_type, ins, names,
                                                     name=self.fresh(f"node_{op_type}"),
                                                     **attrs))
        return names[0] if outputs == 1 else names

    def cast(self, name, np_dtype):
        return self.op("Cast", name, to=tensor_type(self.onnx, np_dtype))

    # --- what the traced call looked like
    def rank(self, x):
        return x.tensor.dim() if isinstance(x, Value) else 0

    def np_dtype(self, x):
        return x.tensor._data.dtype if isinstance(x, Value) else None

    def out_dtype(self, index=0):
        return self.call.outputs[index].tensor._data.dtype

    def out_shape(self, index=0):
        return tuple(self.call.outputs[index].tensor.shape)

    def varying(self, key):
        """Whether the call's param `key` differs in the second trace (a dynamic axis)."""
        return self.twin is not None and self.twin.params.get(key) != self.call.params.get(key)

    def check_static(self, position, axes, what):
        """Raise when one of `axes` of input `position` changes size with a dynamic axis (the
        op's translation reads those sizes as numbers)."""
        if self.twin is None:
            return
        mine = self.call.inputs[position].tensor.shape
        theirs = self.twin.inputs[position].tensor.shape
        if any(mine[a] != theirs[a] for a in axes):
            raise OnnxExporterError(
                f"ember.onnx: '{self.call.name}' reads the size of its {what}, which follows a "
                "dynamic axis; export without dynamic_axes for this model")

    def twin_param(self, key):
        return self.twin.params.get(key) if self.twin is not None else self.call.params[key]


def host(array):
    """A NumPy array of `array`'s values (a CuPy array is copied to the host)."""
    get = getattr(array, "get", None)
    return get() if get is not None and not isinstance(array, np.ndarray) else np.asarray(array)


def tensor_type(onnx, np_dtype):
    if np_dtype == np.bool_:
        return onnx.TensorProto.BOOL
    if np.dtype(np_dtype).name == "bfloat16":
        return onnx.TensorProto.BFLOAT16
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype))
