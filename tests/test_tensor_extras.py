"""Tensor methods (ravel, fill_diagonal_, as_strided, the *_scatter family, resize_, igamma,
mvlgamma, apply_/map_, ...) compared with real PyTorch on the same inputs."""
import numpy as np
import pytest

import ember


def _pair(torch, a, requires_grad=False):
    a = np.asarray(a)
    return (ember.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-12)


def _same_error(fe, ft):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as ee:
        fe()
    assert str(ee.value) == str(et.value)


def _grads(torch, fn, *arrays, rng=None):
    """fn(module, *tensors) on float64 leaves; compares outputs and .grad of a weighted sum."""
    rng = rng or np.random.default_rng(1)
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    oe, ot = fn(ember, *es), fn(torch, *ts)
    _same(oe, ot)
    w = rng.standard_normal(tuple(ot.shape))
    (oe * ember.tensor(w)).sum().backward()
    (ot * torch.tensor(w)).sum().backward()
    for e, t in zip(es, ts):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------------- ravel
def test_ravel_view_and_copy(torch_mod, rng):
    a = rng.standard_normal((2, 3))
    e, t = _pair(torch_mod, a)
    _same(ember.ravel(e), torch_mod.ravel(t))
    assert ember.ravel(e).data_ptr() == e.data_ptr()
    et, tt = e.t(), t.t()
    _same(et.ravel(), tt.ravel())
    assert et.ravel().data_ptr() != e.data_ptr()
    _same(ember.ravel(ember.tensor(3.0)), torch_mod.ravel(torch_mod.tensor(3.0)))
    _grads(torch_mod, lambda m, x: x.t().ravel() * 2, a)


# ---------------------------------------------------------------------- fill_diagonal_
@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False),
                                        ((3, 7), True), ((2, 2, 2), False), ((0, 3), False),
                                        ((6, 4), True)])
def test_fill_diagonal(torch_mod, shape, wrap):
    e, t = _pair(torch_mod, np.zeros(shape))
    assert e.fill_diagonal_(2.5, wrap=wrap) is e
    t.fill_diagonal_(2.5, wrap=wrap)
    _same(e, t)


def test_fill_diagonal_noncontiguous_and_dtypes(torch_mod):
    e, t = _pair(torch_mod, np.zeros((3, 7)))
    e.t().fill_diagonal_(1, wrap=True)
    t.t().fill_diagonal_(1, wrap=True)
    _same(e, t)
    for dtype, value in (("int64", 1.7), ("uint8", -1), ("bool", 1)):
        e, t = _pair(torch_mod, np.zeros((3, 3), dtype=dtype))
        e.fill_diagonal_(value)
        t.fill_diagonal_(value)
        _same(e, t)
    e, t = _pair(torch_mod, np.zeros((2, 2)))
    e.fill_diagonal_(ember.tensor(4.0))
    t.fill_diagonal_(torch_mod.tensor(4.0))
    _same(e, t)


def test_fill_diagonal_errors(torch_mod):
    for shape in ((3,), (2, 3, 4)):
        e, t = _pair(torch_mod, np.zeros(shape))
        _same_error(lambda: e.fill_diagonal_(1), lambda: t.fill_diagonal_(1))
    e, t = _pair(torch_mod, np.zeros((2, 2), dtype=np.uint8))
    _same_error(lambda: e.fill_diagonal_(300), lambda: t.fill_diagonal_(300))
    e, t = _pair(torch_mod, np.zeros((2, 2)), requires_grad=True)
    _same_error(lambda: e.fill_diagonal_(1), lambda: t.fill_diagonal_(1))


def test_fill_diagonal_grad(torch_mod, rng):
    def fn(m, x):
        y = x * 3
        y.fill_diagonal_(5.0, wrap=True)
        return y
    _grads(torch_mod, fn, rng.standard_normal((5, 2)))
    e = ember.ones(2, 2, requires_grad=True) * 1
    t = torch_mod.ones(2, 2, requires_grad=True) * 1
    assert type(e.fill_diagonal_(0).grad_fn).__name__ == type(t.fill_diagonal_(0).grad_fn).__name__


