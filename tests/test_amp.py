"""Autocast on CPU (bfloat16 matmul/conv, float32 ops) and GradScaler, against PyTorch."""
import warnings

import numpy as np
import pytest

import ember
from ember.amp import autocast_mode


@pytest.fixture
def data(rng):
    return (rng.standard_normal((4, 5)).astype(np.float32),
            rng.standard_normal((3, 5)).astype(np.float32))


def _bf16_ulps(a, b):
    """Difference in units of bfloat16 spacing at b's magnitude."""
    spacing = np.maximum(np.abs(b), 1e-3) * 2.0 ** -7
    return np.max(np.abs(a - b) / spacing)


def test_matmul_runs_in_bfloat16(data, torch_mod):
    x, w = data
    with ember.autocast("cpu"):
        y = ember.mm(ember.tensor(x), ember.tensor(w).t())
    with torch_mod.autocast("cpu"):
        ty = torch_mod.mm(torch_mod.tensor(x), torch_mod.tensor(w).t())
    assert y.dtype is ember.bfloat16 and str(ty.dtype) == "torch.bfloat16"
    assert _bf16_ulps(y.float().numpy(), ty.float().numpy()) <= 1
    # and really rounded: differs from the float32 product
    assert not np.allclose(y.float().numpy(), x @ w.T, rtol=1e-5)


def test_conv_runs_in_bfloat16(rng, torch_mod):
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    with ember.autocast("cpu"):
        y = ember.nn.functional.conv2d(*(ember.tensor(a) for a in (x, w, b)))
    with torch_mod.autocast("cpu"):
        ty = torch_mod.nn.functional.conv2d(*(torch_mod.tensor(a) for a in (x, w, b)))
    assert y.dtype is ember.bfloat16 and str(ty.dtype) == "torch.bfloat16"
    assert _bf16_ulps(y.float().numpy(), ty.float().numpy()) <= 2


def test_float64_and_ints_are_left_alone(torch_mod):
    for m in (ember, torch_mod):
        with m.autocast("cpu"):
            assert m.mm(m.ones(2, 2, dtype=m.float64), m.ones(2, 2, dtype=m.float64)).dtype \
                == m.float64
            assert m.matmul(m.ones(2, 2, dtype=m.long), m.ones(2, 2, dtype=m.long)).dtype \
                == m.int64


def test_float32_policy_ops(torch_mod):
    for m in (ember, torch_mod):
        x = m.ones(3, 3, dtype=m.bfloat16)
        with m.autocast("cpu"):
            assert x.prod().dtype == m.float32
            assert m.trace(x).dtype == m.float32
            assert (x + 1).dtype == m.bfloat16      # not listed: unchanged


def test_gradients_reach_float32_weights(data):
    x, w = data
    wt = ember.tensor(w, requires_grad=True)
    with ember.autocast("cpu"):
        y = ember.matmul(ember.tensor(x), wt.t())
    y.float().sum().backward()
    assert wt.grad.dtype is ember.float32
    # d/dw sum(x @ w.T) = column sums of x, rounded to bfloat16 on the way
    np.testing.assert_allclose(wt.grad.numpy(), np.broadcast_to(x.sum(0), w.shape),
                               rtol=2 ** -7, atol=2 ** -7)


def test_region_state_nesting_and_decorator(torch_mod):
    for m in (ember, torch_mod):
        assert not m.is_autocast_enabled("cpu")
        with m.autocast("cpu", dtype=m.float16):
            assert m.is_autocast_enabled("cpu") and m.get_autocast_dtype("cpu") == m.float16
            with m.autocast("cpu", enabled=False):
                assert not m.is_autocast_enabled("cpu")
                assert m.mm(m.ones(2, 2), m.ones(2, 2)).dtype == m.float32
            assert m.mm(m.ones(2, 2), m.ones(2, 2)).dtype == m.float16
        assert not m.is_autocast_enabled("cpu")
        assert m.get_autocast_dtype("cpu") == m.bfloat16

        @m.autocast("cpu")
        def f(a):
            return m.mm(a, a)
        assert f(m.ones(2, 2)).dtype == m.bfloat16
    assert autocast_mode.active == 0
    assert not autocast_mode._state.cache


