"""From a model and example inputs to an ONNX ModelProto.

The model runs once under ember._tracing; each recorded op call that the outputs depend on
is written as ONNX nodes by its entry in symbolic_table.TABLE; parameters and buffers become
initializers named by their module path ("layer1.0.conv1.weight"), as PyTorch names them.
"""
import inspect
import logging
import warnings

from .. import _tracing
from .._optional import require
from .._tensor import Tensor
from .._tracing import BUFFER, CONSTANT, INPUT, PARAMETER, flatten
from ..version import __version__
from . import _custom, _dynamic, _frozen
from ._builder import GraphBuilder, host, tensor_type
from .errors import OnnxExporterError, UnsupportedOperatorError
from .symbolic_table import TABLE

DEFAULT_OPSET = 20    # PyTorch 2.13's default
BUILD_OPSET = 18      # the table's oldest: reductions take their axes as an input from 18 on
MIN_OPSET = 7         # older targets are reached by ONNX's version converter, as PyTorch does
MAX_OPSET = 23        # PyTorch 2.13's newest

_exporting = False


def is_exporting():
    return _exporting


def load_onnx():
    return require("onnx", "ember.onnx.export")


def check_opset(opset_version):
    if opset_version is None:
        return DEFAULT_OPSET
    if not isinstance(opset_version, int) or isinstance(opset_version, bool):
        raise TypeError(f"opset_version must be an int, not {type(opset_version).__name__}")
    if not MIN_OPSET <= opset_version <= MAX_OPSET:
        raise ValueError(f"ember.onnx exports ONNX opset versions {MIN_OPSET} to {MAX_OPSET}, "
                         f"not {opset_version}")
    return opset_version


def input_names_of(model, args, kwargs, given):
    """The graph input names, in the trace's order (args, then kwargs as given): the user's,
    else the forward argument that holds each tensor (`x`; `args_0` for the first of
    *args; `pair_1` for the second tensor inside the argument `pair`)."""
    forward = model.forward if hasattr(model, "forward") else model
    try:
        params = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    groups = []
    for i, value in enumerate(args):
        p = params[min(i, len(params) - 1)] if params else None
        if p is None or p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD):
            groups.append((f"input_{i}", value))
        elif p.kind == p.VAR_POSITIONAL:
            groups.append((f"{p.name}_{i - params.index(p)}", value))
        else:
            groups.append((p.name, value))
    groups += list(kwargs.items())
    names = []
    for name, value in groups:
        tensors = [t for t in flatten(value) if isinstance(t, Tensor)]
        names += [name] if isinstance(value, Tensor) else \
            [f"{name}_{i}" for i in range(len(tensors))]
    given = list(given or ())
    return given + names[len(given):]


