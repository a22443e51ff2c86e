"""The rest of the torch namespace programs touch: accelerator, backends flags, cuda on a
CPU machine, version, threads, determinism and matmul precision, compile, jit, hub and
utils.checkpoint. Compared against real PyTorch's CPU build where it has the feature."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def outcome(fn):
    """(exception type, first line of its message) or the value's repr, torch-spelled."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
            return type(exc).__name__, str(exc).replace("ember", "torch").split("\n")[0]
    return repr(r).replace("ember", "torch")


CALLS = {
    "accelerator.is_available": lambda m: m.accelerator.is_available(),
    "accelerator.current_accelerator": lambda m: m.accelerator.current_accelerator(),
    "accelerator.device_count": lambda m: m.accelerator.device_count(),
    "accelerator.current_device_index": lambda m: m.accelerator.current_device_index(),
    "accelerator.set_device_index": lambda m: m.accelerator.set_device_index(0),
    "accelerator.synchronize": lambda m: m.accelerator.synchronize(),
    "accelerator.memory_allocated": lambda m: m.accelerator.memory_allocated(),
    "cudnn flags": lambda m: (m.backends.cudnn.benchmark, m.backends.cudnn.deterministic,
                              m.backends.cudnn.enabled, m.backends.cudnn.allow_tf32),
    "cudnn.version": lambda m: m.backends.cudnn.version(),
    "cudnn.is_available": lambda m: m.backends.cudnn.is_available(),
    "cuda.matmul.allow_tf32": lambda m: m.backends.cuda.matmul.allow_tf32,
    "mps.is_available": lambda m: m.backends.mps.is_available(),
    "mps.is_built": lambda m: m.backends.mps.is_built(),
    "mkldnn": lambda m: (m.backends.mkldnn.is_available(), m.backends.mkldnn.enabled),
    "openmp": lambda m: m.backends.openmp.is_available(),
    "cuda.is_available": lambda m: m.cuda.is_available(),
    "cuda.device_count": lambda m: m.cuda.device_count(),
    "cuda.is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "cuda.manual_seed": lambda m: m.cuda.manual_seed(3),
    "cuda.manual_seed_all": lambda m: m.cuda.manual_seed_all(3),
    "cuda.empty_cache": lambda m: m.cuda.empty_cache(),
    "cuda.synchronize": lambda m: m.cuda.synchronize(),
    "cuda.current_device": lambda m: m.cuda.current_device(),
    "cuda.get_device_name": lambda m: m.cuda.get_device_name(0),
    "cuda.get_device_properties": lambda m: m.cuda.get_device_properties(0),
    "cuda.get_device_capability": lambda m: m.cuda.get_device_capability(),
    "cuda.memory_allocated": lambda m: m.cuda.memory_allocated(),
    "cuda.max_memory_allocated": lambda m: m.cuda.max_memory_allocated(),
    "cuda.memory_reserved": lambda m: m.cuda.memory_reserved(),
    "cuda.max_memory_reserved": lambda m: m.cuda.max_memory_reserved(),
    "cuda.memory_stats": lambda m: dict(m.cuda.memory_stats()),
    "cuda.mem_get_info": lambda m: m.cuda.mem_get_info(),
    "cuda.is_initialized": lambda m: m.cuda.is_initialized(),
    "cuda.get_arch_list": lambda m: m.cuda.get_arch_list(),
    "cuda.device(-1)": lambda m: m.cuda.device(-1).__enter__() is not None,
    "cuda.device(0)": lambda m: m.cuda.device(0).__enter__(),
    "cuda.set_device(-1)": lambda m: m.cuda.set_device(-1),
    "version.cuda": lambda m: m.version.cuda,
    "version.hip": lambda m: m.version.hip,
    "version.debug": lambda m: m.version.debug,
    "set_num_threads(0)": lambda m: m.set_num_threads(0),
    "set_num_threads(-2)": lambda m: m.set_num_threads(-2),
    "set_num_threads(1.5)": lambda m: m.set_num_threads(1.5),
    "deterministic default": lambda m: m.are_deterministic_algorithms_enabled(),
    "use_deterministic(1)": lambda m: m.use_deterministic_algorithms(1),
    "matmul precision default": lambda m: m.get_float32_matmul_precision(),
    "is_anomaly_enabled": lambda m: m.is_anomaly_enabled(),
    "is_autocast_enabled": lambda m: m.is_autocast_enabled("cpu"),
    "get_autocast_dtype cpu": lambda m: m.get_autocast_dtype("cpu"),
    "compile bad mode": lambda m: m.compile(lambda x: x, mode="foo"),
    "compile mode+options": lambda m: m.compile(lambda x: x, mode="default", options={}),
    "compile non-callable": lambda m: m.compile(3),
}


