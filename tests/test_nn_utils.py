"""nn.utils against real PyTorch: gradient clipping, parameter/vector conversion,
parametrize (layout, state_dict keys, caching, removal), weight_norm and spectral_norm (new and
legacy forms, bit-identical u/v initialisation), BatchNorm fusion."""
import warnings

import numpy as np
import pytest

import ember


def _twin_grads(torch_mod, seed=0, scale=1.0):
    """Three parameters with the same gradients in each library."""
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 2, 2)]
    grads = [rng.standard_normal(s).astype(np.float32) * scale for s in shapes]
    out = []
    for lib in (ember, torch_mod):
        ps = [lib.nn.Parameter(lib.zeros(s)) for s in shapes]
        for p, g in zip(ps, grads):
            p.grad = lib.tensor(g)
        out.append(ps)
    return out


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(torch_mod, norm_type, max_norm):
    ours, theirs = _twin_grads(torch_mod)
    a = ember.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    b = torch_mod.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert isinstance(a, ember.Tensor) and a.dim() == 0
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_single_tensor_foreach_and_none_grads(torch_mod):
    results = []
    for lib in (ember, torch_mod):
        p = lib.nn.Parameter(lib.ones(3))
        q = lib.nn.Parameter(lib.ones(2))  # no grad: skipped
        p.grad = lib.tensor([3.0, 4.0, 0.0])
        total = lib.nn.utils.clip_grad_norm_([p, q], 1.0, foreach=False)
        lib.nn.utils.clip_grad_norm_(p, 1.0, foreach=None)
        results.append((float(total), p.grad.numpy(), q.grad))
    assert results[0][0] == pytest.approx(results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    assert results[0][2] is None
    assert float(ember.nn.utils.clip_grad_norm_([], 1.0)) == 0.0


def test_clip_grad_norm_nonfinite(torch_mod):
    messages = []
    for lib in (ember, torch_mod):
        p = lib.nn.Parameter(lib.ones(2))
        p.grad = lib.tensor([float("inf"), 1.0])
        with pytest.raises(RuntimeError) as info:
            lib.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        messages.append(str(info.value))
        total = lib.nn.utils.clip_grad_norm_([p], 1.0)
        assert np.isinf(float(total))
    assert messages[0] == messages[1]


def test_clip_grad_norm_empty_generator_warns():
    with pytest.warns(UserWarning, match="empty generator"):
        ember.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_get_total_norm_and_clip_grads_with_norm(torch_mod):
    ours, theirs = _twin_grads(torch_mod, seed=3)
    for lib, ps in ((ember, ours), (torch_mod, theirs)):
        total = lib.nn.utils.get_total_norm([p.grad for p in ps], norm_type=3.0)
        lib.nn.utils.clip_grads_with_norm_(ps, 0.3, total)
    np.testing.assert_allclose(
        float(ember.nn.utils.get_total_norm([p.grad for p in ours])),
        float(torch_mod.nn.utils.get_total_norm([p.grad for p in theirs])), rtol=1e-6)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_value_and_deprecated_clip_grad_norm(torch_mod):
    ours, theirs = _twin_grads(torch_mod, scale=3)
    ember.nn.utils.clip_grad_value_(ours, 1.5)
    torch_mod.nn.utils.clip_grad_value_(theirs, 1.5)
    for p, q in zip(ours, theirs):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        ember.nn.utils.clip_grad_norm(ours, 1.0)


def test_parameters_to_vector_roundtrip(torch_mod):
    ours, theirs = (lib.nn.Linear(3, 2) for lib in (ember, torch_mod))
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    a = ember.nn.utils.parameters_to_vector(ours.parameters())
    b = torch_mod.nn.utils.parameters_to_vector(theirs.parameters())
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    a.sum().backward()
    assert (ours.weight.grad.numpy() == 1).all()
    vec = ember.arange(8, dtype=ember.float32)
    ember.nn.utils.vector_to_parameters(vec, ours.parameters())
    np.testing.assert_array_equal(ours.weight.detach().numpy(), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(ours.bias.detach().numpy(), [6, 7])
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        ember.nn.utils.vector_to_parameters([1.0], ours.parameters())


# ---------------------------------------------------------------------- parametrize
def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _scale(lib, factor):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * factor

        def right_inverse(self, a):
            return a / factor
    return Scale()


def _pair(torch_mod, build):
    ours, theirs = build(ember), build(torch_mod)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_register_parametrization_layout_matches_torch(torch_mod):
    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 3)
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _symmetric(lib))
        P.register_parametrization(m, "weight", _scale(lib, 2.0))
        return m
    ours, theirs = build(ember), build(torch_mod)
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(ours).replace("Symmetric", "S") == repr(theirs).replace("Symmetric", "S")
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-6)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    a, b = ours(ember.tensor(x)), theirs(torch_mod.tensor(x))
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.parametrizations.weight.original.grad.numpy(),
                               theirs.parametrizations.weight.original.grad.numpy(), rtol=1e-5)
    P = ember.nn.utils.parametrize
    assert P.is_parametrized(ours) and P.is_parametrized(ours, "weight")
    assert not P.is_parametrized(ours, "bias")
    assert P.type_before_parametrizations(ours) is ember.nn.Linear


