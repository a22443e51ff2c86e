"""The public surface PyTorch programs read, walked from real torch: Tensor's is_* predicates,
the non-callable attributes of the torch module, submodules loaded on attribute access."""

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
