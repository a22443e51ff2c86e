"""register_custom_op_symbolic: the user's translation for an op, as in PyTorch.

PyTorch keys a symbolic function by its ATen name ("aten::foo") and calls it with a graph
context and the op's inputs; ember keys it by the registry op's name, which is what an
UnsupportedOperatorError names ("aten::i0" for ember's op i0). The function is called as
`fn(g, *inputs, **params)`: tensors as ONNX value names, Python numbers as they are, the op's
params by name. `g.op("Type", *inputs, attr_i=1, outputs=2)` adds a node as PyTorch's does
(a trailing _i, _f, _s, _t or _g on an attribute's name gives its kind and is dropped), and
`g.opset` is the target opset. A registration for opset n serves every export at n or above,
until one for a higher opset takes over.
"""
import re

import numpy as np

from .._tensor import Tensor
from .._tracing import Value
from ._dynamic import RUNTIME_PARAMS
from .errors import OnnxExporterError

_CUSTOM = {}     # op name -> {opset: symbolic_fn}
_NAME = re.compile(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$")
_SUFFIX = re.compile(r"_[ifstg]$")


def register(symbolic_name, symbolic_fn, opset_version):
    if not _NAME.match(symbolic_name):
        raise OnnxExporterError(
            f"Failed to register operator {symbolic_name}. The symbolic name must match the "
            "format domain::name, and should start with a letter and contain only "
            "alphanumeric characters")
    _CUSTOM.setdefault(_op_name(symbolic_name), {})[opset_version] = symbolic_fn


def unregister(symbolic_name, opset_version):
    _CUSTOM.get(_op_name(symbolic_name), {}).pop(opset_version, None)


def _op_name(symbolic_name):
    domain, _, name = symbolic_name.partition("::")
    return name if domain == "aten" else symbolic_name   # (ember's ops are all aten's)


def lookup(name, opset):
    """The table-style translation of the user's symbolic for op `name`, or None."""
    versions = [v for v in _CUSTOM.get(name, {}) if v <= opset]
    if not versions:
        return None
    symbolic_fn = _CUSTOM[name][max(versions)]

    def translate(g, call):
        ctx = GraphContext(g)
        args = [g.input(x) if isinstance(x, Value) else x for x in call.inputs]
        params = {k: v for k, v in call.params.items() if k not in RUNTIME_PARAMS}
        out = symbolic_fn(ctx, *args, **params)
        return list(out) if isinstance(out, (list, tuple)) else [out]
    return translate


class GraphContext:
    """The `g` a custom symbolic function receives."""

    def __init__(self, builder):
        self._g = builder
        self.opset = builder.opset

    def op(self, op_type, *inputs, outputs=1, **attributes):
        g = self._g
        names = [None if x is None else x if isinstance(x, str) else self._constant(x)
                 for x in inputs]
        attrs = {}
        for key, value in attributes.items():
            if isinstance(value, Tensor):
                value = g.onnx.numpy_helper.from_array(value.detach().cpu()._data)
            attrs[_SUFFIX.sub("", key)] = value
        return g.op(op_type, *names, outputs=outputs, **attrs)

    def _constant(self, value):
        array = value.detach().cpu()._data if isinstance(value, Tensor) else np.asarray(value)
        if array.dtype == np.float64 and not isinstance(value, Tensor):
            array = array.astype(np.float32)   # (a Python float is a float tensor in PyTorch)
        return self._g.const(array, "const")
