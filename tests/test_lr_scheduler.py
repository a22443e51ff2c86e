"""Learning-rate schedulers against real PyTorch: lr sequences, momentum cycling, state_dict."""
import warnings

import numpy as np
import pytest

import ember


def _optimizer(lib, name="SGD"):
    a = lib.nn.Parameter(lib.zeros(2))
    b = lib.nn.Parameter(lib.zeros(3))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if name == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(lib.optim, name)(groups, lr=0.1)


def _seq(lib, opt, cls, **kw):
    return getattr(lib.optim.lr_scheduler, cls)(opt, **kw)


# (id, optimizer name, factory(lib, optimizer) -> scheduler)
SCHEDULERS = [
    ("lambda", "SGD", lambda lib, o: _seq(lib, o, "LambdaLR",
                                          lr_lambda=lambda e: 0.95 ** e)),
    ("lambda-list", "SGD", lambda lib, o: _seq(lib, o, "LambdaLR", lr_lambda=[
        lambda e: 1 / (e + 1), lambda e: 0.9 ** e])),
    ("multiplicative", "SGD", lambda lib, o: _seq(lib, o, "MultiplicativeLR",
                                                  lr_lambda=lambda e: 0.97)),
    ("step", "SGD", lambda lib, o: _seq(lib, o, "StepLR", step_size=7, gamma=0.5)),
    ("multistep", "SGD", lambda lib, o: _seq(lib, o, "MultiStepLR",
                                             milestones=[10, 30, 30, 60], gamma=0.3)),
    ("constant", "SGD", lambda lib, o: _seq(lib, o, "ConstantLR", factor=0.25,
                                            total_iters=9)),
    ("linear", "SGD", lambda lib, o: _seq(lib, o, "LinearLR", start_factor=0.1,
                                          end_factor=0.9, total_iters=40)),
    ("exponential", "SGD", lambda lib, o: _seq(lib, o, "ExponentialLR", gamma=0.97)),
    ("polynomial", "SGD", lambda lib, o: _seq(lib, o, "PolynomialLR", total_iters=60,
                                              power=2.0)),
    ("cosine", "SGD", lambda lib, o: _seq(lib, o, "CosineAnnealingLR", T_max=17,
                                          eta_min=0.001)),
    ("warm-restarts", "SGD", lambda lib, o: _seq(lib, o, "CosineAnnealingWarmRestarts",
                                                 T_0=5, T_mult=2, eta_min=0.002)),
    ("warm-restarts-1", "SGD", lambda lib, o: _seq(lib, o, "CosineAnnealingWarmRestarts",
                                                   T_0=9)),
    ("cyclic-triangular", "SGD", lambda lib, o: _seq(lib, o, "CyclicLR", base_lr=0.01,
                                                     max_lr=[0.1, 0.2], step_size_up=8)),
    ("cyclic-triangular2", "SGD", lambda lib, o: _seq(
        lib, o, "CyclicLR", base_lr=0.01, max_lr=0.1, step_size_up=5, step_size_down=9,
        mode="triangular2", base_momentum=0.7, max_momentum=[0.9, 0.95])),
    ("cyclic-exp-range-adam", "Adam", lambda lib, o: _seq(
        lib, o, "CyclicLR", base_lr=0.001, max_lr=0.01, step_size_up=6, mode="exp_range",
        gamma=0.97)),
    ("cyclic-no-momentum", "Adagrad", lambda lib, o: _seq(
        lib, o, "CyclicLR", base_lr=0.001, max_lr=0.01, step_size_up=4,
        cycle_momentum=False)),
    ("onecycle-cos", "SGD", lambda lib, o: _seq(lib, o, "OneCycleLR", max_lr=[0.5, 0.2],
                                                total_steps=100)),
    ("onecycle-linear-3phase-adam", "Adam", lambda lib, o: _seq(
        lib, o, "OneCycleLR", max_lr=0.1, epochs=10, steps_per_epoch=10, pct_start=0.25,
        anneal_strategy="linear", three_phase=True)),
    ("sequential", "SGD", lambda lib, o: lib.optim.lr_scheduler.SequentialLR(o, [
        _seq(lib, o, "LinearLR", start_factor=0.1, total_iters=10),
        _seq(lib, o, "ExponentialLR", gamma=0.9),
        _seq(lib, o, "CosineAnnealingLR", T_max=20)], milestones=[10, 40])),
    ("chained", "SGD", lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler([
        _seq(lib, o, "ConstantLR", factor=0.5, total_iters=5),
        _seq(lib, o, "ExponentialLR", gamma=0.98),
        _seq(lib, o, "StepLR", step_size=25, gamma=0.5)])),
    ("swalr-cos", "SGD", lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.02,
                                                                  anneal_epochs=15)),
    ("swalr-linear", "SGD", lambda lib, o: lib.optim.swa_utils.SWALR(
        o, swa_lr=[0.02, 0.5], anneal_epochs=0, anneal_strategy="linear")),
]


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _trace(lib, opt_name, factory, steps=100, split_at=None):
    opt = _optimizer(lib, opt_name)
    sched = factory(lib, opt)
    lrs, momenta = [sched.get_last_lr()], [_momenta(opt)]
    for step in range(steps):
        if split_at is not None and step == split_at:
            saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
            opt = _optimizer(lib, opt_name)
            sched = factory(lib, opt)
            opt.load_state_dict(saved_opt)
            sched.load_state_dict(saved_sched)
        opt.step()
        sched.step()
        lrs.append(list(sched.get_last_lr()))
        momenta.append(_momenta(opt))
    return np.array(lrs, dtype=float), momenta, sched


