"""Optimizers against real PyTorch: same initial weights, same gradients, 20 steps."""
import numpy as np
import pytest

import ember
from ember.backends import cpu_kernels

SHAPES = [(3, 4), (4,), (2, 2, 3)]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-6)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.5, amsgrad=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True, eps=1e-4)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.8), weight_decay=0.1, maximize=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, maximize=True, eps=1e-3)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-3, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.01)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.1), maximize=True)),
    ("SGD", dict(lr=0.1, foreach=False, differentiable=False)),
    ("Adam", dict(lr=0.01, foreach=True, capturable=False)),
]


def _run(lib, name, kwargs, dtype, steps=20, seed=0, split_at=None):
    rng = np.random.default_rng(seed)
    inits = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]
    params = [lib.nn.Parameter(lib.tensor(a, dtype=dtype)) for a in inits]
    opt = getattr(lib.optim, name)(params, **kwargs)
    for step in range(steps):
        if split_at is not None and step == split_at:
            state = opt.state_dict()
            opt = getattr(lib.optim, name)(params, **kwargs)
            opt.load_state_dict(state)
        for p, g in zip(params, grads[step]):
            p.grad = lib.tensor(g, dtype=dtype)
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in
                                                    enumerate(CASES)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_torch_after_20_steps(name, kwargs, dtype, torch_mod):
    ours, opt = _run(ember, name, kwargs, getattr(ember, dtype))
    theirs, topt = _run(torch_mod, name, kwargs, getattr(torch_mod, dtype))
    rtol = 1e-10 if dtype == "float64" else 1e-6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    ours_state, theirs_state = opt.state_dict(), topt.state_dict()
    assert ours_state["param_groups"] == theirs_state["param_groups"]
    assert ours_state["state"].keys() == theirs_state["state"].keys()
    for k in ours_state["state"]:
        assert ours_state["state"][k].keys() == theirs_state["state"][k].keys()
        for key, v in ours_state["state"][k].items():
            other = theirs_state["state"][k][key]
            assert type(v).__name__ == type(other).__name__
            assert str(v.dtype).split(".")[1] == str(other.dtype).split(".")[1]
            assert tuple(v.shape) == tuple(other.shape)
            np.testing.assert_allclose(v.numpy(), theirs_state["state"][k][key].numpy(),
                                       rtol=rtol, atol=rtol)


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[5], CASES[9]])
def test_state_dict_resume_continues_identically(name, kwargs):
    straight, _ = _run(ember, name, kwargs, ember.float64)
    resumed, _ = _run(ember, name, kwargs, ember.float64, split_at=7)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(a, b)


def test_repr_and_defaults_match_torch(torch_mod):
    for name, kwargs in CASES:
        p = [ember.nn.Parameter(ember.zeros(2))]
        tp = [torch_mod.nn.Parameter(torch_mod.zeros(2))]
        ours = getattr(ember.optim, name)(p, **kwargs)
        theirs = getattr(torch_mod.optim, name)(tp, **kwargs)
        assert repr(ours) == repr(theirs)
        assert ours.defaults == theirs.defaults


def test_param_groups_and_options_change_between_steps(torch_mod):
    results = []
    for lib in (ember, torch_mod):
        a = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
        b = lib.nn.Parameter(lib.ones(2, dtype=lib.float64))
        opt = lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1,
                            momentum=0.5)
        for step in range(3):
            a.grad = lib.full((3,), float(step + 1), dtype=lib.float64)
            b.grad = lib.full((2,), 2.0, dtype=lib.float64)
            opt.step()
            opt.param_groups[0]["lr"] *= 0.5
        results.append((a.detach().numpy().copy(), b.detach().numpy().copy()))
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_closure_and_zero_grad():
    w = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    opt = ember.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    opt.zero_grad()
    assert w.grad is None


@pytest.mark.parametrize("call,exc", [
    (lambda lib, p: lib.optim.SGD([], lr=0.1), ValueError),
    (lambda lib, p: lib.optim.SGD(p[0], lr=0.1), TypeError),
    (lambda lib, p: lib.optim.SGD(p, lr=-1.0), ValueError),
    (lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.9)), ValueError),
    (lambda lib, p: lib.optim.Adam(p, betas=(0.9, -0.1)), ValueError),
    (lambda lib, p: lib.optim.SGD([p[0] * 2], lr=0.1), ValueError),
    (lambda lib, p: lib.optim.SGD([{"params": p}, {"params": p}], lr=0.1), ValueError),
])
def test_bad_arguments_raise_like_torch(call, exc, torch_mod):
    with pytest.raises(exc) as ours:
        call(ember, [ember.nn.Parameter(ember.zeros(2))])
    with pytest.raises(exc) as theirs:
        call(torch_mod, [torch_mod.nn.Parameter(torch_mod.zeros(2))])
    assert str(ours.value) == str(theirs.value)