# ---------------------------------------------------------------------- small methods
def test_is_nonzero(torch_mod):
    for a in ([0.0], [[3]], [True], 0.0):
        e, t = _pair(torch_mod, a)
        assert e.is_nonzero() == t.is_nonzero()
    for a in ([], [1, 2]):
        e, t = _pair(torch_mod, a)
        _same_error(e.is_nonzero, t.is_nonzero)


@pytest.mark.parametrize("size", [(1, 3), (3,), ((2, 1),), ([1, 1],), (2, 3)])
def test_sum_to_size(torch_mod, rng, size):
    a = rng.standard_normal((2, 3))
    _grads(torch_mod, lambda m, x: x.sum_to_size(*size) * 1, a)
    e, t = _pair(torch_mod, a)
    assert (e.sum_to_size(*size) is e) == (t.sum_to_size(*size) is t)


def test_sum_to_size_errors(torch_mod):
    e, t = _pair(torch_mod, np.ones((2, 3)))
    for size in ((4,), (3, 3), (1, 1, 3), (-1,), ()):
        _same_error(lambda: e.sum_to_size(*size), lambda: t.sum_to_size(*size))


def test_const_data_ptr(torch_mod):
    e = ember.arange(6)[2:]
    assert e.const_data_ptr() == e.data_ptr()
    t = torch_mod.arange(6)[2:]
    assert t.const_data_ptr() == t.data_ptr()


def test_new_empty_strided(torch_mod):
    e, t = _pair(torch_mod, np.ones(2, dtype=np.int32))
    for args, kw in ((((2, 3), (1, 2)), {}), (([2, 3], [4, 1]), {"dtype": "float64"}),
                     (((0, 3), (3, 1)), {}), (((2,), (0,)), {"requires_grad": True})):
        ke = {k: getattr(ember, v) if k == "dtype" else v for k, v in kw.items()}
        kt = {k: getattr(torch_mod, v) if k == "dtype" else v for k, v in kw.items()}
        if "requires_grad" in kw:
            e, t = _pair(torch_mod, np.ones(2))
        ne, nt = e.new_empty_strided(*args, **ke), t.new_empty_strided(*args, **kt)
        assert tuple(ne.shape) == tuple(nt.shape) and ne.stride() == nt.stride()
        assert str(ne.dtype)[6:] == str(nt.dtype)[6:]
        assert ne.requires_grad == nt.requires_grad and ne.is_leaf
    for args in (((2, 3), (1,)), ((2, -3), (1, 1)), ((2, 3), (1, -1)), (2, 1)):
        _same_error(lambda: e.new_empty_strided(*args), lambda: t.new_empty_strided(*args))


# ---------------------------------------------------------------------- as_strided
@pytest.mark.parametrize("case", [
    (slice(None), (3, 3), (1, 1), None), (slice(2, None), (2, 2), (1, 2), None),
    (slice(2, None), (2, 2), (1, 2), 0), (slice(1, None), (3, 3), (1, 2), None),
    (slice(4, 8), (3,), (3,), 0), (slice(None), (2, 0), (1, 1), 3)])
def test_as_strided(torch_mod, case):
    sl, size, stride, offset = case
    a = np.arange(12.0)
    e, t = _pair(torch_mod, a)
    ve, vt = ember.as_strided(e[sl], size, stride, offset), e[sl].as_strided(size, stride, offset)
    wt = torch_mod.as_strided(t[sl], size, stride, offset)
    _same(ve, wt)
    _same(vt, wt)
    assert ve.stride() == wt.stride() and ve.storage_offset() == wt.storage_offset()
    if ve.numel():
        ve[(0,) * len(size)] = -1.0
        wt[(0,) * len(size)] = -1.0
        _same(e, t)
    _grads(torch_mod, lambda m, x: m.as_strided(x[sl], size, stride, offset), a)