@pytest.mark.parametrize("case", list(CALLS), ids=list(CALLS))
def test_matches_torch_cpu_build(case, torch_mod):
    assert not ember.cuda.is_available()
    assert outcome(lambda: CALLS[case](ember)) == outcome(lambda: CALLS[case](torch_mod))


def test_cudnn_flags_are_settable():
    cudnn = ember.backends.cudnn
    old = cudnn.benchmark, cudnn.deterministic
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
        with cudnn.flags(enabled=False, benchmark=False):
            assert not cudnn.enabled and not cudnn.benchmark
        assert cudnn.enabled and cudnn.benchmark
    finally:
        cudnn.benchmark, cudnn.deterministic = old


def test_tf32_flag_follows_matmul_precision(torch_mod):
    for m in (ember, torch_mod):
        try:
            m.backends.cuda.matmul.allow_tf32 = True
            assert m.get_float32_matmul_precision() == "high"
            m.set_float32_matmul_precision("highest")
            assert m.backends.cuda.matmul.allow_tf32 is False
            m.set_float32_matmul_precision("medium")
            assert m.backends.cuda.matmul.allow_tf32 is True
        finally:
            m.set_float32_matmul_precision("highest")


def test_bad_matmul_precision_warns(torch_mod):
    for m in (ember, torch_mod):
        with pytest.warns(UserWarning, match="foo is not one of 'highest', 'high', or 'medium'"):
            m.set_float32_matmul_precision("foo")
        assert m.get_float32_matmul_precision() == "highest"


def test_deterministic_algorithms_round_trip(torch_mod):
    for m in (ember, torch_mod):
        try:
            m.use_deterministic_algorithms(True, warn_only=True)
            assert m.are_deterministic_algorithms_enabled()
            assert m.is_deterministic_algorithms_warn_only_enabled()
        finally:
            m.use_deterministic_algorithms(False)
        assert not m.are_deterministic_algorithms_enabled()


def test_num_threads_controls_blas():
    old = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        ctl = ember._threads._controllers()
        if isinstance(ctl, list) and ctl:   # the BLAS itself reports the new count
            assert all(getter() == 1 for _, getter in ctl)
    finally:
        ember.set_num_threads(old)
    assert ember.get_num_threads() == old


def test_version_strings(torch_mod):
    assert ember.version.__version__ == ember.__version__
    assert isinstance(ember.version.git_version, str) and ember.version.git_version
    assert set(torch_mod.version.__all__) <= set(ember.version.__all__) | {"__version__"}


def test_import_stays_light():
    """Heavy subpackages load on first use, not with `import ember`."""
    code = ("import sys, ember; print(sorted(m for m in ('ember.distributions', 'ember.hub', "
            "'ember.jit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)), check=True)
    assert out.stdout.strip() == "[]"
    assert ember.distributions.Normal is not None   # and they resolve lazily


# ---------------------------------------------------------------------- compile / jit
def test_compile_module_matches_torch_wrapping(torch_mod):
    ember.manual_seed(0)
    m = ember.nn.Linear(3, 2)
    c = ember.compile(m)
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(c(x).detach().numpy(), m(x).detach().numpy())
    assert c.weight is m.weight
    tm = torch_mod.compile(torch_mod.nn.Linear(3, 2))
    assert list(c.state_dict()) == list(tm.state_dict())


def test_compile_function_and_decorator():
    def f(x):
        return ember.sin(x) * 2
    x = ember.randn(5)
    np.testing.assert_array_equal(ember.compile(f)(x).numpy(), f(x).numpy())
    g = ember.compile(mode="reduce-overhead")(f)
    np.testing.assert_array_equal(g(x).numpy(), f(x).numpy())


def test_jit_script_and_trace_run():
    m = ember.nn.Sequential(ember.nn.Linear(3, 3), ember.nn.ReLU())
    x = ember.randn(2, 3)
    ref = m(x).detach().numpy()
    for s in (ember.jit.script(m), ember.jit.trace(m, x)):
        np.testing.assert_array_equal(s(x).detach().numpy(), ref)
    assert isinstance(ember.jit.script(m), ember.jit.ScriptModule)
    assert not ember.jit.is_scripting()
    with pytest.raises(NotImplementedError, match="ember.save"):
        ember.jit.save(m, "m.pt")


# ---------------------------------------------------------------------- hub
def test_hub_dir_follows_torch_home(tmp_path, monkeypatch, torch_mod):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert ember.hub.get_dir() == torch_mod.hub.get_dir() == str(tmp_path / "hub")


def test_hub_offline_errors_name_the_cache_file(tmp_path):
    ember.hub.set_dir(str(tmp_path))
    try:
        url = "https://download.pytorch.org/models/resnet18-f37072fd.pth"
        expected = os.path.join(str(tmp_path), "checkpoints", "resnet18-f37072fd.pth")
        with pytest.raises(RuntimeError, match="Looked for " + expected):
            ember.hub.load_state_dict_from_url(url)
        with pytest.raises(RuntimeError, match="pytorch_vision_main"):
            ember.hub.load("pytorch/vision", "resnet18")
    finally:
        ember.hub._hub_dir = None


def test_hub_loads_cached_checkpoint_and_local_repo(tmp_path):
    ember.hub.set_dir(str(tmp_path))
    try:
        sd = {"w": ember.arange(4.0)}
        os.makedirs(tmp_path / "checkpoints")
        ember.save(sd, str(tmp_path / "checkpoints" / "model.pth"))
        got = ember.hub.load_state_dict_from_url("https://example.com/x/model.pth")
        np.testing.assert_array_equal(got["w"].numpy(), sd["w"].numpy())
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "hubconf.py").write_text("def double(x):\n    return 2 * x\n")
        assert ember.hub.load(str(repo), "double", 21, source="local") == 42
    finally:
        ember.hub._hub_dir = None