def test_load_state_dict_mismatch_raises():
    a = ember.nn.Parameter(ember.zeros(2))
    opt = ember.optim.Adam([a])
    other = ember.optim.Adam([ember.nn.Parameter(ember.zeros(2)),
                              ember.nn.Parameter(ember.zeros(3))])
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(other.state_dict())


def _lbfgs_run(lib, problem, dtype, steps=3, **kwargs):
    x = lib.nn.Parameter(lib.tensor([-1.5, 2.0, 0.5, -0.7], dtype=dtype))
    y = lib.nn.Parameter(lib.tensor([[0.3, -0.2], [1.1, 0.4]], dtype=dtype))
    opt = lib.optim.LBFGS([x, y], **kwargs)
    a = lib.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=dtype)

    def closure():
        opt.zero_grad()
        if problem == "rosenbrock":
            loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        else:
            loss = (x * x * lib.arange(1, 5, dtype=dtype)).sum() + (y @ a * y).sum() - y.sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return [x.detach().numpy().copy(), y.detach().numpy().copy()], losses, opt


@pytest.mark.parametrize("problem", ["quadratic", "rosenbrock"])
@pytest.mark.parametrize("kwargs", [dict(), dict(line_search_fn="strong_wolfe"),
                                    dict(lr=0.5, max_iter=7, history_size=3),
                                    dict(history_size=2, line_search_fn="strong_wolfe")],
                         ids=["plain", "wolfe", "lr-history", "wolfe-history"])
def test_lbfgs_matches_torch(problem, kwargs, torch_mod):
    ours, our_losses, opt = _lbfgs_run(ember, problem, ember.float64, **kwargs)
    theirs, their_losses, topt = _lbfgs_run(torch_mod, problem, torch_mod.float64, **kwargs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_losses, their_losses, rtol=1e-10, atol=1e-12)
    ours_state, theirs_state = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert ours_state.keys() == theirs_state.keys()
    for key in ("func_evals", "n_iter"):
        assert ours_state[key] == theirs_state[key]
    for key in ("d", "prev_flat_grad", "H_diag"):
        assert type(ours_state[key]).__name__ == type(theirs_state[key]).__name__
        np.testing.assert_allclose(np.asarray(ours_state[key]), theirs_state[key].numpy(),
                                   rtol=1e-8, atol=1e-10)
    assert len(ours_state["old_dirs"]) == len(theirs_state["old_dirs"])


def test_lbfgs_float32_close_to_torch(torch_mod):
    ours, _, _ = _lbfgs_run(ember, "quadratic", ember.float32,
                            line_search_fn="strong_wolfe")
    theirs, _, _ = _lbfgs_run(torch_mod, "quadratic", torch_mod.float32,
                              line_search_fn="strong_wolfe")
    # Near the minimum float32 iterates are rounding noise: compare at that noise level.
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_lbfgs_rejects_groups_and_unknown_line_search(torch_mod):
    for lib in (ember, torch_mod):
        p, q = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))
        with pytest.raises(ValueError, match="per-parameter options"):
            lib.optim.LBFGS([{"params": [p]}, {"params": [q]}])
        opt = lib.optim.LBFGS([p], line_search_fn="armijo")

        def closure():
            opt.zero_grad()
            loss = ((p - 1) ** 2).sum()
            loss.backward()
            return loss
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(closure)


def test_sparse_adam_refuses_dense_gradients(torch_mod):
    p = ember.nn.Parameter(ember.zeros(3))
    opt = ember.optim.SparseAdam([p])
    assert opt.defaults == torch_mod.optim.SparseAdam(
        [torch_mod.nn.Parameter(torch_mod.zeros(3))]).defaults
    p.grad = ember.ones(3)
    tp = torch_mod.nn.Parameter(torch_mod.zeros(3))
    tp.grad = torch_mod.ones(3)
    for optimizer in (opt, torch_mod.optim.SparseAdam([tp])):
        with pytest.raises(RuntimeError, match="^SparseAdam does not support dense gradients, "
                                               "please consider Adam instead$"):
            optimizer.step()
    for lib in (ember, torch_mod):
        with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.zeros(3))], lr=0.0)


