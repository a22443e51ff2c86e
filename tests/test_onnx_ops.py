"""ember.onnx's op table: functions and modules exported, run in onnxruntime and compared
with real torch on the same inputs (and, for masks and indices, on other inputs than the
example the graph was traced on)."""
import io
import warnings

import numpy as np
import pytest

import ember

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx_checks import close as _close, fn_module as _fn_module  # noqa: E402
from onnx_checks import run_onnx as _run_onnx, torch_state as _torch_state  # noqa: E402


# ---------------------------------------------------------------------- the op table
_FUNCTIONS = {
    "bilinear": (lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 7), mode="bilinear"),
                 (2, 3, 8, 8)),
    "nearest": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2), (1, 2, 3, 4)),
    "reflect_pad": (lambda lib, x: lib.nn.functional.pad(x, (1, 2, 1, 0), mode="reflect"),
                    (1, 2, 4, 5)),
    "cumsum_max_topk": (lambda lib, x: x.cumsum(1) + x.max(1, keepdim=True)[0]
                        + x.topk(2, 1)[0].sum(1, keepdim=True) + x.min(1)[1][:, None],
                        (3, 5)),
    "std_var_norm": (lambda lib, x: x.std(1) + x.norm(dim=1) + x.var(1, correction=0)
                     + x.norm(p=1, dim=1), (3, 5)),
    "instance_norm": (lambda lib, x: lib.nn.functional.instance_norm(x), (2, 4, 6)),
    "cross_entropy": (lambda lib, x: lib.nn.functional.cross_entropy(
        x, lib.tensor([0, 1, 4]), reduction="sum"), (3, 5)),
    "tril_einsum": (lambda lib, x: lib.einsum("ij,kj->ik", x.tril(1), x.triu()), (3, 5)),
    "floor_divide": (lambda lib, x: (x * 10).long() // 3 + (x * 10).long() % 4, (3, 5)),
    "activations": (lambda lib, x: lib.nn.functional.elu(x) + lib.nn.functional.softplus(x)
                    + lib.nn.functional.silu(x) + lib.nn.functional.hardswish(x)
                    + lib.nn.functional.leaky_relu(x, 0.1)
                    + lib.nn.functional.gelu(x, approximate="tanh") + x.sigmoid().log1p(),
                    (3, 5)),
    "pointwise_extra": (lambda lib, x: x.exp2() + x.abs().log2() + (x.abs() + 1).log10()
                        + x.erfc() + (x * 3).trunc() + (x * 3).frac() + x.sgn()
                        + x.signbit().float() + (x / 1e30).isinf().float()
                        + x.isfinite().float() + x.sigmoid().logit() + x.round(decimals=1)
                        + lib.lerp(x, x * 2, 0.7) + lib.lerp(x, x * 3, x.sigmoid())
                        + lib.addcmul(x, x, x, value=0.5) + lib.addcdiv(x, x, x.exp())
                        + lib.hypot(x, x * 2) + x.pow(2) + x.abs() ** 2.5 + 2 ** x
                        + x.abs() ** x + (x > 0).sum(1, keepdim=True), (3, 5)),
    "integer_bits": (lambda lib, x: ((x * 8).long() & 5) + ((x * 8).long() | 2)
                     + ((x * 8).long() ^ 3) + (~(x > 0)).long() + (~(x * 8).long()), (3, 5)),
    "reductions_roll_pool": (lambda lib, x: x.logsumexp(-1).sum() + x.prod(1).sum()
                             + x.roll((1, -2), (2, 3)).sum(1)
                             + lib.nn.functional.adaptive_max_pool2d(x, 2).sum()
                             + x.roll(3).mean(), (1, 2, 4, 6)),
    "math_extra": (lambda lib, x: lib.atan2(x, x.flip(1)) + lib.logaddexp(x, x * 3)
                   + lib.logaddexp2(x, -x) + (x * 7).div(2, rounding_mode="trunc")
                   + x.deg2rad() + x.rad2deg() / 100 + lib.copysign(x.abs() + 1, x.flip(0))
                   + lib.heaviside(x.round(), lib.tensor(0.5))
                   + lib.nan_to_num(x.log(), nan=0.25) / 100 + x.isposinf().float()
                   + lib.isclose(x, x * 1.00001).float() + x.sinc()
                   + lib.xlogy(x.abs(), x.abs() + 1) + lib.xlogy(2.0, x.abs() + 1)
                   + x.log().nansum(1, keepdim=True) + x.log().nanmean(1, keepdim=True)
                   + lib.aminmax(x, dim=1, keepdim=True)[1] + lib.var_mean(x, 1, keepdim=True)[0]
                   + lib.std_mean(x, 1, keepdim=True)[0], (3, 5)),
    "moves": (lambda lib, x: lib.cat([
        x.diagonal(1, 0, 2).reshape(-1), x.unfold(2, 2, 1).reshape(-1),
        lib.rot90(x, 1, (1, 2)).reshape(-1), x.take(lib.tensor([[0, 5], [7, 2]])).reshape(-1),
        x.narrow_copy(1, 1, 2).reshape(-1), lib.diag_embed(x[0], 1).reshape(-1),
        lib.block_diag(x[0], x[1, :2]).reshape(-1),
        lib.select_scatter(x, x[:, 0] * 2, 1, 0).reshape(-1),
        lib.slice_scatter(x, x[:, :, :2] + 1, 2, 0, 2).reshape(-1),
        lib.diagonal_scatter(x[0], x[0].diagonal() * 3).reshape(-1),
        x.index_copy(1, lib.tensor([2, 0]), x[:, :2] * 5).reshape(-1),
        x.index_fill(2, lib.tensor([1, 3]), -2.0).reshape(-1),
        lib.zeros_like(x).fill_(1.5).reshape(-1) * x.reshape(-1),
        x.masked_select(x > 0.2) * 0,
        lib.nn.functional.unfold(x[None], 2, padding=1).reshape(-1)]).sum(0, keepdim=True),
        (2, 3, 4)),
    "index_and_stack": (lambda lib, x: lib.stack([x[:, [0, 2]], x[:, -2:].flip(0)], 0)
                        .permute(2, 0, 1).unsqueeze(0).repeat(2, 1, 1, 1), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_functions_match_torch(name, torch_mod):
    fn, shape = _FUNCTIONS[name]
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    program = ember.onnx.export(_fn_module(ember, fn).eval(), (ember.tensor(x),))
    got, = _run_onnx(program.model_proto, x)
    with torch_mod.no_grad():
        want = fn(torch_mod, torch_mod.tensor(x)).numpy()
    assert got.dtype == want.dtype
    _close(got, want)


def _set_mask(lib, x):
    y = x * 1
    y[y > 0] = 0.5                  # a mask made by a traced op, read at run time
    m = x < -0.5
    y[m] = x[m] * 3
    return y


def _set_slices_and_rows(lib, x):
    y = x * 1
    y[:, 1:3] = 0.25
    y[0, ::2] = x[1, ::2] * 2
    y[lib.tensor([0, 2])] = x[1]
    return y.index_put((lib.tensor([0, 0, 2]),), x[:3] * 0 + 1, accumulate=True)


def _gather_scatter(lib, x):
    rows = (x[:, 0] * 0).long() + lib.tensor([2, 0, 1])
    picked = x.gather(1, lib.tensor([[0], [1], [2]]))
    spread = lib.zeros(3, 5).scatter_add(1, lib.tensor([[0, 1], [1, 1], [2, 0]]), x[:, :2])
    return x[rows] + picked + spread + x.masked_fill(x > 0, -1.0) + x[x > 1].sum()


@pytest.mark.parametrize("fn", [_set_mask, _set_slices_and_rows, _gather_scatter])
def test_indexed_reads_and_writes_follow_the_input(fn, torch_mod):
    rng = np.random.default_rng(8)
    example, other = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    program = ember.onnx.export(_fn_module(ember, fn).eval(), (ember.tensor(example),))
    for x in (example, other):       # masks and row indices come from the input given
        got, = _run_onnx(program.model_proto, x)
        with torch_mod.no_grad():
            _close(got, fn(torch_mod, torch_mod.tensor(x)).numpy())


def test_values_computed_outside_the_registry_are_not_frozen():
    x = ember.tensor(np.random.default_rng(9).standard_normal((3, 5)).astype(np.float32))
    with pytest.raises(ember.onnx.OnnxExporterError, match="outside ember's op registry"):
        ember.onnx.export(_fn_module(ember, lambda lib, t: t.argmax(1)).eval(), (x,))

    def add_into_view(lib, t):
        y = t * 1
        y[0] += 1
        return y
    with pytest.raises(ember.onnx.OnnxExporterError, match="CopySlices.*x\\[0\\] \\+= 1"):
        ember.onnx.export(_fn_module(ember, add_into_view).eval(), (x,))
    with pytest.warns(UserWarning, match="Python number computed from the inputs"):
        ember.onnx.export(_fn_module(ember, lambda lib, t: t * t.sum().item()).eval(), (x,))


_MODULES = {
    "gru": (lambda nn: nn.GRU(4, 3, num_layers=2, batch_first=True), (2, 5, 4)),
    "rnn_tanh": (lambda nn: nn.RNN(6, 3), (4, 2, 6)),
    "lstm_cell": (lambda nn: nn.LSTMCell(5, 4), (3, 5)),
    "attention": (lambda nn: nn.MultiheadAttention(6, 2, batch_first=True), (2, 4, 6)),
    "conv_transpose": (lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                     output_padding=1), (1, 3, 5, 5)),
    "avg_pool_ceil": (lambda nn: nn.AvgPool2d(3, 2, padding=1, ceil_mode=True,
                                              count_include_pad=False), (1, 2, 6, 6)),
    "conv1d_bn_prelu": (lambda nn: nn.Sequential(nn.Conv1d(4, 3, 3, padding=1),
                                                 nn.BatchNorm1d(3), nn.PReLU()), (2, 4, 7)),
    "embedding_bag_mean": (lambda nn: nn.Sequential(nn.Embedding(10, 4), nn.Flatten()), None),
}


@pytest.mark.parametrize("name", sorted(_MODULES))
def test_modules_match_torch(name, torch_mod):
    build, shape = _MODULES[name]
    ember.manual_seed(0)
    ours = build(ember.nn).eval()
    theirs = build(torch_mod.nn).eval()
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    rng = np.random.default_rng(7)
    x = rng.integers(0, 10, (2, 3)) if shape is None else \
        rng.standard_normal(shape).astype(np.float32)
    if name == "attention":
        wrap = lambda lib, m: lambda t: m(t, t, t)[0]  # noqa: E731
        ours_fn, theirs_fn = wrap(ember, ours), wrap(torch_mod, theirs)
        ours = _fn_module(ember, lambda lib, t: ours_fn(t)).eval()
    else:
        theirs_fn = theirs
    program = ember.onnx.export(ours, (ember.tensor(x),))
    got = _run_onnx(program.model_proto, x)
    with torch_mod.no_grad():
        want = theirs_fn(torch_mod.tensor(x))
    want = want if isinstance(want, tuple) else (want,)
    flat = [w for item in want for w in (item if isinstance(item, tuple) else (item,))]
    assert len(got) == len(flat)
    for actual, expected in zip(got, flat):
        _close(actual, expected.numpy())


def test_training_mode_batch_norm_uses_batch_statistics_and_leaves_the_model(torch_mod):
    ember.manual_seed(0)
    ours = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4))
    theirs = torch_mod.nn.Sequential(torch_mod.nn.Conv2d(3, 4, 3), torch_mod.nn.BatchNorm2d(4))
    theirs.load_state_dict(_torch_state(torch_mod, ours))
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}
    x = np.random.default_rng(10).standard_normal((2, 3, 6, 6)).astype(np.float32)
    with pytest.warns(UserWarning, match="training mode"):
        program = ember.onnx.export(ours, (ember.tensor(x),))
    for k, v in ours.state_dict().items():      # the export's runs left the statistics alone
        np.testing.assert_array_equal(v.numpy(), before[k])
    got, = _run_onnx(program.model_proto, x)
    with torch_mod.no_grad():
        _close(got, theirs(torch_mod.tensor(x)).numpy())