# ---------------------------------------------------------------------- checkpoint
@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_recomputes_and_matches_gradients(reentrant):
    ember.manual_seed(0)
    lin = ember.nn.Linear(4, 4)
    calls = []

    def block(x):
        calls.append(1)
        return ember.nn.functional.dropout(ember.tanh(lin(x)), 0.5, training=True)

    x = ember.randn(3, 4, requires_grad=True)
    ember.manual_seed(1)
    plain = block(x)
    plain.sum().backward()
    ref_x, ref_w = x.grad.clone(), lin.weight.grad.clone()
    x.grad = None
    lin.weight.grad = None
    calls.clear()
    ember.manual_seed(1)
    out = checkpoint(block, x, use_reentrant=reentrant)
    assert len(calls) == 1
    np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
    out.sum().backward()
    assert len(calls) == 2          # the forward ran again inside backward
    np.testing.assert_allclose(x.grad.numpy(), ref_x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref_w.numpy(), rtol=1e-6)


def test_checkpoint_non_reentrant_params_without_input_grad():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(2, 3)
    checkpoint(lin, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(),
                               np.ones((2, 1)) * x.numpy().sum(0), rtol=1e-6)


def test_checkpoint_warnings_and_errors(torch_mod):
    lin = ember.nn.Linear(2, 2)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lin, ember.randn(1, 2, requires_grad=True))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint(lin, ember.randn(1, 2), use_reentrant=True, foo=1)


def test_checkpoint_sequential_matches_plain():
    ember.manual_seed(0)
    seq = ember.nn.Sequential(*[ember.nn.Linear(3, 3) for _ in range(4)])
    x = ember.randn(2, 3, requires_grad=True)
    seq(x).pow(2).sum().backward()
    ref = [p.grad.clone() for p in seq.parameters()]
    seq.zero_grad()
    x.grad = None
    checkpoint_sequential(seq, 2, x, use_reentrant=False).pow(2).sum().backward()
    for p, r in zip(seq.parameters(), ref):
        np.testing.assert_allclose(p.grad.numpy(), r.numpy(), rtol=1e-5, atol=1e-7)


def test_softmax_family_outside_functional(torch_mod):
    import numpy as np
    x = np.random.default_rng(0).standard_normal((3, 4))
    for make in (lambda lib, t: t.softmax(1), lambda lib, t: t.log_softmax(0),
                 lambda lib, t: lib.softmax(t, -1), lambda lib, t: lib.log_softmax(t, 1),
                 lambda lib, t: t.softmax(1, dtype=lib.float32),
                 lambda lib, t: lib.conv1d(t[None], lib.ones(2, 3, 2, dtype=lib.float64)),
                 lambda lib, t: lib.dropout(t, 0.5, False)):
        ours = make(ember, ember.tensor(x))
        theirs = make(torch_mod, torch_mod.tensor(x))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)
