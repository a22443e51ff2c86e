"""ember on a real GPU (CuPy) against ember on the CPU (NumPy): every op-table entry (values,
dtype, shape, device, float32 gradients), short MLP and CNN training runs, an LSTM, attention,
save/load of a cuda model, autocast and GradScaler.

Skipped without CuPy and an NVIDIA GPU, and never run on the NumPy stand-in
(EMBER_CUDA_STANDIN), where it would only compare NumPy with itself. Run it with
scripts/gpu_check.sh. EMBER_GPU_ALL_DTYPES=1 sweeps every dtype of every entry (slower: CuPy
compiles each new kernel on first use); by default each entry runs float32, one
low-precision float and one integer dtype, as listed for it. The whole-model checks come
first, so a run cut short by a time limit has already done them.
"""
import io
import os

import numpy as np
import pytest

import ember
from checks import LOW_PRECISION, op_tolerance, as_numpy, assert_close, to_ember
from op_db import all_ops


def _no_gpu_reason():
    if os.environ.get("EMBER_CUDA_STANDIN"):
        return "the NumPy stand-in is on: these checks need CuPy on a real GPU"
    if not ember.cuda.is_available():
        return "no CUDA GPU (or no CuPy)"
    return None


pytestmark = pytest.mark.skipif(_no_gpu_reason() is not None,
                                reason=str(_no_gpu_reason()))

CPU, CUDA = ember.device("cpu"), ember.device("cuda", 0)
OPS = all_ops()
LOW = LOW_PRECISION
INTS = ("int64", "int32", "int16", "int8", "uint8", "bool")
# Outputs defined up to order (eigenvalues of a general matrix): compared sorted.
UNORDERED = ("linalg.eigvals",)


@pytest.fixture(autouse=True)
def _cupy_cuda(monkeypatch):
    """The real backend, and op-table helpers made device-aware for these tests only."""
    from ember import backends
    if type(backends.get("cuda")).__name__ != "CupyBackend":
        pytest.skip("the 'cuda' backend is not CuPy's")
    # NOTE: the gauge-fixing wrappers of qr/svd/eigh read values with .numpy(), which PyTorch
    # (and ember) refuse on a cuda tensor; read through the host instead.
    import op_db.linalg
    monkeypatch.setattr(op_db.linalg, "_np", lambda x: x.detach().cpu().numpy())


class _On:
    """The `ember` module as op-table callables see it, with tensor() creating on `device`:
    helper tensors an entry builds (gauge signs, index tensors) sit beside its inputs."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, name):
        return getattr(ember, name)

    def tensor(self, data, **kwargs):
        kwargs.setdefault("device", self._device)
        return ember.tensor(data, **kwargs)


ON_CUDA = _On(CUDA)


def _dtypes(info):
    if os.environ.get("EMBER_GPU_ALL_DTYPES"):
        return info.dtypes
    low = [d for d in info.dtypes if d in LOW][:1]
    ints = [d for d in info.dtypes if d in INTS][:1]
    main = [d for d in info.dtypes if d == "float32"] or list(info.dtypes[:1])
    return tuple(dict.fromkeys(main + low + ints))


def _cases():
    return [pytest.param(info, d, id=f"{info.name}-{d}") for info in OPS for d in _dtypes(info)]


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _on_cuda(args, requires_grad=()):
    return [to_ember(a).cuda().requires_grad_(i in requires_grad) if isinstance(a, np.ndarray)
            else a for i, a in enumerate(args)]


def _host(info, t):
    a = as_numpy(t.detach().cpu())
    if info.name in UNORDERED:
        a = np.sort_complex(a.reshape(-1)) if a.dtype.kind == "c" else np.sort(a.reshape(-1))
    return a


# ---------------------------------------------------------------------- training runs
def _train(make_model, x, y, device, steps=5):
    """Losses and final state of `steps` SGD-momentum steps from the seed-0 initial weights."""
    ember.manual_seed(0)
    model = make_model().to(device)
    opt = ember.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = ember.nn.CrossEntropyLoss()
    x, y = x.to(device), y.to(device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.device == device for p in model.parameters())
    return losses, {k: as_numpy(v.cpu()) for k, v in model.state_dict().items()}


def _same_training(make_model, x, y):
    cpu_losses, cpu_state = _train(make_model, x, y, CPU)
    gpu_losses, gpu_state = _train(make_model, x, y, CUDA)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4, atol=1e-4)
    assert cpu_losses[-1] < cpu_losses[0]   # it trained
    for k in cpu_state:
        assert_close(gpu_state[k], cpu_state[k], atol=1e-4, rtol=1e-4)


def test_mlp_training_matches_cpu():
    nn = ember.nn
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((32, 20)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 5, 32))
    _same_training(lambda: nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5)), x, y)


def test_cnn_training_matches_cpu():
    nn = ember.nn
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((8, 3, 8, 8)).astype(np.float32))
    y = ember.tensor(rng.integers(0, 4, 8))
    _same_training(lambda: nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6),
                                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                         nn.Linear(6 * 4 * 4, 4)), x, y)


# ---------------------------------------------------------------------- LSTM and attention
def _forward_backward(fn, arrays, device):
    """fn's outputs and the gradients of a fixed weighted sum of them w.r.t. `arrays`."""
    inputs = [ember.tensor(a, device=device, requires_grad=True) for a in arrays]
    outs = _outputs(fn(*inputs))
    rng = np.random.default_rng(3)
    loss = sum((o * ember.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32),
                                 device=device)).sum() for o in outs)
    loss.backward()
    return [as_numpy(o.detach().cpu()) for o in outs], [as_numpy(t.grad.cpu()) for t in inputs]


