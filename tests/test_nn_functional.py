"""nn.functional activations and losses against real PyTorch: values and gradients
(float32 and float64), module forms and reprs, and PyTorch's error messages."""
import numpy as np
import pytest

import ember


def _x(shape=(4, 5), seed=0, low=-3, high=3):
    return np.random.default_rng(seed).uniform(low, high, shape)


# (name, call(F, *tensors), input arrays factory)
ACTIVATIONS = [
    ("relu", lambda F, x: F.relu(x)),
    ("relu6", lambda F, x: F.relu6(x * 3)),
    ("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2)),
    ("elu", lambda F, x: F.elu(x, 0.7)),
    ("selu", lambda F, x: F.selu(x)),
    ("celu", lambda F, x: F.celu(x, 1.5)),
    ("gelu", lambda F, x: F.gelu(x)),
    ("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh")),
    ("silu", lambda F, x: F.silu(x)),
    ("mish", lambda F, x: F.mish(x)),
    ("sigmoid", lambda F, x: F.sigmoid(x)),
    ("tanh", lambda F, x: F.tanh(x)),
    ("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 1.5)),
    ("hardsigmoid", lambda F, x: F.hardsigmoid(x)),
    ("hardswish", lambda F, x: F.hardswish(x)),
    ("hardshrink", lambda F, x: F.hardshrink(x, 0.7)),
    ("softshrink", lambda F, x: F.softshrink(x, 0.7)),
    ("tanhshrink", lambda F, x: F.tanhshrink(x)),
    ("threshold", lambda F, x: F.threshold(x, 0.3, -2.0)),
    ("softplus", lambda F, x: F.softplus(x * 10, beta=0.5, threshold=5)),
    ("softsign", lambda F, x: F.softsign(x)),
    ("logsigmoid", lambda F, x: F.logsigmoid(x * 30)),
    ("glu", lambda F, x: F.glu(x[:, :4], dim=1)),
    ("softmax", lambda F, x: F.softmax(x, dim=1)),
    ("softmin", lambda F, x: F.softmin(x, dim=0)),
    ("log_softmax", lambda F, x: F.log_softmax(x * 50, dim=-1)),
]


def _compare(call, arrays, torch_mod, dtype, rtol, grad=True):
    outs = []
    for lib in (ember, torch_mod):
        F = lib.nn.functional
        ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad) for a in arrays]
        out = call(F, *ts)
        if grad:
            (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape),
                              dtype=getattr(lib, dtype))).sum().backward()
        outs.append((out.detach().numpy(), [t.grad.numpy() if grad and t.grad is not None
                                            else None for t in ts]))
    (a, ga), (b, gb) = outs
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    for x, y in zip(ga, gb):
        if y is not None:
            # NOTE: torch computes some float64 gradients with float32 constants
            # (hardsigmoid: 1/6 as a float), hence the floor of 1e-7.
            np.testing.assert_allclose(x, y, rtol=max(rtol * 10, 1e-7), atol=rtol * 10)


@pytest.mark.parametrize("name,call", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_activation_matches_torch(name, call, dtype, torch_mod):
    _compare(call, [_x()], torch_mod, dtype, 1e-10 if dtype == "float64" else 1e-5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_graph_and_higher_derivatives_match_torch(approximate, torch_mod):
    """GELU is one node (GeluBackward0), its gradient another (GeluBackwardBackward0), and
    the second and third derivatives are PyTorch's, tails included."""
    x = np.concatenate([_x((20,), 3, -9, 9), [0.0, -40.0, 40.0]])
    res = []
    for lib in (ember, torch_mod):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.gelu(t, approximate=approximate)
        w = lib.tensor(np.linspace(-1, 1, x.size))
        g, = lib.autograd.grad((y * w).sum(), t, create_graph=True)
        gg, = lib.autograd.grad((g * w).sum(), t, create_graph=True)
        ggg, = lib.autograd.grad((gg * w).sum(), t)
        res.append(([type(y.grad_fn).__name__, type(g.grad_fn).__name__],
                    [a.detach().numpy() for a in (y, g, gg, ggg)]))
    assert res[0][0] == res[1][0]
    for k, (a, b) in enumerate(zip(res[0][1], res[1][1])):
        if k == 3:  # PyTorch's third derivative of the tanh form is nan at |x| = 40
            a, b = a[:-2], b[:-2]
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gelu_low_precision_matches_torch(dtype, torch_mod):
    x = _x((64,), 4, -5, 5)
    for approximate in ("none", "tanh"):
        outs = []
        for lib in (ember, torch_mod):
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            y = lib.nn.functional.gelu(t, approximate=approximate)
            (y * y).sum().backward()
            outs.append([y.detach().float().numpy(), t.grad.float().numpy()])
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)


def test_gelu_errors_match_torch(torch_mod):
    for make, kwargs in ((lambda lib: lib.tensor([1, 2]), {}),
                         (lambda lib: lib.tensor([1 + 1j]), {}),
                         (lambda lib: lib.ones(2), {"approximate": "foo"})):
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises(Exception) as info:
                lib.nn.functional.gelu(make(lib), **kwargs)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [-1, 1, 0])
