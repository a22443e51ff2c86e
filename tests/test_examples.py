"""The training programs in examples/: each runs under `ember run`, and ember's losses match
real PyTorch's step by step when both start from the same seed (float64)."""
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["cnn_classifier", "char_gpt", "lstm_lm", "vae", "dcgan", "reinforce"]
STEPS = 20


def _env(ember):
    env = dict(os.environ)
    # NOTE: one thread each: the runs are small, and pytest -n already uses the cores.
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = "1"
    if ember:
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(name, args, ember):
    """Run examples/<name>.py under `ember run` (ember=True) or plain python (real torch)."""
    script = os.path.join("examples", name + ".py")
    prefix = [sys.executable, "-m", "ember", "run"] if ember else [sys.executable]
    out = subprocess.run(prefix + [script] + args, capture_output=True, text=True, cwd=ROOT,
                         env=_env(ember), timeout=300)
    assert out.returncode == 0, f"{name} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _final_loss(stdout):
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("final loss: "), last
    return float(last.split(": ")[1])


def _loss_lines(stdout):
    """The lines that report losses: 'step N  loss X ...' and the closing 'final loss: X'."""
    return [line.split() for line in stdout.splitlines()
            if line.startswith("step ") or line.startswith("final loss:")]


def _number(token):
    try:
        return float(token)
    except ValueError:
        return None


def _assert_same(ours, theirs, name):
    """Token by token: words and integers equal, decimals within 1e-6 relative (or one unit
    of the last printed digit, for figures printed with few decimals)."""
    assert len(ours) == len(theirs), (name, len(ours), len(theirs))
    for mine, ref in zip(ours, theirs):
        assert len(mine) == len(ref), (name, mine, ref)
        for a, b in zip(mine, ref):
            x, y = _number(a), _number(b)
            if x is None or y is None or "." not in b:  # words and counts: exactly
                assert a == b, (name, mine, ref)
                continue
            decimals = len(b.partition(".")[2])
            assert math.isclose(x, y, rel_tol=1e-6, abs_tol=10.0 ** -decimals), \
                f"{name}: ember {' '.join(mine)}\n  torch {' '.join(ref)}"


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_under_ember(name):
    stdout = _run(name, ["--tiny", "--steps", "3"], ember=True)
    assert math.isfinite(_final_loss(stdout)), stdout


def test_fit_line_still_fits():
    stdout = _run("fit_line", [], ember=True)
    w, b = (float(part.split("=")[1].split()[0]) for part in stdout.splitlines()[-1].split(","))
    assert abs(w - 3) < 0.05 and abs(b + 2) < 0.05, stdout


@pytest.mark.parametrize("name", EXAMPLES)
def test_losses_match_pytorch(name, torch_mod):
    args = ["--tiny", "--steps", str(STEPS), "--dtype", "float64", "--seed", "0",
            "--log-every", "1"]
    theirs = _loss_lines(_run(name, args, ember=False))
    ours = _loss_lines(_run(name, args, ember=True))
    # Every step is printed, then the final loss: nothing to compare would be a failure.
    assert len(theirs) == STEPS + 1, theirs
    _assert_same(ours, theirs, name)
