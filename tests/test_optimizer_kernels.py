"""backends/optimizers.adam_steps, the Adam step over a list of parameters (PyTorch's
foreach form), against the NumPy reference of the one-parameter step, bit for bit."""
import numpy as np
import pytest

from ember.backends import cpu_kernels, optimizers

OPTIONS = dict(beta1=0.9, beta2=0.99, lr=1e-2, weight_decay=1e-2, eps=1e-6, decoupled=True)


def _params(dtypes, rng):
    sizes = (7, 10007, 1)
    return [[rng.standard_normal(n).astype(d) for _ in range(5)]
            for n, d in zip(sizes, dtypes)]


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("dtypes", [(np.float32,) * 3, (np.float64,) * 3,
                                    (np.float32, np.float16, np.float64)])
def test_adam_steps_equal_one_reference_step_per_parameter(dtypes, amsgrad, monkeypatch):
    """Each parameter with its own step count; a float16 one sends the whole list to the
    per-parameter path (the compiled call declines it before writing anything)."""
    steps = [1.0, 2.0, 5.0]
    params = _params(dtypes, np.random.default_rng(0))
    fast = [[a.copy() for a in arrays] for arrays in params]
    w, g, m, v, vmax = (list(x) for x in zip(*fast))
    v = [abs(a) for a in v]
    vmax = [abs(a) for a in vmax]
    calls = []
    if cpu_kernels.compiled is not None:
        class Spy:   # (the compiled module, counting its adam_steps calls)
            def __getattr__(self, name):
                return getattr(cpu_kernels.compiled, name)

            def adam_steps(self, *args):
                calls.append(cpu_kernels.compiled.adam_steps(*args))
                return calls[-1]
        monkeypatch.setattr(optimizers, "compiled", Spy())
    optimizers.adam_steps(w, g, m, v, vmax if amsgrad else None, steps=steps,
                          amsgrad=amsgrad, **OPTIONS)
    if cpu_kernels.compiled is not None:   # (it declines a list holding a float16 array)
        assert calls == [np.float16 not in dtypes]
    monkeypatch.setattr(optimizers, "compiled", None)   # the NumPy reference
    for k, arrays in enumerate(params):
        rw, rg, rm, rv, rvmax = (a.copy() for a in arrays)
        rv, rvmax = abs(rv), abs(rvmax)
        optimizers.adam_step(rw, rg, rm, rv, rvmax, step=steps[k], amsgrad=amsgrad,
                             **OPTIONS)
        for got, want in zip((w[k], m[k], v[k], vmax[k]), (rw, rm, rv, rvmax)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(cpu_kernels.compiled is None, reason="EMBER_KERNELS=numpy")
def test_adam_steps_refuses_lists_of_different_lengths():
    a = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="different lengths"):
        cpu_kernels.compiled.adam_steps([a, a], [a], [a, a], [a, a], None, 0.9, 0.99, 1e-3,
                                        0.0, 1e-8, [1.0, 1.0], False, False)


def _count_calls(name, calls, monkeypatch):
    """Have backends/optimizers reach the compiled module through a spy that records what
    its `name` returns (nothing to spy on under EMBER_KERNELS=numpy)."""
    if cpu_kernels.compiled is None:
        return

    class Spy:
        def __getattr__(self, attr):
            return getattr(cpu_kernels.compiled, attr)

    def counted(*args):
        calls.append(getattr(cpu_kernels.compiled, name)(*args))
        return calls[-1]

    spy = Spy()
    setattr(spy, name, counted)
    monkeypatch.setattr(optimizers, "compiled", spy)


def _mixed_arrays(count, strided, rng):
    """`count` arrays for each of three parameters: float32, float64, float32 of different
    lengths; with `strided`, the first parameter's weights are a non-contiguous view, which
    no compiled kernel takes."""
    params = [[rng.standard_normal(n).astype(d) for _ in range(count)]
              for n, d in ((7, np.float32), (10007, np.float64), (1, np.float32))]
    if strided:
        params[0][0] = rng.standard_normal(14).astype(np.float32)[::2]
    return params