def test_as_strided_transposed_grad(torch_mod):
    _grads(torch_mod, lambda m, x: x.view(3, 4).t().as_strided((2, 5), (3, 1), 2),
           np.arange(12.0))
    e = ember.zeros(2, requires_grad=True)
    t = torch_mod.zeros(2, requires_grad=True)
    assert type(e.as_strided((2,), (1,)).grad_fn).__name__ == \
        type(t.as_strided((2,), (1,)).grad_fn).__name__


def test_as_strided_errors(torch_mod):
    e, t = _pair(torch_mod, np.arange(12.0, dtype=np.float32))
    for args in (((4, 4), (4, 1)), ((4,), (1,), 10), ((2,), (1, 1)), ((2,), (-1,)),
                 ((-2,), (1,)), ((2,), (1,), -1)):
        _same_error(lambda: e.as_strided(*args), lambda: t.as_strided(*args))


# ---------------------------------------------------------------------- *_scatter
_SCATTER_CASES = [
    ("select_scatter", (3,), (1, 0)), ("select_scatter", (4,), (0, -1)),
    ("slice_scatter", (3, 2), (1, 0, 4, 2)), ("slice_scatter", (3, 2), (1, -2)),
    ("slice_scatter", (1, 4), (0, 1, 2)), ("diagonal_scatter", (3,), ()),
    ("diagonal_scatter", (2,), (1, 1, 0)), ("diagonal_scatter", (2,), (-1,)),
]


@pytest.mark.parametrize("name,src_shape,args", _SCATTER_CASES)
def test_scatters(torch_mod, rng, name, src_shape, args):
    a, s = rng.standard_normal((3, 4)), rng.standard_normal(src_shape)
    _grads(torch_mod, lambda m, x, y: getattr(m, name)(x, y, *args), a, s)
    _grads(torch_mod, lambda m, x, y: getattr(x, name)(y, *args), a, s)
    e = getattr(ember, name)(ember.tensor(a, requires_grad=True), ember.tensor(s), *args)
    t = getattr(torch_mod, name)(torch_mod.tensor(a, requires_grad=True), torch_mod.tensor(s),
                                 *args)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


def test_scatter_dtypes_and_errors(torch_mod):
    e, t = _pair(torch_mod, np.zeros((3, 4), dtype=np.float32))
    se, st = _pair(torch_mod, np.arange(3))
    _same(ember.select_scatter(e, se, 1, 0), torch_mod.select_scatter(t, st, 1, 0))
    _grads(torch_mod, lambda m, x, y: m.select_scatter(x, y.float(), 1, 0).double(),
           np.zeros((3, 4)), np.ones(3))
    cases = [("select_scatter", (3,), (0, 1)), ("select_scatter", (3,), (1, 5)),
             ("select_scatter", (3,), (2, 0)), ("slice_scatter", (3, 3), (1, -2)),
             ("slice_scatter", (1, 4), (0, 1, 2, 0)), ("diagonal_scatter", (2,), ()),
             ("diagonal_scatter", (2,), (0, 1, 1))]
    for name, shape, args in cases:
        se, st = _pair(torch_mod, np.ones(shape, dtype=np.float32))
        _same_error(lambda: getattr(ember, name)(e, se, *args),
                    lambda: getattr(torch_mod, name)(t, st, *args))


