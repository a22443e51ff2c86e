"""ember.vision against torchvision 0.29's outputs on the same inputs and seeds.

The references (tests/data/vision_refs.npz) come from scripts/make_vision_refs.py run with
torch + torchvision; the cases themselves live in tests/data/vision_cases.py.
"""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("PIL")
DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import vision_cases  # noqa: E402

REFS = np.load(os.path.join(DATA, "vision_refs.npz"))
KEYS = [k for k in REFS.files if not k.startswith("__")]


@pytest.fixture(scope="module")
def ember_outputs():
    import ember
    import ember.vision
    return vision_cases.run(ember, ember.vision)


@pytest.mark.parametrize("key", KEYS)
def test_matches_torchvision(ember_outputs, key):
    ref = REFS[key]
    assert key in ember_outputs
    got = np.asarray(ember_outputs[key])
    if ref.dtype.kind == "U":
        assert str(got) == str(ref)
        return
    assert got.shape == ref.shape and got.dtype == ref.dtype
    if ref.dtype.kind in "iub":
        # NOTE: float32 rounding may move an integer pixel by one level
        np.testing.assert_allclose(got.astype(np.int64), ref.astype(np.int64), rtol=0,
                                   atol=vision_cases.UINT8_ATOL)
        if ref.size:
            assert np.mean(got != ref) < 0.01
    else:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-4)


def test_every_case_has_a_reference(ember_outputs):
    assert set(ember_outputs) == set(KEYS)
