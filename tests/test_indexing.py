"""Tensor indexing against real PyTorch: __getitem__/__setitem__ values, memory sharing,
version counters, gradients through repeated indices, errors and their messages; plus the
in-place index ops (index_put_, put_, masked_fill_, scatter_, ...)."""
import numpy as np
import pytest

import ember
from checks import assert_close, torch_to_numpy


def _pair(torch, shape=(3, 4, 5), dtype="float64"):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return ember.tensor(a), torch.tensor(a)


def _key(mod, spec):
    """Build a key from a spec whose tensors are written as ('T', [...]) for either module."""
    if isinstance(spec, tuple) and spec and spec[0] == "T":
        return mod.tensor(spec[1])
    if isinstance(spec, tuple):
        return tuple(_key(mod, s) for s in spec)
    return spec


KEYS = [
    0, -1, 2, slice(None), slice(1, None), slice(None, None, 2), slice(-2, 10), slice(5, 9),
    (0, 1), (0, 1, 2), (-1, slice(None), 3), (slice(None), 0), (Ellipsis, 1),
    (1, Ellipsis), (None,), (None, 0), (0, None), (slice(None), None, 1), (Ellipsis, None),
    (Ellipsis,), (), (slice(None), slice(None)), (slice(1, 3), slice(None, None, 3)),
    (True,), (False,), (0, True), ("T", 1), ("T", [0, 2, 0]), ("T", [[0, 1], [2, 2]]),
    (slice(None), ("T", [3, 0])), (("T", [0, 1]), ("T", [1, 2])),
    (("T", [0, 2]), slice(None), ("T", [1, 4])), (1, ("T", [0, 3])),
    (("T", [0, 1]), None, ("T", [2, 3])), (Ellipsis, ("T", [4, 0])),
    ("T", [True, False, True]), (slice(None), ("T", [True, False, True, True])),
    ("T", [[True, False, True, False]] * 3), (("T", [[0], [2]]), ("T", [1, 2, 3])),
    ([0, 2],), [[0, 2]], [],
]


def _ids(keys):
    return [repr(k).replace(" ", "")[:40] for k in keys]


@pytest.mark.parametrize("spec", KEYS, ids=_ids(KEYS))
def test_getitem_matches_torch(torch_mod, spec):
    x, tx = _pair(torch_mod)
    expected = tx[_key(torch_mod, spec)]
    actual = x[_key(ember, spec)]
    assert tuple(actual.shape) == tuple(expected.shape)
    assert_close(actual, torch_to_numpy(expected))
    # Basic indexing gives a view (memory and version counter shared); advanced a copy.
    is_view = expected._base is tx
    assert (actual._base is x) == is_view
    assert (actual._vc is x._vc) == is_view
    if actual.numel():
        assert np.shares_memory(actual._data, x._data) == is_view


@pytest.mark.parametrize("spec", KEYS, ids=_ids(KEYS))
def test_setitem_matches_torch(torch_mod, spec):
    x, tx = _pair(torch_mod)
    target_shape = tuple(tx[_key(torch_mod, spec)].shape)
    rng = np.random.default_rng(0)
    v = rng.standard_normal(target_shape[-1:] if target_shape else ())
    tx[_key(torch_mod, spec)] = torch_mod.tensor(v)
    version = x._vc.v
    x[_key(ember, spec)] = ember.tensor(v)
    assert_close(x, torch_to_numpy(tx))
    assert x._vc.v == version + 1
    # Python scalars too
    tx[_key(torch_mod, spec)] = -7
    x[_key(ember, spec)] = -7
    assert_close(x, torch_to_numpy(tx))


def test_getitem_views_write_through_and_bump_version():
    x = ember.zeros(3, 4)
    row = x[1]
    col = x[:, 2]
    row.fill_(5.0)
    assert x[1].tolist() == [5.0] * 4 and col.tolist() == [0.0, 5.0, 0.0]
    assert row._vc is x._vc and x._vc.v == 1
    x[0, 0] = 1.0
    assert row._vc.v == 2
    picked = x[ember.tensor([0, 1])]
    picked.fill_(9.0)
    assert x[0, 1].item() == 0.0  # advanced indexing copied


