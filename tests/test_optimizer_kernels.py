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
