"""Tensor methods of issue 23 (storage and geometry, untracked splits, index_reduce's
gradient at ties and zeros, unsupported layouts and devices), each against real torch."""
import warnings

import numpy as np
import pytest

import ember


def _t(torch, a):
    return torch.tensor(np.asarray(a))


def _raises_like(torch_call, ember_call):
    with pytest.raises(Exception) as theirs:
        torch_call()
    with pytest.raises(Exception) as ours:
        ember_call()
    assert type(ours.value) is type(theirs.value)
    return str(theirs.value), str(ours.value)


def _same_error(torch_call, ember_call):
    theirs, ours = _raises_like(torch_call, ember_call)
    assert ours == theirs


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_grad_at_ties_and_zeros(torch_mod, reduce, include_self):
    x = np.array([[0., 2., 5.], [1., 0., 3.], [4., 4., 4.]])
    src = np.array([[5., 0., 5.], [0., 2., 1.], [5., 0., 7.], [2., 2., 2.]])
    index = np.array([0, 0, 2, 0])
    results = []
    for lib, make in ((torch_mod, lambda a: _t(torch_mod, a)), (ember, ember.tensor)):
        a, s = make(x).requires_grad_(), make(src).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = a.index_reduce(0, lib.tensor(index), s, reduce, include_self=include_self)
        g = make(np.arange(9.).reshape(3, 3) + 1)
        out.backward(g)
        results.append((out.detach().numpy(), a.grad.numpy(), s.grad.numpy(),
                        type(out.grad_fn).__name__))
    (to, ta, ts, tn), (eo, ea, es, en) = results
    np.testing.assert_allclose(eo, to)
    np.testing.assert_allclose(ea, ta)
    np.testing.assert_allclose(es, ts)
    assert en == tn


def test_index_reduce_errors_and_inplace(torch_mod):
    x = np.arange(9).reshape(3, 3)
    s = np.ones((2, 3), np.int64) * 2
    for args in [(0, [0, 0], s, "sum"), (0, [0, 0, 0], s, "prod"), (0, [5, 0], s, "prod"),
                 (1, [0, 0], s, "prod"), (0, [0, 0], s.astype(float), "prod")]:
        dim, i, src, r = args
        _same_error(lambda: _t(torch_mod, x).index_reduce(dim, torch_mod.tensor(i),
                                                          _t(torch_mod, src), r),
                    lambda: ember.tensor(x).index_reduce(dim, ember.tensor(i),
                                                         ember.tensor(src), r))
    _same_error(lambda: _t(torch_mod, x).index_reduce(0, torch_mod.tensor([0., 0.]),
                                                      _t(torch_mod, s), "prod"),
                lambda: ember.tensor(x).index_reduce(0, ember.tensor([0., 0.]),
                                                     ember.tensor(s), "prod"))
    ours, theirs = ember.tensor(x), _t(torch_mod, x)
    ours.index_reduce_(0, ember.tensor([2, 0]), ember.tensor(s), "amax")
    theirs.index_reduce_(0, torch_mod.tensor([2, 0]), _t(torch_mod, s), "amax")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_unsafe_splits_are_untracked_pieces(torch_mod):
    x = np.arange(12.).reshape(4, 3)
    _same_error(lambda: torch_mod.ones(4).unsafe_split([1, 3]),
                lambda: ember.ones(4).unsafe_split([1, 3]))
    for name, args in [("unsafe_split", (3,)),
                       ("unsafe_chunk", (2, 1)), ("unsafe_split_with_sizes", ([2, 1], 1)),
                       ("unsafe_split", (5,))]:
        a, b = _t(torch_mod, x).requires_grad_(), ember.tensor(x).requires_grad_()
        theirs, ours = getattr(a, name)(*args), getattr(b, name)(*args)
        assert len(ours) == len(theirs)
        for p, q in zip(theirs, ours):
            np.testing.assert_array_equal(q.detach().numpy(), p.detach().numpy())
            assert type(q.grad_fn).__name__ == type(p.grad_fn).__name__
            assert q._base is None and p._base is None
        sum(((k + 1) * p).sum() for k, p in enumerate(theirs)).backward()
        sum(((k + 1) * q).sum() for k, q in enumerate(ours)).backward()
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    assert ember.unsafe_chunk(ember.ones(4), 2)[0].shape == torch_mod.unsafe_chunk(
        torch_mod.ones(4), 2)[0].shape


def test_narrow_copy_and_nonzero_static(torch_mod):
    x = np.arange(12.).reshape(4, 3)
    a = _t(torch_mod, x).requires_grad_()
    b = ember.tensor(x).requires_grad_()
    p, q = a.narrow_copy(0, 1, 2), b.narrow_copy(0, 1, 2)
    assert type(q.grad_fn).__name__ == type(p.grad_fn).__name__ == "NarrowCopyBackward0"
    (p * 3).sum().backward()
    (q * 3).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    assert q.detach().numpy().base is None or not np.shares_memory(q.detach().numpy(),
                                                                    b.detach().numpy())
    _same_error(lambda: a.narrow_copy(0, 5, 2), lambda: b.narrow_copy(0, 5, 2))
    for kwargs in [{"size": 4}, {"size": 8, "fill_value": -2}, {"size": 0}]:
        np.testing.assert_array_equal(ember.tensor(x).nonzero_static(**kwargs).numpy(),
                                      _t(torch_mod, x).nonzero_static(**kwargs).numpy())
    assert ember.nonzero_static(ember.tensor(3.), size=2).shape == \
        torch_mod.nonzero_static(torch_mod.tensor(3.), size=2).shape
    _same_error(lambda: torch_mod.tensor([0, 1]).nonzero_static(size=-1),
                lambda: ember.tensor([0, 1]).nonzero_static(size=-1))