def _dynamic_spec(dynamic_axes, input_names, output_names):
    """{input position: {axis: name}}, {output position: {axis: name}} from PyTorch's
    dynamic_axes ({name: {axis: dim name}} or {name: [axes]})."""
    inputs, outputs = {}, {}
    for key, axes in (dynamic_axes or {}).items():
        if isinstance(axes, dict):
            named = {int(a): str(n) for a, n in axes.items()}
        else:
            named = {int(a): f"{key}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
        if key in input_names:
            inputs[input_names.index(key)] = named
        elif key in output_names:
            outputs[output_names.index(key)] = named
        else:
            warnings.warn(f"Provided key {key} for dynamic axes is not a valid input/output "
                          "name", UserWarning, stacklevel=4)
    return inputs, outputs


def _live_calls(trace):
    """The calls the outputs depend on, in order (the others, such as a LayerNorm's saved
    statistics, need no ONNX node)."""
    needed, live = {id(v) for v in trace.outputs}, []
    for call in reversed(trace.calls):
        if any(id(v) in needed for v in call.outputs):
            live.append(call)
            needed.update(id(v) for v in call.sources())
    return live[::-1]


def _trace(model, args, kwargs):
    """One traced run. The model runs up to three times per export (see _frozen and
    _dynamic): its buffers (a training BatchNorm's running statistics) are put back after
    each run, so exporting leaves the model as it was."""
    global _exporting
    buffers = [b for b in model.buffers() if b is not None] if hasattr(model, "buffers") \
        else []
    saved = [b._data.copy() for b in buffers]
    _exporting = True
    try:
        return _tracing.trace(model, args, kwargs)
    finally:
        _exporting = False
        for b, array in zip(buffers, saved):
            b._data[...] = array


def build_model(model, args, kwargs=None, *, input_names=None, output_names=None,
                opset_version=None, dynamic_axes=None, export_params=True,
                keep_initializers_as_inputs=False):
    """The ONNX ModelProto of one run of `model(*args, **kwargs)`."""
    onnx = load_onnx()
    target = check_opset(opset_version)
    opset = max(target, BUILD_OPSET)
    kwargs = dict(kwargs or {})
    in_names = input_names_of(model, args, kwargs, input_names)
    out_names = list(output_names or ())
    dyn_in, dyn_out = _dynamic_spec(dynamic_axes, in_names, out_names)
    if dyn_in:
        args, kwargs = _dynamic.past_one(args, kwargs, dyn_in)
    trace = _trace(model, args, kwargs)
    if trace.unseen:
        raise OnnxExporterError(
            f"ember.onnx: the graph node {trace.unseen[0]} was made without passing ember's "
            "op registry, so the tracer cannot see what it computes: an in-place write "
            "through a view (such as `x[0] += 1`: write it out of place) or an "
            "autograd.Function (not exportable)")
    if trace.inputs:
        _frozen.check(trace, _trace(model, *_frozen.rotated_inputs(args, kwargs)))
    g = GraphBuilder(onnx, opset, trace)
    twin, pairs = None, {}
    if dyn_in:
        names = [n for axes in dyn_in.values() for n in axes.values()]
        increments = {n: i + 1 for i, n in enumerate(dict.fromkeys(names))}
        twin = _trace(model, *_dynamic.grown_inputs(args, kwargs, dyn_in, increments))
        pairs = _dynamic.pair_calls(trace, twin)
        g.sizes = _dynamic.DynamicSizes(trace, twin, dyn_in)
        g.dynamic = _dynamic.constant_builders(trace, twin, g.sizes)

    graph_inputs, input_dims = _bind_inputs(g, trace, in_names, dyn_in)
    graph_inputs += _bind_weights(g, trace, export_params, keep_initializers_as_inputs)
    g.taken.update(out_names)   # (no node output may take a name the user gave an output)
    for call in _live_calls(trace):
        symbolic = _custom.lookup(call.name, target) or TABLE.get(call.name)
        if symbolic is None:
            raise UnsupportedOperatorError(f"aten::{call.name}", target, None)
        g.call, g.twin = call, pairs.get(id(call))
        for value, name in zip(call.outputs, symbolic(g, call)):
            g.bind(value, name)
    graph_outputs = _outputs(g, trace, out_names, dyn_out, twin, input_dims)

    nodes, initializers = _prune(g.nodes, g.initializers, graph_outputs)
    graph = onnx.helper.make_graph(nodes, "main_graph", graph_inputs, graph_outputs,
                                   initializer=initializers)
    opsets = [onnx.helper.make_opsetid("", opset)]
    proto = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="ember",
                                   producer_version=str(__version__))
    proto.ir_version = max(10, onnx.helper.find_min_ir_version_for(opsets))
    return proto if target == opset else _convert_down(onnx, proto, target)


def _convert_down(onnx, proto, target):
    """The model converted to an opset below the table's, or left at the table's (with
    PyTorch's warning) when ONNX's converter cannot."""
    try:
        converted = onnx.version_converter.convert_version(proto, target)
        onnx.checker.check_model(converted)
        return converted
    except Exception:   # (the converter raises many kinds; PyTorch keeps the model as built)
        logging.getLogger("ember.onnx").warning(
            "Setting ONNX exporter to use operator set version %s because the requested "
            "opset_version %s is a lower version than we have implementations for. Automatic "
            "version conversion was not successful, so the model keeps opset %s.",
            BUILD_OPSET, target, BUILD_OPSET)
        return proto


