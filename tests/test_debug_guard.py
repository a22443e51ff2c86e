"""ember.debug.guard: each pitfall is named at the op and at this file's own line."""
import warnings

import numpy as np
import pytest

import ember
from ember import debug

HERE = __file__


def _line_of(marker):
    with open(HERE) as f:
        for i, line in enumerate(f, 1):
            if marker in line and "_line_of" not in line:
                return i
    raise AssertionError(marker)


def _caught(fn):
    debug.state.findings.clear()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with debug.guard():
            fn()
    return [w for w in seen if issubclass(w.category, debug.PitfallWarning)]


def _one(found, *words, marker):
    assert len(found) == 1, [str(w.message) for w in found]
    w = found[0]
    for word in words:
        assert word in str(w.message), str(w.message)
    assert w.filename == HERE and w.lineno == _line_of(marker), (w.filename, w.lineno)


def test_uint8_wraparound():
    x = ember.ByteTensor([200, 3])
    found = _caught(lambda: x * 2)  # MARK-wrap
    _one(found, "wraparound", "mul", "uint8", "400", marker="MARK-wrap")


def test_inplace_uint8_wraparound():
    x = ember.tensor([200], dtype=ember.uint8)

    def run():
        x.add_(100)  # MARK-iwrap
    _one(_caught(run), "wraparound", "44", marker="MARK-iwrap")


def test_half_exp_overflow():
    h = ember.HalfTensor([12.0])
    _one(_caught(lambda: h.exp()), "overflow", "exp", "float16", marker="h.exp()")


def test_float64_to_float16_cast_overflow():
    d = ember.tensor([1e5], dtype=ember.float64)
    _one(_caught(lambda: d.half()), "overflow", marker="d.half()")


def test_first_nan_from_finite_inputs():
    z = ember.zeros(3)
    _one(_caught(lambda: z / z), "nan", "div", marker="z / z")


def test_backward_nan_names_forward_op():
    x = ember.tensor([0.0, 1.0], requires_grad=True)

    def run():
        y = ember.sqrt(x)  # MARK-sqrt
        y.sum().backward()
    found = _caught(run)
    assert any("backward of SqrtBackward0" in str(w.message) for w in found), \
        [str(w.message) for w in found]


def test_lossy_cast_into_integer():
    f = ember.tensor([1.5, 2.0])
    _one(_caught(lambda: f.long()), "lossy cast", "1.5", marker="f.long()")


def test_accidental_outer_broadcast():
    pred, target = ember.zeros(4, 1), ember.zeros(4)
    _one(_caught(lambda: ((pred - target) ** 2).mean()), "broadcast", "[4, 1]",
         marker="pred - target")


def test_double_backward_without_step():
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.1)

    def run():
        loss = (w * 2).sum()
        loss.backward(retain_graph=True)
        loss.backward()  # MARK-twice
        opt.step()
    found = _caught(run)
    assert any("backward" in str(w.message) and "zero_grad" in str(w.message)
               for w in found), [str(w.message) for w in found]


def test_declared_accumulation_is_quiet():
    w = ember.nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([w], lr=0.1)

    def run():
        with debug.accumulating():
            for _ in range(3):
                (w * 2).sum().backward()
        opt.step()
        opt.zero_grad()
    assert _caught(run) == []


def test_raise_mode_and_no_false_positive_for_true_division():
    b = ember.ByteTensor([200, 100])
    with debug.guard(mode="raise"):
        result = b / 50  # true division: a float32 result, nothing to report
        assert result.dtype is ember.float32
        with pytest.raises(debug.PitfallError, match="wraparound"):
            b + b


def test_clean_training_run_reports_nothing():
    def run():
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(),
                                    ember.nn.Linear(8, 3))
        opt = ember.optim.Adam(model.parameters())
        x, y = ember.randn(16, 4), ember.randint(0, 3, (16,))
        for _ in range(5):
            opt.zero_grad()
            loss = ember.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
    assert _caught(run) == []


def test_guard_off_costs_nothing():
    from ember.ops import registry
    assert registry.instruments == []
    with debug.guard():
        assert registry.instruments
    assert registry.instruments == []
    np.testing.assert_array_equal((ember.ones(2) + 1).numpy(), [2, 2])


def test_ember_run_guard_flag(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text("import torch\nx = torch.ByteTensor([250])\ny = x + 10\nprint(y.item())\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(HERE)) + os.pathsep + \
        env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "ember", "run", "--guard", str(script)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4"
    assert "[wraparound]" in out.stderr and f"{script}:3" in out.stderr
    out = subprocess.run([sys.executable, "-m", "ember", "run", "--guard=raise", str(script)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1 and "PitfallError" in out.stderr


def test_examples_run_clean_under_the_guard(tmp_path):
    """No false positives: every example trains under `ember run --guard=raise`."""
    import glob
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(HERE))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    scripts = sorted(glob.glob(os.path.join(root, "examples", "*.py")))
    assert scripts
    for script in scripts:
        args = [] if script.endswith("fit_line.py") else ["--tiny", "--steps", "3"]
        out = subprocess.run([sys.executable, "-m", "ember", "run", "--guard=raise", script]
                             + args, capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=300)
        assert out.returncode == 0, (script, out.stderr[-2000:])
        assert "PitfallWarning" not in out.stderr and "[" not in out.stderr.split(
            "Traceback")[0][:0], script


def test_lossy_writes_into_integer_tensors():
    a = ember.zeros(3, dtype=ember.int64)

    def copy():
        a.copy_(ember.tensor([1.5, 2.0, 3.0]))  # MARK-copy
    _one(_caught(copy), "lossy cast", "1.5", marker="MARK-copy")

    def assign():
        a[0] = 2.7  # MARK-set
    _one(_caught(assign), "lossy cast", "2.7", marker="MARK-set")

    def exact():
        a[1] = 2.0
    assert _caught(exact) == []
