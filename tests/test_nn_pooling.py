"""Pooling modules and functional forms against real PyTorch (values, indices, gradients,
reprs, errors) and finite differences."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from checks import check_grad, check_gradgrad

TOL = {"float32": dict(atol=1e-5, rtol=1e-5), "float64": dict(atol=1e-12, rtol=1e-10)}


def _compare(torch, make, shape, dtype, rng, distinct=True):
    """Module `make(nn)` in both libraries on the same input: outputs (and indices), input
    gradient and repr. `distinct` inputs avoid max ties (tie-breaking is checked elsewhere)."""
    x = (rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 if distinct
         else rng.standard_normal(shape)).astype(dtype)
    tm, em = make(torch.nn), make(nn)
    assert repr(em) == repr(tm)
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ty, ey = tm(tx), em(ex)
    if isinstance(ty, tuple):
        np.testing.assert_array_equal(ey[1].numpy(), ty[1].numpy())
        assert ey[1].dtype is ember.int64
        ty, ey = ty[0], ey[0]
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **TOL[dtype])
    g = rng.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **TOL[dtype])


CASES = [
    (lambda m: m.MaxPool2d(2), (4, 3, 8, 8)),
    (lambda m: m.MaxPool2d(3, 2, 1, return_indices=True), (2, 2, 7, 8)),
    (lambda m: m.MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True, return_indices=True),
     (2, 2, 9, 8)),
    (lambda m: m.MaxPool2d((2, 3), (1, 2), ceil_mode=True), (3, 7, 6)),
    (lambda m: m.MaxPool1d(3, 2, 1, return_indices=True), (2, 3, 9)),
    (lambda m: m.MaxPool1d(2, ceil_mode=True), (3, 7)),
    (lambda m: m.MaxPool3d(2, return_indices=True), (2, 2, 4, 5, 4)),
    (lambda m: m.MaxPool3d((2, 3, 2), 1, (1, 1, 0)), (1, 2, 4, 5, 4)),
    (lambda m: m.AvgPool2d(2), (4, 3, 8, 8)),
    (lambda m: m.AvgPool2d(3, 2, 1), (2, 2, 7, 8)),
    (lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), (2, 2, 8, 8)),
    (lambda m: m.AvgPool2d(3, 2, 1, ceil_mode=True), (2, 2, 8, 7)),
    (lambda m: m.AvgPool2d((2, 3), 2, divisor_override=4), (2, 7, 7)),
    (lambda m: m.AvgPool1d(3, 2, 1, count_include_pad=False), (2, 3, 8)),
    (lambda m: m.AvgPool1d(2, ceil_mode=True), (3, 7)),
    (lambda m: m.AvgPool3d(2, 1, 1, ceil_mode=True, count_include_pad=False), (1, 2, 3, 4, 3)),
    (lambda m: m.AdaptiveAvgPool2d((3, 4)), (2, 3, 7, 9)),
    (lambda m: m.AdaptiveAvgPool2d(1), (2, 3, 7, 9)),
    (lambda m: m.AdaptiveAvgPool2d((2, None)), (3, 6, 5)),
    (lambda m: m.AdaptiveAvgPool1d(4), (2, 3, 10)),
    (lambda m: m.AdaptiveAvgPool3d((2, 3, 1)), (1, 2, 5, 7, 3)),
    (lambda m: m.AdaptiveMaxPool2d((3, 4), return_indices=True), (2, 3, 7, 9)),
    (lambda m: m.AdaptiveMaxPool2d(2), (3, 6, 5)),
    (lambda m: m.AdaptiveMaxPool1d(3, return_indices=True), (2, 3, 10)),
    (lambda m: m.AdaptiveMaxPool3d((2, 3, 2)), (1, 2, 5, 7, 3)),
    (lambda m: m.LPPool2d(2, 2), (2, 3, 6, 6)),
    (lambda m: m.LPPool2d(3, (2, 3), 1, ceil_mode=True), (2, 5, 7)),
    (lambda m: m.LPPool1d(2, 3, 2), (2, 3, 9)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("make,shape", CASES)
def test_pool_modules_match_torch(torch_mod, rng, dtype, make, shape):
    _compare(torch_mod, make, shape, dtype, rng)


def test_max_pool_ties_and_inplace_after(torch_mod):
    x = np.zeros((1, 1, 4, 4), "float32")
    x[0, 0, 1, :] = 1
    for m in (torch_mod, ember):
        y, i = m.nn.functional.max_pool2d(m.tensor(x), 2, 1, return_indices=True)
        if m is torch_mod:
            expected = i.numpy()
        else:
            np.testing.assert_array_equal(i.numpy(), expected)
    # in-place on the pooled values is allowed, as in PyTorch
    ex = ember.tensor(x, requires_grad=True)
    F.relu(F.max_pool2d(ex, 2) - 0.5, inplace=True).sum().backward()
    np.testing.assert_array_equal(ex.grad.numpy()[0, 0, 1], [1, 0, 1, 0])
    assert ex.grad.sum().item() == 2.0


@pytest.mark.parametrize("nd", [1, 2])
def test_max_unpool_matches_torch(torch_mod, rng, nd):
    x = rng.standard_normal((2, 3) + (8,) * nd)
    tx, ex = torch_mod.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    tp = getattr(torch_mod.nn, f"MaxPool{nd}d")(2, return_indices=True)
    ep = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    tu, eu = (getattr(m, f"MaxUnpool{nd}d")(2) for m in (torch_mod.nn, nn))
    assert repr(tu) == repr(eu)
    ty = tu(*tp(tx), output_size=(9,) * nd)
    ey = eu(*ep(ex), output_size=(9,) * nd)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy())
    ty2, ey2 = tu(*tp(tx)), eu(*ep(ex))
    np.testing.assert_allclose(ey2.detach().numpy(), ty2.detach().numpy())
    g = rng.standard_normal(ty.shape)
    ty.backward(torch_mod.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


def test_pool_errors_match_torch(torch_mod):
    cases = [
        lambda F, t: F.max_pool2d(t.randn(1, 1, 2, 2), 3),
        lambda F, t: F.max_pool2d(t.randn(1, 1, 5, 5), 3, padding=2),
        lambda F, t: F.max_pool2d(t.randn(5, 5), 3),
        lambda F, t: F.max_pool1d(t.randn(2), 3),
        lambda F, t: F.max_pool2d(t.randn(1, 1, 5, 5), 2, stride=0),
        lambda F, t: F.max_pool2d(t.randn(1, 1, 5, 5), 2, padding=-1),
        lambda F, t: F.avg_pool2d(t.randn(1, 1, 2, 2), 3),
        lambda F, t: F.avg_pool2d(t.randn(1, 1, 5, 5), 3, padding=2),
        lambda F, t: F.avg_pool1d(t.randn(2), 3),
        lambda F, t: F.adaptive_avg_pool2d(t.randn(5), 3),
        lambda F, t: F.adaptive_max_pool2d(t.randn(5), 3),
        lambda F, t: F.adaptive_avg_pool1d(t.randn(5), 3),
        lambda F, t: F.adaptive_avg_pool3d(t.randn(5, 5), 3),
        lambda F, t: F.max_unpool2d(t.randn(1, 1, 2, 2), t.zeros(1, 1, 2, 2, dtype=t.long), 2,
                                    output_size=(7, 7)),
        lambda F, t: F.max_unpool2d(t.randn(1, 1, 2, 2),
                                    t.zeros(1, 1, 2, 2, dtype=t.long) + 30, 2),
    ]
    for i, case in enumerate(cases):
        with pytest.raises(Exception) as te:
            case(torch_mod.nn.functional, torch_mod)
        with pytest.raises(Exception) as ee:
            case(F, ember)
        assert type(ee.value) is type(te.value), (i, ee.value, te.value)
        assert str(ee.value) == str(te.value).split("\n")[0], i


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2, 1, padding=1),
    lambda x: F.max_pool2d(x, 3, 2, dilation=1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool2d(x, 2, divisor_override=3),
    lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    lambda x: F.adaptive_max_pool2d(x, (3, 2)),
    lambda x: F.lp_pool2d(x, 2, 2),
])
def test_pool_gradcheck(rng, fn):
    x = rng.permutation(50).reshape(1, 2, 5, 5) / 10.0 + 0.5
    check_grad(fn, [x])
    check_gradgrad(fn, [x])


def test_functional_forms(torch_mod, rng):
    x = rng.standard_normal((2, 3, 8, 8))
    tx, ex = torch_mod.tensor(x), ember.tensor(x)
    TF = torch_mod.nn.functional
    for name, args in [("max_pool2d_with_indices", (2,)), ("adaptive_max_pool2d_with_indices",
                                                           (3,)),
                       ("avg_pool2d", (2,)), ("adaptive_avg_pool2d", (5,)),
                       ("lp_pool2d", (2.0, 2)), ("max_pool2d", (3, 2, 1))]:
        tr, er = getattr(TF, name)(tx, *args), getattr(F, name)(ex, *args)
        tr, er = (tr, er) if isinstance(tr, tuple) else ((tr,), (er,))
        for t, e in zip(tr, er):
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, err_msg=name)


MAX_CASES = [c for c in CASES if type(c[0](nn)).__name__.startswith("MaxPool")]


@pytest.mark.parametrize("make,shape", MAX_CASES)
def test_max_pool_inference_matches_torch(torch_mod, rng, make, shape):
    """Without a gradient (the inference path, which skips the argmax): values equal torch's,
    NaN and -inf included."""
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::7] = np.nan
    flat[3::11] = -np.inf
    tm, em = make(torch_mod.nn), make(nn)
    with torch_mod.no_grad():
        ty = tm(torch_mod.tensor(x))
    with ember.no_grad():
        ey = em(ember.tensor(x))
    if isinstance(ty, tuple):
        np.testing.assert_array_equal(ey[1].numpy(), ty[1].numpy())
        ty, ey = ty[0], ey[0]
    np.testing.assert_array_equal(ey.numpy(), ty.numpy())