def test_assigning_to_parametrized_tensor_uses_right_inverse(torch_mod):
    values = []
    for lib in (ember, torch_mod):
        m = lib.nn.Linear(2, 2)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _scale(lib, 4.0))
        m.weight = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        values.append((m.parametrizations.weight.original.detach().numpy(),
                       m.weight.detach().numpy()))
    for a, b in zip(*values):
        np.testing.assert_allclose(a, b)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(torch_mod, leave):
    results = []
    for lib in (ember, torch_mod):
        lib.manual_seed(1)
        m = lib.nn.Linear(3, 3)
        original = m.weight
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _symmetric(lib))
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        assert type(m) is lib.nn.Linear and not P.is_parametrized(m)
        assert m.weight is original  # the same Parameter object, as PyTorch keeps it
        results.append((list(m.state_dict()), m.weight.detach().numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


def test_parametrize_cached_and_errors(torch_mod):
    m = ember.nn.Linear(2, 2)
    P = ember.nn.utils.parametrize
    P.register_parametrization(m, "weight", _scale(ember, 3.0))
    assert m.weight is not m.weight
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    errors = []
    for lib in (ember, torch_mod):
        P = lib.nn.utils.parametrize

        class Bad(lib.nn.Module):
            def forward(self, x):
                return x[0]
        for call in (lambda: P.register_parametrization(lib.nn.Linear(2, 2), "weight", Bad()),
                     lambda: P.remove_parametrizations(lib.nn.Linear(2, 2), "weight")):
            with pytest.raises(ValueError) as info:
                call()
            errors.append(str(info.value).split("\n")[0])
        with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
            P.register_parametrization(lib.nn.Linear(2, 2), "nope", _scale(lib, 1.0))
    assert errors[:1] == errors[2:3]


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch(torch_mod, dim):
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3), dim=dim)
    ours, theirs = build(ember), build(torch_mod)
    sd_a, sd_b = ours.state_dict(), theirs.state_dict()
    assert list(sd_a) == list(sd_b)
    for k in sd_a:
        assert tuple(sd_a[k].shape) == tuple(sd_b[k].shape), k
        np.testing.assert_allclose(sd_a[k].numpy(), sd_b[k].numpy(), rtol=1e-6, err_msg=k)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    a, b = ours(ember.tensor(x)), theirs(torch_mod.tensor(x))
    (a * a).sum().backward()
    (b * b).sum().backward()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=n)


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("shape,dim", [((4, 3), 0), ((5, 2, 3), 0), ((5, 2, 3), 1)])
def test_spectral_norm_matches_torch(torch_mod, seed, shape, dim):
    def build(lib):
        lib.manual_seed(seed)
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.randn(*shape))
        return lib.nn.utils.parametrizations.spectral_norm(m, dim=dim, n_power_iterations=2)
    ours, theirs = build(ember), build(torch_mod)
    for step in range(3):
        ours.train(step < 2)
        theirs.train(step < 2)
        a, b = ours.weight, theirs.weight
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        sd_a, sd_b = ours.state_dict(), theirs.state_dict()
        assert list(sd_a) == list(sd_b)
        for k in sd_a:
            np.testing.assert_allclose(sd_a[k].numpy(), sd_b[k].numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=k)
        (a * a).sum().backward()
        (b * b).sum().backward()
        np.testing.assert_allclose(ours.parametrizations.weight.original.grad.numpy(),
                                   theirs.parametrizations.weight.original.grad.numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_spectral_norm_errors(torch_mod):
    for lib in (ember, torch_mod):
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'foo'"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="foo")
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                        n_power_iterations=0)


