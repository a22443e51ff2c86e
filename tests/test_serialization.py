"""ember.save / ember.load: PyTorch's format both ways, sharing, safety, bad files."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import ember

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]


def _tensor(lib, dtype, shape=(3, 4), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 10
    t = lib.tensor(a.astype(np.float64))
    return t.to(getattr(lib, dtype))


def _objects(lib):
    """The covered objects, built the same way in either library."""
    base = _tensor(lib, "float32", (4, 5))
    objects = {f"t_{d}": _tensor(lib, d) for d in DTYPES}
    objects.update({
        "zero_dim": lib.tensor(3.5),
        "empty": lib.zeros(0, 3),
        "base": base,
        "view_t": base.t(),
        "view_slice": base[1:3, ::2],
        "param": lib.nn.Parameter(lib.ones(2, 2)),
        "frozen": lib.nn.Parameter(lib.ones(2), requires_grad=False),
        "nested": [lib.arange(3), (lib.ones(1), {"x": lib.zeros(2)})],
        "ordered": collections.OrderedDict(a=lib.ones(1), b=2),
        "config": {"lr": 0.1, "name": "run", "epoch": 3, "flags": [True, None]},
    })
    return objects


def _same(ours, theirs):
    """ours (ember) equals theirs (torch or ember): values, dtype, shape, strides."""
    if hasattr(theirs, "shape") and hasattr(theirs, "dtype"):
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        assert tuple(ours.stride()) == tuple(theirs.stride())
        assert type(ours).__name__ == type(theirs).__name__
        assert ours.requires_grad == theirs.requires_grad
        a = ours.detach().float().numpy() if str(ours.dtype).endswith("bfloat16") else \
            ours.detach().numpy()
        b = theirs.detach().float().numpy() if str(theirs.dtype).endswith("bfloat16") else \
            theirs.detach().numpy()
        np.testing.assert_array_equal(a, b)
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs) and type(ours).__name__ == type(theirs).__name__
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs) and type(ours) is type(theirs)
        for x, y in zip(ours, theirs):
            _same(x, y)
    else:
        assert ours == theirs


def test_ember_roundtrip_keeps_values_and_sharing(tmp_path):
    objs = _objects(ember)
    ember.save(objs, tmp_path / "ckpt.pt")
    back = ember.load(tmp_path / "ckpt.pt")
    _same(back, objs)
    back["base"][0, 0] = 123.0
    assert back["view_t"][0, 0].item() == 123.0  # views still share one storage


def test_ember_file_loads_in_torch(tmp_path, torch_mod):
    ember.save(_objects(ember), tmp_path / "e.pt")
    theirs = torch_mod.load(tmp_path / "e.pt", weights_only=True)
    _same_cross(theirs, _objects(ember))
    assert theirs["view_t"].data_ptr() == theirs["base"].data_ptr()


def test_torch_file_loads_in_ember(tmp_path, torch_mod):
    torch_mod.save(_objects(torch_mod), tmp_path / "t.pt")
    ours = ember.load(tmp_path / "t.pt")
    _same(ours, _objects(torch_mod))
    assert np.shares_memory(ours["view_slice"]._data, ours["base"]._data)


def _same_cross(theirs, ours):
    _same(ours, theirs)


def test_legacy_torch_format_loads(tmp_path, torch_mod):
    obj = {"w": torch_mod.arange(6.0).reshape(2, 3), "v": torch_mod.arange(6.0)[2:]}
    torch_mod.save(obj, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    ours = ember.load(tmp_path / "old.pt")
    _same(ours, obj)


def test_module_and_optimizer_state_dicts_cross(tmp_path, torch_mod):
    torch_mod.manual_seed(0)
    tmodel = torch_mod.nn.Sequential(torch_mod.nn.Linear(3, 4), torch_mod.nn.ReLU(),
                                     torch_mod.nn.Linear(4, 2))
    topt = torch_mod.optim.Adam(tmodel.parameters())
    tmodel(torch_mod.ones(1, 3)).sum().backward()
    topt.step()
    torch_mod.save({"model": tmodel.state_dict(), "optimizer": topt.state_dict(),
                    "epoch": 7}, tmp_path / "ckpt.pt")
    ckpt = ember.load(tmp_path / "ckpt.pt")
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    model.load_state_dict(ckpt["model"])
    assert hasattr(ckpt["model"], "_metadata")
    opt = ember.optim.Adam(model.parameters())
    opt.load_state_dict(ckpt["optimizer"])
    x = np.ones((2, 3), dtype=np.float32)
    np.testing.assert_allclose(model(ember.tensor(x)).detach().numpy(),
                               tmodel(torch_mod.tensor(x)).detach().numpy(), rtol=1e-6)
    ember.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, tmp_path / "e.pt")
    back = torch_mod.load(tmp_path / "e.pt")
    tmodel.load_state_dict(back["model"])
    topt.load_state_dict(back["optimizer"])
    assert back["optimizer"]["param_groups"] == topt.state_dict()["param_groups"]


def test_whole_model_with_weights_only_false(tmp_path):
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Tanh())
    ember.save(model, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        ember.load(tmp_path / "m.pt")
    back = ember.load(tmp_path / "m.pt", weights_only=False)
    x = ember.ones(1, 2)
    np.testing.assert_array_equal(back(x).detach().numpy(), model(x).detach().numpy())


def test_env_var_disables_weights_only(tmp_path, monkeypatch):
    ember.save(ember.nn.Linear(1, 1), tmp_path / "m.pt")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    assert isinstance(ember.load(tmp_path / "m.pt"), ember.nn.Linear)


class _Point:
    def __init__(self, x):
        self.x = x


def test_safe_globals_allowlist(tmp_path):
    ember.save({"p": _Point(3)}, tmp_path / "p.pt")
    with pytest.raises(pickle.UnpicklingError, match="_Point"):
        ember.load(tmp_path / "p.pt")
    with ember.serialization.safe_globals([_Point]):
        assert ember.load(tmp_path / "p.pt")["p"].x == 3
    assert ember.serialization.get_safe_globals() == []
    ember.serialization.add_safe_globals([_Point])
    try:
        assert ember.load(tmp_path / "p.pt")["p"].x == 3
    finally:
        ember.serialization.clear_safe_globals()


class _Evil:
    def __init__(self, call, arg):
        self.call, self.arg = call, arg

    def __reduce__(self):
        return self.call, (self.arg,)


@pytest.mark.parametrize("make", [
    lambda marker: _Evil(os.system, f"touch {marker}"),
    lambda marker: _Evil(eval, f"open({str(marker)!r}, 'w')"),
    lambda marker: _Evil(__import__("subprocess").Popen, ["touch", str(marker)]),
    lambda marker: _Evil(__import__, "antigravity"),
])
def test_malicious_pickles_execute_nothing(tmp_path, make):
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(make(marker), protocol=2))
        z.writestr("archive/version", "3\n")
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(buf)
    assert not marker.exists()
    buf.seek(0)
    raw = io.BytesIO(pickle.dumps(make(marker), protocol=2))
    with pytest.raises((pickle.UnpicklingError, RuntimeError)):
        ember.load(raw)
    assert not marker.exists()


def test_bad_files_give_clear_errors(tmp_path):
    good = io.BytesIO()
    ember.save({"w": ember.arange(100.0)}, good)
    data = good.getvalue()
    with pytest.raises(RuntimeError, match="truncated|not a checkpoint|zip"):
        ember.load(io.BytesIO(data[: len(data) // 2]))
    with pytest.raises(RuntimeError, match="magic number"):
        ember.load(io.BytesIO(b"this is not a checkpoint at all"))
    missing = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(missing, "w") as dst:
        for item in src.infolist():
            if not item.filename.endswith("data/0"):
                dst.writestr(item, src.read(item))
    missing.seek(0)
    with pytest.raises(RuntimeError, match="data/0"):
        ember.load(missing)
    small = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(small, "w") as dst:
        for item in src.infolist():
            content = src.read(item)
            dst.writestr(item, content[:16] if item.filename.endswith("data/0") else content)
    small.seek(0)
    with pytest.raises(RuntimeError, match="truncated or corrupt"):
        ember.load(small)


def test_map_location_and_cuda_checkpoints(tmp_path):
    ember.save({"w": ember.ones(2)}, tmp_path / "a.pt")
    assert ember.load(tmp_path / "a.pt", map_location="cpu")["w"].device.type == "cpu"
    assert ember.load(tmp_path / "a.pt", map_location=ember.device("cpu"))["w"].sum() == 2
    assert ember.load(tmp_path / "a.pt", map_location=lambda s, loc: s)["w"].sum() == 2
    assert ember.load(tmp_path / "a.pt", map_location={"cpu": "cpu"})["w"].sum() == 2


def test_torch_cuda_location_requires_map_location(tmp_path, torch_mod):
    path = tmp_path / "c.pt"
    ember.save({"w": ember.ones(2)}, path)
    path2 = tmp_path / "c2.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(path2, "w") as dst:
        for item in src.infolist():
            content = src.read(item)
            if item.filename.endswith("data.pkl"):  # the storage's location: cpu -> cuda:0
                content = content.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(item, content)
    with pytest.raises(RuntimeError, match="CUDA device"):
        ember.load(path2)
    assert ember.load(path2, map_location="cpu")["w"].sum() == 2


def test_mmap_load_reads_lazily(tmp_path):
    w = ember.arange(1000.0)
    ember.save({"w": w}, tmp_path / "m.pt")
    back = ember.load(tmp_path / "m.pt", mmap=True)
    np.testing.assert_array_equal(back["w"].numpy(), w.numpy())
    import mmap
    base, chain = back["w"]._data, []
    while base is not None and not isinstance(base, mmap.mmap) and len(chain) < 10:
        chain.append(base)
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    assert isinstance(base, mmap.mmap)  # the tensor views the mapped file


def test_safetensors_interop(tmp_path, torch_mod):
    st = pytest.importorskip("safetensors.torch")
    tensors = {"a": ember.arange(6.0).reshape(2, 3), "b": ember.ones(3, dtype=ember.bfloat16),
               "c": ember.tensor([1, 2], dtype=ember.int64)}
    ember.serialization.save_safetensors(tensors, tmp_path / "e.safetensors",
                                         metadata={"format": "pt"})
    theirs = st.load_file(str(tmp_path / "e.safetensors"))
    for k in tensors:
        _same(tensors[k], theirs[k])
    st.save_file({k: v.contiguous() for k, v in theirs.items()},
                 str(tmp_path / "t.safetensors"))
    ours = ember.serialization.load_safetensors(tmp_path / "t.safetensors")
    for k in tensors:
        _same(ours[k], theirs[k])


def _resnet_like(lib):
    """A small torchvision-style ResNet (conv/bn/relu blocks with a downsampling shortcut),
    written once for either library."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = nn.Sequential(Block(8, 8, 1), Block(8, 16, 2))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.layer1(self.relu(self.bn1(self.conv1(x))))
            return self.fc(lib.flatten(self.avgpool(x), 1))
    return Net()


def test_torch_resnet_state_dict_loads_and_agrees(tmp_path, torch_mod):
    torch_mod.manual_seed(0)
    theirs = _resnet_like(torch_mod)
    theirs.train()
    with torch_mod.no_grad():  # give the BatchNorm running statistics non-trivial values
        for _ in range(3):
            theirs(torch_mod.randn(4, 3, 16, 16))
    theirs.eval()
    torch_mod.save(theirs.state_dict(), tmp_path / "resnet.pt")
    ours = _resnet_like(ember)
    ours.load_state_dict(ember.load(tmp_path / "resnet.pt"), strict=True)
    ours.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    with torch_mod.no_grad():
        expected = theirs(torch_mod.tensor(x)).numpy()
    with ember.no_grad():
        actual = ours(ember.tensor(x)).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
