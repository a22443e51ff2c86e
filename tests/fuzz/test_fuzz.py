"""The quick seeded round of the differential fuzzer: fails on disagreements with torch that
neither a class nor a target of allowlist.py explains.

NOTE: the round runs in a process of its own: random calls of global setters (threads,
defaults, validation switches) would otherwise change torch's and ember's state for the tests
that share this worker."""
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from .run import QUICK_CALLS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quick_round_has_no_new_disagreements():
    result = subprocess.run([sys.executable, "-m", "tests.fuzz", "--calls", str(QUICK_CALLS),
                             "--seed", "0"], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    total = re.search(r"^TOTAL\s+\d+\s+(\d+)", result.stdout, re.M)
    assert total and int(total.group(1)) == QUICK_CALLS, result.stdout[-3000:] + result.stderr
    new = [line for line in result.stdout.splitlines() if line.startswith("[NEW]")]
    assert result.returncode == 0 and not new, "\n".join(new)[:6000] + result.stderr[-2000:]


def test_draws_are_stable_when_a_name_is_added():
    """A target added to the namespace takes over only the calls it wins; every other call
    keeps its target and its arguments' generator (the CI round's draws stay put)."""
    import numpy as np
    from .run import Target, _stable_hash, draw

    def listing(names):
        ts = [Target(n, "f", None, None) for n in names]
        return ts, np.array([_stable_hash(n) for n in names], dtype=np.uint64)

    names = [f"torch.op{k}" for k in range(300)]
    before, after = listing(names), listing(names[:150] + ["torch.new_op"] + names[150:])
    won = 0
    for i in range(2000):
        (t0, r0), (t1, r1) = draw(*before, 0, i), draw(*after, 0, i)
        if t1.name == "torch.new_op":
            won += 1
            continue
        assert t0.name == t1.name and r0.integers(1 << 30) == r1.integers(1 << 30)
    assert 0 < won < 25   # about 2000 / 301 calls


def test_classes_explain_only_their_difference():
    """The complex32 and negative-size classes take their one design difference, not a
    neighbouring disagreement."""
    import torch
    from .allowlist import classify, classify_result

    assert classify_result("result: dtype complex64 != torch complex32") == "complex32"
    assert classify_result("result: dtype complex128 != torch complex64") is None
    assert classify_result("result: values differ (complex64)") is None
    raised = ("raise", RuntimeError("The expanded size of the tensor (-2) isn't allowed"))
    negative = torch.zeros(0).broadcast_to((-2, -1))   # torch 2.13 returns shape [-2, 0]
    assert tuple(negative.shape) == (-2, 0)
    assert classify(("ok", negative), raised) == "negative size"
    assert classify(("ok", torch.zeros(2, 0)), raised) is None
    lacks = RuntimeError("view_as_complex of a Half tensor gives ComplexHalf, which ember "
                         "lacks; convert to float32 first")
    assert classify(("ok", torch.zeros(1)), ("raise", lacks)) == "complex32 view"
    assert classify(("ok", torch.zeros(1)), ("raise", RuntimeError("other"))) is None
