"""ember.onnx: torch.onnx's export of a model to an ONNX file.

The model runs on the example inputs, recorded op by op at the op registry's door
(ember._tracing), and once or twice more to find what a single run cannot tell (values
computed outside the registry: _frozen.py; sizes that follow dynamic axes: _dynamic.py);
each op is then written as ONNX nodes by its entry in symbolic_table.TABLE.
Both of PyTorch's paths answer: the default (dynamo=True) returns an ONNXProgram and saves it
when `f` is given; dynamo=False writes `f` and returns None, as PyTorch's legacy exporter.
The onnx package is needed (pip install onnx), and onnxruntime to run an ONNXProgram.
"""
import contextlib
import enum
import inspect
import io
import os
import warnings

from .. import __version__
from .._tensor import Tensor
from . import errors
from ._export import build_model, input_names_of, is_exporting, load_onnx
from . import _custom, _program
from ._exportable import ExportableModule
from ._program import ONNXProgram
from ._scalar_types import JitScalarType
from .errors import OnnxExporterError

__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError", "ONNXProgram",
           "ExportableModule", "JitScalarType",
           "OperatorExportTypes", "TrainingMode", "TensorProtoDataType",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic",
           "select_model_mode_for_export", "producer_name", "producer_version"]

producer_name = "ember"
producer_version = __version__


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'ember.onnx' has no attribute '{name}'")
    raise AttributeError(f"module 'ember.onnx' has no attribute '{name}' (torch.onnx.{name} is "
                         "not implemented in ember)")


class _IntEnum(enum.Enum):
    """PyTorch's pybind11 enums: int() works, equality with an int does not."""

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __hash__(self):
        return self.value


class OperatorExportTypes(_IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode(_IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class TensorProtoDataType(_IntEnum):
    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16
    FLOAT8E4M3FN = 17
    FLOAT8E4M3FNUZ = 18
    FLOAT8E5M2 = 19
    FLOAT8E5M2FNUZ = 20


for _enum in (OperatorExportTypes, TrainingMode, TensorProtoDataType):
    _enum.__module__ = "ember._C._onnx"


def is_in_onnx_export():
    """Whether an ember.onnx.export is running the model now."""
    return is_exporting()


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Translate op `symbolic_name` ("aten::<ember op>", as an UnsupportedOperatorError names
    it) with `symbolic_fn(g, *inputs, **params)` from `opset_version` on (see _custom.py)."""
    _custom.register(symbolic_name, symbolic_fn, opset_version)


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Forget the symbolic registered for `symbolic_name` at `opset_version`."""
    _custom.unregister(symbolic_name, opset_version)


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Set `model`'s training mode to `mode` (a TrainingMode) for the with-block."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"'mode' should be a torch.onnx.TrainingMode enum, but got "
                        f"'{type(mode)}'.")
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    if mode is not TrainingMode.PRESERVE and hasattr(model, "train"):
        model.train(mode is TrainingMode.TRAINING)
    try:
        yield
    finally:
        for m, training in modes:
            m.training = training


def _unsupported(what):
    return OnnxExporterError(f"ember.onnx.export does not support {what}")


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamo=True, external_data=True,
           dynamic_shapes=None, custom_translation_table=None, report=False, optimize=True,
           verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None,
           training=TrainingMode.EVAL, operator_export_type=OperatorExportTypes.ONNX,
           do_constant_folding=True, custom_opsets=None, export_modules_as_functions=False,
           autograd_inlining=True):
    """Export `model` run on `args` (and `kwargs`) to ONNX; see the module docstring."""
    for flag, what in ((custom_translation_table, "custom_translation_table"),
                       (report, "report=True"), (profile, "profile=True"),
                       (dump_exported_program, "dump_exported_program=True"),
                       (custom_opsets, "custom_opsets"),
                       (export_modules_as_functions, "export_modules_as_functions"),
                       (operator_export_type is not OperatorExportTypes.ONNX,
                        f"operator_export_type={operator_export_type}")):
        if flag:
            raise _unsupported(what)
    load_onnx()
    if isinstance(model, ExportableModule):
        dynamo = True   # (PyTorch exports these through its dynamo path whatever `dynamo` says)
        if not args and not kwargs:   # the module's own example, names and dynamic shapes
            args, kwargs = model.example_arguments()
            input_names = model.input_names() if input_names is None else input_names
            output_names = model.output_names() if output_names is None else output_names
            if dynamic_shapes is None:
                dynamic_shapes = model.dynamic_shapes()
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    if not dynamo and args and isinstance(args[-1], dict) and kwargs is None:
        args, kwargs = args[:-1], args[-1]   # (the legacy exporter's trailing kwargs dict)
    if dynamic_shapes is not None:
        if dynamic_axes is not None:
            raise ValueError("give dynamic_shapes or dynamic_axes, not both")
        dynamic_axes = _axes_from_shapes(model, args, dynamic_shapes, input_names)
    options = dict(input_names=input_names, output_names=output_names,
                   opset_version=opset_version, dynamic_axes=dynamic_axes,
                   export_params=export_params,
                   keep_initializers_as_inputs=keep_initializers_as_inputs)
    if dynamo:
        if getattr(model, "training", False):
            warnings.warn("Exporting a model while it is in training mode. Please ensure that "
                          "this is intended, as it may lead to different behavior during "
                          "inference. Calling model.eval() before export is recommended.",
                          UserWarning, stacklevel=2)
        program = ONNXProgram(build_model(model, args, kwargs, **options))
        if verify:
            _program.verify(program, model, args, kwargs)
        if verbose:
            print(program)
        if f is not None:
            program.save(f, keep_initializers_as_inputs=keep_initializers_as_inputs,
                         external_data=external_data)
        return program
    _export_legacy(model, args, kwargs, f, options, training, verbose)
    return None


