"""ember.onnx.export: models exported, run in onnxruntime, and compared with ember and with
PyTorch's model of the same weights (torchvision's outputs stored in tests/data/model_refs for
the vision models; real torch.nn modules for the LSTM and the Transformer encoder)."""
import inspect
import io
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember
from ember import _tracing

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

REFS = os.path.join(os.path.dirname(__file__), "data", "model_refs")
sys.path.insert(0, REFS)
import cases  # noqa: E402
from onnx_checks import close as _close  # noqa: E402
from onnx_checks import run_onnx as _run_onnx, torch_state as _torch_state  # noqa: E402


@pytest.fixture(scope="module")
def resnet18():
    return cases.build_forward_model(ember, "resnet18"), np.load(os.path.join(REFS,
                                                                            "resnet18.npz"))


# ---------------------------------------------------------------------- vision models
def test_resnet18_file_runs_in_onnxruntime_as_torchvision(resnet18, tmp_path):
    model, ref = resnet18
    x = cases.input_array(cases.FORWARD["resnet18"][1])
    path = tmp_path / "resnet18.onnx"
    program = ember.onnx.export(model, (ember.from_numpy(x),), path)
    assert isinstance(program, ember.onnx.ONNXProgram)
    onnx.checker.check_model(str(path))
    got, = _run_onnx(str(path), x)
    _close(got, ref["logits"])                            # torchvision, same weights
    with ember.no_grad():
        _close(got, model(ember.from_numpy(x)).numpy())
    # weights are initializers named as torchvision's state_dict names them
    names = {t.name for t in program.model_proto.graph.initializer}
    assert {k for k in ref["keys"] if not k.endswith("num_batches_tracked")} <= names
    assert [i.name for i in program.model_proto.graph.input] == ["x"]   # forward's argument


def test_resnet18_dynamic_batch(resnet18):
    model, _ = resnet18
    x = np.ascontiguousarray(cases.input_array(cases.FORWARD["resnet18"][1])[:, :, :32, :32])
    program = ember.onnx.export(model, (ember.from_numpy(x),), input_names=["images"],
                                output_names=["logits"],
                                dynamic_axes={"images": {0: "batch"}, "logits": {0: "batch"}})
    graph = program.model_proto.graph
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert graph.output[0].name == "logits"
    assert graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    big = np.concatenate([x, x[:1]])                      # batch 3, and 1, from a batch-2 trace
    for batch in (big, x[:1]):
        got, = _run_onnx(program.model_proto, batch)
        with ember.no_grad():
            _close(got, model(ember.from_numpy(batch)).numpy())


def test_batch_one_example_with_dynamic_batch():
    """A batch-1 example takes size-1 paths (ViT's class-token expand is no copy there): the
    exporter traces a batch of 2 instead, so other batch sizes run too."""
    from ember.vision import models
    ember.manual_seed(0)
    vit = cases.fill(ember, models.VisionTransformer(
        image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
        num_classes=10)).eval()
    program = ember.onnx.export(vit, (ember.from_numpy(cases.input_array((1, 3, 32, 32))),),
                                input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    for n in (1, 3):
        x = cases.input_array((n, 3, 32, 32))
        got, = _run_onnx(program.model_proto, x)
        with ember.no_grad():    # (ember's ViT itself is checked against torchvision's)
            _close(got, vit(ember.from_numpy(x)).numpy())


def test_model_on_a_cuda_device_exports(cuda_standin):
    """Weights and examples on 'cuda' (the NumPy stand-in here) reach the file from the
    host."""
    ember.manual_seed(0)
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh()).eval().to("cuda")
    x = ember.tensor([[0.5, -1.0, 2.0]]).to("cuda")
    program = ember.onnx.export(m, (x,), input_names=["x"], dynamic_axes={"x": {0: "b"}})
    w, b = (t.detach().cpu().numpy() for t in (m[0].weight, m[0].bias))
    xs = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    got, = _run_onnx(program.model_proto, xs)
    _close(got, np.tanh(xs @ w.T + b))                    # NumPy's formula