def _copies(params):
    return [[a.copy() if a.flags.c_contiguous else a.base.copy()[::2] for a in arrays]
            for arrays in params]


SGD_OPTIONS = [
    dict(momentum=0, dampening=0, lr=0.1, weight_decay=0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.1, lr=0.05, weight_decay=1e-2, nesterov=False,
         maximize=True),
    dict(momentum=0.8, dampening=0, lr=1, weight_decay=1e-4, nesterov=True, maximize=False),
]


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("options", SGD_OPTIONS)
def test_sgd_steps_equal_one_reference_step_per_parameter(options, strided, monkeypatch):
    """Three steps of sgd_steps over float32 and float64 parameters (the first makes the
    momentum buffers) give the NumPy reference's bits; a non-contiguous parameter sends the
    whole list to the per-parameter path."""
    params = _mixed_arrays(4, strided, np.random.default_rng(1))
    ws, *grads = (list(x) for x in zip(*_copies(params)))
    calls = []
    _count_calls("sgd_steps", calls, monkeypatch)
    bufs = [None] * 3
    for gs in grads:
        bufs = optimizers.sgd_steps(ws, gs, bufs, **options)
    if cpu_kernels.compiled is not None:   # (the group's call comes first)
        assert calls[0] is not strided
    monkeypatch.setattr(optimizers, "compiled", None)   # the NumPy reference
    for k, arrays in enumerate(_copies(params)):
        w, buf = arrays[0], None
        for g in arrays[1:]:
            buf = optimizers.sgd_step(w, g, buf, **options)
        np.testing.assert_array_equal(ws[k], w)
        assert (bufs[k] is None) == (buf is None) == (options["momentum"] == 0)
        if buf is not None:
            np.testing.assert_array_equal(bufs[k], buf)


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("centered,momentum,alpha", [(False, 0, 0.99), (True, 0.9, 0.99),
                                                     (True, 0, 0.3)])
def test_rmsprop_steps_equal_one_reference_step_per_parameter(centered, momentum, alpha,
                                                              strided, monkeypatch):
    """Three steps of rmsprop_steps over float32 and float64 parameters give the NumPy
    reference's bits (alpha 0.3: lerp's other formula for the centered average); a
    non-contiguous parameter sends the whole list to the per-parameter path."""
    options = dict(lr=0.01, alpha=alpha, eps=1e-8, momentum=momentum)
    params = _mixed_arrays(6, strided, np.random.default_rng(2))
    for arrays in params:   # (the running averages start at zero, as RMSprop's state does)
        for a in arrays[1:4]:
            a[...] = 0
    ws, s, a, b, *grads = (list(x) for x in zip(*_copies(params)))
    calls = []
    _count_calls("rmsprop_steps", calls, monkeypatch)
    for gs in grads:
        optimizers.rmsprop_steps(ws, gs, s, a if centered else None, b if momentum else None,
                                 **options)
    if cpu_kernels.compiled is not None:
        assert calls[0] is not strided
    monkeypatch.setattr(optimizers, "compiled", None)
    for k, arrays in enumerate(_copies(params)):
        rw, rs, ra, rb, *rgrads = arrays
        for g in rgrads:
            optimizers.rmsprop_step(rw, g, rs, ra if centered else None,
                                    rb if momentum else None, **options)
        for got, want in zip((ws[k], s[k], a[k], b[k]), (rw, rs, ra, rb)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(cpu_kernels.compiled is None, reason="EMBER_KERNELS=numpy")
def test_list_kernels_refuse_lists_of_different_lengths():
    a = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="different lengths"):
        cpu_kernels.compiled.sgd_steps([a, a], [a], None, [False, False], 0.0, 0.0, 0.1, 0.0,
                                       False, False)
    with pytest.raises(ValueError, match="different lengths"):
        cpu_kernels.compiled.rmsprop_steps([a], [a], [a, a], None, None, 0.1, 0.9, 1e-8, 0.0)
