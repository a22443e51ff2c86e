"""add_graph's picture of a model: one forward pass, recorded op by op, as a GraphDef.

PyTorch traces with torch.jit; ember watches the pass as it runs instead (ember._tracing
records every op at the registry's door with the stack of modules being run), so each op is
named by its module scope, as PyTorch names them: "Net/Sequential[features]/Conv2d[0]/conv2d".
Parameters and buffers become "prim::GetAttr" nodes in their module's scope, the model's
inputs and outputs "IO Node"s.
"""
from ..._tensor import Tensor
from ..._tracing import Value, flatten, trace
from ._tbx import tbx

_proto = tbx.proto
NodeDef = _proto.node_def_pb2.NodeDef
AttrValue = _proto.attr_value_pb2.AttrValue
TensorShapeProto = _proto.tensor_shape_pb2.TensorShapeProto

# RunMetadata{step_stats{dev_stats{device: "/device:CPU:0"}}}, serialised by hand: that is all
# PyTorch records, and tensorboardX ships no step-stats protobuf classes.
RUN_METADATA = b"\n\x11\n\x0f\n\r/device:CPU:0"

_MAX_ATTR = 80  # characters of one op argument shown in a node's "attr" text


def _short(v):
    text = repr(v) if not isinstance(v, Tensor) else f"tensor{list(v.shape)}"
    return text if len(text) <= _MAX_ATTR else text[:_MAX_ATTR - 3] + "..."


def _node(name, op, inputs=(), shape=None, attr=""):
    attrs = {"attr": AttrValue(s=attr.encode("utf-8"))}
    if shape is not None:
        dims = [TensorShapeProto.Dim(size=int(n)) for n in shape]
        attrs["_output_shapes"] = AttrValue(
            list=AttrValue.ListValue(shape=[TensorShapeProto(dim=dims)]))
    return NodeDef(name=name, op=op, input=list(inputs), attr=attrs)


class _GraphBuilder:
    """The NodeDefs of one Trace, each op named by its module scope."""

    def __init__(self, model):
        self.root = type(model).__name__
        self.scopes = {}   # id(module) -> scope name
        paths = {"": self.root}
        for path, m in model.named_modules():
            if path:
                parent, _, last = path.rpartition(".")
                paths[path] = f"{paths[parent]}/{type(m).__name__}[{last}]"
            self.scopes.setdefault(id(m), paths[path])
        self.names = {}    # id(Value) -> the node that produced it
        self.taken = {}    # node name -> times used
        self.nodes = []

    def scope(self, modules):
        scope = self.root
        for m in modules:
            scope = self.scopes.get(id(m)) or f"{scope}/{type(m).__name__}"
        return scope

    def add(self, name, op, inputs=(), shape=None, attr=""):
        n = self.taken.get(name, 0)
        self.taken[name] = n + 1
        if n:
            name = f"{name}.{n}"
        self.nodes.append(_node(name, op, inputs, shape, attr))
        return name

    def source(self, value):
        """The node that made `value`: an op's or an input's, else a new parameter or
        constant node (made at first use, in the scope of that use)."""
        name = self.names.get(id(value))
        if name is None:
            shape = value.tensor.shape
            if value.owner is not None:
                module, attr = value.owner
                name = self.add(f"{self.scope((module,))}/{attr}", "prim::GetAttr", (), shape,
                                f"{{ name :  {attr} }}")
            else:
                name = self.add(f"{self.scope(value.modules)}/constant", "prim::Constant",
                                (), shape)
            self.names[id(value)] = name
        return name

    def build(self, trace):
        for i, value in enumerate(trace.inputs):
            name = f"input/input.{i + 1}"
            self.taken[name] = 1
            self.nodes.append(_node(name, "IO Node", (), value.tensor.shape))
            self.names[id(value)] = name
        for call in trace.calls:
            sources, args = [], []
            for x in call.inputs:
                values = [v for v in flatten(x) if isinstance(v, Value)]
                if values:
                    sources += [self.source(v) for v in values]
                elif x is not None:
                    args.append(_short(x))   # Python scalars go into the node's text
            args += [f"{k} : {_short(v)}" for k, v in call.params.items()]
            attr = "{ " + ", ".join(args) + " }" if args else "{}"
            name = self.add(f"{self.scope(call.modules)}/{call.name}", f"aten::{call.name}",
                            sources, call.outputs[0].tensor.shape, attr)
            for value in call.outputs:   # every output of a multi-output op: its one node
                self.names[id(value)] = name
        for i, value in enumerate(trace.outputs):
            self.nodes.append(_node(f"output/output.{i + 1}", "IO Node", [self.source(value)],
                                    value.tensor.shape))
        return self.nodes


def _as_args(input_to_model):
    if input_to_model is None:
        return ()
    if isinstance(input_to_model, (tuple, list)):
        return tuple(input_to_model)
    return (input_to_model,)


def graph(model, input_to_model=None, verbose=False):
    """(GraphDef, serialised RunMetadata) of one forward pass of `model`, run in eval mode
    (as PyTorch traces it) and put back in its training mode afterwards."""
    args = _as_args(input_to_model)
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        recorded = trace(model, args)
    finally:
        for m, mode in modes:
            m.training = mode
    nodes = _GraphBuilder(model).build(recorded)
    if verbose:
        for n in nodes:
            print(f"{n.name} = {n.op}({', '.join(n.input)})")
    graph_def = _proto.graph_pb2.GraphDef(
        node=nodes, versions=_proto.versions_pb2.VersionDef(producer=22))
    return graph_def, RUN_METADATA