def test_mobilenet_v2_legacy_path(tmp_path):
    model = cases.build_forward_model(ember, "mobilenet_v2")
    ref = np.load(os.path.join(REFS, "mobilenet_v2.npz"))
    x = cases.input_array(cases.FORWARD["mobilenet_v2"][1])
    path = tmp_path / "mobilenet.onnx"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ember.onnx.export(model, (ember.from_numpy(x),), str(path), dynamo=False,
                                input_names=["input"], output_names=["output"])
    assert out is None
    assert any(w.category is DeprecationWarning and "legacy TorchScript-based ONNX export"
               in str(w.message) for w in caught)
    got, = _run_onnx(str(path), x)
    _close(got, ref["logits"])


# ---------------------------------------------------------------------- recurrent, attention
def test_lstm_with_initial_state_matches_torch(torch_mod):
    ember.manual_seed(0)
    ours = ember.nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True).eval()
    theirs = torch_mod.nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    rng = np.random.default_rng(1)
    x, h0, c0 = (rng.standard_normal(s).astype(np.float32)
                 for s in ((3, 5, 4), (4, 3, 6), (4, 3, 6)))
    program = ember.onnx.export(ours, (ember.tensor(x), (ember.tensor(h0), ember.tensor(c0))))
    got = _run_onnx(program.model_proto, x, h0, c0)
    with torch_mod.no_grad():
        y, (h, c) = theirs(torch_mod.tensor(x), (torch_mod.tensor(h0), torch_mod.tensor(c0)))
    for actual, expected in zip(got, (y, h, c)):
        _close(actual, expected.numpy())
    mine = program(ember.tensor(x), ember.tensor(h0), ember.tensor(c0))   # ONNXProgram.__call__
    _close(mine[0].numpy(), y.numpy())


def test_lstm_dynamic_batch_and_time_zero_state(torch_mod):
    ember.manual_seed(0)
    ours = ember.nn.LSTM(3, 5).eval()
    theirs = torch_mod.nn.LSTM(3, 5)
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    x = np.random.default_rng(2).standard_normal((4, 2, 3)).astype(np.float32)
    program = ember.onnx.export(ours, (ember.tensor(x),), input_names=["seq"],
                                dynamic_axes={"seq": {0: "time", 1: "batch"}})
    x5 = np.random.default_rng(3).standard_normal((6, 5, 3)).astype(np.float32)
    got = _run_onnx(program.model_proto, x5)   # the zero initial state follows the batch
    with torch_mod.no_grad():
        y, (h, c) = theirs(torch_mod.tensor(x5))
    for actual, expected in zip(got, (y, h, c)):
        _close(actual, expected.numpy())


def test_transformer_encoder_matches_torch(torch_mod):
    ember.manual_seed(0)
    layer = dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True,
                 activation="gelu")
    ours = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(**layer), 2,
                                       norm=ember.nn.LayerNorm(8)).eval()
    theirs = torch_mod.nn.TransformerEncoder(torch_mod.nn.TransformerEncoderLayer(**layer), 2,
                                             norm=torch_mod.nn.LayerNorm(8),
                                             enable_nested_tensor=False).eval()
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    x = np.random.default_rng(4).standard_normal((2, 3, 8)).astype(np.float32)
    program = ember.onnx.export(ours, (ember.tensor(x),), input_names=["src"],
                                dynamic_axes={"src": {0: "batch", 1: "seq"}})
    x4 = np.random.default_rng(5).standard_normal((4, 5, 8)).astype(np.float32)
    for sample in (x, x4):
        got, = _run_onnx(program.model_proto, sample)
        with torch_mod.no_grad():
            _close(got, theirs(torch_mod.tensor(sample)).numpy())


# ---------------------------------------------------------------------- errors and API
class _Bessel(ember.nn.Module):
    def forward(self, x):
        return ember.special.i0(x) + 1


def test_unmapped_op_names_itself(torch_mod):
    x = ember.ones(3)
    for opset in (None, 18):
        with pytest.raises(ember.onnx.errors.UnsupportedOperatorError) as info:
            ember.onnx.export(_Bessel().eval(), (x,), opset_version=opset)
        expected = torch_mod.onnx.errors.UnsupportedOperatorError("aten::i0", opset or 20, None)
        assert str(info.value) == str(expected)
        assert isinstance(info.value, ember.onnx.OnnxExporterError)
        assert isinstance(info.value, RuntimeError)


