"""optim.swa_utils against real PyTorch: AveragedModel (SWA and EMA), update_bn."""
import numpy as np
import pytest

import ember


class _WithBuffer:
    """A Linear plus a float buffer, built in either library."""

    @staticmethod
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(3, 2).double()
                self.register_buffer("stat", lib.zeros(2, dtype=lib.float64))
                self.register_buffer("count", lib.tensor(0))

            def forward(self, x):
                return self.fc(x)
        return Net()


def _load(lib, model, arrays):
    with lib.no_grad():
        for t, a in zip(list(model.parameters()) + list(model.buffers()), arrays):
            t.copy_(lib.tensor(a, dtype=t.dtype))


def _snapshot(model):
    return [t.detach().numpy().copy() for t in list(model.parameters()) + list(model.buffers())]


def _average(lib, make_avg, steps=6):
    rng = np.random.default_rng(1)
    model = _WithBuffer.make(lib)
    shapes = [tuple(t.shape) for t in list(model.parameters()) + list(model.buffers())]
    _load(lib, model, [rng.standard_normal(s) if len(s) else 0 for s in shapes])
    averaged = make_avg(lib, model)
    for step in range(steps):
        _load(lib, model, [rng.standard_normal(s) if len(s) else step for s in shapes])
        averaged.update_parameters(model)
    return _snapshot(averaged.module), int(averaged.n_averaged)


AVERAGERS = [
    ("swa", lambda lib, m: lib.optim.swa_utils.AveragedModel(m)),
    ("swa-buffers", lambda lib, m: lib.optim.swa_utils.AveragedModel(m, use_buffers=True)),
    ("ema-multi", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9))),
    ("ema-multi-buffers", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.3), use_buffers=True)),
    ("ema-avg-fn", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.8))),
    ("swa-multi", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn())),
    ("swa-avg-fn", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lib.optim.swa_utils.get_swa_avg_fn())),
    ("custom", lambda lib, m: lib.optim.swa_utils.AveragedModel(
        m, avg_fn=lambda avg, cur, n: avg * 0.5 + cur * 0.5)),
]


@pytest.mark.parametrize("name,make_avg", AVERAGERS, ids=[a[0] for a in AVERAGERS])
def test_averaged_model_matches_torch(name, make_avg, torch_mod):
    ours, n = _average(ember, make_avg)
    theirs, tn = _average(torch_mod, make_avg)
    assert n == tn == 6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_averaged_model_forward_and_state_dict_keys(torch_mod):
    ours = ember.optim.swa_utils.AveragedModel(_WithBuffer.make(ember))
    theirs = torch_mod.optim.swa_utils.AveragedModel(_WithBuffer.make(torch_mod))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.n_averaged.dtype == ember.int64
    x = ember.ones(4, 3, dtype=ember.float64)
    np.testing.assert_allclose(ours(x).detach().numpy(), ours.module(x).detach().numpy())


def test_swa_multi_avg_fn_on_integer_buffers_raises_like_torch(torch_mod):
    messages = []
    for lib in (ember, torch_mod):
        avg = [lib.tensor(0)]
        fn = lib.optim.swa_utils.get_swa_multi_avg_fn()
        with pytest.raises(RuntimeError) as info:
            fn(avg, [lib.tensor(3)], lib.tensor(1))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_avg_fn_arguments_are_checked(torch_mod):
    for lib in (ember, torch_mod):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            lib.optim.swa_utils.get_ema_multi_avg_fn(1.5)
        with pytest.raises(ValueError, match=r"Invalid decay value -0.1 provided"):
            lib.optim.swa_utils.get_ema_avg_fn(-0.1)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
            lib.optim.swa_utils.AveragedModel(
                lib.nn.Linear(1, 1), avg_fn=lib.optim.swa_utils.get_swa_avg_fn(),
                multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn())


def _batches():
    rng = np.random.default_rng(2)
    return [rng.standard_normal((8, 3)) * (i + 1) + i for i in range(5)]


def _expected_stats(batches):
    # momentum=None: the running statistics are the plain average of the batch statistics.
    means = [b.mean(0) for b in batches]
    variances = [b.var(0, ddof=1) for b in batches]
    return np.mean(means, 0), np.mean(variances, 0)


class _StatsNorm(ember.nn.Module):
    """What update_bn touches of BatchNorm: running_mean/var, momentum, reset_running_stats."""

    def __init__(self, n):
        super().__init__()
        self.momentum = 0.1
        self.register_buffer("running_mean", ember.zeros(n, dtype=ember.float64))
        self.register_buffer("running_var", ember.ones(n, dtype=ember.float64))
        self.register_buffer("num_batches_tracked", ember.tensor(0))
        self.seen_momenta = []

    def reset_running_stats(self):
        self.running_mean.zero_()
        self.running_var.fill_(1)
        self.num_batches_tracked.zero_()

    def forward(self, x):
        self.seen_momenta.append(self.momentum)
        if self.training:
            self.num_batches_tracked += 1
            factor = 1.0 / int(self.num_batches_tracked) if self.momentum is None \
                else self.momentum
            with ember.no_grad():
                self.running_mean.mul_(1 - factor).add_(factor * x.mean(0))
                self.running_var.mul_(1 - factor).add_(factor * x.var(0))
        return x


def test_update_bn_recomputes_running_stats():
    batches = _batches()
    if hasattr(ember.nn, "BatchNorm1d"):
        norm = ember.nn.BatchNorm1d(3, momentum=0.3).double()
    else:
        norm = _StatsNorm(3)
        norm.momentum = 0.3
    model = ember.nn.Sequential(ember.nn.Identity(), norm) \
        if hasattr(ember.nn, "Identity") else ember.nn.Sequential(norm)
    model.eval()
    with ember.no_grad():
        norm.running_mean.fill_(5.0)
    loader = [(ember.tensor(b), 0) for b in batches]
    ember.optim.swa_utils.update_bn(loader, model)
    mean, var = _expected_stats(batches)
    np.testing.assert_allclose(norm.running_mean.numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(norm.running_var.numpy(), var, rtol=1e-12)
    assert norm.momentum == 0.3 and not model.training and not norm.training
    if isinstance(norm, _StatsNorm):
        assert norm.seen_momenta == [None] * len(batches)


def test_update_bn_matches_torch_batchnorm(torch_mod):
    results = []
    for lib in (ember, torch_mod):
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3)).double()
        _load(lib, model, [np.eye(3), np.zeros(3), np.ones(3), np.zeros(3),
                           np.zeros(3), np.ones(3), 0])
        lib.optim.swa_utils.update_bn([lib.tensor(b) for b in _batches()], model)
        results.append(_snapshot(model))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_update_bn_without_batchnorm_is_a_no_op():
    model = ember.nn.Linear(3, 2)
    calls = []
    model.register_forward_hook(lambda *args: calls.append(1))
    ember.optim.swa_utils.update_bn([ember.ones(2, 3)], model)
    assert calls == []