def test_softmax_graph_and_higher_derivatives_match_torch(name, dim, torch_mod):
    """softmax / log_softmax are one node each (SoftmaxBackward0, ...), their gradients
    another (SoftmaxBackwardDataBackward0, ...), and the second and third derivatives are
    PyTorch's, over the last dim and over others."""
    x = _x((3, 4, 5), 3, -4, 4)
    res = []
    for lib in (ember, torch_mod):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.nn.functional, name)(t, dim)
        w = lib.tensor(np.linspace(-1, 1, x.size).reshape(x.shape))
        g, = lib.autograd.grad((y * w).sum(), t, create_graph=True)
        gg, = lib.autograd.grad((g * g * w).sum(), t, create_graph=True)
        ggg, = lib.autograd.grad((gg * w).sum(), t)
        res.append(([type(y.grad_fn).__name__, type(g.grad_fn).__name__],
                    [a.detach().numpy() for a in (y, g, gg, ggg)]))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_special_values_match_torch(name, dtype, torch_mod):
    """Rows with -inf, all -inf, +inf, nan, huge and tiny values (nan where PyTorch's are)."""
    inf, nan = float("inf"), float("nan")
    x = np.array([[-inf, 1.0, 2.0, 0.5], [-inf] * 4, [inf, 1.0, 2.0, 0.0],
                  [nan, 1.0, 2.0, 0.0], [3e38, -3e38, 0.0, 1.0], [1e-30, -1e-30, 0.0, -0.0],
                  [0.0, -90.0, -200.0, 88.0]])
    outs = []
    for lib in (ember, torch_mod):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        for dim in (1, 0):
            y = getattr(lib.nn.functional, name)(t, dim)
            y.backward(lib.tensor(np.linspace(-1, 1, y.numel()).reshape(y.shape),
                                  dtype=y.dtype))
            outs.append(y.detach().numpy())
        outs.append(t.grad.numpy())
    n = len(outs) // 2
    tol = 2e-6 if dtype == "float32" else 1e-14
    for a, b in zip(outs[:n], outs[n:]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_low_precision_matches_torch(dtype, torch_mod):
    x = _x((8, 33), 4, -6, 6)
    for name in ("softmax", "log_softmax"):
        outs = []
        for lib in (ember, torch_mod):
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            y = getattr(lib.nn.functional, name)(t, 1)
            # (a fixed gradient: 2y would carry one half ulp of y into the sums)
            y.backward(lib.tensor(_x((8, 33), 5), dtype=y.dtype))
            outs.append([y.dtype == getattr(lib, dtype), y.detach().float().numpy(),
                         t.grad.float().numpy()])
        assert outs[0][0] and outs[1][0]
        for a, b in zip(outs[0][1:], outs[1][1:]):
            np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)