def test_custom_op_symbolic_fills_a_gap(torch_mod):
    class CumProd(ember.nn.Module):
        def forward(self, x):
            return x.cumprod(1)

    def cumprod(g, x, dim, **params):   # positive inputs: exp of the running sum of logs
        return g.op("Exp", g.op("CumSum", g.op("Log", x), dim))

    x = np.random.default_rng(11).random((3, 4)).astype(np.float32) + 0.5
    args = (ember.tensor(x),)
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="'aten::cumprod'"):
        ember.onnx.export(CumProd().eval(), args)
    with pytest.raises(ember.onnx.OnnxExporterError) as info:
        ember.onnx.register_custom_op_symbolic("cumprod", cumprod, 18)
    with pytest.raises(torch_mod.onnx.OnnxExporterError) as theirs:
        torch_mod.onnx.register_custom_op_symbolic("cumprod", cumprod, 18)
    assert str(info.value) == str(theirs.value)
    ember.onnx.register_custom_op_symbolic("aten::cumprod", cumprod, 19)
    try:
        with pytest.raises(ember.onnx.errors.UnsupportedOperatorError):   # from opset 19 on
            ember.onnx.export(CumProd().eval(), args, opset_version=18)
        program = ember.onnx.export(CumProd().eval(), args)
    finally:
        ember.onnx.unregister_custom_op_symbolic("aten::cumprod", 19)
    got, = _run_onnx(program.model_proto, x)
    _close(got, torch_mod.tensor(x).cumprod(1).numpy())
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError):
        ember.onnx.export(CumProd().eval(), args)


def test_signature_and_enums_are_torchs(torch_mod):
    ours = inspect.signature(ember.onnx.export).parameters
    theirs = inspect.signature(torch_mod.onnx.export).parameters
    assert list(ours) == list(theirs)
    for name, p in theirs.items():
        assert ours[name].kind == p.kind, name
        default = p.default
        if hasattr(default, "name") and not isinstance(default, str):
            assert ours[name].default.name == default.name, name
        else:
            assert ours[name].default == default, name
    for enum in ("TrainingMode", "OperatorExportTypes", "TensorProtoDataType"):
        mine, real = getattr(ember.onnx, enum), getattr(torch_mod.onnx, enum)
        assert {m.name: int(m) for m in mine} == {k: int(v) for k, v in
                                                  real.__members__.items()}


def test_jit_scalar_type_as_torchs(torch_mod):
    mine, theirs = ember.onnx.JitScalarType, torch_mod.onnx.JitScalarType
    assert {m.name: int(m) for m in mine} == {m.name: int(m) for m in theirs}
    for m in theirs:
        if m.name == "UNDEFINED":
            continue
        ours = mine[m.name]
        assert ours.scalar_name() == m.scalar_name()
        assert ours.torch_name() == m.torch_name()
        assert ours.onnx_type().name == m.onnx_type().name
        assert ours.onnx_compatible() == m.onnx_compatible()
    for name in ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                 "complex64", "complex128", "bool", "bfloat16"):
        assert mine.from_dtype(getattr(ember, name)).name == \
            theirs.from_dtype(getattr(torch_mod, name)).name
        assert mine.from_dtype(getattr(ember, name)).dtype() is getattr(ember, name)
    for code in range(1, 21):
        try:
            expected = theirs.from_onnx_type(code).name
        except torch_mod.onnx.OnnxExporterError:     # (STRING, UINT32, ...: none)
            with pytest.raises(ember.onnx.OnnxExporterError, match="Unknown onnx_type"):
                mine.from_onnx_type(code)
        else:
            assert mine.from_onnx_type(code).name == expected
    with pytest.raises(ember.onnx.OnnxExporterError, match="Unknown dtype: None"):
        mine.from_dtype(None)


def test_is_in_onnx_export_inside_forward_only(torch_mod):
    def probe(lib):
        class Probe(lib.nn.Module):
            seen = []

            def forward(self, x):
                Probe.seen.append(lib.onnx.is_in_onnx_export())
                return x * 2
        return Probe

    theirs = probe(torch_mod)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_mod.onnx.export(theirs(), (torch_mod.ones(2),), os.devnull, dynamo=False)
    ours = probe(ember)
    ember.onnx.export(ours().eval(), (ember.ones(2),))
    assert ours.seen[:1] == theirs.seen[:1] == [True]
    assert ember.onnx.is_in_onnx_export() == torch_mod.onnx.is_in_onnx_export() is False


