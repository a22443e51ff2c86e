"""Optimizers against real PyTorch: same initial weights, same gradients, 20 steps."""
import numpy as np
import pytest

import ember

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