def _bind_inputs(g, trace, in_names, dyn_in):
    """The graph inputs (named, with the dynamic axes' names as dims) and their dims."""
    graph_inputs, input_dims = [], {}
    for i, value in enumerate(trace.inputs):
        name = in_names[i] if i < len(in_names) else f"input_{i}"
        g.taken.add(name)
        g.bind(value, name)
        dims = list(value.tensor.shape)
        for axis, dim in dyn_in.get(i, {}).items():
            dims[axis] = dim
        input_dims[i] = dims
        graph_inputs.append(_value_info(g.onnx, name, value, dims))
    return graph_inputs, input_dims


def _bind_weights(g, trace, export_params, as_inputs):
    """Parameters and buffers as initializers under their module paths; the graph inputs
    they also become (keep_initializers_as_inputs, or all of them without export_params)."""
    inputs = []
    for value in trace.values:
        if value.kind in (PARAMETER, BUFFER) and id(value) not in g.names:
            g.taken.add(value.name)
            g.bind(value, value.name)
            if export_params:
                g.initializers.append(g.onnx.numpy_helper.from_array(
                    host(value.tensor.detach()._data), value.name))
            if as_inputs or not export_params:
                inputs.append(_value_info(g.onnx, value.name, value, list(value.tensor.shape)))
    return inputs


def _outputs(g, trace, out_names, dyn_out, twin, input_dims):
    """The graph outputs: the user's names (through Identity), symbolic dims where a
    dynamic axis or an input's values size them."""
    value_sized = _value_sized(g.nodes)
    graph_outputs, used = [], set()
    g.call = None
    for i, value in enumerate(trace.outputs):
        if value.kind == INPUT or value.kind == CONSTANT:
            g.call = _OutputStandIn(value)
        source = produced = g.input(value)
        name = out_names[i] if i < len(out_names) else None
        if name is None and (source in used or value.kind != _tracing.RESULT):
            name = g.fresh(f"output_{i}")
        if name is not None and name != source:
            g.taken.add(name)
            g.nodes.append(g.onnx.helper.make_node("Identity", [source], [name],
                                                   name=g.fresh("node_Identity")))
            source = name
        used.add(source)
        fixed = dyn_out.get(i, {})
        if twin is not None:
            dims = _dynamic.dim_labels(value, twin.outputs[i], fixed, g.sizes, input_dims)
        else:
            dims = [fixed.get(a, d) for a, d in enumerate(value.tensor.shape)]
        if produced in value_sized:   # (a mask's count of True sizes it, not the example's)
            dims = [d if isinstance(d, str) else f"{source}_dim_{a}"
                    for a, d in enumerate(dims)]
        graph_outputs.append(_value_info(g.onnx, source, value, dims))
    return graph_outputs


def _value_sized(nodes):
    """The names whose shape may depend on the input values: NonZero's outputs and all
    that is computed from them."""
    sized = set()
    for node in nodes:
        if node.op_type == "NonZero" or any(i in sized for i in node.input):
            sized.update(node.output)
    return sized


def _prune(nodes, initializers, graph_outputs):
    """The nodes and initializers the outputs read (a symbolic function that reads past an
    op, as Gemm past nn.Linear's transpose, leaves that op's node unread)."""
    needed = {o.name for o in graph_outputs}
    kept = []
    for node in reversed(nodes):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(node.input)
    return kept[::-1], [t for t in initializers if t.name in needed]


class _OutputStandIn:
    """(g.call for an output that is an input or a constant: only its dtype is asked)"""

    def __init__(self, value):
        self.outputs = [value]
        self.name = "output"


def _value_info(onnx, name, value, dims):
    return onnx.helper.make_tensor_value_info(
        name, tensor_type(onnx, value.tensor._data.dtype), dims)
