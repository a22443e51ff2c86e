import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # the conformance extra is not installed
    torch = None


@pytest.fixture
def torch_mod():
    """Real PyTorch, the reference; tests that compare against it skip without it."""
    if torch is None:
        pytest.skip("torch is not installed (pip install .[conformance])")
    return torch


@pytest.fixture
def rng():
    return np.random.default_rng(0)