def test_slice_inverse_views_input(torch_mod):
    x = np.arange(12.).reshape(4, 3)
    for src in (lambda m: m.zeros(2, 3), lambda m: m.arange(12.).reshape(4, 3)[1:3],
                lambda m: m.arange(12.).reshape(4, 3)[:, 1:]):
        theirs = _t(torch_mod, x).slice_inverse(src(torch_mod), 0, 1, 3)
        base = ember.tensor(x)
        ours = base.slice_inverse(src(ember), 0, 1, 3)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        ours[0, 0] = -1.
        assert (base == -1.).sum().item() == 1


def test_set_and_as_strided_(torch_mod):
    x = np.arange(6.).reshape(2, 3)
    for args in [(), ("other",), ("storage", 1, (2, 2), (1, 2)), ("storage",),
                 ("storage", 0, (3,))]:
        def call(lib, make):
            base = make(x)
            target = make(np.zeros(5))
            if args and args[0] == "other":
                return target.set_(base), base
            if args:
                return target.set_(base.untyped_storage(), *args[1:]), base
            return target.set_(), base
        (tr, tb), (er, eb) = call(torch_mod, lambda a: _t(torch_mod, a)), call(ember,
                                                                               ember.tensor)
        np.testing.assert_array_equal(er.numpy(), tr.numpy())
        assert er.shape == tr.shape and er.stride() == tr.stride()
        if args:   # the memory is shared afterwards
            eb.view(-1)[1] = 40.
            tb.view(-1)[1] = 40.
            np.testing.assert_array_equal(er.numpy(), tr.numpy())
    _same_error(lambda: torch_mod.zeros(2).set_(torch_mod.ones(2, dtype=torch_mod.int64)),
                lambda: ember.zeros(2).set_(ember.ones(2, dtype=ember.int64)))
    _same_error(lambda: torch_mod.ones(3, requires_grad=True).set_(torch_mod.zeros(2)),
                lambda: ember.ones(3, requires_grad=True).set_(ember.zeros(2)))
    np.testing.assert_array_equal(
        ember.tensor(x).as_strided_((2, 2), (1, 2), 1).numpy(),
        _t(torch_mod, x).as_strided_((2, 2), (1, 2), 1).numpy())
    _same_error(lambda: _t(torch_mod, x).as_strided_((20,), (1,)),
                lambda: ember.tensor(x).as_strided_((20,), (1,)))
    a = _t(torch_mod, x).requires_grad_()
    b = ember.tensor(x).requires_grad_()
    p, q = a * 2, b * 2
    p.as_strided_((2, 2), (1, 2), 1).sum().backward()
    q.as_strided_((2, 2), (1, 2), 1).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


def test_as_strided_scatter_errors_and_grad_fn(torch_mod):
    x = np.arange(6.).reshape(2, 3)
    _same_error(lambda: torch_mod.as_strided_scatter(_t(torch_mod, x), torch_mod.ones(3),
                                                     (2, 2), (1, 2), 1),
                lambda: ember.as_strided_scatter(ember.tensor(x), ember.ones(3), (2, 2),
                                                 (1, 2), 1))
    r = ember.as_strided_scatter(ember.tensor(x, requires_grad=True), ember.ones(2, 2),
                                 (2, 2), (1, 2), 1)
    assert type(r.grad_fn).__name__ == "AsStridedScatterBackward0"


def test_deprecated_resize_and_new(torch_mod):
    x = np.arange(6.).reshape(2, 3)
    for call in [lambda t, lib: t.resize(3, 2), lambda t, lib: t.resize_as(lib.zeros(6))]:
        with pytest.warns(UserWarning) as theirs:
            p = call(_t(torch_mod, x), torch_mod)
        with pytest.warns(UserWarning) as ours:
            q = call(ember.tensor(x), ember)
        assert str(ours[0].message) == str(theirs[0].message)
        np.testing.assert_array_equal(q.numpy(), p.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda: _t(torch_mod, x).resize(4, 2), lambda: ember.tensor(x).resize(4, 2))
    a, b = _t(torch_mod, x), ember.tensor(x)
    for args in [(2, 3), ([1, 2],), ((2, 3),), ()]:
        p, q = a.new(*args), b.new(*args)
        assert q.shape == p.shape and str(q.dtype)[6:] == str(p.dtype)[6:]
        if args and not isinstance(args[0], int):
            np.testing.assert_array_equal(q.numpy(), p.numpy())
    assert b.new(b).data_ptr() == b.data_ptr()
    _same_error(lambda: a.new(torch_mod.tensor([1, 2])), lambda: b.new(ember.tensor([1, 2])))
    _same_error(lambda: a.new(3.5), lambda: b.new(3.5))