# ---------------------------------------------------------------------- igamma, mvlgamma
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma(torch_mod, rng, name):
    a, x = rng.uniform(0.5, 3, (2, 3)), rng.uniform(0.1, 4, (3,))
    ae = ember.tensor(a)
    at = torch_mod.tensor(a)
    _grads(torch_mod, lambda m, y: getattr(m, name)(at if m is torch_mod else ae, y), x)
    e, t = _pair(torch_mod, a.astype(np.float32))
    xe, xt = _pair(torch_mod, x.astype(np.float32))
    _same(getattr(e, name)(xe), getattr(t, name)(xt))
    getattr(e, name + "_")(xe)
    getattr(t, name + "_")(xt)
    _same(e, t)
    ie, it = _pair(torch_mod, np.array([1, 2]))
    _same(getattr(ember, name)(ie, xe[:2]), getattr(torch_mod, name)(it, xt[:2]))
    _same_error(lambda: getattr(ember, name)(ie, ie), lambda: getattr(torch_mod, name)(it, it))
    _same_error(lambda: getattr(ember, name)(e, 2.0), lambda: getattr(torch_mod, name)(t, 2.0))
    ge, gt = _pair(torch_mod, a, requires_grad=True)
    _same_error(lambda: getattr(ember, name)(ge, ember.tensor(x)).sum().backward(),
                lambda: getattr(torch_mod, name)(gt, torch_mod.tensor(x)).sum().backward())


@pytest.mark.parametrize("p", [1, 2, 3])
def test_mvlgamma(torch_mod, rng, p):
    a = rng.uniform(1.5, 4, (2, 3))
    _grads(torch_mod, lambda m, x: m.mvlgamma(x, p), a)
    _grads(torch_mod, lambda m, x: x.mvlgamma(p), a)
    e, t = _pair(torch_mod, a.astype(np.float32))
    e.mvlgamma_(p)
    t.mvlgamma_(p)
    _same(e, t)
    ie, it = _pair(torch_mod, np.array([2, 3]))
    _same(ember.mvlgamma(ie, p), torch_mod.mvlgamma(it, p))
    _same_error(lambda: ember.mvlgamma(e, 0), lambda: torch_mod.mvlgamma(t, 0))


def test_resize_matches_torch(torch_mod):
    """Shrinking and regrowing within the storage keep the storage's values (and views see
    writes); growing beyond keeps the old elements first; errors as torch's."""
    res = []
    for lib in (ember, torch_mod):
        a = lib.arange(6.0)
        b = a.view(2, 3)
        shrunk = a.resize_(2, 2).clone()
        a.resize_(5)
        a[0] = 100.0
        t = lib.arange(6.0)[2:]
        t.resize_(3)
        c = lib.arange(4.0)
        c.resize_(6)
        y = lib.ones(2, 3).resize_as_(lib.ones(3))
        res.append([shrunk.numpy(), a.numpy(), b.numpy(), t.numpy(), t.storage_offset(),
                    c.numpy()[:4], tuple(c.shape), tuple(y.shape)])
    for x, y in zip(*res):
        np.testing.assert_array_equal(x, y)
    for make in (lambda L: L.ones(2, requires_grad=True).resize_(3),
                 lambda L: L.ones(2).resize_(-1)):
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises(RuntimeError) as info:
                make(lib)
            errors.append(str(info.value))
        assert errors[0] == errors[1]


def test_apply_and_map_match_torch(torch_mod):
    res = []
    for lib in (ember, torch_mod):
        a = lib.tensor([1.0, 2.0, 3.0]).apply_(lambda v: v * 2)
        b = lib.tensor([1, 2, 3]).apply_(lambda v: v + 0.7)   # (cast back: truncates)
        t = lib.arange(6.0).view(2, 3).t()
        t.apply_(lambda v: -v)
        m = lib.ones(2, 2).map_(lib.tensor([1.0, 2.0]), lambda u, v: u * v + 1)
        res.append([a.numpy(), b.numpy(), t.numpy(), m.numpy()])
    for x, y in zip(*res):
        np.testing.assert_array_equal(x, y)
    for make in (lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v),
                 lambda L: L.ones(2).map_(L.ones(2, requires_grad=True), lambda u, v: u),
                 lambda L: L.ones(2).map_(L.ones(3), lambda u, v: u),
                 lambda L: L.ones(2).map_(L.ones(2, dtype=L.int64), lambda u, v: u)):
        errors = []
        for lib in (ember, torch_mod):
            with pytest.raises((RuntimeError, TypeError)) as info:
                make(lib)
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1]
