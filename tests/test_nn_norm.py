"""Normalisation layers and functionals against real PyTorch: identical weights, outputs and
gradients (inputs and parameters), running statistics over several training steps, eval mode,
unbatched inputs, float32/float64, reprs, errors; float64 gradchecks of the functionals."""
import warnings

import numpy as np
import pytest

import ember
from checks import check_grad, check_gradgrad


def _copy_state(ours, theirs):
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


def _randomise(torch, module, seed=0):
    """Non-trivial affine parameters (the defaults, ones and zeros, hide bugs)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=p.dtype) * 0.5 + 1)


def _step(lib, module, x, g):
    t = lib.tensor(x, requires_grad=True)
    out = module(t)
    out.backward(lib.tensor(g))
    grads = {n: p.grad.numpy().copy() for n, p in module.named_parameters()}
    for p in module.parameters():
        p.grad = None
    return out.detach().numpy(), t.grad.numpy(), grads


def _compare_module(torch_mod, build, shape, dtype="float32", steps=3, seed=0):
    rng = np.random.default_rng(seed)
    theirs = build(torch_mod).to(getattr(torch_mod, dtype))
    _randomise(torch_mod, theirs, seed)
    ours = build(ember).to(getattr(ember, dtype))
    _copy_state(ours, theirs)
    tol = 1e-4 if dtype == "float32" else 1e-10
    for mode in ["train"] * steps + ["eval"]:
        ours.train(mode == "train")
        theirs.train(mode == "train")
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
        g = rng.standard_normal(shape).astype(dtype)
        a, b = _step(ember, ours, x, g), _step(torch_mod, theirs, x, g)
        np.testing.assert_allclose(a[0], b[0], rtol=tol, atol=tol, err_msg=f"{mode} output")
        np.testing.assert_allclose(a[1], b[1], rtol=tol, atol=tol, err_msg=f"{mode} grad x")
        assert a[2].keys() == b[2].keys()
        for name in a[2]:
            np.testing.assert_allclose(a[2][name], b[2][name], rtol=tol, atol=tol,
                                       err_msg=f"{mode} grad {name}")
        ours_buffers = dict(ours.named_buffers())
        for name, buf in theirs.named_buffers():
            np.testing.assert_allclose(ours_buffers[name].numpy(), buf.numpy(), rtol=tol,
                                       atol=tol, err_msg=f"{mode} buffer {name}")


MODULES = [
    ("bn1d_2d", lambda lib: lib.nn.BatchNorm1d(5), (8, 5)),
    ("bn1d_3d", lambda lib: lib.nn.BatchNorm1d(4, momentum=0.3), (6, 4, 7)),
    ("bn1d_cumulative", lambda lib: lib.nn.BatchNorm1d(4, momentum=None), (6, 4, 3)),
    ("bn2d", lambda lib: lib.nn.BatchNorm2d(3), (4, 3, 5, 6)),
    ("bn2d_no_affine", lambda lib: lib.nn.BatchNorm2d(3, affine=False), (4, 3, 5, 2)),
    ("bn2d_no_bias", lambda lib: lib.nn.BatchNorm2d(3, bias=False), (2, 3, 5, 2)),
    ("bn2d_no_stats", lambda lib: lib.nn.BatchNorm2d(3, track_running_stats=False),
     (4, 3, 2, 3)),
    ("bn3d", lambda lib: lib.nn.BatchNorm3d(2, eps=1e-3), (3, 2, 3, 4, 2)),
    ("syncbn", lambda lib: lib.nn.SyncBatchNorm(3), (4, 3, 5)),
    ("ln", lambda lib: lib.nn.LayerNorm(6), (4, 5, 6)),
    ("ln_2d_shape", lambda lib: lib.nn.LayerNorm((5, 6), eps=1e-3), (3, 5, 6)),
    ("ln_no_affine", lambda lib: lib.nn.LayerNorm([6], elementwise_affine=False), (7, 6)),
    ("ln_no_bias", lambda lib: lib.nn.LayerNorm(6, bias=False), (2, 3, 6)),
    ("ln_unbatched", lambda lib: lib.nn.LayerNorm(6), (6,)),
    ("gn", lambda lib: lib.nn.GroupNorm(2, 6), (3, 6, 4)),
    ("gn_4d", lambda lib: lib.nn.GroupNorm(3, 6, eps=1e-3), (2, 6, 3, 2)),
    ("gn_no_affine", lambda lib: lib.nn.GroupNorm(1, 4, affine=False), (2, 4, 5)),
    ("gn_2d_input", lambda lib: lib.nn.GroupNorm(2, 4), (3, 4)),
    ("in1d", lambda lib: lib.nn.InstanceNorm1d(3), (4, 3, 7)),
    ("in1d_unbatched", lambda lib: lib.nn.InstanceNorm1d(3, affine=True), (3, 7)),
    ("in2d_affine_stats", lambda lib: lib.nn.InstanceNorm2d(3, affine=True,
                                                           track_running_stats=True),
     (2, 3, 4, 5)),
    ("in3d", lambda lib: lib.nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 2, 3)),
    ("rms", lambda lib: lib.nn.RMSNorm(6), (4, 6)),
    ("rms_eps", lambda lib: lib.nn.RMSNorm([3, 6], eps=1e-3), (2, 3, 6)),
    ("rms_no_affine", lambda lib: lib.nn.RMSNorm(6, elementwise_affine=False), (5, 6)),
    ("lrn_3d", lambda lib: lib.nn.LocalResponseNorm(3), (2, 6, 5)),
    ("lrn_4d_even", lambda lib: lib.nn.LocalResponseNorm(4, alpha=0.1, beta=0.5, k=2.0),
     (2, 6, 3, 2)),
    ("lrn_5d", lambda lib: lib.nn.LocalResponseNorm(2, alpha=0.5), (2, 5, 2, 2, 2)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,build,shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(torch_mod, name, build, shape, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_module(torch_mod, build, shape, dtype)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_cross_map_lrn2d_forward_matches_torch_and_gradient_is_exact(torch_mod, size):
    # NOTE: PyTorch's legacy CrossMapLRN2d backward fails PyTorch's own gradcheck (it assumes
    # a symmetric window the forward does not use), so gradients are checked against finite
    # differences instead of against torch.
    x = _arr((2, 5, 3, 2))
    a = ember.nn.CrossMapLRN2d(size, alpha=0.1)(ember.tensor(x))
    b = torch_mod.nn.CrossMapLRN2d(size, alpha=0.1)(torch_mod.tensor(x))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
    check_grad(lambda t: ember.nn.CrossMapLRN2d(size, alpha=0.1)(t), [x])


def test_num_batches_tracked_and_state_dict(torch_mod):
    ours, theirs = ember.nn.BatchNorm1d(3), torch_mod.nn.BatchNorm1d(3)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for _ in range(3):
        ours(ember.tensor(x))
        theirs(torch_mod.tensor(x))
    assert ours.num_batches_tracked.dtype == ember.int64
    assert int(ours.num_batches_tracked) == int(theirs.num_batches_tracked) == 3
    ours.reset_running_stats()
    assert int(ours.num_batches_tracked) == 0
    assert (ours.running_var.numpy() == 1).all() and (ours.running_mean.numpy() == 0).all()


def test_state_dict_without_num_batches_tracked_loads():
    # Version-1 checkpoints predate num_batches_tracked: loading one keeps the counter.
    m = ember.nn.BatchNorm1d(2)
    sd = m.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""] = {"version": 1}
    m.load_state_dict(sd)


def test_inplace_relu_after_batchnorm_backward(torch_mod):
    x = np.random.default_rng(1).standard_normal((4, 3, 2, 2)).astype(np.float32)
    grads = []
    for lib in (ember, torch_mod):
        m = lib.nn.Sequential(lib.nn.BatchNorm2d(3), lib.nn.ReLU(inplace=True))
        t = lib.tensor(x, requires_grad=True)
        m(t).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-5)


def test_lazy_batchnorm_and_instancenorm(torch_mod):
    x = np.random.default_rng(2).standard_normal((4, 5, 3)).astype(np.float32)
    for cls, become in (("LazyBatchNorm1d", "BatchNorm1d"),
                        ("LazyInstanceNorm1d", "InstanceNorm1d")):
        ours, theirs = getattr(ember.nn, cls)(), getattr(torch_mod.nn, cls)()
        assert repr(ours) == repr(theirs)
        a, b = ours(ember.tensor(x)), theirs(torch_mod.tensor(x))
        assert type(ours).__name__ == type(theirs).__name__ == become
        assert repr(ours) == repr(theirs)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        for (n, p), (_, q) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_convert_sync_batchnorm():
    net = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4),
                              ember.nn.Sequential(ember.nn.BatchNorm1d(4)))
    weight = net[1].weight
    out = ember.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert type(out[1]).__name__ == "SyncBatchNorm"
    assert type(out[2][0]).__name__ == "SyncBatchNorm"
    assert out[1].weight is weight
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        out[1](ember.zeros(4))


REPRS = [
    lambda nn: nn.BatchNorm2d(16),
    lambda nn: nn.BatchNorm1d(3, momentum=None, affine=False),
    lambda nn: nn.BatchNorm3d(2, bias=False, track_running_stats=False),
    lambda nn: nn.SyncBatchNorm(3),
    lambda nn: nn.LazyBatchNorm2d(),
    lambda nn: nn.LayerNorm(10),
    lambda nn: nn.LayerNorm((3, 4), elementwise_affine=False),
    lambda nn: nn.LayerNorm([5], eps=1e-3, bias=False),
    lambda nn: nn.GroupNorm(2, 4),
    lambda nn: nn.GroupNorm(1, 3, affine=False),
    lambda nn: nn.InstanceNorm1d(3),
    lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
    lambda nn: nn.LazyInstanceNorm3d(),
    lambda nn: nn.RMSNorm(4),
    lambda nn: nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False),
    lambda nn: nn.LocalResponseNorm(2),
    lambda nn: nn.CrossMapLRN2d(3, alpha=0.1),
]


@pytest.mark.parametrize("build", REPRS)
def test_repr_matches_torch(torch_mod, build):
    ours, theirs = build(ember.nn), build(torch_mod.nn)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def _error(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e), str(e)
    return None


ERRORS = [
    lambda lib: lib.nn.functional.batch_norm(lib.randn(1, 3), None, None, training=True),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(1, 3)),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), None, None, training=False),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), lib.zeros(4), lib.ones(3)),
    lambda lib: lib.nn.functional.batch_norm(lib.randn(4, 3), lib.zeros(3), lib.ones(3),
                                             lib.ones(4), training=True),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.randn(4, 3, 5, 6)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.randn(4, 3, 5)),
    lambda lib: lib.nn.BatchNorm3d(3)(lib.randn(4, 3, 5)),
    lambda lib: lib.nn.functional.layer_norm(lib.randn(4, 3), (4,)),
    lambda lib: lib.nn.functional.layer_norm(lib.randn(4, 3), (3,), lib.ones(4)),
    lambda lib: lib.nn.functional.layer_norm(lib.randn(4, 3), (3,), None, lib.ones(2)),
    lambda lib: lib.nn.functional.group_norm(lib.randn(4, 6), 4),
    lambda lib: lib.nn.GroupNorm(4, 6),
    lambda lib: lib.nn.functional.group_norm(lib.randn(4, 6, 3), 3, lib.ones(5)),
    lambda lib: lib.nn.functional.instance_norm(lib.randn(1, 3, 1)),
    lambda lib: lib.nn.InstanceNorm1d(3, affine=True)(lib.randn(4, 5, 7)),
    lambda lib: lib.nn.InstanceNorm2d(3)(lib.randn(3, 7)),
    lambda lib: lib.nn.functional.rms_norm(lib.randn(4, 3), (4,)),
    lambda lib: lib.nn.functional.local_response_norm(lib.randn(4, 3), 2),
    lambda lib: lib.nn.CrossMapLRN2d(3)(lib.randn(2, 3, 4)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torch(torch_mod, fn):
    ours, theirs = _error(ember, fn), _error(torch_mod, fn)
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1]


def test_instance_norm_warns_on_feature_mismatch(torch_mod):
    for lib in (ember, torch_mod):
        with pytest.warns(UserWarning, match="does not match num_features"):
            lib.nn.InstanceNorm1d(3)(lib.randn(4, 5, 7))


# ---------------------------------------------------------------------- functionals
def _arr(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


FUNCTIONALS = [
    ("batch_norm", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
     [(3, 4, 2), (4,), (4,)]),
    ("batch_norm_2d", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
     [(5, 3), (3,), (3,)]),
    ("batch_norm_eval", lambda F, x, w, b: F.batch_norm(
        x, ember.linspace(-1, 1, 3, dtype=x.dtype) if isinstance(x, ember.Tensor) else None,
        ember.linspace(0.5, 2, 3, dtype=x.dtype) if isinstance(x, ember.Tensor) else None,
        w, b, False), [(4, 3, 2), (3,), (3,)]),
    ("layer_norm", lambda F, x, w, b: F.layer_norm(x, (3,), w, b), [(2, 4, 3), (3,), (3,)]),
    ("layer_norm_2d", lambda F, x, w, b: F.layer_norm(x, (4, 3), w, b, 1e-3),
     [(2, 4, 3), (4, 3), (4, 3)]),
    ("layer_norm_plain", lambda F, x: F.layer_norm(x, (5,)), [(3, 5)]),
    ("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b), [(2, 4, 3), (4,), (4,)]),
    ("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
     [(2, 3, 4), (3,), (3,)]),
    ("rms_norm", lambda F, x, w: F.rms_norm(x, (4,), w), [(3, 4), (4,)]),
    ("rms_norm_eps", lambda F, x: F.rms_norm(x, (2, 4), eps=1e-2), [(3, 2, 4)]),
    ("local_response_norm", lambda F, x: F.local_response_norm(x, 3, 0.5, 0.75, 1.0),
     [(2, 5, 3)]),
    ("normalize", lambda F, x: F.normalize(x, p=2.0, dim=1), [(3, 4)]),
    ("normalize_p1", lambda F, x: F.normalize(x, p=1.0, dim=0), [(3, 4)]),
]


@pytest.mark.parametrize("name,fn,shapes", FUNCTIONALS, ids=[f[0] for f in FUNCTIONALS])
def test_functional_gradcheck(name, fn, shapes):
    arrays = [_arr(s, i) for i, s in enumerate(shapes)]
    F = ember.nn.functional
    check_grad(lambda *a: fn(F, *a), arrays)
    check_gradgrad(lambda *a: fn(F, *a), arrays)


@pytest.mark.parametrize("name,fn,shapes", [f for f in FUNCTIONALS if f[0] != "batch_norm_eval"],
                         ids=[f[0] for f in FUNCTIONALS if f[0] != "batch_norm_eval"])
def test_functional_matches_torch(torch_mod, name, fn, shapes):
    arrays = [_arr(s, i) for i, s in enumerate(shapes)]
    g = _arr(shapes[0], 9)
    results = []
    for lib in (ember, torch_mod):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib.nn.functional, *ts)
        out.backward(lib.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_batch_norm_running_stats_functional(torch_mod):
    x = _arr((6, 3, 4)).astype(np.float32)
    stats = []
    for lib in (ember, torch_mod):
        rm, rv = lib.zeros(3), lib.ones(3)
        for momentum in (0.1, 0.5, 1.0):
            lib.nn.functional.batch_norm(lib.tensor(x), rm, rv, training=True,
                                         momentum=momentum)
        stats.append((rm.numpy(), rv.numpy()))
    np.testing.assert_allclose(stats[0][0], stats[1][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(stats[0][1], stats[1][1], rtol=1e-6, atol=1e-7)


def test_normalize_out_and_eps(torch_mod):
    x = np.zeros((2, 3), dtype=np.float32)
    x[1] = [3, 4, 0]
    results = []
    for lib in (ember, torch_mod):
        out = lib.empty(2, 3)
        r = lib.nn.functional.normalize(lib.tensor(x), dim=1, out=out)
        assert r is out
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1])


@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_retain_graph_and_inplace_output(torch_mod, affine):
    # The fused VJP reuses buffers: a second backward (retain_graph) and an in-place op on
    # the output must still give PyTorch's gradients.
    x = _arr((3, 4, 5)).astype(np.float32)
    grads = []
    for lib in (ember, torch_mod):
        t = lib.tensor(x, requires_grad=True)
        m = lib.nn.LayerNorm(5, elementwise_affine=affine)
        if affine:
            with lib.no_grad():
                m.weight.copy_(lib.linspace(0.5, 2, 5))
        y = m(t).relu_()
        loss = (y * lib.linspace(-1, 1, 60).reshape(3, 4, 5)).sum()
        loss.backward(retain_graph=True)
        first = t.grad.numpy().copy()
        loss.backward()
        grads.append((first, t.grad.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads[0][1], 2 * grads[0][0], rtol=1e-6)


def test_norm_layers_float16_and_bfloat16_match_torch(torch_mod):
    x = _arr((4, 3, 5)).astype(np.float32)
    for dtype in ("float16", "bfloat16"):
        outs = []
        for lib in (ember, torch_mod):
            t = lib.tensor(x).to(getattr(lib, dtype))
            ln = lib.nn.LayerNorm(5).to(getattr(lib, dtype))
            bn = lib.nn.BatchNorm1d(3).to(getattr(lib, dtype))
            outs.append([ln(t).float().detach().numpy(), bn(t).float().detach().numpy()])
        for a, b in zip(*outs):
            np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layer_norm_low_precision_gradients_match_torch(torch_mod, dtype):
    """Computed in float32, the statistics kept in the tensor's type (PyTorch's backward
    reads them rounded): outputs and gradients within a unit of the type's precision."""
    arrays = [_arr((6, 40), 1) * 3 + 1, _arr(40, 2), _arr(40, 3), _arr((6, 40), 4)]
    outs = []
    for lib in (ember, torch_mod):
        x, w, b, g = (lib.tensor(a, dtype=getattr(lib, dtype)) for a in arrays)
        for t in (x, w, b):
            t.requires_grad_()
        y = lib.nn.functional.layer_norm(x, (40,), w, b)
        y.backward(g)
        outs.append([t.dtype == getattr(lib, dtype) for t in (y, x.grad, w.grad, b.grad)] +
                    [t.detach().float().numpy() for t in (y, x.grad, w.grad, b.grad)])
    assert all(outs[0][:4]) and all(outs[1][:4])
    eps = float(ember.finfo(getattr(ember, dtype)).eps)
    for a, b in zip(outs[0][4:], outs[1][4:]):
        np.testing.assert_allclose(a, b, rtol=eps, atol=eps * np.abs(b).max())
