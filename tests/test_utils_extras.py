"""ember.utils.hooks, ember.nn.attention and ember.utils.benchmark against real torch: handle
semantics and pickling, sdpa_kernel's flag and priority changes, and the Measurement summary
text and statistics for the same recorded times."""
import pickle
import re
from collections import OrderedDict

import pytest

import ember
import ember.utils.benchmark as ember_benchmark


# ---------------------------------------------------------------------- RemovableHandle
def _handle_story(handle_cls):
    hooks, extra = OrderedDict(), OrderedDict()
    h1 = handle_cls(hooks, extra_dict=extra)
    hooks[h1.id], extra[h1.id] = "f", "g"
    h2 = handle_cls(hooks, extra_dict=[extra])
    hooks[h2.id] = "k"
    ids = (h1.id - h1.id, h2.id - h1.id)
    h1.remove()
    after_remove = (list(hooks.values()), list(extra.values()))
    with h2:
        pass
    restored = pickle.loads(pickle.dumps((hooks, h2)))
    next_after_pickle = handle_cls(OrderedDict()).id > restored[1].id
    dead = pickle.loads(pickle.dumps(handle_cls(OrderedDict())))
    dead.remove()   # (a handle whose dict is gone removes nothing, silently)
    return ids, after_remove, list(hooks.values()), next_after_pickle, dead.hooks_dict_ref()


def test_removable_handle_matches_torch(torch_mod):
    import torch.utils.hooks
    assert _handle_story(ember.utils.hooks.RemovableHandle) == \
        _handle_story(torch.utils.hooks.RemovableHandle)


def test_every_register_hook_returns_the_public_handle():
    lin = ember.nn.Linear(2, 2)
    handles = [lin.register_forward_hook(lambda *a: None),
               lin.register_forward_pre_hook(lambda *a: None),
               ember.ones(1, requires_grad=True).register_hook(lambda g: g),
               ember.optim.SGD(lin.parameters(), 0.1).register_step_pre_hook(lambda *a: None)]
    assert all(isinstance(h, ember.utils.hooks.RemovableHandle) for h in handles)
    f = ember.utils.hooks.unserializable_hook(lambda: None)
    assert f.__torch_unserializable__ is True


# ---------------------------------------------------------------------- nn.attention
def test_sdp_backend_enum_matches_torch(torch_mod):
    from torch.nn.attention import SDPBackend as Theirs
    from ember.nn.attention import SDPBackend as Ours
    theirs = [(n, int(v), repr(v), str(v)) for n, v in Theirs.__members__.items()]
    ours = [(n, int(v), repr(v), str(v)) for n, v in Ours.__members__.items()]
    assert ours == theirs


def _sdpa_story(m, attention):
    B = attention.SDPBackend
    cuda = m.backends.cuda

    def flags():
        return (cuda.flash_sdp_enabled(), cuda.mem_efficient_sdp_enabled(),
                cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled())

    def names(backends):
        return [b.name for b in backends]
    story = [flags(), names(attention._cur_sdpa_kernel_backends(with_priority=True))]
    with attention.sdpa_kernel(B.MATH) as ctx:
        story += [ctx, flags()]
        with attention.sdpa_kernel([B.FLASH_ATTENTION, B.MATH, B.FLASH_ATTENTION]):
            story.append(flags())
        story.append(flags())
    with attention.sdpa_kernel([B.CUDNN_ATTENTION, B.MATH], set_priority=True):
        story += [flags(), names(attention._cur_sdpa_kernel_backends(with_priority=True))]
    story += [flags(), names(attention._cur_sdpa_kernel_backends(with_priority=True))]
    for bad in ("math", (B.MATH,)):
        with pytest.raises(AssertionError) as exc:
            with attention.sdpa_kernel(bad):
                pass
        story.append(str(exc.value))
    return story


def test_sdpa_kernel_matches_torch(torch_mod):
    import torch.nn.attention
    assert _sdpa_story(ember, ember.nn.attention) == _sdpa_story(torch_mod, torch.nn.attention)


def test_attention_still_computes_inside_sdpa_kernel(torch_mod):
    q = ember.randn(1, 2, 3, 4)
    expected = ember.nn.functional.scaled_dot_product_attention(q, q, q)
    with ember.nn.attention.sdpa_kernel(ember.nn.attention.SDPBackend.MATH):
        actual = ember.nn.functional.scaled_dot_product_attention(q, q, q)
    assert ember.equal(actual, expected)


# ---------------------------------------------------------------------- benchmark
TIMES = [[1.2e-3], [3.1e-6, 3.0e-6, 3.3e-6, 2.9e-6, 3.05e-6], [5e-9, 9e-9, 4e-9, 6e-9],
         [2.0, 2.1, 1.5, 2.6, 2.2, 2.05, 1.99, 2.01]]