def test_setitem_dtype_cast_and_broadcast(torch_mod):
    for dtype in ("int64", "uint8", "bool", "float32"):
        x = ember.zeros(3, 4, dtype=getattr(ember, dtype))
        tx = torch_mod.zeros(3, 4, dtype=getattr(torch_mod, dtype))
        v = np.array([[1.7, -0.0, 2.2, 3.9]])
        x[1:] = ember.tensor(v)
        tx[1:] = torch_mod.tensor(v)
        x[0, 1] = 2.6
        tx[0, 1] = 2.6
        assert_close(x, torch_to_numpy(tx))
        assert x.dtype is getattr(ember, dtype)


def test_setitem_errors_match_torch(torch_mod):
    cases = [
        (lambda m, x: x.__setitem__(0, m.ones(3)), None),
        (lambda m, x: x.__setitem__(m.tensor([0, 1]), m.ones(3)), None),
        (lambda m, x: x.__setitem__(0, m.ones(2, 1, 4)), None),
        (lambda m, x: x.__setitem__((slice(None), 7), 1.0), None),
        (lambda m, x: m.zeros(3, dtype=m.int8).__setitem__(0, 200), None),
        (lambda m, x: m.zeros(3, dtype=m.int64).__setitem__(0, float("inf")), None),
        (lambda m, x: x.__setitem__(slice(None, None, -1), 1.0), None),
    ]
    for fn, _ in cases:
        with pytest.raises(Exception) as expected:
            fn(torch_mod, torch_mod.zeros(3, 4))
        with pytest.raises(type(expected.value)) as actual:
            fn(ember, ember.zeros(3, 4))
        assert str(actual.value) == str(expected.value)


def test_getitem_errors_match_torch(torch_mod):
    specs = [5, -4, (0, 0, 0), (slice(None), 7), ("T", [5]), (slice(None), ("T", [-5])),
             (("T", [0]), ("T", [7])), (("T", [0, 1]), ("T", [0, 1, 2])),
             ("T", [True, False]), (slice(None), ("T", [True] * 5)),
             ("T", [1.0]), slice(None, None, -1), slice(None, None, 0), 1.5]
    for spec in specs:
        with pytest.raises(Exception) as expected:
            torch_mod.zeros(3, 4)[_key(torch_mod, spec)]
        with pytest.raises(type(expected.value)) as actual:
            ember.zeros(3, 4)[_key(ember, spec)]
        assert str(actual.value) == str(expected.value), spec
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        ember.tensor(1.0)[0]
    with pytest.raises(IndexError, match="dimension with size 0"):
        ember.zeros(0, 3)[ember.tensor([0])]


@pytest.mark.parametrize("spec", [("T", [0, 2, 0, 0]), (slice(None), ("T", [1, 1, 3])),
                                  (("T", [0, 0]), ("T", [2, 2])), ("T", [[1, 1], [1, 0]]),
                                  (0, ("T", [4, 4, 4]))], ids=str)
def test_gradient_accumulates_repeated_indices(torch_mod, spec):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5))
    x = ember.tensor(a, requires_grad=True)
    tx = torch_mod.tensor(a, requires_grad=True)
    y, ty = x[_key(ember, spec)], tx[_key(torch_mod, spec)]
    w = rng.standard_normal(tuple(ty.shape))
    (y * ember.tensor(w)).sum().backward()
    (ty * torch_mod.tensor(w)).sum().backward()
    assert y.grad_fn.name() == ty.grad_fn.name()
    assert_close(x.grad, torch_to_numpy(tx.grad))


def test_grad_fn_names_match_torch(torch_mod):
    exprs = ["x[0]", "x[1:]", "x[:]", "x[:, :]", "x[...]", "x[None]", "x[0, None]", "x[None, 0]",
             "x[..., 0]", "x[M.tensor(1)]", "x[M.tensor([0, 1])]", "x[True]", "x.narrow(0, 0, 2)",
             "x.select(1, 1)", "x.unbind(0)[0]", "x.split(1)[0]", "x.split([1, 2])[0]",
             "x.chunk(2)[0]", "x.diagonal()", "x.unfold(0, 2, 1)", "x.squeeze()",
             "x.squeeze(0)", "x.squeeze((0,))", "x.unsqueeze(0)", "x.movedim(0, 1)"]
    for expr in exprs:
        names = []
        for M in (torch_mod, ember):
            x = M.ones(3, 4, 5, dtype=M.float64, requires_grad=True)
            names.append(eval(expr, {"x": x, "M": M}).grad_fn.name())
        assert names[0] == names[1], expr