@pytest.mark.parametrize("name", ["Adam", "NAdam", "ASGD", "Adagrad", "Rprop"])
def test_scalar_state_follows_default_dtype(name, torch_mod):
    kinds = []
    for lib in (ember, torch_mod):
        old = lib.get_default_dtype()
        lib.set_default_dtype(lib.float64)
        try:
            p = lib.nn.Parameter(lib.ones(2, dtype=lib.float32))
            opt = getattr(lib.optim, name)([p])
            p.grad = lib.ones(2, dtype=lib.float32)
            opt.step()
            state = opt.state_dict()["state"][0]
            kinds.append({k: str(v.dtype).split(".")[1] for k, v in state.items()})
        finally:
            lib.set_default_dtype(old)
    assert kinds[0] == kinds[1]


@pytest.mark.parametrize("name,kwargs", [("Adagrad", dict(initial_accumulator_value=0.1)),
                                         ("RMSprop", dict(momentum=0.9, centered=True)),
                                         ("NAdam", {}), ("Rprop", {})])
def test_add_param_group_after_steps_matches_torch(name, kwargs, torch_mod):
    results = []
    for lib in (ember, torch_mod):
        a = lib.nn.Parameter(lib.ones(3, dtype=lib.float64))
        b = lib.nn.Parameter(lib.full((2,), 2.0, dtype=lib.float64))
        opt = getattr(lib.optim, name)([a], **kwargs)
        for step in range(4):
            if step == 2:
                opt.add_param_group({"params": [b], "lr": 0.05})
            a.grad = lib.full((3,), 0.5 - step, dtype=lib.float64)
            b.grad = lib.full((2,), step - 1.5, dtype=lib.float64)
            opt.step()
        results.append([a.detach().numpy().copy(), b.detach().numpy().copy()])
    for x, y in zip(*results):
        np.testing.assert_allclose(x, y, rtol=1e-12)


def test_step_hooks_order_and_removal():
    p = ember.nn.Parameter(ember.zeros(2))
    opt = ember.optim.RMSprop([p])
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(
        ("post", float(p.detach()[0]) != 0)))
    p.grad = ember.ones(2)
    opt.step()
    pre.remove()
    opt.step()
    assert calls == ["pre", ("post", True), ("post", True)]


@pytest.mark.skipif(cpu_kernels.compiled is None, reason="EMBER_KERNELS=numpy: no kernels")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("centered,momentum,alpha", [(False, 0, 0.99), (True, 0.9, 0.99),
                                                     (True, 0, 0.3), (False, 0.5, 0.7)])
def test_rmsprop_kernel_gives_the_references_bits_and_follows_torch(
        dtype, centered, momentum, alpha, monkeypatch, torch_mod):
    """backends.optimizers.rmsprop_step compiled equals its NumPy form bit for bit (alpha
    0.3: lerp's other formula for the centered average), and both follow torch's RMSprop
    over three steps."""
    from ember.backends import optimizers
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal(10007).astype(dtype)
    grads = [rng.standard_normal(10007).astype(dtype) for _ in range(3)]
    options = dict(lr=0.01, alpha=alpha, eps=1e-8, momentum=momentum)
    runs = []
    for compiled in (cpu_kernels.compiled, None):
        monkeypatch.setattr(optimizers, "compiled", compiled)
        w, s = w0.copy(), np.zeros_like(w0)
        a = np.zeros_like(w0) if centered else None
        b = np.zeros_like(w0) if momentum else None
        for g in grads:
            optimizers.rmsprop_step(w, g, s, a, b, **options)
        runs.append([x for x in (w, s, a, b) if x is not None])
    for fast, ref in zip(*runs):
        np.testing.assert_array_equal(fast, ref)
    p = torch_mod.tensor(w0, requires_grad=True)
    opt = torch_mod.optim.RMSprop([p], centered=centered, **options)
    for g in grads:
        p.grad = torch_mod.tensor(g)
        opt.step()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(runs[0][0], p.detach().numpy(), rtol=tol, atol=tol)