def test_dynamic_shapes_as_torch_export_gives_them():
    class Dim:   # what the program names a torch.export.Dim: a name
        __name__ = "batch"
    m = ember.nn.Linear(4, 2).eval()
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    for spec in ({"input": {0: Dim()}}, ({0: "batch"},)):
        program = ember.onnx.export(m, (ember.ones(3, 4),), dynamic_shapes=spec)
        graph = program.model_proto.graph
        assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
        x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
        got, = _run_onnx(program.model_proto, x)
        _close(got, x @ w.T + b)                          # NumPy's formula
    with pytest.raises(ValueError, match="not arguments of the model's forward"):
        ember.onnx.export(m, (ember.ones(3, 4),), dynamic_shapes={"x": {0: "b"}})


def test_exportable_module_brings_its_own_arguments():
    class Doubler(ember.onnx.ExportableModule):
        def forward(self, x):
            return x * 2

        def example_arguments(self):
            return (ember.ones(2, 3),), None

        def input_names(self):
            return ("input",)

        def output_names(self):
            return ("output",)

        def dynamic_shapes(self):
            return ({0: "batch_size"},)

    with pytest.raises(TypeError):    # example_arguments is abstract
        ember.onnx.ExportableModule()
    for program in (Doubler().eval().to_onnx(), ember.onnx.export(Doubler().eval())):
        graph = program.model_proto.graph
        assert [i.name for i in graph.input] == ["input"]
        assert [o.name for o in graph.output] == ["output"]
        assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch_size"
        x = np.arange(12, dtype=np.float32).reshape(4, 3)
        got, = _run_onnx(program.model_proto, x)
        np.testing.assert_array_equal(got, x * 2)


def test_unsupported_options_raise():
    m = ember.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="dynamic_shapes or dynamic_axes"):
        ember.onnx.export(m, (ember.ones(1, 2),), dynamic_shapes={"input": {0: "b"}},
                          dynamic_axes={"input": [0]})
    with pytest.raises(ember.onnx.OnnxExporterError, match="operator_export_type"):
        ember.onnx.export(m, (ember.ones(1, 2),),
                          operator_export_type=ember.onnx.OperatorExportTypes.ONNX_ATEN)


def test_older_opsets_through_the_version_converter(torch_mod, caplog):
    ember.manual_seed(0)
    layers = lambda nn: nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(),  # noqa: E731
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
    ours, theirs = layers(ember.nn).eval(), layers(torch_mod.nn).eval()
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    x = np.random.default_rng(12).standard_normal((2, 3, 6, 6)).astype(np.float32)
    program = ember.onnx.export(ours, (ember.tensor(x),), opset_version=17)
    assert program.model_proto.opset_import[0].version == 17
    got, = _run_onnx(program.model_proto, x)
    with torch_mod.no_grad():
        _close(got, theirs(torch_mod.tensor(x)).numpy())
    # LayerNormalization exists from opset 17 on: at 14 the model stays at 18, with a warning
    with caplog.at_level("WARNING", logger="ember.onnx"):
        program = ember.onnx.export(ember.nn.LayerNorm(4).eval(), (ember.ones(2, 4),),
                                    opset_version=14)
    assert program.model_proto.opset_import[0].version == 18
    assert "requested opset_version 14 is a lower version" in caplog.text


def test_verify_logs_a_wrong_translation(monkeypatch, caplog):
    from ember.onnx import symbolic_table
    x = ember.tensor([[1.0, -2.0, 3.0]])
    with caplog.at_level("WARNING", logger="ember.onnx"):
        ember.onnx.export(ember.nn.ReLU().eval(), (x,), verify=True)
    assert not caplog.records
    # relu written as Neg: |relu(x) - (-x)| reaches 2 * 3 = 6 at x = 3
    monkeypatch.setitem(symbolic_table.TABLE, "relu",
                        lambda g, call: [g.op("Neg", g.input(call.inputs[0]))])
    with caplog.at_level("WARNING", logger="ember.onnx"):
        ember.onnx.export(ember.nn.ReLU().eval(), (x,), verify=True)
    assert "large absolute difference of 6.000000" in caplog.text