def test_setitem_records_graph(torch_mod):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    results = []
    for M in (torch_mod, ember):
        x = M.tensor(a, requires_grad=True)
        v = M.tensor(b, requires_grad=True)
        y = x * 2
        y[1] = v
        y[M.tensor([0, 0]), 1] = v[:2] * 3
        fresh = M.zeros(3, 4, dtype=M.float64)
        fresh[2] = v  # a tensor that needed no grad joins the graph (CopySlices)
        names = tuple(t.grad_fn.name().replace("torch::autograd::", "") for t in (y, fresh))
        ((y * y).sum() + (fresh * 3).sum()).backward()
        results.append((names, x.grad, v.grad))
    (tn, tx, tv), (en, ex, ev) = results
    assert tn == en
    assert_close(ex, torch_to_numpy(tx))
    assert_close(ev, torch_to_numpy(tv))


def test_setitem_on_leaf_requiring_grad_raises(torch_mod):
    x = ember.zeros(3, requires_grad=True)
    tx = torch_mod.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as expected:
        tx[0] = 1.0
    with pytest.raises(RuntimeError) as actual:
        x[0] = 1.0
    assert str(actual.value) == str(expected.value)
    with ember.no_grad():
        x[0] = 1.0
    assert x.tolist() == [1.0, 0.0, 0.0] and x.requires_grad


def test_modified_saved_tensor_detected():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y[0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_iter_and_unbind_share_version():
    x = ember.arange(6.0).reshape(2, 3)
    rows = list(x)
    assert [r.tolist() for r in rows] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert all(r._vc is x._vc for r in rows)
    rows[1][0] = 10.0
    assert x[1, 0].item() == 10.0


# ---------------------------------------------------------------------- in-place index ops
def _const(M, x, shape):
    return M.arange(float(np.prod(shape)), dtype=x.dtype).reshape(shape) * 0.7 - 1


INPLACE = [
    ("index_put_", lambda M, x: x.index_put_((M.tensor([0, 2]),), M.ones(4, dtype=x.dtype))),
    ("index_put_acc", lambda M, x: x.index_put_((M.tensor([0, 0]), M.tensor([1, 1])),
                                                M.tensor(2.0, dtype=x.dtype), accumulate=True)),
    ("put_", lambda M, x: x.put_(M.tensor([0, 11, 0]), M.tensor([1.0, 2.0, 3.0],
                                                                 dtype=x.dtype), True)),
    ("masked_fill_", lambda M, x: x.masked_fill_(x > 5, -1.0)),
    ("masked_scatter_", lambda M, x: x.masked_scatter_(x > 8, M.arange(12.0, dtype=x.dtype))),
    ("scatter_", lambda M, x: x.scatter_(1, M.tensor([[0, 3]]), -2.0)),
    ("scatter_src", lambda M, x: x.scatter_(0, M.tensor([[2, 0, 1, 0]]), _const(M, x, (1, 4)))),
    ("scatter_add_", lambda M, x: x.scatter_add_(1, M.tensor([[0, 0, 1]]),
                                                 _const(M, x, (1, 3)))),
    ("scatter_reduce_", lambda M, x: x.scatter_reduce_(0, M.tensor([[1, 1, 1, 1]]),
                                                       _const(M, x, (1, 4)), "amax")),
    ("index_add_", lambda M, x: x.index_add_(1, M.tensor([0, 0]), _const(M, x, (3, 2)),
                                             alpha=2)),
    ("index_copy_", lambda M, x: x.index_copy_(0, M.tensor([2]), x[:1] + 100)),
    ("index_fill_", lambda M, x: x.index_fill_(1, M.tensor([1, 3]), 7.5)),
    ("fill_", lambda M, x: x.fill_(3.25)),
    ("zero_", lambda M, x: x.zero_()),
    ("copy_", lambda M, x: x.copy_(M.tensor([1, 2, 3, 4]))),
    ("tril_", lambda M, x: x.tril_(1)),
    ("triu_", lambda M, x: x.triu_(-1)),
]


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_index_ops(torch_mod, name, fn):
    a = np.arange(12.0).reshape(3, 4)
    x, tx = ember.tensor(a), torch_mod.tensor(a)
    alias = x.view(12)
    version = x._vc.v
    out = fn(ember, x)
    fn(torch_mod, tx)
    assert out is x and x._vc.v > version
    assert_close(x, torch_to_numpy(tx))
    assert_close(alias, torch_to_numpy(tx).reshape(12))


@pytest.mark.parametrize("name,fn", INPLACE, ids=[n for n, _ in INPLACE])
def test_inplace_index_ops_gradients(torch_mod, name, fn):
    a = np.linspace(-1, 2, 12).reshape(3, 4)
    grads = []
    for M in (torch_mod, ember):
        leaf = M.tensor(a, requires_grad=True)
        x = leaf * 1.5
        fn(M, x)
        (x * x).sum().backward()
        grads.append(leaf.grad)
    assert_close(grads[1], torch_to_numpy(grads[0]))


def test_copy_broadcast_dtype_and_grad(torch_mod):
    x = ember.zeros(2, 3, dtype=ember.int32)
    x.copy_(ember.tensor([1.9, -2.5, 3.0]))
    assert x.tolist() == [[1, -2, 3], [1, -2, 3]]
    src = ember.tensor([1.0, 2.0, 3.0], dtype=ember.float32, requires_grad=True)
    y = ember.zeros(2, 3, dtype=ember.float64)
    y.copy_(src)
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"  # as torch
    (y * 2).sum().backward()
    assert src.grad.dtype is ember.float32 and src.grad.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError) as expected:
        torch_mod.zeros(2, 3).copy_(torch_mod.ones(4))
    with pytest.raises(RuntimeError) as actual:
        ember.zeros(2, 3).copy_(ember.ones(4))
    assert str(actual.value) == str(expected.value)


