"""The public surface PyTorch programs read, walked from real torch: Tensor's is_* predicates,
the non-callable attributes of the torch module, submodules loaded on attribute access."""

import types

import pytest

import ember

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------------- Tensor.is_*
IS_NAMES = sorted(n for n in dir(torch.Tensor) if n.startswith("is_"))


def _call(t, name, *args):
    value = getattr(t, name)
    if not callable(value):
        return ("property", value)
    try:
        return ("method", value(*args))
    except Exception as exc:
        return ("method", type(exc).__name__)


@pytest.mark.parametrize("name", IS_NAMES)
def test_tensor_predicates_as_torch(name):
    # On a plain CPU float tensor: the same kind (property or method) and the same answer.
    args = {"is_same_size": "other", "is_set_to": "other"}.get(name)
    t, e = torch.ones(2, 3), ember.ones(2, 3)
    if args:
        assert _call(e, name, e[:]) == _call(t, name, t[:])
        assert _call(e, name, e.t()) == _call(t, name, t.t())
    else:
        assert _call(e, name) == _call(t, name)


# ---------------------------------------------------------------------- torch.<constant>
# Left out, and why: AVG and SUM are torch.monitor's stat aggregation types (ember has no
# torch.monitor); everything else PyTorch exposes as a non-callable attribute ember has too.
EXCLUDED = {"AVG", "SUM"}
CONSTANTS = sorted(n for n in dir(torch) if not n.startswith("_") and n not in EXCLUDED
                   and not isinstance(getattr(torch, n), types.ModuleType)
                   and not callable(getattr(torch, n)))


def _is_signed(d):
    try:
        return d.is_signed
    except RuntimeError:   # (PyTorch has no answer for bits and quantized types)
        return None


@pytest.mark.parametrize("name", CONSTANTS)
def test_torch_constants_exist(name):
    t, e = getattr(torch, name), getattr(ember, name)
    if name == "chalf":
        # NOTE: ember's chalf is complex64, a working stand-in for PyTorch's complex32 (whose
        # own support is partial); ember.complex32 is the dtype without tensors.
        assert e is ember.complex64
    elif isinstance(t, torch.dtype):
        # a dtype (those ember cannot make tensors of too) with PyTorch's properties
        assert isinstance(e, ember.dtype) and repr(e) == repr(t).replace("torch.", "ember.")
        assert (e.itemsize, e.is_floating_point, e.is_complex) == \
            (t.itemsize, t.is_floating_point, t.is_complex)
        if _is_signed(t) is not None:
            assert e.is_signed == t.is_signed
    elif isinstance(t, (torch.layout, torch.memory_format, torch.qscheme)):
        assert repr(e) == repr(t).replace("torch.", "ember.")
        assert type(e).__name__ == type(t).__name__
    elif isinstance(t, float):
        assert e == t or (t != t and e != e)
    else:   # flags, tuples, the default generator
        assert type(e).__name__ == type(t).__name__
        if isinstance(t, (bool, tuple)) and name != "has_mkl":   # (ember has no MKL)
            assert e == t


def test_constant_identities_as_torch():
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert ember.bit is ember.uint1
    assert ember.ones(2).layout is ember.strided
    assert ember.float is ember.float32 and ember.long is ember.int64
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    assert ember.half is ember.float16 and ember.double is ember.float64


def test_dtypes_without_tensors_say_so():
    with pytest.raises(TypeError, match="cannot make tensors of dtype ember.uint16"):
        ember.zeros(2, dtype=ember.uint16)