def test_legacy_weight_norm_and_spectral_norm(torch_mod):
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    outs = []
    for lib in (ember, torch_mod):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.manual_seed(0)
            wn = lib.nn.utils.weight_norm(lib.nn.Linear(4, 3))
            sn = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        y = sn(wn(lib.tensor(x)))
        y.sum().backward()
        row = [list(wn.state_dict()), list(sn.state_dict()), y.detach().numpy(),
               wn.weight_g.grad.numpy(), sn.weight_orig.grad.numpy(), sn.weight_u.numpy()]
        lib.nn.utils.remove_weight_norm(wn)
        lib.nn.utils.remove_spectral_norm(sn)
        row += [list(wn.state_dict()), list(sn.state_dict()), wn.weight.detach().numpy()]
        outs.append(row)
    for a, b in zip(*outs):
        if isinstance(a, list):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    with pytest.warns(FutureWarning, match="deprecated"):
        ember.nn.utils.weight_norm(ember.nn.Linear(2, 2))


def test_new_weight_norm_loads_legacy_state_dict():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        legacy = ember.nn.utils.weight_norm(ember.nn.Linear(3, 2))
    modern = ember.nn.utils.parametrizations.weight_norm(ember.nn.Linear(3, 2))
    modern.load_state_dict(legacy.state_dict())
    x = ember.randn(4, 3)
    np.testing.assert_allclose(modern(x).detach().numpy(), legacy(x).detach().numpy(),
                               rtol=1e-6)


# ---------------------------------------------------------------------- fusion
def _trained_bn(lib, bn):
    lib.manual_seed(0)
    bn.train()
    for _ in range(3):
        spatial = (3,) if isinstance(bn, lib.nn.BatchNorm1d) else (3, 3)
        bn(lib.randn(8, bn.num_features, *spatial))
    with lib.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
    return bn.eval()


def test_fuse_linear_bn_eval(torch_mod):
    outs = []
    for lib in (ember, torch_mod):
        lib.manual_seed(1)
        lin = lib.nn.Linear(4, 5).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm1d(5))
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        x = lib.randn(6, 4)
        outs.append((fused(x).detach().numpy(), bn(lin(x)).detach().numpy(),
                     fused.weight.detach().numpy(), type(fused.weight).__name__))
    np.testing.assert_allclose(outs[0][0], outs[0][1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0][2], outs[1][2], rtol=1e-5, atol=1e-6)
    assert outs[0][3] == "Parameter"
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        ember.nn.utils.fuse_linear_bn_eval(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))


@pytest.mark.parametrize("transpose", [False, True])
def test_fuse_conv_bn_weights(torch_mod, transpose):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4, 2, 2)).astype(np.float32)
    b = rng.standard_normal(4 if transpose else 3).astype(np.float32)
    c = 4 if transpose else 3
    stats = [rng.standard_normal(c).astype(np.float32) for _ in range(2)]
    rv = rng.uniform(0.5, 2, c).astype(np.float32)
    outs = []
    for lib in (ember, torch_mod):
        t = lib.tensor
        for conv_b, bn_w in ((t(b), t(stats[1])), (None, None)):
            fw, fb = lib.nn.utils.fuse_conv_bn_weights(t(w), conv_b, t(stats[0]), t(rv), 1e-3,
                                                       bn_w, t(stats[1]), transpose)
            outs.append((fw.detach().numpy(), fb.detach().numpy()))
    half = len(outs) // 2
    for a, b_ in zip(outs[:half], outs[half:]):
        np.testing.assert_allclose(a[0], b_[0], rtol=1e-6)
        np.testing.assert_allclose(a[1], b_[1], rtol=1e-6, atol=1e-6)


def test_fuse_conv_bn_eval(torch_mod):
    outs = []
    for lib in (ember, torch_mod):
        lib.manual_seed(2)
        conv = lib.nn.Conv2d(3, 4, 3).eval()
        bn = _trained_bn(lib, lib.nn.BatchNorm2d(4))
        x = lib.randn(2, 3, 6, 6)
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn)
        outs.append((fused(x).detach().numpy(), bn(conv(x)).detach().numpy()))
    np.testing.assert_allclose(outs[0][0], outs[0][1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-4, atol=1e-5)
