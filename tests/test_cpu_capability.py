"""ember's random stream on every CPU capability PyTorch can run at on this machine.

PyTorch picks its CPU kernels by capability (DEFAULT, AVX2, AVX512; ATEN_CPU_CAPABILITY
lowers it), and its random kernels round differently per build. The suite's own run checks the
machine's capability; here the exact-equality tests run again in a subprocess for each lower
capability, torch and ember both under the same ATEN_CPU_CAPABILITY. A second test requires the
float64 samplers to give the same (PyTorch's) numbers with NumPy's AVX-512 loops switched off
and on: NumPy's own log/sin/cos round differently from the C library PyTorch calls."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ["default", "avx2", "avx512"]
# The tests whose values depend on the random kernels' build: the random functions, nn.init
# and default layer initialisation, dropout, embedding and the vision models' initial weights.
LEG_TESTS = ["tests/test_random.py", "tests/test_seeded_parity.py",
             "tests/test_nn_dropout_embedding.py",
             "tests/test_nn_audit.py", "tests/test_vision_models.py::test_init_matches_torchvision",
             "tests/test_cpu_capability.py::test_capability_matches_torch",
             "tests/test_cpu_capability.py::test_float64_samplers_ignore_numpy_simd"]


def _torch_capability(env):
    out = subprocess.run([sys.executable, "-c", "import torch; print("
                          "torch.backends.cpu.get_cpu_capability())"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _ember_capability(env):
    out = subprocess.run([sys.executable, "-c", "import ember; print("
                          "ember.backends.cpu.get_cpu_capability())"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _machine_capability():
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    return _ember_capability(env).lower()


def _lower_legs():
    """The capabilities at or below this CPU's own, less the one this run already checks."""
    top = ORDER.index(_machine_capability())
    current = ember.backends.cpu.get_cpu_capability().lower()
    return [c for c in ORDER[:top + 1] if c != current]


def test_capability_matches_torch(torch_mod):
    assert ember.backends.cpu.get_cpu_capability() == \
        torch_mod.backends.cpu.get_cpu_capability()


@pytest.mark.parametrize("value", ["default", "avx2", "AVX2", "bogus", ""])
def test_capability_variable_read_as_torch(value, torch_mod):
    env = dict(os.environ, ATEN_CPU_CAPABILITY=value)
    if value in ("avx2",) and _machine_capability() == "default":
        pytest.skip("this CPU has no AVX2")
    assert _ember_capability(env) == _torch_capability(env)


@pytest.mark.skipif(os.environ.get("EMBER_CAPABILITY_LEG") is not None,
                    reason="already inside a capability leg")
@pytest.mark.parametrize("capability", ORDER)
def test_random_stream_at_capability(capability, torch_mod):
    if capability not in _lower_legs():
        pytest.skip(f"{capability}: above this CPU, or the capability of this run itself")
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability, EMBER_CAPABILITY_LEG=capability)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-p", "no:randomly", *LEG_TESTS], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert " passed" in result.stdout


_SAMPLERS = """
import json, sys
import {lib} as L
out = {{}}
for seed in range(3):
    L.manual_seed(seed)
    out[seed] = [L.randn(1000, dtype=L.float64).tolist(), L.randn(7, dtype=L.float64).tolist(),
                 L.empty(500, dtype=L.float64).exponential_(1.5).tolist(),
                 L.empty(500, dtype=L.float64).geometric_(0.3).tolist(),
                 L.empty(500, dtype=L.float64).log_normal_(0.5, 1.5).tolist(),
                 L.empty(500, dtype=L.float64).cauchy_(1.0, 2.0).tolist(),
                 L.randn(1000).tolist(), L.empty(100).exponential_().tolist(),
                 L.multinomial(L.ones(40), 10).tolist()]
json.dump(out, sys.stdout)
"""


def _samples(lib, env):
    out = subprocess.run([sys.executable, "-c", _SAMPLERS.format(lib=lib)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _numpy_avx512_targets():
    from numpy._core._multiarray_umath import __cpu_dispatch__
    return [t for t in __cpu_dispatch__ if "512" in t or t == "X86_V4"]


def test_float64_samplers_ignore_numpy_simd(torch_mod):
    expected = _samples("torch", dict(os.environ))
    off = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(_numpy_avx512_targets()))
    for env in (dict(os.environ), off):
        got = _samples("ember", env)
        for seed, draws in expected.items():
            for want, have in zip(draws, got[seed]):
                np.testing.assert_array_equal(np.array(have), np.array(want))
