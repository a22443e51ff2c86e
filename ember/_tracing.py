"""One run of a callable, recorded op by op at the op registry's door.

`trace(fn, args)` runs `fn` once and returns a `Trace`: the registry op calls in order, each
with its op, its inputs (graph inputs, parameters and buffers named by their module path,
constants, or earlier results, all as `Value`s), its params and its results. Nothing here
knows about a consumer: TensorBoard's add_graph and ember.onnx read the same record.

How a tensor is recognised: by the graph node that produced it and its output slot when it
has one (so a tensor changed in place is found under its newest producer, as autograd sees
it), else by the object itself, else by its array (`detach()` and `.data` share the array of
a value already known). The run happens under enable_grad and floating graph inputs are
replaced by non-leaf copies that require grad, so that every result has a producer node,
even where the model writes into its input in place.
"""
from ._dtype import FLOATING
from ._tensor import Tensor
from .autograd.grad_mode import enable_grad
from .nn.modules import module as _module
from .ops import registry

# Kinds of Value
INPUT, PARAMETER, BUFFER, CONSTANT, RESULT = "input", "parameter", "buffer", "constant", "result"


class Value:
    """One tensor of the traced run. `name`: the module path of a parameter or buffer
    ("layer1.0.conv1.weight"), the position of an input; `call`/`index`: the op call and
    output slot that produced a result; `owner`: (module, attribute) of a parameter or
    buffer; `modules`: the module stack where a constant or parameter was first used."""

    __slots__ = ("kind", "name", "tensor", "call", "index", "owner", "modules")

    def __init__(self, kind, tensor, name=None, call=None, index=0, owner=None, modules=()):
        self.kind = kind
        self.tensor = tensor
        self.name = name
        self.call = call
        self.index = index
        self.owner = owner
        self.modules = modules

    def __repr__(self):
        return f"<Value {self.kind} {self.name or ''} {tuple(self.tensor.shape)}>"


class Call:
    """One op call: `inputs` mirror the op's inputs with every tensor replaced by its Value
    (inside lists and tuples too); Python scalars and None stay as they were. Some ops take
    a tensor's array as a param (masked_fill's mask, an index array inside an indexing key):
    `param_refs` maps such a param to the Value whose array it is (a tuple param to a tuple
    of Values and Nones)."""

    __slots__ = ("op", "inputs", "params", "outputs", "modules", "param_refs")

    def __init__(self, op, inputs, params, outputs, modules, param_refs=None):
        self.op = op
        self.inputs = inputs
        self.params = params
        self.outputs = outputs
        self.modules = modules
        self.param_refs = param_refs or {}

    @property
    def name(self):
        return self.op.name

    def tensor_inputs(self):
        return [v for v in flatten(self.inputs) if isinstance(v, Value)]

    def sources(self):
        """Every Value the call reads: its tensor inputs and the Values of its array
        params."""
        refs = [v for r in self.param_refs.values()
                for v in (r if isinstance(r, tuple) else (r,)) if isinstance(v, Value)]
        return self.tensor_inputs() + refs

    def __repr__(self):
        return f"<Call {self.op.name}>"


class Trace:
    """What one run did: `inputs` (Values of the flattened args, then kwargs), `calls` (in
    order), `values` (every Value, in order of first appearance), `output` (what the
    callable returned) and `outputs` (the Values of its flattened tensors)."""

    def __init__(self):
        self.inputs = []
        self.calls = []
        self.values = []
        self.output = None
        self.outputs = []
        self.unseen = []    # grad_fn names of graph nodes made without passing the door

    def of_kind(self, kind):
        return [v for v in self.values if v.kind == kind]


def flatten(obj):
    """The leaves of nested lists, tuples and dict values, in order."""
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in flatten(o)]
    if isinstance(obj, dict):
        return [leaf for o in obj.values() for leaf in flatten(o)]
    return [obj]