def test_save_options_and_missing_package(tmp_path, monkeypatch):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh()).eval()
    program = ember.onnx.export(m, (ember.ones(2, 3),))
    path = tmp_path / "m.onnx"
    program.save(path, keep_initializers_as_inputs=True)
    saved = onnx.load(str(path))
    assert [i.name for i in saved.graph.input] == ["input", "0.weight", "0.bias"]
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    w, b = m[0].weight.detach().numpy(), m[0].bias.detach().numpy()
    got, = _run_onnx(str(path), x, w, b)
    _close(got, np.tanh(x @ w.T + b))                     # NumPy's formula
    buffer = io.BytesIO()
    with pytest.warns(DeprecationWarning):                # legacy path: into a file object
        ember.onnx.export(m, (ember.ones(2, 3),), buffer, dynamo=False)
    got, = _run_onnx(buffer.getvalue(), x)
    _close(got, np.tanh(x @ w.T + b))
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ModuleNotFoundError, match="pip install onnx"):
        ember.onnx.export(m, (ember.ones(2, 3),))


def test_input_names_from_forward_and_kwargs():
    class Net(ember.nn.Module):
        def forward(self, a, pair, *rest, scale=None):
            return a + pair[0] * pair[1] + rest[0] * scale

    x = np.arange(1, 3, dtype=np.float32)
    t = ember.tensor(x)
    program = ember.onnx.export(Net().eval(), (t, (t, t * 2), t * 3), kwargs={"scale": t},
                                output_names=["add"])   # a name a node would have taken
    graph = program.model_proto.graph
    assert [i.name for i in graph.input] == ["a", "pair_0", "pair_1", "rest_0", "scale"]
    assert [o.name for o in graph.output] == ["add"]
    onnx.checker.check_model(program.model_proto)
    got, = _run_onnx(program.model_proto, x, x, 2 * x, 3 * x, x)
    _close(got, x + x * 2 * x + 3 * x * x)               # NumPy's formula
    with pytest.raises(ValueError, match="opset versions 7 to 23, not 6"):
        ember.onnx.export(Net().eval(), (t, (t, t), t), kwargs={"scale": t}, opset_version=6)


def test_import_torch_onnx_under_ember_run(tmp_path):
    ember_cmd = os.path.join(os.path.dirname(sys.executable), "ember")
    if not os.path.exists(ember_cmd):
        pytest.fail("no `ember` console script beside the interpreter: pip install -e .")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import torch.onnx
        import ember
        assert torch.onnx is ember.onnx
        from torch.onnx import export, TrainingMode
        m = torch.nn.Linear(3, 2).eval()
        p = export(m, (torch.randn(1, 3),))
        print(type(p).__name__, [n.op_type for n in p.model_proto.graph.node])
    """))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([ember_cmd, "run", str(script)], capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ONNXProgram ['Gemm']"   # as PyTorch writes a Linear


# ---------------------------------------------------------------------- the tracer
def test_trace_names_inputs_parameters_buffers_and_follows_inplace():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = ember.nn.Linear(3, 3)
            self.register_buffer("shift", ember.full((3,), 0.5))

        def forward(self, x):
            x.mul_(2)                       # in place on the input itself
            return self.lin(x).relu() + self.shift + ember.ones(3)

    net = Net()
    x = ember.tensor([[1.0, -2.0, 3.0]])
    trace = _tracing.trace(net, (x,))
    assert [c.name for c in trace.calls] == ["mul", "transpose", "addmm", "relu", "add", "add"]
    mul, transpose, addmm = trace.calls[:3]
    assert mul.inputs[0] is trace.inputs[0] and mul.inputs[1] == 2
    assert addmm.inputs[1] is mul.outputs[0]          # the in-place result feeds the layer
    assert transpose.inputs[0].kind == _tracing.PARAMETER
    assert transpose.inputs[0].name == "lin.weight"
    assert addmm.inputs[0].name == "lin.bias"
    shift = trace.calls[4].inputs[1]
    assert (shift.kind, shift.name) == (_tracing.BUFFER, "shift")
    assert trace.calls[5].inputs[1].kind == _tracing.CONSTANT
    assert trace.outputs == [trace.calls[5].outputs[0]]
    expected = np.maximum(np.array([[2.0, -4.0, 6.0]]) @ net.lin.weight.detach().numpy().T
                          + net.lin.bias.detach().numpy(), 0) + 1.5
    np.testing.assert_allclose(trace.outputs[0].tensor.detach().numpy(), expected, rtol=1e-6)
