"""CUDA device semantics on the test-only stand-in (a NumPy-backed 'cuda' with two devices;
ember/backends/standin.py): ember.cuda's API, transfers and mixing errors, modules and
optimizers on devices, pinned memory, map_location, per-device generators, streams and
events, out-of-memory and ordinal errors, autocast's CUDA lists and GradScaler on 'cuda'.

References: the same computation on the CPU (ember's and real PyTorch's), PyTorch's messages,
and real PyTorch reading what ember saved from a device."""
import copy
import io
import time
import warnings

import numpy as np
import pytest

import ember
from checks import without_gpu
from ember import nn

pytestmark = pytest.mark.usefixtures("cuda_standin")


def _raises(exc_type, text, fn):
    with pytest.raises(exc_type) as info:
        fn()
    assert str(info.value).startswith(text), str(info.value)


# ---------------------------------------------------------------------- ember.cuda API
def test_devices_and_current_device():
    cuda = ember.cuda
    assert cuda.is_available() and cuda.device_count() == 2 and cuda.current_device() == 0
    cuda.set_device(1)
    assert cuda.current_device() == 1 and ember.zeros(1, device="cuda").device.index == 0
    cuda.set_device("cuda:0")
    with cuda.device(1):
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    with cuda.device_of(ember.zeros(1, device="cuda:1")):
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    props = cuda.get_device_properties(0)
    assert props.name == cuda.get_device_name() and props.total_memory > 0
    assert cuda.get_device_capability(1) == (props.major, props.minor)
    assert repr(props).startswith(f"_CudaDeviceProperties(name='{props.name}', major=")
    assert cuda.is_bf16_supported() and cuda.get_arch_list() == [
        f"sm_{props.major}{props.minor}"]
    assert ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.device_count() == 2 and ember.accelerator.is_available()
    assert ember.version.cuda == ember.backends.get("cuda").runtime_version is not None
    assert ember.backends.cudnn.version() is None
    assert cuda.is_initialized()


def test_invalid_device_ordinal():
    for make in (lambda: ember.zeros(2, device="cuda:2"), lambda: ember.tensor([1.0],
                                                                               device="cuda:7"),
                 lambda: ember.ones(2).to("cuda:2"), lambda: ember.cuda.set_device(5),
                 lambda: ember.randn(2, device="cuda:3"),
                 lambda: ember.cuda.get_device_properties(2)):
        _raises(RuntimeError, "CUDA error: invalid device ordinal", make)


def test_out_of_memory_names_the_sizes():
    with pytest.raises(ember.cuda.OutOfMemoryError) as info:
        ember.empty(2**40, device="cuda:1")   # 4 TiB of float32
    assert isinstance(info.value, RuntimeError)
    text = str(info.value)
    assert text.startswith("CUDA out of memory. Tried to allocate 4096.00 GiB. GPU 1 has a "
                           "total capacity of "), text
    huge = ember.zeros(1, device="cuda").expand(2**40)   # a view: nothing allocated yet
    with pytest.raises(ember.cuda.OutOfMemoryError, match="^CUDA out of memory. GPU 0 has"):
        huge.contiguous()                                 # an op's allocation fails
    x = ember.ones(3, device="cuda")   # the device still works afterwards
    assert (x + 1).cpu().tolist() == [2.0, 2.0, 2.0]


def test_memory_statistics():
    cuda = ember.cuda
    allocated, reserved = cuda.memory_allocated(), cuda.memory_reserved()
    assert cuda.max_memory_allocated() >= allocated >= 0
    assert cuda.max_memory_reserved() >= reserved >= allocated
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == allocated
    assert stats["reserved_bytes.all.peak"] == cuda.max_memory_reserved()
    summary = cuda.memory_summary(1)
    assert "memory summary, device ID 1" in summary and "Allocated memory" in summary
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == cuda.memory_allocated()
    free, total = cuda.mem_get_info()
    assert 0 <= free <= total == cuda.get_device_properties().total_memory
    cuda.empty_cache()
    cuda.synchronize()
    cuda.synchronize("cuda:1")


# ---------------------------------------------------------------------- streams and events
def test_streams_and_events():
    cuda = ember.cuda
    default = cuda.default_stream()
    assert cuda.current_stream() == default and default.device == ember.device("cuda:0")
    s = cuda.Stream(device=1)
    assert s.device == ember.device("cuda:1") and s != default and s.query()
    with cuda.stream(s):
        assert cuda.current_stream(1) == s
    assert cuda.current_stream(1) == cuda.default_stream(1)
    with cuda.stream(None):
        assert cuda.current_stream() == default
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    assert repr(start) == "<ember.cuda.Event uninitialized>"
    start.record()
    time.sleep(0.02)
    end.record()
    end.synchronize()
    assert start.query() and 15.0 <= start.elapsed_time(end) < 2000.0
    assert repr(end) == "<ember.cuda.Event initialized>"
    _raises(RuntimeError, "Both events must be created with argument 'enable_timing=True'.",
            lambda: cuda.Event().elapsed_time(end))
    _raises(RuntimeError, "Both events must be recorded",
            lambda: cuda.Event(enable_timing=True).elapsed_time(end))
    s.wait_stream(default)
    event = s.record_event()
    event.wait(default)
    default.synchronize()


