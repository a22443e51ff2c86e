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
