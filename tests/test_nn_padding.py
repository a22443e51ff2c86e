"""F.pad and the padding modules against real PyTorch: every mode, negative padding, values
and gradients, reprs, errors; float64 gradchecks."""
import numpy as np
import pytest
from checks import check_grad
from test_nn_losses import compare

import ember

X3 = np.random.default_rng(0).uniform(-2, 2, (2, 3, 5))
X4 = np.random.default_rng(1).uniform(-2, 2, (2, 2, 4, 5))
X5 = np.random.default_rng(2).uniform(-2, 2, (1, 2, 3, 4, 3))

CASES = [
    ("const_1d", X3, (1, 2), "constant", 1.5),
    ("const_neg", X3, (-1, 2, 1, -1), "constant", None),
    ("const_all_dims", X3, (1, 1, 0, 2, 1, 0), "constant", -2.0),
    ("reflect_1d", X3, (2, 4), "reflect", None),
    ("reflect_neg", X3, (-1, 3), "reflect", None),
    ("reflect_2d", X4, (1, 3, 2, 1), "reflect", None),
    ("reflect_3d", X5, (1, 2, 2, 1, 1, 2), "reflect", None),
    ("reflect_unbatched_2d", X4[0], (3, 1, 1, 2), "reflect", None),
    ("replicate_1d", X3, (3, 1), "replicate", None),
    ("replicate_neg", X4, (-2, 3, 1, -1), "replicate", None),
    ("replicate_3d", X5, (2, 0, 1, 3, 1, 1), "replicate", None),
    ("circular_1d", X3, (2, 5), "circular", None),
    ("circular_neg", X3, (-1, 3), "circular", None),
    ("circular_2d", X4, (1, 2, 3, 1), "circular", None),
    ("circular_3d", X5, (1, 1, 2, 0, 1, 2), "circular", None),
]


@pytest.mark.parametrize("name,x,pad,mode,value", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pad_matches_torch(name, x, pad, mode, value, dtype, torch_mod):
    kw = {} if value is None else {"value": value}
    compare(lambda L, t: L.nn.functional.pad(t, pad, mode, **kw), [x], torch_mod, dtype)


@pytest.mark.parametrize("name,x,pad,mode,value", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_pad_gradcheck(name, x, pad, mode, value):
    check_grad(lambda t: ember.nn.functional.pad(t, pad, mode), [x[:1]])


def test_pad_integer_and_double_backward(torch_mod):
    for lib in (ember, torch_mod):
        r = lib.nn.functional.pad(lib.arange(6).view(2, 3), (1, 1), value=2.7)
        assert r.dtype == lib.int64
    assert (ember.nn.functional.pad(ember.arange(6).view(2, 3), (1, 1), value=2.7).numpy() ==
            torch_mod.nn.functional.pad(torch_mod.arange(6).view(2, 3), (1, 1),
                                        value=2.7).numpy()).all()
    from checks import check_gradgrad
    check_gradgrad(lambda t: ember.nn.functional.pad(t, (1, 2), "reflect") ** 2, [X3[:1, :1]])
    check_gradgrad(lambda t: ember.nn.functional.pad(t, (1, -1)) ** 2, [X3[:1, :1]])


MODULES = [
    ("ZeroPad1d", (2,), X3), ("ZeroPad2d", ((1, 0, 2, 1),), X4), ("ZeroPad3d", (1,), X5),
    ("ConstantPad1d", ((1, 2), 3.5), X3), ("ConstantPad2d", (1, -1.0), X4),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0), X5),
    ("ReflectionPad1d", (2,), X3), ("ReflectionPad2d", ((1, 2, 0, 3),), X4),
    ("ReflectionPad3d", (1,), X5), ("ReplicationPad1d", ((0, 3),), X3),
    ("ReplicationPad2d", (2,), X4), ("ReplicationPad3d", ((1, 2, 0, 1, 1, 0),), X5),
    ("CircularPad1d", (3,), X3), ("CircularPad2d", ((1, 0, 2, 1),), X4),
    ("CircularPad3d", (1,), X5),
]


@pytest.mark.parametrize("name,args,x", MODULES, ids=[m[0] for m in MODULES])
def test_pad_modules_match_torch(name, args, x, torch_mod):
    assert repr(getattr(ember.nn, name)(*args)) == repr(getattr(torch_mod.nn, name)(*args))
    compare(lambda L, t: getattr(L.nn, name)(*args)(t), [x], torch_mod)


ERRORS = [
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1,)),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1,) * 8),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (-3, -2)),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1,) * 6, mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(4), (1, 1), mode="replicate"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1, 1), mode="foo"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (5, 0), mode="circular"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (-2, -3), mode="circular"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (0, 4), mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1, 1, 4, 0), mode="reflect"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (-5, 0), mode="replicate"),
    lambda L: L.nn.functional.pad(L.zeros(2, 3, 4), (1, 1), mode="reflect", value=1.0),
    lambda L: L.nn.functional.pad(L.zeros(3, 0), (1, 1), mode="reflect"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_pad_errors_match_torch(case, torch_mod):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch_mod)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[case](ember)
    assert str(ours.value) == str(theirs.value)