# ---------------------------------------------------------------------- tensors on devices
def test_transfers_between_devices():
    a = ember.arange(6.0).reshape(2, 3)
    b = a.to("cuda:1", non_blocking=True)
    assert b.device == ember.device("cuda:1") and b.get_device() == 1 and b.is_cuda
    c = b.cuda(0)
    assert c.device == ember.device("cuda:0") and c.cuda() is c
    assert b.to(c).device == c.device and a.to(b).device == b.device
    np.testing.assert_array_equal(c.cpu().numpy(), a.numpy())
    d = (b * 2 + 1).sum(0)
    assert d.device == b.device
    np.testing.assert_array_equal(d.cpu().numpy(), (a.numpy() * 2 + 1).sum(0))
    _raises(RuntimeError, "Expected all tensors to be on the same device, but found at least "
            "two devices, cuda:1 and cuda:0!", lambda: b + c)
    _raises(RuntimeError, "Expected all tensors to be on the same device, but found at least "
            "two devices, cuda:0 and cpu!", lambda: ember.matmul(c, a.T))


def test_backward_on_a_second_device_and_across():
    w = ember.randn(3, 3, dtype=ember.float64).to("cuda:1").requires_grad_()
    x = ember.randn(4, 3, dtype=ember.float64)
    y = (x.to("cuda:1") @ w).tanh().sum()
    y.backward()
    assert w.grad.device == w.device
    wn, xn = w.detach().cpu().numpy(), x.numpy()
    expected = xn.T @ (1 - np.tanh(xn @ wn) ** 2)
    np.testing.assert_allclose(w.grad.cpu().numpy(), expected, rtol=1e-12)


def test_rng_is_per_device_and_leaves_the_cpu_stream(torch_mod):
    ember.manual_seed(3)
    torch_mod.manual_seed(3)
    on_gpu = ember.rand(5, device="cuda")
    # the CPU stream is untouched by CUDA draws, as in PyTorch
    np.testing.assert_array_equal(ember.rand(4).numpy(), torch_mod.rand(4).numpy())
    assert on_gpu.device == ember.device("cuda:0")
    # a CUDA generator runs the same mt19937 stream from the same seed: same values as cpu
    np.testing.assert_array_equal(on_gpu.cpu().numpy(), torch_mod.manual_seed(3) and
                                  torch_mod.rand(5).numpy())
    state = ember.cuda.get_rng_state()
    first = ember.randn(6, device="cuda").cpu()
    ember.cuda.set_rng_state(state)
    np.testing.assert_array_equal(ember.randn(6, device="cuda").cpu().numpy(), first.numpy())
    ember.cuda.manual_seed_all(7)
    r0, r1 = ember.randint(0, 100, (8,), device="cuda:0"), ember.randint(0, 100, (8,),
                                                                         device="cuda:1")
    assert r1.device.index == 1 and r0.cpu().tolist() == r1.cpu().tolist()
    assert ember.cuda.initial_seed() == 7
    _raises(RuntimeError, "Expected a 'cuda' device type for generator but found 'cpu'",
            lambda: ember.rand(2, device="cuda", generator=ember.Generator()))
    g = ember.Generator(device="cuda")
    _raises(RuntimeError, "Expected a 'cpu' device type for generator but found 'cuda'",
            lambda: ember.rand(2, generator=g))
    assert ember.rand(2, device="cuda", generator=g.manual_seed(1)).device.type == "cuda"
    x = ember.ones(1000, device="cuda")
    ember.manual_seed(5)
    kept = nn.functional.dropout(x, 0.5)
    ember.manual_seed(5)
    assert kept.device == x.device and (nn.functional.dropout(x, 0.5) == kept).all()
    assert 350 < int((kept != 0).sum()) < 650 and len(ember.cuda.default_generators) == 2


# ---------------------------------------------------------------------- modules and optimizers
def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))


@pytest.mark.parametrize("make_opt", [
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: ember.optim.Adam(p, lr=0.01),
    lambda p: ember.optim.AdamW(p, lr=0.01, amsgrad=True)], ids=["sgd", "adam", "adamw"])
