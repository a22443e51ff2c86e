"""Helpers shared by the ember.onnx tests: run a model in onnxruntime, compare, bridge weights."""
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")


def run_onnx(source, *arrays):
    """Run an ONNX model (a path or a ModelProto) in onnxruntime."""
    data = source.SerializeToString() if hasattr(source, "SerializeToString") else source
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, arrays)))


def close(actual, expected, rtol=1e-4):
    expected = np.asarray(expected)
    scale = float(np.abs(expected).max()) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def torch_state(torch_mod, module):
    return {k: torch_mod.tensor(v.detach().numpy()) for k, v in module.state_dict().items()}


def fn_module(lib, fn):
    class Fn(lib.nn.Module):
        def forward(self, x):
            return fn(lib, x)
    return Fn()
