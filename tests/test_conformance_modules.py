"""torch's small submodules, each against real torch: loading on attribute access, the device
modules of absent devices (cpu, mps, xpu), functional, storage, quasirandom.SobolEngine,
masked, futures, overrides, _dynamo; and `ember run`'s printing of torch names."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code, *args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, *args, "-c", code] if not args else
                          [sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)


def test_submodules_load_on_attribute_access():
    # A fresh interpreter: nothing imported them before the attribute access.
    code = ("import ember, sys\n"
            "assert 'ember.multiprocessing' not in sys.modules\n"
            "print(ember.multiprocessing.get_start_method())\n"
            "print(ember.quasirandom.SobolEngine, ember._dynamo.reset, ember.overrides)\n"
            "print(ember.storage.UntypedStorage, ember.futures.Future, ember.masked.sum)\n"
            "print(ember.cpu.device_count(), ember.xpu.device_count(), ember.mps.device_count())")
    r = _python(code)
    assert r.returncode == 0, r.stderr
    import multiprocessing
    assert r.stdout.splitlines()[0] == multiprocessing.get_start_method()
    assert r.stdout.splitlines()[-1] == "1 0 0"


# ---------------------------------------------------------------------- device modules
def _answer(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn()
        except Exception as exc:
            return ("raises", type(exc).__name__)
    if isinstance(r, (bool, int, float, str, list, tuple, dict, type(None))):
        return ("value", r)
    return ("object", type(r).__name__)


DEVICE_CALLS = {
    "cpu": ["is_available()", "device_count()", "current_device()", "synchronize()",
            "is_initialized()", "set_device('cpu')", "stream(m.Stream()).__enter__()",
            "Event().query()", "current_stream().wait_stream(m.Stream())"],
    "mps": ["is_available()", "device_count()", "synchronize()", "get_rng_state()",
            "manual_seed(1)", "seed()", "empty_cache()", "current_allocated_memory()",
            "driver_allocated_memory()", "recommended_max_memory()",
            "set_per_process_memory_fraction(0.5)", "Event()"],
    "xpu": ["is_available()", "device_count()", "is_initialized()", "current_device()",
            "synchronize()", "get_device_name()", "get_device_properties()", "init()",
            "manual_seed(1)", "manual_seed_all(1)", "seed()", "empty_cache()",
            "memory_allocated()", "max_memory_allocated()", "memory_reserved()",
            "memory_stats()", "get_arch_list()", "get_gencode_flags()",
            "is_bf16_supported()", "get_rng_state_all()", "set_device(0)", "Stream()",
            "Event()", "stream(None).__enter__()", "device(0).__enter__()",
            "device_of(m.__name__).__enter__()", "initial_seed()", "mem_get_info()"],
}


@pytest.mark.parametrize("module,call", [(m, c) for m, cs in DEVICE_CALLS.items() for c in cs])
def test_device_modules_answer_as_torch(module, call):
    t_mod, e_mod = getattr(torch, module), getattr(ember, module)
    t = _answer(lambda: eval(call, {"m": t_mod}, vars(t_mod)))
    e = _answer(lambda: eval(call, {"m": e_mod}, vars(e_mod)))
    assert e == t


def test_cpu_capabilities_keys_as_torch():
    t, e = torch.cpu.get_capabilities(), ember.cpu.get_capabilities()
    assert set(e) == set(t)
    for flag in ("sse2", "avx", "avx2", "fma3", "avx512_f", "avx512_bw", "bmi2", "sha",
                 "lzcnt", "num_logical_cores", "num_sockets", "l2_cache_size"):
        assert e[flag] == t[flag], flag


# ---------------------------------------------------------------------- functional, storage
def test_functional_names_are_the_top_level_functions():
    for name in torch.functional.__all__:
        if name in ("lu", "pca_lowrank", "svd_lowrank"):   # (not in ember yet)
            continue
        assert getattr(ember.functional, name) is getattr(ember, name)


def test_untyped_storage_as_torch():
    for L in (torch, ember):
        base = L.arange(6.0)
        t = base.reshape(2, 3)[:, 1:]
        s = t.untyped_storage()
        assert (s.nbytes(), s.size(), len(s), s.element_size()) == (24, 24, 24, 1)
        # the block the view lives in: it starts at the base tensor, not at the view
        assert s.data_ptr() == base.data_ptr() != t.data_ptr()
    e, t = ember.arange(4.0)[1:], torch.arange(4.0)[1:]
    assert e.untyped_storage().tolist() == t.untyped_storage().tolist()
    # (a new storage's bytes are uninitialised in PyTorch: compare the printed layout)
    assert repr(ember.storage.UntypedStorage(2)).replace("ember", "torch").splitlines()[-1] == \
        repr(torch.storage.UntypedStorage(2)).splitlines()[-1]
    ember.storage._warned.clear()   # (once per process: another test may have warned first)
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        typed = e.storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = t.storage()
    assert (typed.size(), typed.tolist()) == (want.size(), want.tolist())


# ---------------------------------------------------------------------- SobolEngine
@pytest.mark.parametrize("args", [dict(dimension=1), dict(dimension=5),
                                  dict(dimension=3, scramble=True, seed=7),
                                  dict(dimension=50, scramble=True, seed=1234),
                                  dict(dimension=300)])
def test_sobol_engine_is_torch_s(args):
    te = torch.quasirandom.SobolEngine(**args)
    ee = ember.quasirandom.SobolEngine(**args)
    assert repr(ee) == repr(te)
    steps = [("draw", 1), ("draw", 7), ("fast_forward", 5), ("draw", 33), ("draw64", 9),
             ("reset", None), ("draw_base2", 4), ("draw", 100)]
    for kind, n in steps:
        if kind == "reset":
            te.reset(), ee.reset()
            continue
        if kind == "fast_forward":
            te.fast_forward(n), ee.fast_forward(n)
            continue
        if kind == "draw64":
            a, b = te.draw(n, dtype=torch.float64), ee.draw(n, dtype=ember.float64)
        else:
            a, b = getattr(te, kind)(n), getattr(ee, kind)(n)
        assert str(b.dtype) == str(a.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(b.numpy(), a.numpy())   # bit for bit


def test_sobol_scrambled_from_the_global_generator():
    torch.manual_seed(3)
    ember.manual_seed(3)
    a = torch.quasirandom.SobolEngine(4, scramble=True).draw(16)
    b = ember.quasirandom.SobolEngine(4, scramble=True).draw(16)
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_sobol_errors_as_torch():
    for L in (torch, ember):
        with pytest.raises(ValueError, match=r"\[1, 21201\]"):
            L.quasirandom.SobolEngine(0)
        eng = L.quasirandom.SobolEngine(2)
        eng.draw(3)
        with pytest.raises(ValueError, match="power of 2"):
            eng.draw_base2(2)


# ---------------------------------------------------------------------- masked
X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
MASKS = [np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]], bool),
         np.array([1, 0, 1, 1], bool), None]
MASKED = {
    "sum": lambda L, x, m: L.masked.sum(x, 1, mask=m),
    "sum_all": lambda L, x, m: L.masked.sum(x, mask=m),
    "sum_int": lambda L, x, m: L.masked.sum((x * 10).to(L.int32), 1, mask=m),
    "prod": lambda L, x, m: L.masked.prod(x, (0, 1), keepdim=True, mask=m),
    "amax": lambda L, x, m: L.masked.amax(x, 1, mask=m),
    "amin": lambda L, x, m: L.masked.amin(x, 0, mask=m),
    "argmax": lambda L, x, m: L.masked.argmax(x, 1, mask=m),
    "argmin": lambda L, x, m: L.masked.argmin(x, 1, mask=m),
    "mean": lambda L, x, m: L.masked.mean(x, 1, mask=m),
    "cumsum": lambda L, x, m: L.masked.cumsum(x, 1, mask=m),
    "cumprod": lambda L, x, m: L.masked.cumprod(x, 1, mask=m),
    "softmax": lambda L, x, m: L.masked.softmax(x, 1, mask=m),
    "log_softmax": lambda L, x, m: L.masked.log_softmax(x, 1, mask=m),
    "softmin": lambda L, x, m: L.masked.softmin(x, 1, mask=m),
    "logsumexp": lambda L, x, m: L.masked.logsumexp(x, 1, mask=m),
    "norm": lambda L, x, m: L.masked.norm(x, 2.0, 1, mask=m),
    "norm_ninf": lambda L, x, m: L.masked.norm(x, float("-inf"), 1, mask=m),
    "var": lambda L, x, m: L.masked.var(x, 1, mask=m),
    "std": lambda L, x, m: L.masked.std(x, 1, unbiased=False, mask=m),
    "normalize": lambda L, x, m: L.masked.normalize(x, 2.0, 1, mask=m),
    "median": lambda L, x, m: L.masked.median(x, 1, mask=m),
    "logaddexp": lambda L, x, m: L.masked.logaddexp(x, x * 2, input_mask=m, other_mask=m),
    "mean_int": lambda L, x, m: L.masked.mean(x.to(L.int64), 1, mask=m),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_ops_as_torch(name):
    for mask in MASKS:
        out = []
        for L in (torch, ember):
            m = None if mask is None else L.tensor(mask)
            try:
                r = MASKED[name](L, L.tensor(X), m)
                out.append((str(r.dtype).split(".")[1], r.numpy()))
            except Exception as exc:
                out.append((type(exc).__name__, None))
        assert out[1][0] == out[0][0]
        if out[0][1] is not None:
            np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------- futures
def test_futures_as_torch():
    for L in (torch, ember):
        f = L.futures.Future()
        chained = f.then(lambda fut: fut.wait() + 1)
        f.set_result(1)
        assert (f.done(), f.wait(), f.value(), chained.wait()) == (True, 1, 1, 2)
        with pytest.raises(RuntimeError, match="complete again"):
            f.set_result(2)
        e = L.futures.Future()
        e.set_exception(ValueError("x"))
        with pytest.raises(ValueError):
            e.wait()
        with pytest.raises(RuntimeError, match="error when running the callback"):
            f.then(lambda fut: 1 / 0).wait()
        a, b = L.futures.Future(), L.futures.Future()
        both = L.futures.collect_all([a, b])
        a.set_result(1)
        assert not both.done()
        b.set_result(2)
        assert [x.value() for x in both.wait()] == [1, 2]
        assert L.futures.wait_all([a, b]) == [1, 2]
        seen = []
        g = L.futures.Future()
        g.add_done_callback(lambda fut: seen.append(fut.value()))
        g.set_result(5)
        assert seen == [5]


# ---------------------------------------------------------------------- overrides
def _overrides_behaviour(L):
    from importlib import import_module
    ov = import_module(L.__name__ + ".overrides")

    class Plain(L.Tensor):
        pass

    class Custom(L.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func.__name__ == "passthrough":
                return super().__torch_function__(func, types, args, kwargs)
            return "custom"

    class Other:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    def api(x):
        if ov.has_torch_function((x,)):
            return ov.handle_torch_function(api, (x,), x)
        return "plain"

    def passthrough(x):
        if ov.has_torch_function((x,)):
            return ov.handle_torch_function(passthrough, (x,), x)
        return x * 2

    class Mode(ov.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return ("mode", func.__name__)

    ones = L.ones(2)
    results = [ov.has_torch_function((ones,)), ov.has_torch_function((ones.as_subclass(Plain),)),
               ov.has_torch_function((Other(),)), ov.has_torch_function((1,)),
               api(ones), api(ones.as_subclass(Custom)),
               type(passthrough(ones.as_subclass(Custom))).__name__,
               ov.is_tensor_like(ones), ov.is_tensor_like(Other()), ov.is_tensor_like(1)]
    try:
        api(Other())
    except TypeError as exc:
        results.append(str(exc).split(":")[0])
    with Mode():
        results.append(api(ones))
    results.append(api(ones))
    try:
        ones.as_subclass(int)
    except TypeError as exc:
        results.append(str(exc))
    return results


def test_overrides_as_torch():
    assert _overrides_behaviour(ember) == _overrides_behaviour(torch)


# ---------------------------------------------------------------------- _dynamo, ember run
RUN_SCRIPT = textwrap.dedent("""
    import torch
    import torch.multiprocessing
    import torch._dynamo
    torch._dynamo.config.suppress_errors = True
    torch._dynamo.config.cache_size_limit = 16
    torch._dynamo.reset()
    try:
        torch._dynamo.config.no_such_setting = 1
    except AttributeError as exc:
        print("AttributeError", exc)
    print(torch._dynamo.is_compiling(), torch._dynamo.config.suppress_errors)
    print(torch.multiprocessing.get_start_method() in ("fork", "spawn", "forkserver"))
    x = torch.ones(1, 4)
    print(x.shape, x.size(), torch.Size([2]))
    print(torch.float32, torch.int64, x.dtype, repr(torch.bool))
    print(torch.ones(2, dtype=torch.float64))
    print(torch.tensor([1, 2], dtype=torch.int32))
    print(torch.strided, torch.channels_last, torch.uint16, x.layout)
    print(torch.tensor([3.0, 1.0]).max(0))
    print(torch.FloatTensor, torch.LongTensor)
    try:
        torch.Size([1.5])
    except TypeError as exc:
        print("TypeError", exc)
""")


def test_ember_run_prints_torch_names(tmp_path):
    script = tmp_path / "prints.py"
    script.write_text(RUN_SCRIPT)
    want = _python("", str(script))
    assert want.returncode == 0, want.stderr
    got = _python("", "-m", "ember", "run", str(script))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


def test_import_ember_prints_ember_names():
    r = _python("import ember; print(ember.Size([1, 4]), ember.float32, "
                "ember.ones(1, dtype=ember.float64), ember.strided)")
    assert r.stdout.strip() == ("ember.Size([1, 4]) ember.float32 "
                                "tensor([1.], dtype=ember.float64) ember.strided")