def test_training_on_a_device_equals_the_cpu(make_opt):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((8, 6)), dtype=ember.float32)
    y = ember.tensor(rng.integers(0, 3, 8))
    results = []
    for device in ("cpu", "cuda:1"):
        model = _mlp().to(device)
        opt = make_opt(model.parameters())
        for _ in range(3):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
            opt.step()
        for p in model.parameters():
            assert p.device == ember.device(device)
            assert all(v.device == p.device for v in opt.state[p].values()
                       if isinstance(v, ember.Tensor) and v.dim() > 0)
        assert model[1].running_mean.device == ember.device(device)
        results.append((model, opt))
    for (a, _), (b, _) in zip(results[:1], results[1:]):
        for pa, pb in zip(a.state_dict().values(), b.state_dict().values()):
            np.testing.assert_allclose(pb.cpu().numpy(), pa.numpy(), rtol=1e-5, atol=1e-6)
    # an optimizer state saved on the device loads back onto CPU parameters
    cpu_model, cpu_opt = results[0]
    cpu_opt.load_state_dict(results[1][1].state_dict())
    for p in cpu_model.parameters():
        assert all(v.device == p.device for v in cpu_opt.state[p].values()
                   if isinstance(v, ember.Tensor) and v.dim() > 0)


def test_module_cuda_cpu_and_deepcopy():
    model = _mlp()
    assert model.cuda() is model and next(model.parameters()).device == ember.device("cuda:0")
    model.cuda(1)
    assert {p.device.index for p in model.parameters()} == {1}
    clone = copy.deepcopy(model)
    assert all(p.device == ember.device("cuda:1") for p in clone.parameters())
    model.cpu()
    assert all(p.device.type == "cpu" for p in model.parameters())
    assert all(b.device.type == "cpu" for b in model.buffers())
    for a, b in zip(model.parameters(), clone.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().cpu().numpy())


def test_data_parallel_splits_across_the_two_devices():
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((6, 6)), dtype=ember.float32)
    model = _mlp().eval()
    expected = model(x)
    dp = nn.DataParallel(model.cuda(0))
    assert dp.device_ids == [0, 1]
    out = dp(x.cuda(0))
    assert out.device == ember.device("cuda:0")
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    out.sum().backward()
    assert model[0].weight.grad.device == ember.device("cuda:0")