def test_autocast_argument_errors(torch_mod):
    for m in (ember, torch_mod):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, .* device type at "
                                               "start of device string: foo"):
            m.autocast("foo")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            m.autocast(1)
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                             "supported. Disabling autocast."):
            a = m.autocast("cpu", dtype=m.float32)
        with a:
            assert not m.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="CUDA is not available"):
            m.autocast("cuda")


def test_cuda_amp_aliases_disable_without_gpu(torch_mod):
    for m in (ember, torch_mod):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = m.cuda.amp.GradScaler()
        msgs = [str(x.message) for x in w]
        assert any("GradScaler is enabled, but CUDA is not available.  Disabling." in t
                   for t in msgs)
        assert any("is deprecated" in t for t in msgs)
        assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        loss = m.ones(())
        assert s.scale(loss) is loss


def _train(m, scaler, grads_inf_at=()):
    """A few steps of SGD with the scaler; returns (weights, scale) after each step."""
    w = m.nn.Parameter(m.tensor([1.0, -2.0, 3.0]))
    opt = m.optim.SGD([w], lr=0.1)
    history = []
    for step in range(5):
        opt.zero_grad()
        loss = (w * m.tensor([0.5, 1.0, 2.0])).pow(2).sum()
        if step in grads_inf_at:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        history.append((w.detach().numpy().copy(), scaler.get_scale()))
    return history


def test_grad_scaler_cpu_matches_torch(torch_mod):
    kw = dict(init_scale=8.0, growth_interval=2)
    e = _train(ember, ember.amp.GradScaler("cpu", **kw), grads_inf_at=(1,))
    t = _train(torch_mod, torch_mod.amp.GradScaler("cpu", **kw), grads_inf_at=(1,))
    for (ew, es), (tw, ts) in zip(e, t):
        np.testing.assert_allclose(ew, tw, rtol=1e-6)
        assert es == ts


def test_grad_scaler_state_machine_errors(torch_mod):
    for m in (ember, torch_mod):
        s = m.amp.GradScaler("cpu")
        w = m.nn.Parameter(m.ones(2))
        opt = m.optim.SGD([w], lr=0.1)
        with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
            s.unscale_(opt)
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s.step(opt, closure=lambda: 0)
        s.update()
        sd = s.state_dict()
        assert sd["scale"] == 65536.0 and sd["_growth_tracker"] == 1
        s2 = m.amp.GradScaler("cpu")
        s2.load_state_dict(sd)
        assert s2.get_scale() == 65536.0


def test_grad_scaler_unscale_values(torch_mod):
    for m in (ember, torch_mod):
        s = m.amp.GradScaler("cpu", init_scale=4.0)
        w = m.nn.Parameter(m.tensor([1.0, 2.0]))
        opt = m.optim.SGD([w], lr=0.1)
        s.scale((w * w).sum()).backward()
        np.testing.assert_allclose(w.grad.numpy(), [8.0, 16.0])
        s.unscale_(opt)
        np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0])


def test_linear_and_losses_follow_torch_autocast_policy(torch_mod):
    """Linear (bias included) runs in bfloat16, losses in float32, as torch's CPU autocast."""
    dtypes = []
    for lib in (ember, torch_mod):
        lin = lib.nn.Linear(4, 3)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            y = lin(lib.ones(2, 4))
            mse = lib.nn.functional.mse_loss(y, lib.zeros(2, 3))
            ce = lib.nn.functional.cross_entropy(y, lib.tensor([0, 2]))
        dtypes.append([str(t.dtype).split(".")[-1] for t in (y, mse, ce)])
    assert dtypes[0] == dtypes[1] == [["bfloat16", "float32", "float32"]][0]
