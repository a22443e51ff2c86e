"""ember.nn.utils.prune against torch.nn.utils.prune: the same seeded program on both
libraries gives the same masks, parameters, buffers, state_dict keys, outputs, gradients
and errors."""
import importlib

import numpy as np
import pytest

import ember
import ember.nn.utils.prune  # noqa: F401  (as in torch, a submodule imported by name)

from checks import assert_close


def _prune_mod(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.prune")


def _both(torch_mod, program):
    return program(torch_mod, _prune_mod(torch_mod)), program(ember, _prune_mod(ember))


def _assert_same(e, t):
    if isinstance(t, np.ndarray):
        assert isinstance(e, np.ndarray) and e.dtype == t.dtype and e.shape == t.shape
        assert_close(e, t)
    elif isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _assert_same(a, b)
    elif isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _assert_same(e[k], t[k])
    else:
        assert e == t


def _np(t):
    return t.detach().numpy().copy()


def test_seeded_methods_give_torch_masks(torch_mod):
    def program(lib, P):
        out = {}
        lib.manual_seed(0)
        m = lib.nn.Linear(5, 4)
        P.random_unstructured(m, "weight", amount=0.3)
        out["random_unstructured"] = _np(m.weight_mask)
        P.l1_unstructured(m, "weight", amount=2)
        out["l1"] = _np(m.weight_mask)
        P.random_structured(m, "weight", amount=1, dim=0)
        out["random_structured"] = _np(m.weight_mask)
        P.ln_structured(m, "weight", amount=0.25, n=2, dim=1)
        out["ln"] = _np(m.weight_mask)
        out["container"] = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        out["methods"] = [type(h).__name__ for h in list(m._forward_pre_hooks.values())[0]]
        out["keys"] = list(m.state_dict())
        out["params"] = [k for k, _ in m.named_parameters()]
        out["buffers"] = [k for k, _ in m.named_buffers()]
        out["y"] = _np(m(lib.ones(2, 5)))
        out["weight"] = _np(m.weight)
        out["pruned"] = P.is_pruned(m)
        return out
    t, e = _both(torch_mod, program)
    _assert_same(e, t)


def test_remove_makes_pruning_permanent(torch_mod):
    def program(lib, P):
        lib.manual_seed(1)
        m = lib.nn.Conv2d(2, 3, 2)
        P.ln_structured(m, "weight", amount=1, n=1, dim=0)
        P.remove(m, "weight")
        with pytest.raises(ValueError) as info:
            P.remove(m, "weight")
        return (list(m.state_dict()), type(m.weight).__name__, _np(m.weight),
                P.is_pruned(m), len(m._forward_pre_hooks), str(info.value))
    t, e = _both(torch_mod, program)
    _assert_same(e, t)


def test_global_unstructured_and_importance_scores(torch_mod):
    def program(lib, P):
        lib.manual_seed(2)
        conv, lin = lib.nn.Conv2d(2, 3, 2), lib.nn.Linear(3, 3)
        P.l1_unstructured(lin, "bias", amount=1)
        scores = {(lin, "weight"): lib.arange(9.0).view(3, 3)}
        P.global_unstructured([(conv, "weight"), (lin, "weight"), (lin, "bias")],
                              P.L1Unstructured, importance_scores=scores, amount=0.4)
        m = lib.nn.Linear(4, 2)
        P.l1_unstructured(m, "weight", 3, importance_scores=-lib.arange(8.0).view(2, 4))
        P.ln_structured(m, "weight", 1, n=float("inf"), dim=0,
                        importance_scores=lib.tensor([[1.0] * 4, [2.0] * 4]))
        return [_np(conv.weight_mask), _np(lin.weight_mask), _np(lin.bias_mask),
                _np(m.weight_mask)]
    t, e = _both(torch_mod, program)
    _assert_same(e, t)


def test_identity_custom_mask_and_prune_method(torch_mod):
    def program(lib, P):
        lib.manual_seed(3)
        m = lib.nn.Linear(3, 2)
        P.identity(m, "bias")
        P.custom_from_mask(m, "weight", mask=lib.tensor([[1, 0, 1], [0, 1, 1]]))
        x = lib.tensor([[1.0, -2.0, 0.5]])
        m(x).sum().backward()
        t = lib.tensor([[3.0, -1.0], [0.5, 2.0]])
        pruned = P.L1Unstructured(amount=0.5).prune(t)
        masked = P.RandomStructured(0.5, dim=1).prune(t, default_mask=lib.ones(2, 2))
        return [_np(m.bias_mask), _np(m.weight_mask), m.weight_mask.dtype is lib.float32,
                _np(m.weight_orig.grad), _np(m.bias_orig.grad), _np(pruned), _np(masked)]
    t, e = _both(torch_mod, program)
    _assert_same(e, t)


def test_state_dict_loads_across_libraries(torch_mod):
    torch_prune = _prune_mod(torch_mod)
    ember_prune = _prune_mod(ember)
    torch_mod.manual_seed(4)
    tm = torch_mod.nn.Linear(4, 3)
    torch_prune.l1_unstructured(tm, "weight", amount=0.5)
    em = ember.nn.Linear(4, 3)
    ember_prune.identity(em, "weight")
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = em(ember.tensor(x)).detach().numpy()
    assert_close(out, tm(torch_mod.tensor(x)).detach().numpy())


@pytest.mark.parametrize("call", [
    lambda P, m: P.l1_unstructured(m, "weight", amount="a"),
    lambda P, m: P.l1_unstructured(m, "weight", amount=-1),
    lambda P, m: P.l1_unstructured(m, "weight", amount=1.5),
    lambda P, m: P.random_unstructured(m, "weight", amount=100),
    lambda P, m: P.random_structured(m, "bias", amount=1, dim=0),
    lambda P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=2),
    lambda P, m: P.remove(m, "bias"),
    lambda P, m: P.global_unstructured([(m, "weight")], P.RandomStructured, amount=1),
    lambda P, m: P.global_unstructured(5, P.L1Unstructured, amount=1),
    lambda P, m: P.global_unstructured([(m, "weight")], P.L1Unstructured, [], amount=1),
    lambda P, m: P.PruningContainer(P.Identity(), 3),
])
def test_errors_match_torch(torch_mod, call):
    def program(lib, P):
        m = lib.nn.Linear(3, 2)
        with pytest.raises(Exception) as info:
            call(P, m)
        # a failed prune leaves the module as it was
        message = str(info.value).replace("torch.", "").replace("ember.", "")
        return (type(info.value).__name__, message,
                [k for k, _ in m.named_parameters()])
    t, e = _both(torch_mod, program)
    _assert_same(e, t)


def test_classes_and_signatures(torch_mod):
    import inspect
    tp, ep = _prune_mod(torch_mod), _prune_mod(ember)
    for name in ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
                 "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask"]:
        tc, ec = getattr(tp, name), getattr(ep, name)
        assert getattr(ec, "PRUNING_TYPE", None) == getattr(tc, "PRUNING_TYPE", None)
        assert str(inspect.signature(ec.apply)) == str(inspect.signature(tc.apply))
        if name != "BasePruningMethod":
            assert issubclass(ec, ep.BasePruningMethod)
    for name in ["identity", "random_unstructured", "l1_unstructured", "random_structured",
                 "ln_structured", "custom_from_mask", "remove", "is_pruned"]:
        tsig = inspect.signature(getattr(tp, name))
        esig = inspect.signature(getattr(ep, name))
        assert list(esig.parameters) == list(tsig.parameters)
    with pytest.raises(TypeError):
        ep.BasePruningMethod()   # abstract, as torch's