def _export_legacy(model, args, kwargs, f, options, training, verbose):
    """export(dynamo=False): the model built in `training`'s mode and written to `f`."""
    warnings.warn("You are using the legacy TorchScript-based ONNX export. Starting in PyTorch "
                  "2.9, the new torch.export-based ONNX exporter has become the default. Learn "
                  "more about the new export logic: "
                  "https://docs.pytorch.org/docs/stable/onnx_export.html. For exporting control "
                  "flow: https://pytorch.org/tutorials/beginner/onnx/"
                  "export_control_flow_model_to_onnx_tutorial.html", DeprecationWarning,
                  stacklevel=3)
    if f is None:
        raise ValueError("ember.onnx.export(dynamo=False) writes to `f`: give a file path or "
                         "a binary file object")
    with select_model_mode_for_export(model, training):
        proto = build_model(model, args, kwargs, **options)
    if verbose:
        print(ONNXProgram(proto))
    if isinstance(f, (str, os.PathLike)):
        load_onnx().save_model(proto, os.fspath(f))
    elif isinstance(f, io.IOBase) or hasattr(f, "write"):
        f.write(proto.SerializeToString())



def _axes_from_shapes(model, args, dynamic_shapes, input_names):
    """torch.export's dynamic_shapes ({argument: {axis: Dim or name}}, or one entry per
    positional argument) as dynamic_axes over the graph's input names. Only tensor arguments
    (not nested ones) can have dynamic axes here."""
    names = input_names_of(model, args, {}, input_names)
    if isinstance(dynamic_shapes, dict):
        forward = model.forward if hasattr(model, "forward") else model
        params = list(inspect.signature(forward).parameters)
        entries = [dynamic_shapes.get(p) for p in params[:len(args)]]
        unknown = set(dynamic_shapes) - set(params)
        if unknown:
            raise ValueError(f"dynamic_shapes names {sorted(unknown)}, which are not arguments "
                             f"of the model's forward ({', '.join(params)})")
    else:
        entries = list(dynamic_shapes)
    axes, position = {}, 0
    for arg, spec in zip(args, entries):
        if not isinstance(arg, Tensor):
            if spec:
                raise OnnxExporterError("ember.onnx: dynamic_shapes for a nested argument is "
                                        "not supported; give dynamic_axes over input names")
            continue
        if spec:
            if isinstance(spec, (list, tuple)):
                spec = {i: d for i, d in enumerate(spec) if d is not None}
            axes[names[position]] = {
                int(axis): d if isinstance(d, str) else
                getattr(d, "__name__", None) or f"{names[position]}_dim_{axis}"
                for axis, d in spec.items() if d is not None}
        position += 1
    return axes