def test_softmax_dtype_shapes_and_errors_match_torch(torch_mod):
    for call in (lambda lib: lib.softmax(lib.tensor([1, 2]), 0, dtype=lib.float64),
                 lambda lib: lib.tensor([[1.0, 2.0]]).log_softmax(0),
                 lambda lib: lib.nn.functional.softmax(lib.tensor(3.0), -1),
                 lambda lib: lib.nn.functional.log_softmax(lib.zeros(0, 3), 1),
                 lambda lib: lib.nn.functional.softmin(lib.tensor([[1.0, 2.0]]), 1)):
        a, b = call(ember), call(torch_mod)
        assert a.dtype.__repr__().split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    for call in (lambda lib: lib.softmax(lib.tensor([[1, 2]]), 1),
                 lambda lib: lib.log_softmax(lib.tensor([[1, 2]]), 0),
                 lambda lib: lib.softmax(lib.tensor([True]), 0),
                 lambda lib: lib.softmax(lib.tensor([1 + 1j]), 0),
                 lambda lib: lib.softmax(lib.ones(2), 1)):
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises(Exception) as info:
                call(lib)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]


def _targets(n=6, c=4, seed=1):
    return np.random.default_rng(seed).integers(0, c, n)


LOSSES = [
    ("mse", lambda F, x, y: F.mse_loss(x, y), lambda: [_x((3, 4)), _x((3, 4), 1)]),
    ("mse_sum", lambda F, x, y: F.mse_loss(x, y, reduction="sum"),
     lambda: [_x((3, 4)), _x((3, 4), 1)]),
    ("l1_none", lambda F, x, y: F.l1_loss(x, y, reduction="none"),
     lambda: [_x((3, 4)), _x((3, 4), 1)]),
    ("huber", lambda F, x, y: F.huber_loss(x, y, delta=0.5),
     lambda: [_x((3, 4)), _x((3, 4), 1)]),
    ("smooth_l1", lambda F, x, y: F.smooth_l1_loss(x, y, beta=0.7),
     lambda: [_x((3, 4)), _x((3, 4), 1)]),
    ("bce", lambda F, x, y: F.binary_cross_entropy(x, y),
     lambda: [_x((3, 4), 0, 0.01, 0.99), _x((3, 4), 1, 0, 1)]),
    ("bce_logits", lambda F, x, y: F.binary_cross_entropy_with_logits(x * 40, y),
     lambda: [_x((3, 4)), _x((3, 4), 1, 0, 1)]),
    ("bce_logits_posw", lambda F, x, y, w: F.binary_cross_entropy_with_logits(
        x, y, pos_weight=w.detach()), lambda: [_x((3, 4)), _x((3, 4), 1, 0, 1),
                                               _x((4,), 2, 0.5, 2)]),
    ("kl_div", lambda F, x, y: F.kl_div(x, y, reduction="batchmean"),
     lambda: [_x((3, 4)), _x((3, 4), 1, 0, 1)]),
    ("kl_div_log", lambda F, x, y: F.kl_div(x, y, reduction="sum", log_target=True),
     lambda: [_x((3, 4)), _x((3, 4), 1)]),
]

CLASSIFICATION = [
    ("cross_entropy", dict()),
    ("cross_entropy_weight", dict(weight=np.array([0.5, 1.0, 2.0, 0.1]))),
    ("cross_entropy_ignore", dict(ignore_index=2)),
    ("cross_entropy_smooth", dict(label_smoothing=0.2)),
    ("cross_entropy_all", dict(weight=np.array([0.5, 1.0, 2.0, 0.1]), ignore_index=1,
                               label_smoothing=0.1)),
    ("cross_entropy_sum", dict(reduction="sum")),
    ("cross_entropy_none", dict(reduction="none", label_smoothing=0.3)),
    ("nll", dict(nll=True)),
    ("nll_weight_ignore", dict(nll=True, weight=np.array([0.5, 1.0, 2.0, 0.1]),
                               ignore_index=0)),
]