def _same_on_both(fn_for, arrays, tol=1e-4):
    cpu_out, cpu_grads = _forward_backward(fn_for(CPU), arrays, CPU)
    gpu_out, gpu_grads = _forward_backward(fn_for(CUDA), arrays, CUDA)
    for a, e in zip(gpu_out + gpu_grads, cpu_out + cpu_grads):
        assert_close(a, e, atol=tol, rtol=tol)


def test_lstm_matches_cpu():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 7, 5)).astype(np.float32)

    def fn_for(device):
        ember.manual_seed(0)
        lstm = ember.nn.LSTM(5, 8, num_layers=2, batch_first=True).to(device)
        params = list(lstm.parameters())

        def run(xt):
            out, (h, c) = lstm(xt)
            assert out.device == device and h.device == device
            return out, h, c
        run.params = params
        return run
    _same_on_both(fn_for, [x])

    # the weights' gradients too
    grads = {}
    for device in (CPU, CUDA):
        run = fn_for(device)
        out, h, c = run(ember.tensor(x, device=device))
        (out.square().sum() + h.sum() + c.sum()).backward()
        grads[device.type] = [as_numpy(p.grad.cpu()) for p in run.params]
    for a, e in zip(grads["cuda"], grads["cpu"]):
        assert_close(a, e, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention_matches_cpu(causal):
    F = ember.nn.functional
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 6, 8)).astype(np.float32) for _ in range(3))
    mask = rng.random((6, 6)) > 0.3
    np.fill_diagonal(mask, True)

    def fn_for(device):
        m = None if causal else ember.tensor(mask, device=device)
        return lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                              is_causal=causal)
    _same_on_both(fn_for, [q, k, v])


# ---------------------------------------------------------------------- save / load
def test_save_cuda_model_load_on_cpu():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.BatchNorm1d(3)).cuda()
    buf = io.BytesIO()
    ember.save(model.state_dict(), buf)
    buf.seek(0)
    loaded = ember.load(buf, map_location="cpu")
    state = model.state_dict()
    assert list(loaded) == list(state)
    for name, t in loaded.items():
        assert t.device == CPU, name
        assert t.dtype is state[name].dtype
        np.testing.assert_array_equal(as_numpy(t), as_numpy(state[name].cpu()))
    restored = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.BatchNorm1d(3))
    restored.load_state_dict(loaded)
    x = ember.randn(5, 4)
    model.eval()
    restored.eval()
    assert_close(as_numpy(model(x.cuda()).detach().cpu()), as_numpy(restored(x).detach()))


