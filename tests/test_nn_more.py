"""torch.nn / nn.functional names of issue 23 against torch on the same inputs: fractional max
pooling (given and seeded samples), AdaptiveLogSoftmaxWithLoss, linear_cross_entropy and its
module, conv_tbc, grouped_mm, the float8 products' refusals, the deprecated classes and the
dispatch helpers."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as EF


def _np(t):
    return t.detach().numpy()


def _same_error(torch_call, ember_call, exact=True):
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(Exception) as ours:
        ember_call()
    assert type(ours.value) is type(theirs.value)
    if exact:
        assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------------- fractional pooling
@pytest.mark.parametrize("nd, shape, kernel, out", [
    (2, (2, 3, 8, 9), 3, (6, 5)), (2, (2, 3, 8, 9), (2, 3), (7, 4)), (2, (3, 7, 7), 2, (3, 3)),
    (2, (1, 2, 5, 5), 2, (1, 4)),
    (3, (2, 2, 7, 8, 9), (2, 3, 2), (4, 5, 6)), (3, (2, 6, 6, 6), 2, (3, 4, 2))])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_with_given_samples(torch_mod, nd, shape, kernel, out, dtype):
    tf = torch_mod.nn.functional
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[::7] = x.reshape(-1)[1]   # ties inside windows
    batch = shape[0] if len(shape) == nd + 2 else 1
    u = rng.random((batch, shape[-nd - 1], nd)).astype(dtype)
    pool_t = getattr(tf, f"fractional_max_pool{nd}d")
    pool_e = getattr(EF, f"fractional_max_pool{nd}d")
    a = torch_mod.tensor(x, requires_grad=True)
    b = ember.tensor(x, requires_grad=True)
    tv, ti = pool_t(a, kernel, output_size=out, return_indices=True,
                    _random_samples=torch_mod.tensor(u))
    ev, ei = pool_e(b, kernel, output_size=out, return_indices=True,
                    _random_samples=ember.tensor(u))
    np.testing.assert_array_equal(_np(ev), _np(tv))
    np.testing.assert_array_equal(_np(ei), _np(ti))
    assert type(ev.grad_fn).__name__ == type(tv.grad_fn).__name__
    g = rng.standard_normal(tv.shape).astype(dtype)
    tv.backward(torch_mod.tensor(g))
    ev.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-6)


def test_fractional_max_pool_seeded_draw_and_nan(torch_mod):
    tf = torch_mod.nn.functional
    x = np.random.default_rng(0).standard_normal((2, 3, 10, 11)).astype(np.float32)
    x[0, 1, 4, 4] = np.nan
    for kwargs in [{"output_ratio": (0.5, 0.6)}, {"output_size": 4}]:
        torch_mod.manual_seed(7)
        ember.manual_seed(7)
        p = tf.fractional_max_pool2d(torch_mod.tensor(x), 2, **kwargs)
        q = EF.fractional_max_pool2d(ember.tensor(x), 2, **kwargs)
        np.testing.assert_array_equal(_np(q), _np(p))
    torch_mod.manual_seed(3)
    ember.manual_seed(3)
    x3 = x[:, :, :6, :7].reshape(2, 3, 6, 7, 1).repeat(5, axis=4)
    p = tf.fractional_max_pool3d(torch_mod.tensor(x3), 2, output_ratio=0.5)
    q = EF.fractional_max_pool3d(ember.tensor(x3), 2, output_ratio=0.5)
    np.testing.assert_array_equal(_np(q), _np(p))


def test_fractional_max_pool_modules(torch_mod):
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 9)).astype(np.float32)
    u = np.random.default_rng(2).random((2, 3, 2)).astype(np.float32)
    tm = torch_mod.nn.FractionalMaxPool2d(3, output_size=5, return_indices=True,
                                          _random_samples=torch_mod.tensor(u))
    em = ember.nn.FractionalMaxPool2d(3, output_size=5, return_indices=True,
                                      _random_samples=ember.tensor(u))
    (tv, ti), (ev, ei) = tm(torch_mod.tensor(x)), em(ember.tensor(x))
    np.testing.assert_array_equal(_np(ev), _np(tv))
    np.testing.assert_array_equal(_np(ei), _np(ti))
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    torch_mod.manual_seed(4)
    ember.manual_seed(4)
    tm = torch_mod.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.6, 0.5))
    em = ember.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.6, 0.5))
    x3 = np.random.default_rng(5).standard_normal((3, 8, 9, 10)).astype(np.float32)
    np.testing.assert_array_equal(_np(em(ember.tensor(x3))), _np(tm(torch_mod.tensor(x3))))
    assert em.output_ratio == tm.output_ratio and em.kernel_size == tm.kernel_size
    for cls, kwargs in [("FractionalMaxPool2d", {}), ("FractionalMaxPool3d", {}),
                        ("FractionalMaxPool2d", {"output_size": 2, "output_ratio": 0.5}),
                        ("FractionalMaxPool3d", {"output_ratio": 1.5})]:
        _same_error(lambda: getattr(torch_mod.nn, cls)(2, **kwargs),
                    lambda: getattr(ember.nn, cls)(2, **kwargs))


def test_fractional_max_pool_errors(torch_mod):
    tf = torch_mod.nn.functional
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype(np.float32)
    u = np.random.default_rng(1).random((2, 3, 2)).astype(np.float32)
    cases = [((3,), {"output_size": 7}), ((3,), {}), ((3,), {"output_ratio": 0.5}),
             ((3,), {"output_ratio": (0.5, 0.5, 0.5)}),
             ((3,), {"output_size": (6, 5), "samples": u[:1]}),
             ((3,), {"output_size": (6, 5), "samples": np.concatenate([u, u[..., :1]], 2)}),
             ((3,), {"output_size": (6, 5), "samples": u.astype(np.float64)})]
    for args, kwargs in cases:
        kwargs = dict(kwargs)
        s = kwargs.pop("samples", None)
        _same_error(lambda: tf.fractional_max_pool2d(
            torch_mod.tensor(x), *args, **kwargs,
            _random_samples=None if s is None else torch_mod.tensor(s)),
            lambda: EF.fractional_max_pool2d(
                ember.tensor(x), *args, **kwargs,
                _random_samples=None if s is None else ember.tensor(s)))
    _same_error(lambda: tf.fractional_max_pool2d(torch_mod.zeros(2, 3, 0, 9), 3,
                                                 output_size=(6, 5)),
                lambda: EF.fractional_max_pool2d(ember.zeros(2, 3, 0, 9), 3,
                                                 output_size=(6, 5)))
    _same_error(lambda: tf.fractional_max_pool3d(torch_mod.zeros(1, 2, 5, 6, 7), 2,
                                                 output_size=(5, 5, 6)),
                lambda: EF.fractional_max_pool3d(ember.zeros(1, 2, 5, 6, 7), 2,
                                                 output_size=(5, 5, 6)))


# ---------------------------------------------------------------------- adaptive softmax
def _asm_pair(torch_mod, **kwargs):
    torch_mod.manual_seed(11)
    ember.manual_seed(11)
    return (torch_mod.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], **kwargs),
            ember.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], **kwargs))


@pytest.mark.parametrize("kwargs", [{}, {"div_value": 2.0, "head_bias": True}])
def test_adaptive_log_softmax_matches_torch(torch_mod, kwargs):
    tm, em = _asm_pair(torch_mod, **kwargs)
    assert repr(em) == repr(tm)
    ts, es = tm.state_dict(), em.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        np.testing.assert_array_equal(es[k].numpy(), ts[k].numpy())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((9, 8)).astype(np.float32)
    y = np.array([0, 3, 4, 9, 10, 14, 15, 19, 2])
    a, b = torch_mod.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    to, eo = tm(a, torch_mod.tensor(y)), em(b, ember.tensor(y))
    assert type(eo).__name__ == "_ASMoutput" and eo._fields == to._fields
    np.testing.assert_allclose(_np(eo.output), _np(to.output), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(eo.loss), _np(to.loss), rtol=1e-5)
    to.loss.backward()
    eo.loss.backward()
    np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-4, atol=1e-6)
    for (name, p), q in zip(tm.named_parameters(), em.parameters()):
        np.testing.assert_allclose(_np(q.grad), _np(p.grad), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    np.testing.assert_allclose(_np(em.log_prob(ember.tensor(x))),
                               _np(tm.log_prob(torch_mod.tensor(x))), rtol=1e-5, atol=1e-6)
    big = (rng.standard_normal((40, 8)) * 3).astype(np.float32)
    np.testing.assert_array_equal(_np(em.predict(ember.tensor(big))),
                                  _np(tm.predict(torch_mod.tensor(big))))
    one_t, one_e = tm(a[0], torch_mod.tensor(12)), em(b[0], ember.tensor(12))
    np.testing.assert_allclose(_np(one_e.output), _np(one_t.output), rtol=1e-5)
    assert one_e.output.shape == one_t.output.shape


def test_adaptive_log_softmax_errors(torch_mod):
    tm, em = _asm_pair(torch_mod)
    x = np.zeros((3, 8), np.float32)
    for xs, ys in [(x, [0, 1]), (x[0], [0, 1, 2]), (x, [[0]]), (x, 1), (x, [0, 25, 3])]:
        xs_, ys_ = np.asarray(xs), np.asarray(ys)
        _same_error(lambda: tm(torch_mod.tensor(xs_), torch_mod.tensor(ys_)),
                    lambda: em(ember.tensor(xs_), ember.tensor(ys_)),
                    exact=False)
    for cutoffs in [[], [5, 3], [0, 4], [4, 20], [4, 4]]:
        _same_error(lambda: torch_mod.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs),
                    lambda: ember.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs))
    _same_error(lambda: tm(torch_mod.tensor(x), torch_mod.tensor([0, 25, 3])),
                lambda: em(ember.tensor(x), ember.tensor([0, 25, 3])))


# ---------------------------------------------------------------------- linear cross entropy
@pytest.mark.parametrize("kwargs", [{}, {"reduction": "none", "label_smoothing": 0.1},
                                    {"ignore_index": 2, "reduction": "sum"}])
def test_linear_cross_entropy_matches_torch(torch_mod, kwargs):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((5, 3, 4)).astype(np.float32)
    bias = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.integers(0, 5, (6, 3))
    tf = torch_mod.nn.functional
    a, b = torch_mod.tensor(w, requires_grad=True), ember.tensor(w, requires_grad=True)
    p = tf.linear_cross_entropy(torch_mod.tensor(x), a, torch_mod.tensor(y),
                                linear_bias=torch_mod.tensor(bias), **kwargs)
    q = EF.linear_cross_entropy(ember.tensor(x), b, ember.tensor(y),
                                linear_bias=ember.tensor(bias), **kwargs)
    np.testing.assert_allclose(_np(q), _np(p), rtol=1e-5, atol=1e-6)
    p.sum().backward()
    q.sum().backward()
    np.testing.assert_allclose(_np(b.grad), _np(a.grad), rtol=1e-4, atol=1e-6)


def test_linear_cross_entropy_module_and_options(torch_mod):
    torch_mod.manual_seed(2)
    ember.manual_seed(2)
    tm = torch_mod.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True)
    em = ember.nn.LinearCrossEntropyLoss(4, 5, out_features=(2,), bias=True)
    assert repr(em) == repr(tm) and list(em.state_dict()) == list(tm.state_dict())
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    y = np.random.default_rng(2).integers(0, 5, (3, 2))
    np.testing.assert_allclose(_np(em(ember.tensor(x), ember.tensor(y))),
                               _np(tm(torch_mod.tensor(x), torch_mod.tensor(y))), rtol=1e-5)
    opts_t = torch_mod.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    opts_e = ember.nn.LinearCrossEntropyOptions(batch_chunk_size=2, chunking_method=None)
    assert repr(opts_e) == repr(opts_t)
    tm.options, em.options = opts_t, opts_e
    np.testing.assert_allclose(_np(em(ember.tensor(x), ember.tensor(y))),
                               _np(tm(torch_mod.tensor(x), torch_mod.tensor(y))), rtol=1e-5)
    for kwargs in [{"acc_policy": "x"}, {"chunking_method": "x"}, {"batch_chunk_size": 0},
                   {"chunking_method": "aspect_ratio:0"}]:
        _same_error(lambda: torch_mod.nn.LinearCrossEntropyOptions(**kwargs),
                    lambda: ember.nn.LinearCrossEntropyOptions(**kwargs))
    for kwargs in [{"weight": ember.ones(3)}, {"label_smoothing": 1.5}]:
        tk = {k: torch_mod.ones(3) if k == "weight" else v for k, v in kwargs.items()}
        _same_error(lambda: torch_mod.nn.LinearCrossEntropyLoss(4, 5, **tk),
                    lambda: ember.nn.LinearCrossEntropyLoss(4, 5, **kwargs))


# ---------------------------------------------------------------------- conv_tbc, grouped_mm
def test_conv_tbc_matches_torch(torch_mod):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 2, 3))
    w = rng.standard_normal((3, 3, 4))
    bias = rng.standard_normal(4)
    for pad in (0, 1, 2):
        ts = [torch_mod.tensor(v, requires_grad=True) for v in (x, w, bias)]
        es = [ember.tensor(v, requires_grad=True) for v in (x, w, bias)]
        p, q = torch_mod.conv_tbc(*ts, pad), EF.conv_tbc(*es, pad)
        np.testing.assert_allclose(_np(q), _np(p), rtol=1e-10, atol=1e-12)
        (p * p).sum().backward()
        (q * q).sum().backward()
        for t, e in zip(ts, es):
            np.testing.assert_allclose(_np(e.grad), _np(t.grad), rtol=1e-10, atol=1e-12)
    assert ember.conv_tbc(ember.ones(2, 1, 3), ember.ones(3, 3, 4), ember.ones(4)).shape == \
        torch_mod.conv_tbc(torch_mod.ones(2, 1, 3), torch_mod.ones(3, 3, 4),
                           torch_mod.ones(4)).shape
    for shapes in [((5, 2), (3, 3, 4), (4,)), ((5, 2, 3), (3, 3, 4, 1), (4,)),
                   ((5, 2, 3), (3, 3, 4), (4, 1)), ((5, 2, 2), (3, 3, 4), (4,)),
                   ((5, 2, 3), (3, 3, 4), (3,))]:
        _same_error(lambda: torch_mod.conv_tbc(*[torch_mod.ones(s) for s in shapes]),
                    lambda: ember.conv_tbc(*[ember.ones(s) for s in shapes]))


def test_grouped_mm_matches_torch(torch_mod):
    tf = torch_mod.nn.functional
    rng = np.random.default_rng(0)
    cases = [((16, 8), (3, 8, 16), [4, 9, 16]), ((3, 16, 8), (3, 8, 16), None),
             ((2, 16, 8), (8, 16), [4, 16]), ((8, 16), (16, 8), [4, 12, 16])]
    for sa, sb, offs in cases:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        ta, tb = torch_mod.tensor(a, requires_grad=True), torch_mod.tensor(b)
        ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b)
        kw_t = {} if offs is None else {"offs": torch_mod.tensor(offs, dtype=torch_mod.int32)}
        kw_e = {} if offs is None else {"offs": ember.tensor(offs, dtype=ember.int32)}
        p, q = tf.grouped_mm(ta, tb, **kw_t), EF.grouped_mm(ea, eb, **kw_e)
        np.testing.assert_allclose(_np(q), _np(p), rtol=1e-5, atol=1e-5)
        g = rng.standard_normal(tuple(p.shape)).astype(np.float32)
        p.backward(torch_mod.tensor(g))   # (PyTorch's backward refuses a stride-0 gradient)
        q.backward(ember.tensor(g))
        np.testing.assert_allclose(_np(ea.grad), _np(ta.grad), rtol=1e-5, atol=1e-5)
    offs = [4, 16]
    for call in [lambda m, f: f.grouped_mm(m.ones(4, 8), m.ones(8, 5)),
                 lambda m, f: f.grouped_mm(m.ones(16, 8), m.ones(8, 16)),
                 lambda m, f: f.grouped_mm(m.ones(16, 8), m.ones(2, 8, 16),
                                           offs=m.tensor(offs, dtype=m.int32),
                                           bias=m.ones(2, 16)),
                 lambda m, f: f.grouped_mm(m.ones(16, 8), m.ones(2, 8, 16),
                                           offs=m.tensor(offs, dtype=m.int32),
                                           out_dtype=m.float64)]:
        _same_error(lambda: call(torch_mod, tf), lambda: call(ember, EF))


def test_float8_products_refuse_like_torch(torch_mod):
    tf = torch_mod.nn.functional
    for name in ("scaled_mm", "scaled_grouped_mm"):
        _same_error(lambda: getattr(tf, name)(torch_mod.ones(4, 8), torch_mod.ones(8, 4),
                                              torch_mod.ones(1), tf.ScalingType.TensorWise,
                                              torch_mod.ones(1), tf.ScalingType.TensorWise),
                    lambda: getattr(EF, name)(ember.ones(4, 8), ember.ones(8, 4), ember.ones(1),
                                              EF.ScalingType.TensorWise, ember.ones(1),
                                              EF.ScalingType.TensorWise), exact=False)
    for enum in ("ScalingType", "SwizzleType"):
        theirs = {k: int(v) for k, v in getattr(tf, enum).__members__.items()}
        assert {k: int(v) for k, v in getattr(EF, enum).__members__.items()} == theirs


# ---------------------------------------------------------------------- helpers, deprecated
def test_dispatch_helpers(torch_mod):
    tf = torch_mod.nn.functional
    for arg in ([1, 2], 3, [1, 2, 3], (4,)):
        try:
            expected = tf.assert_int_or_pair(arg, "kernel", "{} must be a pair")
        except AssertionError as e:
            with pytest.raises(AssertionError, match=str(e)):
                EF.assert_int_or_pair(arg, "kernel", "{} must be a pair")
        else:
            assert EF.assert_int_or_pair(arg, "kernel", "{} must be a pair") is expected

    def make(lib_dispatch):
        def yes(x, flag=False):
            """doc"""
            return ("yes", x)

        def no(x, flag=False):
            return ("no", x)
        return lib_dispatch("flag", 1, False, yes, no, "mod", "fn")
    ours, theirs = make(EF.boolean_dispatch), make(tf.boolean_dispatch)
    for args, kwargs in [((1,), {}), ((1, True), {}), ((1,), {"flag": True})]:
        assert ours(*args, **kwargs) == theirs(*args, **kwargs)
    assert (ours.__name__, ours.__module__, ours.__doc__) == \
        (theirs.__name__, theirs.__module__, theirs.__doc__)

    def documented():
        """a"""

    def also():
        """b"""
    _same_error(lambda: tf.boolean_dispatch("f", 0, False, documented, also, None, None),
                lambda: EF.boolean_dispatch("f", 0, False, documented, also, None, None))
    assert EF.has_torch_function((ember.ones(1),)) is tf.has_torch_function(
        (torch_mod.ones(1),))
    assert EF.Tensor is ember.Tensor


def test_deprecated_classes_and_factory_kwargs(torch_mod):
    with pytest.warns(FutureWarning) as theirs:
        tm = torch_mod.nn.NLLLoss2d(ignore_index=1)
    with pytest.warns(FutureWarning) as ours:
        em = ember.nn.NLLLoss2d(ignore_index=1)
    assert str(ours[0].message) == str(theirs[0].message)
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), (2, 3, 3)).transpose(0, 3, 1, 2))
    y = np.random.default_rng(1).integers(0, 4, (2, 3, 3))
    np.testing.assert_allclose(_np(em(ember.tensor(x), ember.tensor(y))),
                               _np(tm(torch_mod.tensor(x), torch_mod.tensor(y))))
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        tc = torch_mod.nn.Container(a=torch_mod.nn.Linear(2, 2))
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        ec = ember.nn.Container(a=ember.nn.Linear(2, 2))
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert repr(ec) == repr(tc)
    for kwargs in [None, {"dtype": 1}, {"device": "cpu", "factory_kwargs": {"dtype": 2}}]:
        assert ember.nn.factory_kwargs(kwargs) == torch_mod.nn.factory_kwargs(kwargs)
    for kwargs in [{"bad": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}]:
        _same_error(lambda: torch_mod.nn.factory_kwargs(kwargs),
                    lambda: ember.nn.factory_kwargs(kwargs))


def test_skip_init_and_conv_weight_memory_format(torch_mod):
    torch_mod.manual_seed(3)
    ember.manual_seed(3)
    tm = torch_mod.nn.utils.skip_init(torch_mod.nn.Linear, 4, 5, bias=False)
    em = ember.nn.utils.skip_init(ember.nn.Linear, 4, 5, bias=False)
    assert em.weight.shape == tm.weight.shape and repr(em) == repr(tm)
    # nothing was drawn: the next numbers are the seed's first ones in both
    np.testing.assert_array_equal(ember.rand(3).numpy(), torch_mod.rand(3).numpy())

    class NoDevice(torch_mod.nn.Module):
        pass

    class NoDeviceE(ember.nn.Module):
        pass
    _same_error(lambda: torch_mod.nn.utils.skip_init(NoDevice),
                lambda: ember.nn.utils.skip_init(NoDeviceE))
    _same_error(lambda: torch_mod.nn.utils.skip_init(int), lambda: ember.nn.utils.skip_init(int),
                exact=False)
    for name, cls, fmt in [("convert_conv2d_weight_memory_format", "ConvTranspose2d",
                            "channels_last"),
                           ("convert_conv2d_weight_memory_format", "Conv2d", "contiguous_format"),
                           ("convert_conv3d_weight_memory_format", "Conv3d", "channels_last_3d")]:
        torch_mod.manual_seed(1)
        ember.manual_seed(1)
        tm = torch_mod.nn.Sequential(getattr(torch_mod.nn, cls)(3, 4, 3), torch_mod.nn.ReLU())
        em = ember.nn.Sequential(getattr(ember.nn, cls)(3, 4, 3), ember.nn.ReLU())
        assert getattr(ember.nn.utils, name)(em, getattr(ember, fmt)) is em
        getattr(torch_mod.nn.utils, name)(tm, getattr(torch_mod, fmt))
        assert em[0].weight.stride() == tm[0].weight.stride()
        assert type(em[0].weight) is ember.nn.Parameter
        np.testing.assert_array_equal(_np(em[0].weight), _np(tm[0].weight))


def test_is_lazy_and_reexports(torch_mod):
    tm, em = torch_mod.nn.LazyLinear(3), ember.nn.LazyLinear(3)
    tb, eb = torch_mod.nn.UninitializedBuffer(), ember.nn.UninitializedBuffer()
    for t, e in [(tm.weight, em.weight), (tb, eb), (torch_mod.ones(1), ember.ones(1))]:
        assert ember.nn.parameter.is_lazy(e) is torch_mod.nn.parameter.is_lazy(t)
    tm(torch_mod.ones(2, 4))
    em(ember.ones(2, 4))
    assert ember.nn.parameter.is_lazy(em.weight) is torch_mod.nn.parameter.is_lazy(tm.weight)
    assert isinstance(eb, ember.nn.parameter.UninitializedTensorMixin)
    assert ember.nn.init.Tensor is ember.Tensor
