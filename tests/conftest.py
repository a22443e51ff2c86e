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


@pytest.fixture
def cuda_standin(monkeypatch):
    """ember's 'cuda' served by the NumPy stand-in with two devices (ember/backends/standin.py):
    device semantics without a GPU. The variable is set only here, for one test at a time."""
    from ember import backends
    from ember.cuda import _memory, _random, streams
    saved = backends.unregister("cuda")
    monkeypatch.setenv(backends.STANDIN_VARIABLE, "2")
    for table in (_random._generators, streams._current, streams._defaults, _memory._peaks):
        table.clear()
    yield
    backends.unregister("cuda")
    for table in (_random._generators, streams._current, streams._defaults, _memory._peaks):
        table.clear()
    if saved is not None:
        backends.register("cuda", saved)