# ---------------------------------------------------------------------- pinned memory
def test_pin_memory():
    t = ember.arange(6.0).reshape(2, 3)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned() and p.pin_memory() is p and not t.is_pinned()
    np.testing.assert_array_equal(p.numpy(), t.numpy())
    assert p[1].is_pinned()   # a view of pinned memory is pinned
    assert ember.zeros(2, pin_memory=True).is_pinned()
    assert ember.empty(3, pin_memory=True, requires_grad=True).is_leaf
    assert ember.tensor([1, 2], pin_memory=True).is_pinned()
    assert ember.randn(3, pin_memory=True).is_pinned()
    _raises(RuntimeError, "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be "
            "pinned", lambda: t.cuda().pin_memory())
    assert not t.cuda().is_pinned()
    w = ember.ones(2, requires_grad=True)
    (w.pin_memory() * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


class _Pairs(ember.utils.data.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return {"x": ember.full((2,), float(i)), "y": i}


@pytest.mark.parametrize("workers", [0, 2])
def test_dataloader_pins_batches(workers):
    loader = ember.utils.data.DataLoader(_Pairs(), batch_size=3, pin_memory=True,
                                         num_workers=workers)
    batches = list(loader)
    assert len(batches) == 2
    for i, batch in enumerate(batches):
        assert batch["x"].is_pinned() and batch["y"].is_pinned()
        assert batch["y"].tolist() == [3 * i, 3 * i + 1, 3 * i + 2]
        moved = batch["x"].cuda(non_blocking=True)
        assert moved.device.type == "cuda" and moved[:, 0].cpu().tolist() == \
            [float(v) for v in batch["y"].tolist()]


# ---------------------------------------------------------------------- checkpoints
def _checkpoint():
    model = _mlp().to("cuda:1")
    buf = io.BytesIO()
    state = {"model": model.state_dict(), "extra": ember.arange(3, device="cuda:0")}
    ember.save(state, buf)
    return model, buf


def test_map_location_places_tensors():
    model, buf = _checkpoint()
    cases = [(None, "cuda:1", "cuda:0"), ("cpu", "cpu", "cpu"),
             (ember.device("cuda:0"), "cuda:0", "cuda:0"), ("cuda", "cuda:0", "cuda:0"),
             ({"cuda:1": "cuda:0"}, "cuda:0", "cuda:0"), ({"cuda:1": "cpu"}, "cpu", "cuda:0"),
             (lambda storage, loc: storage, "cpu", "cpu"),
             (lambda storage, loc: storage.cuda(1), "cuda:1", "cuda:1"),
             (lambda storage, loc: None, "cuda:1", "cuda:0")]
    for map_location, weights_at, extra_at in cases:
        buf.seek(0)
        loaded = ember.load(buf, map_location=map_location)
        weight = loaded["model"]["0.weight"]
        assert str(weight.device) == weights_at, map_location
        assert str(loaded["extra"].device) == extra_at, map_location
        np.testing.assert_array_equal(weight.cpu().numpy(), model[0].weight.detach().cpu()
                                      .numpy())
    fresh = _mlp().cuda(1)
    buf.seek(0)
    fresh.load_state_dict(ember.load(buf)["model"])
    assert fresh[0].weight.device == ember.device("cuda:1")


@without_gpu
def test_gpu_checkpoint_on_a_cpu_only_machine(torch_mod, monkeypatch, tmp_path):
    model, buf = _checkpoint()
    path = tmp_path / "gpu.pt"
    path.write_bytes(buf.getvalue())
    ember.backends.unregister("cuda")
    monkeypatch.delenv(ember.backends.STANDIN_VARIABLE)
    assert not ember.cuda.is_available()
    _raises(RuntimeError, "Attempting to deserialize object on a CUDA device but "
            "torch.cuda.is_available() is False.", lambda: ember.load(path))
    loaded = ember.load(path, map_location="cpu")
    # real PyTorch (a CPU build) reads the same file, device locations and all
    theirs = torch_mod.load(path, map_location="cpu")
    for key, value in theirs["model"].items():
        assert loaded["model"][key].device.type == "cpu"
        np.testing.assert_array_equal(loaded["model"][key].numpy(), value.numpy())
    np.testing.assert_array_equal(loaded["extra"].numpy(), theirs["extra"].numpy())
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA"):
        torch_mod.load(path)


# ---------------------------------------------------------------------- mixed precision
def test_autocast_cuda_lists():
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((4, 8)), dtype=ember.float32).cuda()
    lin = nn.Linear(8, 5).cuda()
    norm = nn.LayerNorm(5).cuda()
    with ember.autocast("cuda", dtype=ember.float16):
        out = lin(x)
        assert out.dtype == ember.float16 and out.device == x.device
        assert out.exp().dtype == ember.float32          # CUDA's float32 list
        assert out.sum().dtype == ember.float32
        assert norm(out).dtype == ember.float32
        assert nn.functional.softmax(out, -1).dtype == ember.float32
        assert (out * 2).dtype == ember.float16          # not listed: runs as is
        on_cpu = nn.Linear(8, 5)(x.cpu())
        assert on_cpu.dtype == ember.float32             # only the cuda region is open
    with ember.autocast("cuda", dtype=ember.bfloat16):
        assert lin(x).dtype == ember.bfloat16
    with ember.autocast("cpu"):
        assert lin.cpu()(x.cpu()).exp().dtype == ember.bfloat16   # CPU's lists differ
    w = lin.weight.detach().cpu().numpy().astype(np.float16).astype(np.float32)
    xh = x.cpu().numpy().astype(np.float16).astype(np.float32)
    b = lin.bias.detach().cpu().numpy().astype(np.float16).astype(np.float32)
    expected = (xh @ w.T + b).astype(np.float16)
    np.testing.assert_allclose(out.detach().cpu().float().numpy(), expected, rtol=2e-3, atol=2e-3)


def test_grad_scaler_on_cuda_matches_torch_cpu(torch_mod):
    """The scaler's state machine on 'cuda' equals real PyTorch's (run on its 'cpu')."""
    def run(m, device, values):
        w = m.tensor([1.0, -2.0], requires_grad=True, device=device)
        opt = m.optim.SGD([w], lr=0.5)
        scaler = m.amp.GradScaler(device, init_scale=4.0, growth_interval=2)
        log = []
        for v in values:
            opt.zero_grad()
            scaler.scale((w * m.tensor(v, device=device)).sum()).backward()
            scaler.step(opt)
            scaler.update()
            log.append((scaler.get_scale(), w.detach().cpu().tolist()))
        return log
    values = [[1.0, 2.0], [float("inf"), 1.0], [0.5, 0.5], [1.0, 1.0], [float("nan"), 0.0]]
    assert run(ember, "cuda", values) == run(torch_mod, "cpu", values)


def test_cuda_amp_spellings():
    with pytest.warns(FutureWarning):
        region = ember.cuda.amp.autocast()
    with region:
        assert ember.matmul(ember.ones(2, 2, device="cuda"),
                            ember.ones(2, 2, device="cuda")).dtype == ember.float16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.amp.GradScaler("cuda").is_enabled()