# ---------------------------------------------------------------------- autocast and scaler
def test_autocast_cuda_float16():
    lin = ember.nn.Linear(8, 4).cuda()
    x = ember.randn(2, 8, device="cuda")
    with ember.autocast("cuda", dtype=ember.float16):
        y = lin(x)
        s = y.sum()
    assert y.dtype is ember.float16 and y.device == CUDA
    assert s.dtype is ember.float32
    expected = as_numpy(ember.nn.functional.linear(x.half().float(), lin.weight.half().float(),
                                                   lin.bias.half().float()).cpu())
    assert_close(as_numpy(y.detach().float().cpu()), expected, atol=1e-2, rtol=1e-2)


def test_grad_scaler_cuda_step():
    ember.manual_seed(0)
    model = ember.nn.Linear(6, 3).cuda()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler("cuda")
    x = ember.randn(4, 6, device="cuda")
    before = [as_numpy(p.detach().cpu()).copy() for p in model.parameters()]
    with ember.autocast("cuda", dtype=ember.float16):
        loss = model(x).float().square().mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    grads = [as_numpy(p.grad.cpu()).copy() for p in model.parameters()]
    assert all(np.isfinite(g).all() for g in grads)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 65536.0   # no inf/NaN: the scale stays
    for p, b, g in zip(model.parameters(), before, grads):
        assert p.device == CUDA
        assert_close(as_numpy(p.detach().cpu()), b - 0.1 * g, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------- the op table
@pytest.mark.parametrize("info,dtype", _cases())
def test_op_matches_cpu(info, dtype):
    """The op on cuda tensors gives the cpu result: dtype, shape, values, on cuda:0."""
    rng = np.random.default_rng(1)
    for sample in info.samples(rng, dtype):
        try:
            expected = _outputs(info.op(ember, *[to_ember(a) for a in sample.args],
                                        **sample.kwargs))
        except Exception as exc:  # noqa: BLE001 - the cpu error is the expected outcome
            with pytest.raises(type(exc)):
                info.op(ON_CUDA, *_on_cuda(sample.args), **sample.kwargs)
            continue
        actual = _outputs(info.op(ON_CUDA, *_on_cuda(sample.args), **sample.kwargs))
        assert len(actual) == len(expected), info.name
        for a, e in zip(actual, expected):
            if not isinstance(e, ember.Tensor):
                assert a == e, info.name
                continue
            assert a.device == CUDA, f"{info.name}: result on {a.device}"
            assert a.dtype is e.dtype, f"{info.name}: {a.dtype} != {e.dtype}"
            assert tuple(a.shape) == tuple(e.shape), info.name
            assert_close(_host(info, a), _host(info, e), **op_tolerance(info, dtype))


def _grads(info, sample, device):
    """Gradients of sum_k <output_k, w_k> (fixed random w_k) w.r.t. the float inputs."""
    args = sample.args
    wrt = sample.grad if sample.grad is not None else [
        i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float32]
    if device == CPU:
        inputs = [to_ember(a, requires_grad=i in wrt) for i, a in enumerate(args)]
        outs = info.op(ember, *inputs, **sample.kwargs)
    else:
        inputs = _on_cuda(args, wrt)
        outs = info.op(ON_CUDA, *inputs, **sample.kwargs)
    outs = [o for o in _outputs(outs) if isinstance(o, ember.Tensor)
            and o.dtype.is_floating_point and o.requires_grad]
    if not outs:
        return None
    rng = np.random.default_rng(7)
    loss = sum((o * ember.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32),
                                 device=device)).sum() for o in outs)
    return list(ember.autograd.grad(loss, [inputs[i] for i in wrt], allow_unused=True))


@pytest.mark.parametrize("info", [pytest.param(i, id=i.name) for i in OPS
                                  if i.grad and "float32" in i.dtypes])
def test_grad_matches_cpu(info):
    """float32 gradients through the cuda op equal those through the cpu op."""
    rng = np.random.default_rng(2)
    for sample in info.samples(rng, "float32"):
        try:
            expected = _grads(info, sample, CPU)
        except Exception:  # noqa: BLE001 - the forward test checks error agreement
            continue
        actual = _grads(info, sample, CUDA)
        if expected is None:
            assert actual is None, info.name
            continue
        for a, e in zip(actual, expected):
            assert (a is None) == (e is None), info.name
            if e is not None:
                assert a.device == CUDA and a.dtype is e.dtype, info.name
                tol = max(info.grad_atol, 1e-4)
                assert_close(as_numpy(a.cpu()), as_numpy(e), atol=tol, rtol=tol)