@pytest.mark.parametrize("name,opt_name,factory", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_lr_sequence_matches_torch(name, opt_name, factory, torch_mod):
    ours, our_m, sched = _trace(ember, opt_name, factory)
    theirs, their_m, tsched = _trace(torch_mod, opt_name, factory)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(np.array(our_m, dtype=float), np.array(their_m, dtype=float),
                               rtol=1e-13)
    assert sorted(sched.state_dict()) == sorted(tsched.state_dict())


@pytest.mark.parametrize("name,opt_name,factory", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_state_dict_round_trip_continues_identically(name, opt_name, factory):
    straight, m1, _ = _trace(ember, opt_name, factory)
    resumed, m2, _ = _trace(ember, opt_name, factory, split_at=37)
    np.testing.assert_array_equal(straight, resumed)
    assert m1 == m2


def test_closed_form_with_epoch_matches_torch(torch_mod):
    results = []
    for lib in (ember, torch_mod):
        lrs = []
        for cls, kw in [("StepLR", dict(step_size=3)), ("MultiStepLR", dict(milestones=[2, 5])),
                        ("ExponentialLR", dict(gamma=0.9)), ("LinearLR", {}),
                        ("ConstantLR", {}), ("PolynomialLR", {}),
                        ("CosineAnnealingLR", dict(T_max=4)),
                        ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2))]:
            opt = _optimizer(lib)
            sched = getattr(lib.optim.lr_scheduler, cls)(opt, **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for epoch in (4, 1, 7, 3, 12):
                    opt.step()
                    sched.step(epoch)
                    lrs.append(sched.get_last_lr())
        results.append(np.array(lrs))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13)


def test_reduce_lr_on_plateau_matches_torch(torch_mod):
    rng = np.random.default_rng(0)
    metrics = np.cumsum(rng.standard_normal(100)) * 0.1 + 5
    configs = [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.05),
               dict(threshold_mode="abs", threshold=0.1, cooldown=3, patience=1,
                    min_lr=[0.01, 0.002]),
               dict(mode="max", threshold_mode="abs", patience=0, min_lr=0.004, eps=1e-3)]
    for kw in configs:
        traces = []
        for lib in (ember, torch_mod):
            opt = _optimizer(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            trace = []
            for i, m in enumerate(metrics):
                if i == 50:
                    state = sched.state_dict()
                    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
                    sched.load_state_dict(state)
                opt.step()
                sched.step(float(m))
                trace.append(sched.get_last_lr())
            traces.append(np.array(trace))
        np.testing.assert_allclose(traces[0], traces[1], rtol=1e-13)


def _warning_texts(lib, action):
    opt = _optimizer(lib)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action(lib, opt)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("action", [
    lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, 2).step(),  # before optimizer.step
    lambda lib, opt: (opt.step(), lib.optim.lr_scheduler.StepLR(opt, 2).step(3)),  # epoch
    lambda lib, opt: (opt.step(), lib.optim.lr_scheduler.ExponentialLR(opt, 0.5).get_lr()),
    lambda lib, opt: (opt.step(), lib.optim.lr_scheduler.ReduceLROnPlateau(opt).step(1.0, 3)),
], ids=["step-before-optimizer", "epoch-argument", "get-lr-outside-step", "plateau-epoch"])
def test_warnings_match_torch(action, torch_mod):
    ours = _warning_texts(ember, action)
    theirs = _warning_texts(torch_mod, action)
    assert ours and ours == theirs


def test_no_warning_in_the_right_order():
    def action(lib, opt):
        sched = lib.optim.lr_scheduler.StepLR(opt, 2)
        opt.step()
        sched.step()
    assert _warning_texts(ember, action) == []


@pytest.mark.parametrize("call", [
    lambda lib, o: lib.optim.lr_scheduler.StepLR(object(), 3),
    lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=2.0),
    lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, start_factor=0),
    lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, [lambda e: 1.0]),
    lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 3, last_epoch=5),
    lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="bogus"),
    lambda lib, o: lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad(
        [lib.nn.Parameter(lib.zeros(1))]), 0.1, 1.0),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 0.1),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 0.1, total_steps=10, pct_start=1),
    lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0),
    lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, mode="up"),
    lambda lib, o: lib.optim.lr_scheduler.SequentialLR(o, [], milestones=[]),
    lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.ReduceLROnPlateau(o)], milestones=[]),
    lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.StepLR(o, 2)], milestones=[3]),
    lambda lib, o: lib.optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1),
])
def test_bad_arguments_raise_like_torch(call, torch_mod):
    errors = []
    for lib in (ember, torch_mod):
        with pytest.raises(Exception) as info:
            call(lib, _optimizer(lib))
        errors.append(info)
    ours, theirs = errors
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value).replace("ember", "torch") == str(theirs.value)


def test_tensor_lr_is_updated_in_place(torch_mod):
    results = []
    for lib in (ember, torch_mod):
        lr = lib.tensor(0.1)
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=lr)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        sched.step()
        assert opt.param_groups[0]["lr"] is lr
        results.append(float(lr))
    assert results[0] == results[1]


def test_legacy_alias_and_subclassing():
    assert issubclass(ember.optim.lr_scheduler._LRScheduler, ember.optim.lr_scheduler.LRScheduler)

    class Halving(ember.optim.lr_scheduler._LRScheduler):
        def get_lr(self):
            return [base / 2 ** self.last_epoch for base in self.base_lrs]

    opt = _optimizer(ember)
    sched = Halving(opt)
    opt.step()
    sched.step()
    sched.step()
    assert sched.get_last_lr() == [0.1 / 4, 0.05 / 4]
