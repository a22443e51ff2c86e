"""torch 2.13's public callables per module against ember's (issue 23): each test fails when
ember lacks a name that is neither present nor listed below with the reason it is left out,
and when a listed name has since appeared (so the list stays true). Coverage per module is
printed (pytest -s). Modules join by adding a row to MODULES."""
import importlib
import types

import pytest

# module -> {name deliberately left out: why}
MODULES = {
    "fft": {},
    "special": {},
    "testing": {"FileCheck": "TorchScript IR pattern checker: ember has no TorchScript IR"},
    "random": {},
    "nn.attention": {
        "SDPAParams": "C++ parameter bundle of PyTorch's CUDA kernel selection",
        "can_use_flash_attention": "asks PyTorch's CUDA flash kernel about its constraints",
        "can_use_efficient_attention": "asks PyTorch's CUDA memory-efficient kernel",
        "register_flash_attention_impl": "plugs FA3/FA4 CUDA kernels into PyTorch's dispatcher",
        "activate_flash_attention_impl": "selects a registered FA3/FA4 CUDA kernel",
        "current_flash_attention_impl": "names the active FA3/FA4 CUDA kernel",
        "list_flash_attention_impls": "lists the FA3/FA4 CUDA kernels",
        "restore_flash_attention_impl": "restores PyTorch's built-in CUDA flash kernel",
    },
    "utils.hooks": {
        "BackwardHook": "internal machinery of PyTorch's Module full backward hooks",
        "warn_if_has_hooks": "internal to PyTorch's tensor pickling (_reduce_ex_internal)",
    },
    "utils.benchmark": {
        "Compare": "result tables across Measurements: not built yet",
        "Colorize": "an option of Compare",
        "CallgrindStats": "instruction counts from Valgrind's Callgrind: not built",
        "FunctionCount": "part of CallgrindStats",
        "FunctionCounts": "part of CallgrindStats",
        "CopyIfCallgrind": "part of the Callgrind path",
        "Fuzzer": "random input generators for benchmarks: not built yet",
        "FuzzedParameter": "part of Fuzzer",
        "FuzzedTensor": "part of Fuzzer",
        "FuzzedSparseTensor": "part of Fuzzer (and ember has no sparse tensors yet)",
        "ParameterAlias": "part of Fuzzer",
    },
}


def _public_callables(module):
    """Callables a user reaches as module.<name>: public, defined in torch (not re-exported
    typing or standard-library helpers), not submodules."""
    names = set()
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
            continue
        if (getattr(value, "__module__", None) or "").startswith("torch"):
            names.add(name)
    return names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_torch_callables_exist_in_ember(module, torch_mod):
    theirs = _public_callables(importlib.import_module(f"torch.{module}"))
    ours = importlib.import_module(f"ember.{module}")
    excluded = MODULES[module]
    missing = sorted(n for n in theirs - set(excluded) if not callable(getattr(ours, n, None)))
    stale = sorted(n for n in excluded if n in theirs and callable(getattr(ours, n, None)))
    unknown = sorted(n for n in excluded if n not in theirs)
    present = len(theirs) - len(set(excluded) & theirs)
    print(f"torch.{module}: {present}/{len(theirs)} callables in ember")
    assert not missing, f"ember.{module} lacks {missing}"
    assert not stale, f"listed as left out but present now: {stale}"
    assert not unknown, f"listed but not in torch.{module}: {unknown}"


def test_constants_match_torch(torch_mod):
    import math
    import ember
    for name in ("inf", "pi", "e"):
        assert getattr(ember, name) == getattr(torch_mod, name)
        assert type(getattr(ember, name)) is type(getattr(torch_mod, name))
    assert math.isnan(ember.nan) and math.isnan(torch_mod.nan)
    assert ember.newaxis is torch_mod.newaxis is None
    assert ember.ones(3)[:, ember.newaxis].shape == (3, 1)