def test_fill_errors_and_tensor_value(torch_mod):
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        ember.zeros(3).fill_(ember.ones(2))
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t"):
        ember.zeros(3, dtype=ember.int8).fill_(300)
    v = ember.tensor(2.0, requires_grad=True)
    y = ember.zeros(4).fill_(v)
    assert y.grad_fn.name() == "FillBackward3"
    y.sum().backward()
    assert v.grad.item() == 4.0


def test_index_op_errors_match_torch(torch_mod):
    cases = [
        lambda M, x: x.gather(0, M.tensor([[0, 1]]).float()),
        lambda M, x: x.gather(0, M.tensor([0, 1])),
        lambda M, x: x.gather(0, M.tensor([[5, 0, 0, 0]])),
        lambda M, x: x.gather(0, M.tensor([[-1, 0, 0, 0]])),
        lambda M, x: x.scatter(0, M.tensor([[0, 1, 2, 0]]), x.double()),
        lambda M, x: x.scatter(0, M.tensor([[0, 1, 2, 0]]), M.ones(1, 2)),
        lambda M, x: x.scatter(0, M.tensor([[0]]), 1.0, reduce="foo"),
        lambda M, x: x.scatter_reduce(0, M.tensor([[0]]), x, "foo"),
        lambda M, x: x.index_select(0, M.tensor([0.0])),
        lambda M, x: x.index_select(0, M.tensor([[0]])),
        lambda M, x: x.index_select(0, M.tensor([3])),
        lambda M, x: x.index_select(0, M.tensor([-1])),
        lambda M, x: x.index_add(0, M.tensor([0, 1]), M.ones(3, 4)),
        lambda M, x: x.index_add(0, M.tensor([0, 1]), M.ones(2, 4).double()),
        lambda M, x: x.index_add(0, M.tensor([0, 1]), M.ones(2, 3)),
        lambda M, x: x.index_copy(0, M.tensor([0, 1]), M.ones(3, 4)),
        lambda M, x: x.index_copy(0, M.tensor([0, 1], dtype=M.int32), M.ones(2, 4)),
        lambda M, x: x.index_fill(0, M.tensor([0, 1]), M.ones(2)),
        lambda M, x: x.index_fill(0, M.tensor([0, 5]), 1.0),
        lambda M, x: x.masked_fill(M.ones(3, 4), 1.0),
        lambda M, x: x.masked_fill(x > 0, M.ones(2)),
        lambda M, x: x.masked_fill(M.ones(3, 5, dtype=M.bool), 1.0),
        lambda M, x: x.masked_select(M.ones(3, 4)),
        lambda M, x: x.masked_scatter(x == 0, M.ones(3)),
        lambda M, x: x.masked_scatter(x == 0, M.ones(12).double()),
        lambda M, x: x.take(M.tensor([12])),
        lambda M, x: x.take(M.tensor([0], dtype=M.int32)),
        lambda M, x: x.put_(M.tensor([0, 1]), M.ones(3)),
        lambda M, x: x.put_(M.tensor([0, 1]), M.ones(2).double()),
        lambda M, x: x.index_put_((M.tensor([0, 1]),), M.ones(4).double()),
        lambda M, x: M.take_along_dim(x, M.tensor([[0]], dtype=M.int32), 0),
        lambda M, x: M.take_along_dim(x, M.tensor([0, 1]), 0),
    ]
    for i, fn in enumerate(cases):
        with pytest.raises(Exception) as expected:
            fn(torch_mod, torch_mod.zeros(3, 4))
        with pytest.raises(type(expected.value)) as actual:
            fn(ember, ember.zeros(3, 4))
        assert str(actual.value) == str(expected.value), i


