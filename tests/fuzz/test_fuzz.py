"""The quick seeded round of the differential fuzzer: fails on disagreements with torch that
neither a class nor a target of allowlist.py explains."""
import pytest

pytest.importorskip("torch")

from .run import QUICK_CALLS, fuzz, new_disagreements  # noqa: E402


def test_quick_round_has_no_new_disagreements():
    per_family, disagreements = fuzz(QUICK_CALLS, seed=0)
    assert sum(n for _, n in per_family.values()) == QUICK_CALLS
    new = new_disagreements(disagreements)
    assert not new, "\n".join(f"#{i} {name}: {why}\n    {call[:300]}"
                              for i, name, why, call, _ in new)
