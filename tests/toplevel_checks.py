"""Comparisons shared by the tests of torch's top-level functions (test_toplevel_*.py):
each call made on ember and on torch with the same inputs."""
import numpy as np

import ember
from checks import assert_close


def error_of(fn):
    """(exception type, first line of its message) of calling `fn`, or None."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  (the type is what is compared)
        return type(exc), str(exc).split("\n")[0]
    return None


def same_error(ember_fn, torch_fn):
    got, want = error_of(ember_fn), error_of(torch_fn)
    assert want is not None and got is not None, (got, want)
    assert got[0].__name__ == want[0].__name__, (got, want)
    assert got[1].replace("ember", "torch") == want[1], (got, want)


def pair(torch_mod, data, grad=True):
    return (ember.tensor(data, requires_grad=grad), torch_mod.tensor(data, requires_grad=grad))


def same_values(got, want, atol=1e-6):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert_close(g.detach().numpy(), w.detach().numpy(), atol=atol, rtol=1e-5)


def same_grads(torch_mod, got, want, leaves):
    seed = np.random.default_rng(3).standard_normal(tuple(want.shape))
    (got * ember.tensor(seed)).sum().backward()
    (want * torch_mod.tensor(seed)).sum().backward()
    for e, t in leaves:
        assert_close(e.grad.numpy(), t.grad.numpy(), atol=1e-6, rtol=1e-5)