def test_nonzero_and_where_single_argument(torch_mod):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    got = ember.nonzero(ember.tensor(a), as_tuple=True)
    want = torch_mod.nonzero(torch_mod.tensor(a), as_tuple=True)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype is ember.int64 and g.tolist() == w.tolist()
    assert ember.nonzero(ember.tensor(5.0)).shape == (1, 0)
    assert ember.argwhere(ember.tensor(a)).tolist() == torch_mod.argwhere(
        torch_mod.tensor(a)).tolist()


def test_new_constructors(torch_mod):
    x = ember.zeros(2, dtype=ember.float64)
    tx = torch_mod.zeros(2, dtype=torch_mod.float64)
    for name, args in [("new_zeros", ((2, 3),)), ("new_ones", (3,)), ("new_empty", (2,)),
                       ("new_full", ((2,), 1.5)), ("new_tensor", ([1, 2],))]:
        got, want = getattr(x, name)(*args), getattr(tx, name)(*args)
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        if name != "new_empty":
            assert got.tolist() == want.tolist()
    assert x.new_zeros(2, dtype=ember.int32).dtype is ember.int32
    assert x.new_ones(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("case", ["repeats", "negative", "unique"])
def test_row_scatter_add_matches_add_at(case):
    """Large row scatters (an embedding's or index_add's gradient) take a sorted path;
    np.add.at is the reference."""
    from ember.backends.numpy_backend import scatter_add
    rng = np.random.default_rng(0)
    rows, n, width = 50, 400, 16
    index = {"repeats": rng.integers(0, rows, n),
             "negative": rng.integers(-rows, rows, n),
             "unique": rng.permutation(rows * 8)[:n] % (rows * 8)}[case]
    target = rng.standard_normal((rows * 8 if case == "unique" else rows, width))
    values = rng.standard_normal((n, width))
    expected = target.copy()
    np.add.at(expected, index, values)
    np.testing.assert_allclose(scatter_add(target.copy(), index, values), expected,
                               rtol=1e-12, atol=1e-12)


def test_embedding_gradient_accumulates_repeated_rows_as_torch(torch_mod):
    idx = np.random.default_rng(1).integers(0, 30, (64, 12))
    w = np.random.default_rng(2).standard_normal((30, 24))
    grads = []
    for lib in (ember, torch_mod):
        weight = lib.tensor(w, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(idx), weight, padding_idx=3)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        grads.append(weight.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
