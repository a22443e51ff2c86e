"""ember.load(weights_only=True) accepts exactly what PyTorch 2.13's weights_only load
accepts, by default and with safe globals: every checkpoint below is loaded by both (or
refused by both), from the same bytes."""
import collections
import io
import pickle
import sys
import types
import warnings
import zipfile

import numpy as np
import pytest

import ember
from ember.serialization import _pickling

torch = pytest.importorskip("torch")
from torch._weights_only_unpickler import _get_allowed_globals  # noqa: E402


def test_default_allow_list_is_torch_s():
    # Every default global of PyTorch is allowed here, or named as one ember cannot build;
    # nothing outside PyTorch's list is allowed.
    torch_names = set(_get_allowed_globals())
    ours = {f"{m}.{n}" for m, n in _pickling.allowed_globals()}
    unsupported = set(_pickling.unsupported_globals())
    assert ours <= torch_names, ours - torch_names
    assert torch_names - ours == unsupported


def _checkpoint(payload):
    """A zip checkpoint whose data.pkl is `payload` (raw pickle bytes), as torch.save lays
    it out, without storages."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def _global(module, name, args=b")"):
    """Protocol-2 pickle of module.name(*args) (args: pickle opcodes leaving a tuple)."""
    return (b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n" + args + b"R.")


def _outcome(lib, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = lib.load(io.BytesIO(data), **kw)
        except pickle.UnpicklingError as exc:
            return ("refused", type(exc).__name__)
        except Exception as exc:
            return ("error", type(exc).__name__)
    return ("ok", repr(r).replace("torch.", "").replace("ember.", ""))


_LIST_12 = b"]q\x00(K\x01K\x02e\x85"    # ([1, 2],)
PAYLOADS = {
    "set": _global("builtins", "set", _LIST_12),
    "set py2 name": _global("__builtin__", "set", _LIST_12),
    "frozenset": _global("builtins", "frozenset", _LIST_12),
    "frozenset py2 name": _global("__builtin__", "frozenset", _LIST_12),
    "complex": _global("builtins", "complex", b"G?\xf0\x00\x00\x00\x00\x00\x00K\x02\x86"),
    "bytearray": _global("__builtin__", "bytearray", b"X\x02\x00\x00\x00abX\x06\x00\x00\x00"
                         b"latin1\x86"),
    "bytes": _global("_codecs", "encode", b"X\x02\x00\x00\x00abX\x06\x00\x00\x00latin1\x86"),
    "slice": _global("builtins", "slice", b"K\x01K\x02\x86"),
    "range": _global("builtins", "range", b"K\x03\x85"),
    "xrange": _global("__builtin__", "xrange", b"K\x03\x85"),
    "long": _global("__builtin__", "long", b"K\x03\x85"),
    "Counter": _global("collections", "Counter", _LIST_12),
    "OrderedDict": _global("collections", "OrderedDict"),
    "Size": _global("torch", "Size", _LIST_12),
    "device": _global("torch", "device", b"X\x03\x00\x00\x00cpu\x85"),
    "dtype": b"\x80\x02ctorch\nfloat64\n.",
    "os.system": _global("os", "system", b"X\x04\x00\x00\x00true\x85"),
    "posix.system": _global("posix", "system", b"X\x04\x00\x00\x00true\x85"),
    "eval": _global("builtins", "eval", b"X\x01\x00\x00\x001\x85"),
    "getattr": _global("builtins", "getattr", b"K\x01X\x04\x00\x00\x00real\x86"),
    "numpy": _global("numpy.core.multiarray", "_reconstruct"),
    "list append": b"\x80\x02]q\x00K\x01a.",
    "dict setitem": b"\x80\x02}q\x00K\x01K\x02s.",
    "set add via setitem": b"\x80\x02\x8fK\x01K\x02s.",
    "protocol 4 frame": pickle.dumps({"a": 1}, protocol=4),
    "protocol 2 plain": pickle.dumps({"a": [1, 2.5, "x", None, True]}, protocol=2),
}


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_same_payloads_load_or_fail_as_torch(name):
    data = _checkpoint(PAYLOADS[name])
    assert _outcome(ember, data) == _outcome(torch, data)


# ---------------------------------------------------------------------- a whole model
TORCH_SRC = """
import torch
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.register_buffer("scale", torch.arange(2.0))
    def forward(self, x):
        return torch.tanh(self.fc(x)) * self.scale
"""


def _module(name, source):
    mod = types.ModuleType(name)
    exec(source, mod.__dict__)
    return mod


@pytest.fixture
def net_module(monkeypatch):
    """A module named `conformance_net` holding a torch Net, swapped for an ember one with the
    same source when ember loads (pickles name the class by module and name)."""
    torch_mod = _module("conformance_net", TORCH_SRC)
    ember_mod = _module("conformance_net", TORCH_SRC.replace("import torch",
                                                             "import ember as torch"))
    monkeypatch.setitem(sys.modules, "conformance_net", torch_mod)
    return torch_mod, ember_mod


def test_whole_model_saved_by_torch_with_protocol_2(net_module, monkeypatch):
    torch_mod, ember_mod = net_module
    torch.manual_seed(0)
    model = torch_mod.Net()
    buf = io.BytesIO()
    torch.save(model, buf, pickle_protocol=2)
    data = buf.getvalue()
    # Refused by default (by both) ...
    assert _outcome(torch, data)[0] == _outcome(ember, data)[0] == "refused"
    with torch.serialization.safe_globals([torch_mod.Net, torch.nn.Linear]):
        torch_back = torch.load(io.BytesIO(data))
    # ... and loaded under safe_globals, here with ember's classes (the torch Linear's
    # pickled name torch.nn.modules.linear.Linear is ember.nn.Linear's alias).
    monkeypatch.setitem(sys.modules, "conformance_net", ember_mod)
    with ember.serialization.safe_globals([ember_mod.Net, ember.nn.Linear]):
        back = ember.load(io.BytesIO(data))
    assert ember.serialization.get_safe_globals() == []
    assert type(back) is ember_mod.Net and isinstance(back.fc, ember.nn.Linear)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    want = torch_back(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(back(ember.tensor(x)).detach().numpy(), want, rtol=1e-6)
    assert sorted(back.state_dict()) == sorted(model.state_dict())


def test_safe_global_tuple_form_and_errors():
    data = _checkpoint(_global("collections", "deque"))
    assert _outcome(ember, data)[0] == "refused"
    with ember.serialization.safe_globals([(collections.deque, "collections.deque")]):
        assert _outcome(ember, data) == ("ok", "deque([])")
    for bad, exc in (((collections.deque,), ValueError), ((collections.deque, 1), TypeError)):
        with ember.serialization.safe_globals([bad]):
            with pytest.raises(exc):
                ember.load(io.BytesIO(data))


def test_blocked_modules_stay_blocked_even_when_allowlisted():
    import os
    data = _checkpoint(_global("os", "getcwd"))
    with ember.serialization.safe_globals([(os.getcwd, "os.getcwd")]):
        with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
            ember.load(io.BytesIO(data))


def test_rejection_message_is_torch_s():
    data = _checkpoint(PAYLOADS["frozenset py2 name"])
    with pytest.raises(pickle.UnpicklingError) as t_exc:
        torch.load(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError) as e_exc:
        ember.load(io.BytesIO(data))
    assert str(e_exc.value).replace("ember", "torch") == str(t_exc.value)
