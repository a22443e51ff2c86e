"""add_graph's picture of a model: one forward pass, recorded op by op, as a GraphDef.

PyTorch traces with torch.jit; ember watches the pass as it runs instead. An instrument at
the op registry's door sees every op with its inputs and result, and global module hooks
keep the stack of modules being run, so each op is named by its module scope, as PyTorch
names them: "Net/Sequential[features]/Conv2d[0]/conv2d". Parameters and buffers become
"prim::GetAttr" nodes in their module's scope, the model's inputs and outputs "IO Node"s.
"""
from ..._tensor import Tensor
from ...autograd.grad_mode import enable_grad
from ...nn.modules import module as _module
from ...ops import registry
from ._tbx import tbx

_proto = tbx.proto
NodeDef = _proto.node_def_pb2.NodeDef
AttrValue = _proto.attr_value_pb2.AttrValue
TensorShapeProto = _proto.tensor_shape_pb2.TensorShapeProto

# RunMetadata{step_stats{dev_stats{device: "/device:CPU:0"}}}, serialised by hand: that is all
# PyTorch records, and tensorboardX ships no step-stats protobuf classes.
RUN_METADATA = b"\n\x11\n\x0f\n\r/device:CPU:0"

_MAX_ATTR = 80  # characters of one op argument shown in a node's "attr" text


def _key(t):
    """Who a tensor is: its producing node and output slot when it has one (so a tensor
    updated in place is found under its newest producer), else the object itself."""
    fn = t.grad_fn
    return (id(fn), t._output_nr) if fn is not None else id(t)


def _flat_tensors(obj):
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _flat_tensors(o)]
    return []


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


class _Tracer:
    """The instrument (called after every op) and the module hooks of one traced pass."""

    def __init__(self, model):
        self.root = type(model).__name__
        self.scopes = {}   # id(module) -> scope name
        self.owners = {}   # id(parameter or buffer) -> (scope, attribute name)
        paths = {"": self.root}
        for path, m in model.named_modules():
            if path:
                parent, _, last = path.rpartition(".")
                paths[path] = f"{paths[parent]}/{type(m).__name__}[{last}]"
            scope = self.scopes.setdefault(id(m), paths[path])
            for table in (m._parameters, m._buffers):
                for attr, t in table.items():
                    if t is not None:
                        self.owners.setdefault(id(t), (scope, attr))
        self.stack = []
        self.names = {}    # tensor key -> the node that produced it
        self.taken = {}    # node name -> times used
        self.alive = []    # NOTE: holds traced tensors so no id (a key) is reused mid-trace
        self.nodes = []

    # --- module scopes
    def scope(self):
        return self.stack[-1] if self.stack else self.root

    def enter(self, module, args):
        scope = self.scopes.get(id(module))
        self.stack.append(scope or f"{self.scope()}/{type(module).__name__}")

    def leave(self, module, args, output):
        if self.stack:
            self.stack.pop()

    # --- nodes
    def add(self, name, op, inputs=(), shape=None, attr=""):
        n = self.taken.get(name, 0)
        self.taken[name] = n + 1
        if n:
            name = f"{name}.{n}"
        self.nodes.append(_node(name, op, inputs, shape, attr))
        return name

    def bind(self, t, name):
        self.names[_key(t)] = name
        self.alive.append(t)

    def source(self, t):
        """The node that made `t`: an op's, a parameter's, an input's, or a new constant."""
        name = self.names.get(_key(t))
        if name is None:
            owner = self.owners.get(id(t))
            if owner is not None:
                scope, attr = owner
                name = self.add(f"{scope}/{attr}", "prim::GetAttr", (), t.shape,
                                f"{{ name :  {attr} }}")
            else:
                name = self.add(f"{self.scope()}/constant", "prim::Constant", (), t.shape)
            self.bind(t, name)
        return name

    def inputs(self, args):
        for i, t in enumerate(_flat_tensors(args)):
            name = f"input/input.{i + 1}"
            self.taken[name] = 1
            self.nodes.append(_node(name, "IO Node", (), t.shape))
            self.bind(t, name)

    def outputs(self, out):
        for i, t in enumerate(_flat_tensors(out)):
            name = f"output/output.{i + 1}"
            self.nodes.append(_node(name, "IO Node", [self.source(t)], t.shape))

    def __call__(self, op, inputs, params, result):
        sources, args = [], []
        for x in inputs:
            tensors = _flat_tensors(x)
            if tensors:
                sources += [self.source(t) for t in tensors]
            elif x is not None:
                args.append(_short(x))   # Python scalars go into the node's text
        args += [f"{k} : {_short(v)}" for k, v in params.items()]
        attr = "{ " + ", ".join(args) + " }" if args else "{}"
        name = self.add(f"{self.scope()}/{op.name}", f"aten::{op.name}", sources,
                        result.shape, attr)
        self.bind(result, name)
        fn = result.grad_fn
        if fn is not None and fn.out_meta is not None:
            for nr in range(1, len(fn.out_meta)):   # the other outputs of a multi-output op
                self.names[(id(fn), nr)] = name


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
    tracer = _Tracer(model)
    tracer.inputs(args)
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    pre = _module.register_module_forward_pre_hook(tracer.enter)
    post = _module.register_module_forward_hook(tracer.leave)
    registry.instruments.append(tracer)
    try:
        with enable_grad():   # producers are found through grad_fn (see _key)
            out = model(*args)
    finally:
        registry.instruments.remove(tracer)
        pre.remove()
        post.remove()
        for m, mode in modes:
            m.training = mode
    tracer.stack.clear()
    tracer.outputs(out)
    if verbose:
        for n in tracer.nodes:
            print(f"{n.name} = {n.op}({', '.join(n.input)})")
    graph_def = _proto.graph_pb2.GraphDef(
        node=tracer.nodes, versions=_proto.versions_pb2.VersionDef(producer=22))
    return graph_def, RUN_METADATA