def _export_and_run(model, args, dynamic_axes=None):
    """The exported file (checked by onnx.checker) run in onnxruntime on new inputs, and
    ember's own output for them."""
    model.eval()
    names = [f"input{k}" for k in range(len(args))]
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ember.onnx.export(model, tuple(args), f, dynamo=False, input_names=names,
                          dynamic_axes=dynamic_axes)
    onnx.checker.check_model(onnx.load_from_string(f.getvalue()))
    session = ort.InferenceSession(f.getvalue())
    return session, names


@pytest.mark.parametrize("case", ["gru", "embedding", "transformer_decoder",
                                  "conv_bn_upsample_dynamic_batch"])
def test_more_model_families_run_in_onnxruntime_as_ember(case):
    ember.manual_seed(0)
    nn = ember.nn
    if case == "gru":
        model, args, new = nn.GRU(8, 16, batch_first=True), [ember.randn(2, 5, 8)], None
    elif case == "embedding":
        model = nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(24, 4))
        args, new = [ember.tensor([[1, 2, 3], [4, 5, 6]])], [ember.tensor([[9, 0, 3], [4, 7, 1]])]
    elif case == "transformer_decoder":
        layer = nn.TransformerDecoderLayer(16, 2, 32, batch_first=True)
        model, args, new = nn.TransformerDecoder(layer, 2), [ember.randn(2, 5, 16),
                                                             ember.randn(2, 7, 16)], None
    else:
        model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.Upsample(scale_factor=2), nn.MaxPool2d(2))
        args, new = [ember.randn(2, 3, 8, 8)], [ember.randn(5, 3, 8, 8)]
    dynamic = {"input0": {0: "batch"}} if case.endswith("dynamic_batch") else None
    session, names = _export_and_run(model, args, dynamic)
    new = new or [a * 1.3 + 0.1 for a in args]
    got = session.run(None, {n: a.numpy() for n, a in zip(names, new)})[0]
    with ember.no_grad():
        want = model(*new)
    want = want[0] if isinstance(want, tuple) else want
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
