"""Convolution (Conv*, ConvTranspose*, Fold/Unfold, lazy convs) against real PyTorch."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from checks import check_grad, check_gradgrad

TOL = {"float32": dict(atol=2e-4, rtol=2e-4), "float64": dict(atol=1e-10, rtol=1e-9)}


def _run(torch, make_mod, in_shape, dtype, rng, call_kwargs=None):
    """The same module in ember and torch (torch's weights copied): outputs and gradients of
    input, weight and bias must match."""
    tmod = make_mod(torch.nn).to(getattr(torch, dtype))
    emod = make_mod(nn).to(getattr(ember, dtype))
    with ember.no_grad():
        for name, p in tmod.named_parameters():
            getattr(emod, name).copy_(ember.tensor(p.detach().numpy()))
    x = rng.standard_normal(in_shape).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    ty = tmod(tx, **(call_kwargs or {}))
    ey = emod(ex, **(call_kwargs or {}))
    tol = TOL[dtype]
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol)
    g = rng.standard_normal(ty.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **tol)
    for name, p in tmod.named_parameters():
        np.testing.assert_allclose(getattr(emod, name).grad.numpy(), p.grad.numpy(), **tol,
                                   err_msg=name)
    return emod, tmod


CONV_CASES = [
    (2, dict(in_channels=1, out_channels=6, kernel_size=5), (4, 1, 12, 12)),
    (2, dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1), (2, 3, 9, 8)),
    (2, dict(in_channels=4, out_channels=6, kernel_size=(3, 2), padding="same", dilation=2,
             groups=2), (2, 4, 7, 6)),
    (2, dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, bias=False), (3, 4, 6, 6)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=4, padding="same"), (2, 2, 6, 7)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding="valid", stride=(2, 1)),
     (2, 2, 7, 7)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding=2,
             padding_mode="reflect"), (2, 2, 5, 6)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding=1,
             padding_mode="replicate"), (2, 2, 5, 6)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding=(1, 2),
             padding_mode="circular"), (2, 2, 5, 6)),
    (2, dict(in_channels=2, out_channels=3, kernel_size=3, padding="same",
             padding_mode="reflect"), (2, 5, 6)),
    (2, dict(in_channels=3, out_channels=4, kernel_size=3, padding=1), (3, 5, 5)),
    (1, dict(in_channels=2, out_channels=4, kernel_size=3, stride=2, padding=1), (3, 2, 9)),
    (1, dict(in_channels=4, out_channels=4, kernel_size=2, dilation=3, groups=2), (4, 10)),
    (1, dict(in_channels=2, out_channels=2, kernel_size=4, padding="same",
             padding_mode="circular"), (2, 2, 7)),
    (3, dict(in_channels=2, out_channels=3, kernel_size=(2, 3, 2), stride=(1, 2, 1),
             padding=1), (2, 2, 4, 5, 4)),
    (3, dict(in_channels=2, out_channels=4, kernel_size=2, groups=2, dilation=2),
     (2, 5, 5, 5)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,kwargs,shape", CONV_CASES)
def test_conv_module_matches_torch(torch_mod, rng, dtype, nd, kwargs, shape):
    emod, tmod = _run(torch_mod, lambda m: getattr(m, f"Conv{nd}d")(**kwargs), shape, dtype,
                      rng)
    assert repr(emod) == repr(tmod)


TRANSPOSE_CASES = [
    (2, dict(in_channels=4, out_channels=2, kernel_size=3, stride=2, output_padding=1),
     (2, 4, 5, 5), None),
    (2, dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=(2, 3), padding=1,
             groups=2, dilation=(1, 2)), (2, 4, 4, 5), None),
    (2, dict(in_channels=3, out_channels=2, kernel_size=3, stride=2, bias=False),
     (3, 4, 4), None),
    (2, dict(in_channels=4, out_channels=2, kernel_size=3, stride=2), (2, 4, 5, 5),
     dict(output_size=(12, 12))),
    (1, dict(in_channels=2, out_channels=3, kernel_size=3, stride=3, padding=1,
             output_padding=2), (2, 2, 5), None),
    (3, dict(in_channels=2, out_channels=2, kernel_size=2, stride=2, groups=2),
     (2, 2, 3, 2, 3), None),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,kwargs,shape,call", TRANSPOSE_CASES)
def test_conv_transpose_module_matches_torch(torch_mod, rng, dtype, nd, kwargs, shape, call):
    emod, tmod = _run(torch_mod, lambda m: getattr(m, f"ConvTranspose{nd}d")(**kwargs), shape,
                      dtype, rng, call)
    assert repr(emod) == repr(tmod)


@pytest.mark.parametrize("shape,kwargs", [
    ((2, 3, 6, 7), dict(kernel_size=3)),
    ((2, 2, 7, 6), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(2, 1))),
    ((3, 5, 5), dict(kernel_size=2, stride=2)),
])
def test_unfold_fold_match_torch(torch_mod, rng, shape, kwargs):
    x = rng.standard_normal(shape)
    ex, tx = ember.tensor(x, requires_grad=True), torch_mod.tensor(x, requires_grad=True)
    ecols, tcols = nn.Unfold(**kwargs)(ex), torch_mod.nn.Unfold(**kwargs)(tx)
    np.testing.assert_allclose(ecols.detach().numpy(), tcols.detach().numpy())
    efold = nn.Fold(shape[-2:], **kwargs)
    tfold = torch_mod.nn.Fold(shape[-2:], **kwargs)
    assert repr(efold) == repr(tfold) and repr(nn.Unfold(**kwargs)) == repr(
        torch_mod.nn.Unfold(**kwargs))
    ey, ty = efold(ecols * 2), tfold(tcols * 2)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal(ty.shape)
    ey.backward(ember.tensor(g))
    ty.backward(torch_mod.tensor(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_default_init_is_torchs(torch_mod):
    for make in (lambda m: m.Conv2d(3, 6, 5), lambda m: m.Conv1d(4, 2, 3, groups=2),
                 lambda m: m.ConvTranspose2d(4, 2, 3), lambda m: m.Conv3d(2, 2, 2, bias=False)):
        torch_mod.manual_seed(0)
        ember.manual_seed(0)
        t, e = make(torch_mod.nn), make(nn)
        for (name, tp), (_, ep) in zip(t.named_parameters(), e.named_parameters()):
            np.testing.assert_array_equal(ep.detach().numpy(), tp.detach().numpy(), name)


def test_lazy_conv(torch_mod):
    torch_mod.manual_seed(0)
    ember.manual_seed(0)
    t, e = torch_mod.nn.LazyConv2d(6, 5), nn.LazyConv2d(6, 5)
    assert repr(e) == repr(t)
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9)).astype("float32")
    ty, ey = t(torch_mod.tensor(x)), e(ember.tensor(x))
    assert type(e) is nn.Conv2d and repr(e) == repr(t)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), atol=1e-5)
    e1 = nn.LazyConv1d(4, 3)
    assert e1(ember.randn(2, 7)).shape == (4, 5) and e1.in_channels == 2


def _errors(mod, torch):
    cases = [
        lambda m, t: m.Conv2d(1, 16, 5)(t.randn(64, 3, 28, 28)),
        lambda m, t: m.Conv2d(1, 16, 3)(t.randn(1, 1, 2, 2)),
        lambda m, t: m.Conv2d(1, 16, 3)(t.randn(28, 28)),
        lambda m, t: m.Conv1d(1, 16, 3)(t.randn(28)),
        lambda m, t: m.Conv2d(3, 16, 3, groups=2),
        lambda m, t: m.Conv2d(4, 15, 3, groups=2),
        lambda m, t: m.Conv2d(4, 16, 3, padding="same", stride=2),
        lambda m, t: m.Conv2d(4, 16, 3, groups=0),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 2, 3, 3), groups=3),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 4, 3, 3).double()),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 4, 3, 3),
                                         t.randn(5)),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 4, 3, 3), stride=0),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 4, 3, 3),
                                         padding=-1),
        lambda m, t: m.functional.conv2d(t.randn(1, 4, 5, 5), t.randn(6, 4, 3, 3),
                                         stride=(1, 1, 1)),
        lambda m, t: m.functional.conv2d(t.randn(1, 1, 2, 2), t.randn(6, 1, 3, 3), dilation=2,
                                         padding=1),
        lambda m, t: m.functional.conv3d(t.randn(1, 1, 2, 2, 2), t.randn(6, 1, 3, 3, 3)),
        lambda m, t: m.functional.conv_transpose2d(t.randn(1, 4, 5, 5), t.randn(4, 2, 3, 3),
                                                   output_padding=1),
        lambda m, t: m.functional.conv_transpose2d(t.randn(1, 4, 5, 5), t.randn(3, 2, 3, 3)),
        lambda m, t: m.Conv2d(1, 6, 5, padding=4, padding_mode="reflect")(
            t.randn(1, 1, 3, 3)),
        lambda m, t: m.functional.fold(t.randn(1, 8, 5), (4, 4), 2),
        lambda m, t: m.functional.fold(t.randn(1, 9, 5), (4, 4), 2),
        lambda m, t: m.functional.unfold(t.randn(1, 1, 2, 2), 3),
    ]
    return cases


def test_errors_match_torch(torch_mod):
    for i, case in enumerate(_errors(None, None)):
        with pytest.raises(Exception) as te:
            case(torch_mod.nn, torch_mod)
        with pytest.raises(Exception) as ee:
            case(nn, ember)
        assert type(ee.value) is type(te.value), (i, ee.value, te.value)
        assert str(ee.value) == str(te.value).split("\n")[0], i


def test_conv_transpose_output_size_error(torch_mod):
    msg = ("requested an output size of (20, 20), but valid sizes range from [11, 11] to "
           "[12, 12] (for an input of {}.Size([5, 5]))")
    with pytest.raises(ValueError) as te:
        torch_mod.nn.ConvTranspose2d(4, 2, 3, stride=2)(torch_mod.randn(1, 4, 5, 5),
                                                         output_size=(20, 20))
    with pytest.raises(ValueError) as ee:
        nn.ConvTranspose2d(4, 2, 3, stride=2)(ember.randn(1, 4, 5, 5), output_size=(20, 20))
    assert str(te.value) == msg.format("torch") and str(ee.value) == msg.format("ember")


GRAD_CASES = [
    (F.conv2d, (1, 2, 4, 4), (3, 2, 2, 2), dict(stride=2, padding=1)),
    (F.conv2d, (2, 4, 4, 3), (4, 2, 2, 2), dict(groups=2, dilation=(1, 2), padding="same")),
    (F.conv1d, (2, 2, 5), (2, 2, 3), dict(stride=2, padding=1)),
    (F.conv_transpose2d, (1, 2, 3, 3), (2, 2, 2, 2), dict(stride=2, output_padding=1)),
    (F.conv_transpose1d, (1, 4, 3), (4, 1, 3), dict(groups=2, padding=1, dilation=2)),
    (F.conv3d, (1, 1, 3, 3, 3), (2, 1, 2, 2, 2), dict(padding=1, stride=2)),
]


@pytest.mark.parametrize("fn,xs,ws,kwargs", GRAD_CASES)
def test_gradcheck_and_gradgradcheck(rng, fn, xs, ws, kwargs):
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * kwargs.get("groups", 1) if "transpose" in fn.__name__
                            else ws[0])
    f = lambda x, w, b: fn(x, w, b, **kwargs)  # noqa: E731
    check_grad(f, [x, w, b])
    check_gradgrad(f, [x, w, b])


def test_gradcheck_padding_modes_and_fold(rng):
    x, w = rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 2, 3, 3))
    for mode in ("reflect", "replicate", "circular"):
        conv = nn.Conv2d(2, 2, 3, padding=(1, 2), padding_mode=mode).double()
        check_grad(lambda x, w: conv._conv_forward(x, w, None), [x, w])
    check_grad(lambda x: F.fold(F.unfold(x, 2, padding=1, stride=2) * x.sum(), (4, 4), 2,
                                padding=1, stride=2), [x])
    check_gradgrad(lambda x: F.unfold(x, 3, dilation=1, padding=1) ** 2, [x])


def test_no_grad_for_input_image(torch_mod, rng):
    # Input that needs no gradient: only weight/bias get one, torch's values.
    torch = torch_mod
    x = rng.standard_normal((2, 1, 6, 6)).astype("float32")
    conv = nn.Conv2d(1, 4, 3)
    tconv = torch.nn.Conv2d(1, 4, 3)
    with torch.no_grad():
        tconv.weight.copy_(torch.tensor(conv.weight.detach().numpy()))
        tconv.bias.copy_(torch.tensor(conv.bias.detach().numpy()))
    ex = ember.tensor(x)
    conv(ex).sum().backward()
    tconv(torch.tensor(x)).sum().backward()
    assert ex.grad is None
    for name in ("weight", "bias"):
        np.testing.assert_allclose(getattr(conv, name).grad.numpy(),
                                   getattr(tconv, name).grad.numpy(), **TOL["float32"])