def map_tensors(obj, fn):
    """`obj` with every tensor t inside lists, tuples and dicts replaced by fn(t)."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        mapped = [map_tensors(o, fn) for o in obj]
        return type(obj)(*mapped) if hasattr(obj, "_fields") else type(obj)(mapped)
    if isinstance(obj, dict):
        return {k: map_tensors(o, fn) for k, o in obj.items()}
    return obj


def _key(t):
    fn = t.grad_fn
    return (id(fn), t._output_nr) if fn is not None else id(t)


class _Recorder:
    """The instrument at the registry's door plus the module hooks of one traced run."""

    all_outputs = True   # the registry hands over every result of a multi-output op

    def __init__(self, module):
        self.trace = Trace()
        self.owners = {}    # id(parameter or buffer) -> (kind, path, module, attribute)
        if module is not None:
            for prefix, m in module.named_modules():
                for kind, table in ((PARAMETER, m._parameters), (BUFFER, m._buffers)):
                    for attr, t in table.items():
                        if t is not None and id(t) not in self.owners:
                            path = f"{prefix}.{attr}" if prefix else attr
                            self.owners[id(t)] = (kind, path, m, attr)
        self.stack = []
        self.recorded = None   # the graph node made for the op call now passing the door
        self.known = {}     # tensor key -> Value
        self.arrays = {}    # id(array) -> Value, for aliases made outside the registry
        self.alive = []     # NOTE: keeps traced tensors alive so no id (a key) is reused

    def enter(self, module, args):
        self.stack.append(module)

    def leave(self, module, args, output):
        if self.stack:
            self.stack.pop()

    def bind(self, t, value):
        self.known[_key(t)] = value
        self.arrays[id(t._data)] = value
        self.alive.append(t)
        self.trace.values.append(value)

    def value_of(self, t):
        value = self.known.get(_key(t))
        if value is None:
            value = self.arrays.get(id(t._data))
        if value is None:
            owner = self.owners.get(id(t))
            if owner is not None:
                kind, path, m, attr = owner
                value = Value(kind, t, path, owner=(m, attr), modules=tuple(self.stack))
            else:
                value = Value(CONSTANT, t, modules=tuple(self.stack))
            self.bind(t, value)
        return value

    def resolve(self, obj):
        if isinstance(obj, Tensor):
            return self.value_of(obj)
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.resolve(o) for o in obj) if not hasattr(obj, "_fields") \
                else [self.resolve(o) for o in obj]
        return obj

    def array_refs(self, params):
        refs = {}
        for key, v in params.items():
            if hasattr(v, "shape"):
                value = self.arrays.get(id(v))
                if value is not None:
                    refs[key] = value
            elif isinstance(v, tuple):
                values = tuple(self.arrays.get(id(e)) if hasattr(e, "shape") else None
                               for e in v)
                if any(values):
                    refs[key] = values
        return refs

    def on_record(self, node):
        """Called by the registry for every graph node it makes; a node not followed by its
        op call was made without passing the door (a write through a view rewires the
        graph directly), and the trace cannot see what it computes."""
        if self.recorded is not None:
            self.trace.unseen.append(type(self.recorded).__name__)
        self.recorded = node

    def __call__(self, op, inputs, params, result):
        self.recorded = None
        call = Call(op, [self.resolve(x) for x in inputs], params, [], tuple(self.stack),
                    self.array_refs(params))
        results = result if isinstance(result, tuple) else (result,)
        for i, r in enumerate(results):
            value = Value(RESULT, r, call=call, index=i)
            call.outputs.append(value)
            self.bind(r, value)
        self.trace.calls.append(call)


def _trackable(t):
    """A floating input stands in as a non-leaf copy that requires grad (see the module
    docstring); other inputs as they are."""
    if t.dtype.category >= FLOATING:
        return t.detach().requires_grad_(True).clone()
    return t


def trace(fn, args=(), kwargs=None, module=None):
    """Run `fn(*args, **kwargs)` once and return its Trace. `module` (fn itself when it is
    a Module) names parameters and buffers by their path in it."""
    if module is None and isinstance(fn, _module.Module):
        module = fn
    kwargs = kwargs or {}
    recorder = _Recorder(module)
    with enable_grad():   # results are recognised through their grad_fn (see _key)
        args = map_tensors(tuple(args), _trackable)
        kwargs = map_tensors(dict(kwargs), _trackable)
    for i, t in enumerate(x for x in flatten((args, kwargs)) if isinstance(x, Tensor)):
        value = Value(INPUT, t, name=i)
        recorder.bind(t, value)
        recorder.trace.inputs.append(value)
    pre = _module.register_module_forward_pre_hook(recorder.enter)
    post = _module.register_module_forward_hook(recorder.leave)
    registry.instruments.append(recorder)
    try:
        with enable_grad():
            output = fn(*args, **kwargs)
    finally:
        registry.instruments.remove(recorder)
        pre.remove()
        post.remove()
    recorder.stack.clear()
    recorder.on_record(None)   # (a node left unclaimed at the end was made outside the door)
    recorder.trace.output = output
    recorder.trace.outputs = [recorder.value_of(t) for t in flatten(output)
                              if isinstance(t, Tensor)]
    return recorder.trace