def test_dim_order(torch_mod):
    cases = [((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((2, 1, 4), (0, 1, 2)), ((3,), (0,)),
             ((1, 1), (0, 1)), ((1, 2, 3, 4), (0, 1, 2, 3)), ((2, 1, 3, 4), (0, 2, 3, 1)),
             ((2, 3, 4, 5), (0, 2, 3, 1)), ((1, 3, 1), (0, 1, 2))]
    checks = [True, ["contiguous_format"], ["channels_last"],
              ["channels_last", "contiguous_format"]]
    for shape, perm in cases:
        p = torch_mod.ones(shape).permute(perm)
        q = ember.ones(shape).permute(perm)
        assert q.dim_order() == p.dim_order()
        for check in checks:
            def arg(lib):
                return True if check is True else [getattr(lib, f) for f in check]
            try:
                expected = p.dim_order(ambiguity_check=arg(torch_mod))
            except RuntimeError as e:
                theirs = str(e)
                with pytest.raises(RuntimeError) as ours:
                    q.dim_order(ambiguity_check=arg(ember))
                assert str(ours.value) == theirs
            else:
                assert q.dim_order(ambiguity_check=arg(ember)) == expected
    _same_error(lambda: torch_mod.ones(2).dim_order(ambiguity_check="x"),
                lambda: ember.ones(2).dim_order(ambiguity_check="x"))


def test_module_load_map2_and_chalf(torch_mod):
    x = np.arange(6.).reshape(2, 3)
    a, b = _t(torch_mod, x), ember.tensor(x)
    p = a.module_load(torch_mod.ones(2, 3))
    q = b.module_load(ember.ones(2, 3))
    np.testing.assert_array_equal(q.numpy(), p.numpy())
    np.testing.assert_array_equal(b.numpy(), a.numpy())   # copied into self, as PyTorch
    _same_error(lambda: a.module_load(torch_mod.ones(3, 3)),
                lambda: b.module_load(ember.ones(3, 3)))

    def f(u, v, w):
        return u + v * w
    y, z = np.arange(3.), np.full((2, 1), 2.)
    p = _t(torch_mod, x).map2_(_t(torch_mod, y), _t(torch_mod, z), f)
    q = ember.tensor(x).map2_(ember.tensor(y), ember.tensor(z), f)
    np.testing.assert_array_equal(q.numpy(), p.numpy())
    theirs, ours = _raises_like(
        lambda: _t(torch_mod, x).map2_(torch_mod.ones(2, 3, dtype=torch_mod.int64),
                                       _t(torch_mod, x), f),
        lambda: ember.tensor(x).map2_(ember.ones(2, 3, dtype=ember.int64), ember.tensor(x),
                                      f))
    assert ours.replace("ember", "torch") == theirs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        half = a.float().chalf().to(torch_mod.complex64)
    np.testing.assert_array_equal(b.float().chalf().numpy(), half.numpy())


def test_unsupported_features_raise_torchs_types(torch_mod):
    x = np.arange(4.)
    a, b = _t(torch_mod, x), ember.tensor(x)
    for name in ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
                 "q_per_channel_zero_points", "q_per_channel_axis", "qscheme"):
        theirs, ours = _raises_like(getattr(a, name), getattr(b, name))
        assert "ember does not support quantized tensors" in ours
        assert f"Could not run 'aten::{name}'" in theirs and f"'aten::{name}'" in ours
    _raises_like(lambda: a.to_padded_tensor(0.), lambda: b.to_padded_tensor(0.))
    _raises_like(lambda: a.record_stream(torch_mod.Stream()),
                 lambda: b.record_stream(ember.Stream()))
    _same_error(a.ipu, b.ipu)
    _same_error(a.xpu, b.xpu)
    _raises_like(a.mtia, b.mtia)
    _same_error(lambda: a.reinforce(1), lambda: b.reinforce(1))
    with pytest.raises(TypeError, match="uint64"):
        ember.hash_tensor(b)
    with pytest.raises(RuntimeError, match="MKL-DNN"):
        b.to_mkldnn()
    for dtype in ("float32", "float64", "int32"):
        p = _t(torch_mod, x.astype(dtype)).dequantize()
        q = ember.tensor(x.astype(dtype)).dequantize()
        assert str(q.dtype)[6:] == str(p.dtype)[6:]
        np.testing.assert_array_equal(q.numpy(), p.numpy())


def test_removed_attributes(torch_mod):
    a, b = torch_mod.ones(2), ember.ones(2)
    for action in (lambda t: t.volatile, lambda t: setattr(t, "volatile", True)):
        with pytest.warns(UserWarning) as theirs:
            p = action(a)
        with pytest.warns(UserWarning) as ours:
            q = action(b)
        assert q == p and str(ours[0].message) == str(theirs[0].message)
    assert b.name is a.name is None
    with pytest.raises(AttributeError):
        a.name = "x"
    with pytest.raises(AttributeError):
        b.name = "x"