SPECS = [dict(stmt="x + y", setup="pass"),
         dict(stmt="a = 1\nb = a * 2", setup="import math\nx = 1", sub_label="int"),
         dict(stmt="f(x)", setup="x = 3", label="call", sub_label="sub", description="n=3",
              num_threads=4),
         dict(stmt="torch.add(x, 1)", setup="", env="A")]


def _measurement(module, times, spec, number):
    task = module.TaskSpec(**spec)
    return module.Measurement(number_per_run=number, raw_times=times, task_spec=task)


@pytest.mark.parametrize("case", range(len(TIMES)))
def test_measurement_summary_and_statistics_match_torch(case, torch_mod):
    import torch.utils.benchmark as theirs_module
    number = [1000, 10, 100000, 1][case]
    ours = _measurement(ember_benchmark, TIMES[case], SPECS[case], number)
    theirs = _measurement(theirs_module, TIMES[case], SPECS[case], number)

    def text(m):   # (the object's address and module differ by nature)
        return re.sub(r"<[\w.]+ object at 0x[0-9a-f]+>", "<Measurement>", repr(m))
    assert text(ours) == text(theirs)
    for attr in ("median", "iqr", "significant_figures", "has_warnings", "title", "env",
                 "as_row_name", "times", "stmt", "num_threads"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    # (PyTorch's float64 sum order is its own: the mean agrees to rounding)
    assert ours.mean == pytest.approx(theirs.mean, rel=1e-14)
    merged = [(m.number_per_run, m.times) for m in ember_benchmark.Measurement.merge([ours, ours])]
    assert merged == [(m.number_per_run, m.times)
                      for m in theirs_module.Measurement.merge([theirs, theirs])]


@pytest.mark.parametrize("t", [3e-10, 1e-9, 4.2e-7, 1e-6, 3.3e-3, 0.999, 2.0, 1e3])
def test_unit_helpers_match_torch(t, torch_mod):
    import torch.utils.benchmark as theirs
    assert ember_benchmark.select_unit(t) == theirs.select_unit(t)
    for n in (1, 2, 4):
        assert ember_benchmark.trim_sigfig(t * 3.14159, n) == theirs.trim_sigfig(t * 3.14159, n)
    assert ember_benchmark.unit_to_english("us") == theirs.unit_to_english("us")


def test_timer_runs_the_statement():
    calls = []
    timer = ember_benchmark.Timer("f()", globals={"f": lambda: calls.append(1)}, label="f")
    m = timer.timeit(50)
    assert len(calls) == 50 + 2 and m.number_per_run == 50 and len(m.raw_times) == 1
    m = ember_benchmark.Timer("x.sum()", setup="x = torch.ones(8)").blocked_autorange(
        min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1
    assert "x.sum()" in repr(m) and "setup: x = torch.ones(8)" in repr(m)
    m = ember_benchmark.Timer("pass").adaptive_autorange(min_run_time=0.01, max_run_time=0.5)
    assert len(m.raw_times) >= 1


def test_timer_errors_match_torch(torch_mod):
    import torch.utils.benchmark as theirs
    for kwargs in ({"stmt": lambda: None}, {"global_setup": "int x;"}, {"language": "rust"}):
        with pytest.raises(ValueError) as expected:
            theirs.Timer(**kwargs)
        with pytest.raises(ValueError, match=re.escape(str(expected.value))):
            ember_benchmark.Timer(**kwargs)
    for name in ("repeat", "autorange"):
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            getattr(ember_benchmark.Timer(), name)()


def test_new_modules_import_under_ember_run(tmp_path):
    """`import torch.X` for each module of this family resolves to ember's under `ember run`."""
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text(
        "import torch\nimport torch.fft\nimport torch.special\nimport torch.testing\n"
        "import torch.random\nimport torch.utils.hooks\nimport torch.utils.benchmark\n"
        "import torch.nn.attention\nfrom torch.nn.attention import SDPBackend, sdpa_kernel\n"
        "from torch.testing import assert_close\n"
        "x = torch.fft.irfft(torch.fft.rfft(torch.arange(8.0)))\n"
        "assert_close(x, torch.arange(8.0))\n"
        "print(torch.fft.__name__, torch.special.__name__, torch.utils.hooks.__name__,\n"
        "      torch.nn.attention.SDPBackend.MATH, torch.random.initial_seed() >= 0)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)], cwd=tmp_path,
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.fft", "ember.special", "ember.utils.hooks",
                                  "SDPBackend.MATH", "True"]
