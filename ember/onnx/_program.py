"""ONNXProgram: what `ember.onnx.export` returns (PyTorch's default, dynamo=True, path).

It holds the ModelProto (`model_proto`), writes it (`save`) and runs it in onnxruntime
(`program(*inputs)`), as PyTorch's does. PyTorch's `model` (an onnx_ir Model) and
`exported_program` (a torch.export program) have no ember counterpart and are absent.
"""
import logging
import os
import textwrap

import numpy as np

from .._optional import require
from .._creation import from_numpy
from .._tensor import Tensor
from .._tracing import flatten
from ..autograd.grad_mode import no_grad

# Above this many bytes of weights, a file must keep them outside the protobuf (2 GB limit).
_PROTOBUF_LIMIT = 2 ** 31 - 1


class ONNXProgram:
    """An exported model: its ONNX ModelProto, savable and runnable in onnxruntime."""

    def __init__(self, model_proto):
        self._proto = model_proto
        self._session = None

    @property
    def model_proto(self):
        """The ONNX ModelProto."""
        return self._proto

    def __repr__(self):
        onnx = require("onnx", "ember.onnx.ONNXProgram")
        bare = type(self._proto)()
        bare.CopyFrom(self._proto)
        del bare.graph.initializer[:]   # (the weights' values would drown the graph)
        weights = ", ".join(f"{t.name}{list(t.dims)}" for t in self._proto.graph.initializer)
        text = onnx.printer.to_text(bare)
        if weights:
            text += f"\ninitializers: {weights}"
        return f"ONNXProgram(\n    model=\n{textwrap.indent(text, ' ' * 8)}\n)"

    def save(self, destination, *, include_initializers=True,
             keep_initializers_as_inputs=False, external_data=None):
        """Write the model to `destination` (a path, or a binary file object). With a path,
        `external_data` (default: only when the weights pass protobuf's 2 GB) keeps the
        weights in `<destination>.data` beside it."""
        onnx = require("onnx", "ember.onnx.ONNXProgram.save")
        proto = type(self._proto)()
        proto.CopyFrom(self._proto)
        graph = proto.graph
        if keep_initializers_as_inputs:
            known = {i.name for i in graph.input}
            for t in graph.initializer:
                if t.name not in known:
                    graph.input.append(onnx.helper.make_tensor_value_info(
                        t.name, t.data_type, list(t.dims)))
        if not include_initializers:
            del graph.initializer[:]
        too_big = sum(len(t.raw_data) for t in graph.initializer) > _PROTOBUF_LIMIT
        if hasattr(destination, "write"):   # a binary file object: everything in one stream
            if too_big:
                raise ValueError("the model's weights pass protobuf's 2 GB limit: save it to "
                                 "a file path, where they go to a .data file beside it")
            destination.write(proto.SerializeToString())
            return
        if external_data is None:
            external_data = too_big
        destination = os.fspath(destination)
        if external_data:
            onnx.save_model(proto, destination, save_as_external_data=True,
                            all_tensors_to_one_file=True,
                            location=os.path.basename(destination) + ".data",
                            size_threshold=1024)
        else:
            onnx.save_model(proto, destination)

    def initialize_inference_session(self, initializer=None):
        """Start the onnxruntime session that calls run (`initializer(model bytes)` may make
        it instead)."""
        data = self._proto.SerializeToString()
        if initializer is not None:
            self._session = initializer(data)
        else:
            ort = require("onnxruntime", "running an ember.onnx.ONNXProgram")
            self._session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])

    def release(self):
        """Drop the onnxruntime session (and the memory it holds)."""
        self._session = None

    def __call__(self, *args, **kwargs):
        """Run the model in onnxruntime on ember tensors; a tuple of ember tensors."""
        if self._session is None:
            self.initialize_inference_session()
        feeds = [t for t in flatten((args, kwargs)) if isinstance(t, Tensor)]
        names = [i.name for i in self._session.get_inputs()]
        if len(feeds) != len(names):
            raise ValueError(f"the ONNX model takes {len(names)} inputs ({', '.join(names)}), "
                             f"got {len(feeds)} tensors")
        arrays = {n: np.ascontiguousarray(t.detach().cpu()._data) for n, t in zip(names, feeds)}
        return tuple(from_numpy(np.asarray(r)) for r in self._session.run(None, arrays))


def verify(program, model, args, kwargs):
    """export(verify=True), as PyTorch's: the ONNX checker, then onnxruntime on the example
    inputs against the model's own outputs; a large difference (absolute 5e-3 or relative
    0.1, PyTorch's thresholds) is logged as a warning, not raised."""
    logger = logging.getLogger("ember.onnx")
    onnx = require("onnx", "ember.onnx.export(verify=True)")
    try:
        onnx.checker.check_model(program.model_proto)
    except Exception as exc:   # (PyTorch logs a failed check and returns the program)
        logger.warning("Conversion successful but the ONNX model fails ONNX checker: %s", exc)
        return
    with no_grad():
        expected = [t for t in flatten(model(*args, **(kwargs or {})))
                    if isinstance(t, Tensor)]
    actual = program(*args, **(kwargs or {}))
    for i, (got, want) in enumerate(zip(actual, expected)):
        got = got.numpy().astype(np.float64)
        want = want.detach().cpu().numpy().astype(np.float64)
        diff = np.abs(got - want)
        abs_diff = float(diff.max()) if diff.size else 0.0
        rel_diff = float((diff / np.maximum(np.abs(want), 1e-12)).max()) if diff.size else 0.0
        name = program.model_proto.graph.output[i].name
        if abs_diff >= 5e-3:
            logger.warning("Output '%s' has a large absolute difference of %f. ", name,
                           abs_diff)
        if rel_diff >= 1e-1:
            logger.warning("Output '%s' has a large relative difference of %f. ", name,
                           rel_diff)
