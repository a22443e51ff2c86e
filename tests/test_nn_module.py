"""nn.Module system against real PyTorch: registration, traversal, state_dict, hooks, repr."""
from collections import OrderedDict

import numpy as np
import pytest

import ember


def _pair(torch_mod):
    """The same little model built in both libraries, with torch's weights copied over."""
    def build(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                                              nn.Linear(8, 8), nn.Tanh())
                self.heads = nn.ModuleList([nn.Linear(8, 2) for _ in range(3)])
                self.extra = nn.ModuleDict({"gelu": nn.GELU(), "lsm": nn.LogSoftmax(dim=1)})
                self.scale = nn.Parameter(lib.ones(1))
                self.register_buffer("offset", lib.zeros(2))
                self.register_buffer("scratch", lib.zeros(1), persistent=False)

            def forward(self, x):
                h = self.features(x) * self.scale
                return self.extra["lsm"](sum(head(h) for head in self.heads) + self.offset)
        return Net()
    ours, theirs = build(ember), build(torch_mod)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_repr_names_and_state_dict_match_torch(torch_mod):
    ours, theirs = _pair(torch_mod)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_forward_and_gradients_match_torch(torch_mod):
    ours, theirs = _pair(torch_mod)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out, tout = ours(ember.tensor(x)), theirs(torch_mod.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=n)


def test_shared_modules_are_counted_once():
    lin = ember.nn.Linear(2, 2)
    seq = ember.nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_modules())) == 2
    assert len(list(seq.named_modules(remove_duplicate=False))) == 3


def test_setattr_routing_and_errors(torch_mod):
    for lib in (ember, torch_mod):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.zeros(2))
        m.sub = lib.nn.Linear(2, 2)
        m.register_buffer("b", lib.ones(1))
        assert set(m._parameters) == {"w"} and set(m._modules) == {"sub"}
        with pytest.raises(TypeError, match="cannot assign"):
            m.w = lib.zeros(2)
        del m.w
        assert "w" not in m._parameters
    errors = []
    for lib in (ember, torch_mod):
        class Early(lib.nn.Module):
            def __init__(self):
                self.w = lib.nn.Parameter(lib.zeros(1))
        with pytest.raises(AttributeError) as info:
            Early()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_load_state_dict_errors_match_torch(torch_mod):
    messages = []
    for lib in (ember, torch_mod):
        m = lib.nn.Sequential(lib.nn.Linear(3, 2))
        bad = {"0.weight": lib.zeros(4, 3), "extra": lib.zeros(1)}
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(bad)
        messages.append(str(info.value))
        result = m.load_state_dict({"0.weight": lib.zeros(2, 3), "junk": lib.ones(1)},
                                   strict=False)
        assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["junk"]
    assert messages[0] == messages[1]


def test_train_eval_zero_grad_requires_grad():
    m = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Dropout() if hasattr(
        ember.nn, "Dropout") else ember.nn.Identity())
    m.eval()
    assert not any(sub.training for sub in m.modules())
    m.train()
    assert all(sub.training for sub in m.modules())
    m(ember.ones(1, 2)).sum().backward()
    assert m[0].weight.grad is not None
    m.zero_grad()
    assert m[0].weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_forward_hooks_and_pre_hooks():
    m = ember.nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(ember.ones(3, 2))
    np.testing.assert_allclose(out.detach().numpy(), (m.bias.detach() + 1).expand(3, 2).numpy())
    assert calls == [(3, 2)]
    h1.remove()
    h2.remove()
    m(ember.ones(3, 2))
    assert len(calls) == 1
    kw = m.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs),
                                     with_kwargs=True)
    m(ember.ones(1, 2))
    kw.remove()


def test_full_backward_hook_matches_torch(torch_mod):
    seen = {}
    for lib in (ember, torch_mod):
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, 2, 3], [4, 5, 6]]))
        grads = []
        lin.register_full_backward_hook(
            lambda mod, gin, gout: grads.append((gin[0].numpy().copy(),
                                                 gout[0].numpy().copy())))
        x = lib.ones(1, 3, requires_grad=True)
        (lin(x) * lib.tensor([[2.0, 3.0]])).sum().backward()
        seen[lib.__name__] = grads
    (a_in, a_out), = seen["ember"]
    (b_in, b_out), = seen["torch"]
    np.testing.assert_allclose(a_in, b_in)
    np.testing.assert_allclose(a_out, b_out)


def test_containers_behave_like_torch(torch_mod):
    for lib in (ember, torch_mod):
        nn = lib.nn
        seq = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh()),
                                         ("c", nn.Sigmoid())]))
        assert isinstance(seq[1], nn.Tanh) and isinstance(seq[-1], nn.Sigmoid)
        assert len(seq[1:]) == 2
        seq.append(nn.ReLU())
        assert len(seq) == 4
        ml = nn.ModuleList([nn.ReLU()])
        ml.extend([nn.Tanh(), nn.Tanh()])
        ml.insert(0, nn.Sigmoid())
        assert [type(m).__name__ for m in ml] == ["Sigmoid", "ReLU", "Tanh", "Tanh"]
        pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.ones(3))])
        assert all(isinstance(p, nn.Parameter) for p in pl)
        pd = nn.ParameterDict({"x": lib.zeros(1)})
        assert isinstance(pd["x"], nn.Parameter)
    reprs = []
    for lib in (ember, torch_mod):
        nn = lib.nn
        reprs.append(repr(nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])))
        reprs.append(repr(nn.ParameterList([nn.Parameter(lib.zeros(2, 3))])))
        reprs.append(repr(nn.Parameter(lib.tensor([1.0, 2.0]))))
    assert reprs[:3] == [r.replace("torch.", "ember.") for r in reprs[3:]]


def test_module_to_keeps_parameter_identity(torch_mod):
    m = ember.nn.Linear(2, 2)
    w = m.weight
    m.double()
    assert m.weight is w and w.dtype is ember.float64
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    m(ember.ones(1, 2, dtype=ember.float64)).sum().backward()
    opt.step()


def test_lazy_linear_infers_in_features():
    m = ember.nn.LazyLinear(3)
    out = m(ember.ones(4, 5))
    assert out.shape == (4, 3)
    assert type(m) is ember.nn.Linear and m.in_features == 5
    assert m.weight.shape == (3, 5)
