"""Adafactor and Muon (issue 23) against torch: the same parameters and gradients, several
steps, the parameters and optimizer state compared; argument errors with torch's messages."""
import numpy as np
import pytest

import ember

SHAPES = [(4, 6), (6,), (2, 3, 5)]


def _run(lib, cls_name, shapes, kwargs, steps, seed=0):
    rng = np.random.default_rng(seed)
    starts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(steps)]
    params = [lib.tensor(a, requires_grad=True) for a in starts]
    opt = getattr(lib.optim, cls_name)(params, **kwargs)
    for k in range(steps):
        for p, g in zip(params, grads[k]):
            p.grad = lib.tensor(g)
        opt.step()
    return params, opt


def _state_arrays(opt, params):
    return [{k: np.asarray(v.numpy()) for k, v in opt.state[p].items()} for p in params]


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.05, "weight_decay": 0.1},
                                    {"maximize": True, "eps": (1e-6, 1e-2), "d": 2.0},
                                    {"beta2_decay": -0.5, "lr": 0.5}])
def test_adafactor_matches_torch(torch_mod, kwargs):
    theirs, topt = _run(torch_mod, "Adafactor", SHAPES, kwargs, 5)
    ours, oopt = _run(ember, "Adafactor", SHAPES, kwargs, 5)
    for p, q in zip(theirs, ours):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    for ts, es in zip(_state_arrays(topt, theirs), _state_arrays(oopt, ours)):
        assert sorted(ts) == sorted(es)
        for k in ts:
            assert es[k].shape == ts[k].shape and es[k].dtype == ts[k].dtype
            np.testing.assert_allclose(es[k], ts[k], rtol=1e-5, atol=1e-7)
    assert oopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.02, "nesterov": False},
                                    {"adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0},
                                    {"ns_steps": 3, "momentum": 0.5}])
def test_muon_matches_torch(torch_mod, kwargs):
    shapes = [(4, 6), (7, 3)]
    theirs, topt = _run(torch_mod, "Muon", shapes, kwargs, 4)
    ours, oopt = _run(ember, "Muon", shapes, kwargs, 4)
    for p, q in zip(theirs, ours):
        # NOTE: bfloat16 Newton-Schulz: a float32 sum in another order may round to the
        # neighbouring bfloat16 value now and then
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=1e-5)
    for p, q in zip(theirs, ours):
        np.testing.assert_allclose(oopt.state[q]["momentum_buffer"].numpy(),
                                   topt.state[p]["momentum_buffer"].numpy(), rtol=1e-6,
                                   atol=1e-7)
    assert oopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]


def test_muon_orthogonalizes(torch_mod):
    """One step from zero momentum moves W by lr * sqrt(max(1, A/B)) * NS(G): its singular
    values lie near 1 (the quintic iteration's band, 0.5-1.5)."""
    rng = np.random.default_rng(3)
    g = rng.standard_normal((8, 4)).astype(np.float32)
    p = ember.zeros(8, 4, requires_grad=True)
    p.grad = ember.tensor(g)
    ember.optim.Muon([p], lr=1.0, weight_decay=0.0, nesterov=False, momentum=0.0).step()
    s = np.linalg.svd(-p.detach().numpy() / np.sqrt(2.0), compute_uv=False)
    assert np.all((s > 0.5) & (s < 1.5))


@pytest.mark.parametrize("cls_name, kwargs", [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -1.0}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -1.0}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "other"})])
def test_argument_errors_match_torch(torch_mod, cls_name, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(torch_mod.optim, cls_name)([torch_mod.zeros(2, 2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as ours:
        getattr(ember.optim, cls_name)([ember.zeros(2, 2, requires_grad=True)], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_muon_refuses_non_matrices(torch_mod):
    with pytest.raises(ValueError) as theirs:
        torch_mod.optim.Muon([torch_mod.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError) as ours:
        ember.optim.Muon([ember.zeros(3, requires_grad=True)])
    assert str(ours.value) == str(theirs.value).replace("torch", "ember")


def test_swap_in_optimizer_params_and_state(torch_mod):
    """A step inside the block updates the swap-in tensors and state in place with the
    swap-in hyperparameters; the live parameters, state and groups come back untouched."""
    results = []
    for lib in (torch_mod, ember):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model(lib.ones(4, 3)).sum().backward()
        opt.step()
        live = [p.detach().clone() for p in model.parameters()]
        live_state = opt.state
        params = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
        for p in params.values():
            p.grad = lib.full(p.shape, 0.5)
        osd = opt.state_dict()
        osd = {"state": {k: {kk: vv.clone() for kk, vv in v.items()}
                         for k, v in osd["state"].items()},
               "param_groups": [dict(g, lr=1.0) for g in osd["param_groups"]]}
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
            assert opt.param_groups[0]["lr"] == 1.0
            opt.step()
        assert opt.param_groups[0]["lr"] == 0.1 and opt.state is live_state
        for p, q in zip(model.parameters(), live):
            assert p.detach().tolist() == q.tolist()
        results.append(([p.detach().numpy().copy() for p in params.values()],
                        [v["momentum_buffer"].numpy().copy() for v in osd["state"].values()]))
    for a, b in zip(*[r[0] for r in results]):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    for a, b in zip(*[r[1] for r in results]):
        np.testing.assert_allclose(b, a, rtol=1e-6)