@pytest.mark.parametrize("name,call,make", LOSSES, ids=[a[0] for a in LOSSES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_loss_matches_torch(name, call, make, dtype, torch_mod):
    _compare(call, make(), torch_mod, dtype, 1e-10 if dtype == "float64" else 1e-5)


@pytest.mark.parametrize("name,opts", CLASSIFICATION, ids=[c[0] for c in CLASSIFICATION])
@pytest.mark.parametrize("shape", [(6, 4), (2, 4, 3, 2)])
def test_classification_loss_matches_torch(name, opts, shape, torch_mod):
    opts = dict(opts)
    nll = opts.pop("nll", False)
    logits = _x(shape) * 5
    tshape = (shape[0],) + shape[2:]
    target = np.random.default_rng(3).integers(0, 4, tshape)
    results = []
    for lib in (ember, torch_mod):
        F = lib.nn.functional
        x = lib.tensor(logits, requires_grad=True)
        kw = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in opts.items()}
        inp = F.log_softmax(x, 1) if nll else x
        fn = F.nll_loss if nll else F.cross_entropy
        loss = fn(inp, lib.tensor(target), **kw)
        loss.sum().backward()
        results.append((loss.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-12)


def test_cross_entropy_with_probabilities_matches_torch(torch_mod):
    logits = _x((5, 3))
    probs = np.random.default_rng(4).dirichlet(np.ones(3), 5)
    for smoothing in (0.0, 0.25):
        _compare(lambda F, x, p: F.cross_entropy(x, p, label_smoothing=smoothing),
                 [logits, probs], torch_mod, "float64", 1e-10)


def test_large_logits_stay_finite():
    x = ember.tensor([[1000.0, -1000.0], [-1000.0, 1000.0]], requires_grad=True)
    loss = ember.nn.functional.cross_entropy(x, ember.tensor([1, 1]))
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(x.grad.numpy()).all()
    bce = ember.nn.functional.binary_cross_entropy_with_logits(
        ember.tensor([500.0, -500.0]), ember.tensor([0.0, 1.0]))
    assert np.isfinite(bce.item())


def test_loss_errors_match_torch(torch_mod):
    cases = [
        lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 4), lib.tensor([0, 4, 1])),
        lambda lib: lib.nn.functional.cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1])),
        lambda lib: lib.nn.functional.binary_cross_entropy(lib.full((2,), 2.0),
                                                           lib.zeros(2)),
        lambda lib: lib.nn.Linear(3, 2)(lib.zeros(4, 5)),
    ]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(torch_mod)
        with pytest.raises(type(theirs.value)) as ours:
            case(ember)
        assert str(ours.value) == str(theirs.value)


def test_module_reprs_match_torch(torch_mod):
    def build(lib):
        nn = lib.nn
        return [nn.ReLU(), nn.ReLU(True), nn.LeakyReLU(0.2, True), nn.ELU(), nn.CELU(),
                nn.SELU(True), nn.GELU("tanh"), nn.Hardtanh(), nn.ReLU6(True), nn.Softplus(),
                nn.Threshold(0.1, 20), nn.Softmax(1), nn.Softmax(), nn.LogSoftmax(1),
                nn.Hardshrink(), nn.Softshrink(), nn.PReLU(), nn.RReLU(), nn.GLU(), nn.SiLU(),
                nn.Mish(), nn.Sigmoid(), nn.Softmin(1), nn.Hardsigmoid(), nn.MSELoss(),
                nn.CrossEntropyLoss(), nn.Flatten(), nn.Unflatten(1, (2, 3)), nn.Identity(),
                nn.Linear(3, 4), nn.Bilinear(2, 3, 4), nn.Tanh(), nn.LogSigmoid()]
    assert [repr(m) for m in build(ember)] == [repr(m) for m in build(torch_mod)]


def test_module_forms_match_functional(torch_mod):
    x = _x((2, 6))
    libs = {id(ember.nn.functional): ember.nn, id(torch_mod.nn.functional): torch_mod.nn}
    for name in ("ReLU", "GELU", "SiLU", "Tanh", "Softsign", "Hardswish", "LogSigmoid"):
        _compare(lambda F, t: getattr(libs[id(F)], name)()(t), [x], torch_mod, "float64",
                 1e-10)
    _compare(lambda F, t: libs[id(F)].PReLU(6, 0.1).double()(t), [x], torch_mod, "float64", 1e-10)
