"""Shape ops against real PyTorch: error types and messages, grad_fn names, which results are
views (memory and version counter shared), dtype promotion, out=, meshgrid's warning."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close, torch_to_numpy

ERRORS = [
    lambda M: M.cat([]),
    lambda M: M.cat([M.tensor(1.0)]),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(3)]),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(3, 2)], 1),
    lambda M: M.cat([M.zeros(2, 3), M.zeros(2, 4)]),
    lambda M: M.cat([M.zeros(0, 1), M.zeros(2, 3)]),
    lambda M: M.cat([M.zeros(2, 3)], 2),
    lambda M: M.cat(M.zeros(2, 3)),
    lambda M: M.stack([]),
    lambda M: M.stack([M.zeros(2), M.zeros(3)]),
    lambda M: M.stack([M.zeros(3), M.zeros(2, 3)]),
    lambda M: M.stack([M.zeros(3)], 2),
    lambda M: M.zeros(3).split(0),
    lambda M: M.zeros(3).split(-1),
    lambda M: M.zeros(3).split([1, 1]),
    lambda M: M.zeros(3).chunk(0),
    lambda M: M.zeros(3).tensor_split(0),
    lambda M: M.zeros(3).tensor_split(M.tensor([1.0])),
    lambda M: M.zeros(3).tensor_split(M.tensor([[1]])),
    lambda M: M.tensor(1.0).tensor_split(2),
    lambda M: M.zeros(3).unbind(1),
    lambda M: M.zeros(3).flip(0, 0),
    lambda M: M.zeros(3).fliplr(),
    lambda M: M.tensor(1.0).flipud(),
    lambda M: M.zeros(3).roll((1, 2), (0,)),
    lambda M: M.zeros(3).roll(()),
    lambda M: M.zeros(2, 3).rot90(1, [0, 1, 1]),
    lambda M: M.zeros(3).rot90(),
    lambda M: M.zeros(2, 3).rot90(1, [0, -2]),
    lambda M: M.zeros(3).tril(),
    lambda M: M.zeros(3).triu(),
    lambda M: M.diag(M.zeros(2, 2, 2)),
    lambda M: M.diag(M.tensor(1.0)),
    lambda M: M.zeros(3).trace(),
    lambda M: M.zeros(2, 3).repeat(2),
    lambda M: M.zeros(3).repeat_interleave(M.tensor([1, 2])),
    lambda M: M.zeros(3).repeat_interleave(M.tensor([1, -2, 1])),
    lambda M: M.zeros(3).repeat_interleave(-1),
    lambda M: M.meshgrid(M.zeros(3), M.zeros(3).long(), indexing="ij"),
    lambda M: M.meshgrid(M.zeros(3), indexing="foo"),
    lambda M: M.meshgrid([], indexing="xy"),
    lambda M: M.combinations(M.zeros(2, 3)),
    lambda M: M.combinations(M.zeros(3), -1),
    lambda M: M.broadcast_shapes((2, 3), (3, 3)),
    lambda M: M.broadcast_tensors(M.zeros(3), M.zeros(2, 2)),
    lambda M: M.cartesian_prod(M.zeros(3), M.zeros(2, 3)),
    lambda M: M.zeros(3, 4).select(0, 5),
    lambda M: M.tensor(1.0).select(0, 0),
    lambda M: M.zeros(3, 4).narrow(0, 5, 1),
    lambda M: M.zeros(3, 4).narrow(0, 1, 3),
    lambda M: M.zeros(3, 4).narrow(0, 1, -1),
    lambda M: M.zeros(3, 4).diagonal(0, 0, 0),
    lambda M: M.zeros(3, 4).unfold(1, 5, 1),
    lambda M: M.zeros(3, 4).unfold(1, 2, 0),
    lambda M: M.zeros(3, 4).movedim((0, 1), (1,)),
    lambda M: M.zeros(3, 4).movedim((0, 0), (1, 0)),
    lambda M: M.zeros(3, 4).squeeze(5),
    lambda M: M.zeros(2, 3).expand(3),
]


@pytest.mark.parametrize("fn", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_torch(torch_mod, fn):
    with pytest.raises(Exception) as expected:
        fn(torch_mod)
    with pytest.raises(type(expected.value)) as actual:
        fn(ember)
    assert str(actual.value) == str(expected.value)


NAMES = ["M.cat([x, x])", "M.stack([x, x])", "M.hstack([x, x])", "M.vstack([x, x])",
         "M.dstack([x, x])", "M.column_stack([x, x])", "x.flip(0)", "x.fliplr()", "x.roll(1, 0)",
         "x.rot90()", "x.tril()", "x.triu(1)", "M.diag(x)", "M.diag(x[0])", "M.diagflat(x)",
         "M.diag_embed(x)", "x.trace()", "x.repeat(2, 1)", "x.tile((2,))",
         "x.repeat_interleave(2)", "x.repeat_interleave(M.tensor([1, 0, 2]), dim=0)",
         "M.meshgrid(x[0], x[1], indexing='ij')[0]", "M.cartesian_prod(x[0], x[1])",
         "M.combinations(x[0])", "M.broadcast_tensors(x, x[0])[1]", "M.atleast_3d(x)",
         "x.tensor_split(2)[0]", "M.take_along_dim(x, M.tensor([[0]]), 0)",
         "x.movedim(0, 1)", "x.swapaxes(0, 1)", "x.unsqueeze(0).squeeze(0)"]


def test_grad_fn_names_match_torch(torch_mod):
    for expr in NAMES:
        names = []
        for M in (torch_mod, ember):
            x = M.ones(3, 3, dtype=M.float64, requires_grad=True)
            out = eval(expr, {"x": x, "M": M})
            names.append(out.grad_fn.name())
        assert names[0] == names[1], expr


VIEWS = ["x.split(2)", "x.split([1, 2])", "x.chunk(2, 1)", "x.unbind(1)", "x.tensor_split(2)",
         "x.hsplit(2)", "(x.diagonal(),)", "(x.unfold(1, 2, 1),)", "(x.movedim(0, 1),)",
         "(x.narrow(1, 1, 2),)", "(x.select(0, 1),)", "M.meshgrid(x[0], x[1], indexing='xy')",
         "M.broadcast_tensors(x, x[0])", "(M.atleast_3d(x),)", "(x.squeeze(),)",
         "(x.repeat_interleave(1, 0),)"]


@pytest.mark.parametrize("expr", VIEWS)
def test_views_share_memory_and_version(torch_mod, expr):
    t = torch_mod.arange(12.0).reshape(3, 4).clone()
    x = ember.arange(12.0).reshape(3, 4).clone()
    expected = eval(expr, {"x": t, "M": torch_mod})
    actual = eval(expr, {"x": x, "M": ember})
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_close(a, torch_to_numpy(e))
        is_view = e._base is t or e is t
        assert (a._vc is x._vc) == is_view, expr
    # writing through the first piece reaches the base, as in PyTorch (expanded views are
    # read-only in ember: NumPy's broadcast views)
    if expected[0].numel() and expected[0]._base is t and 0 not in expected[0].stride():
        expected[0][(0,) * expected[0].dim()] = 100.0
        actual[0][(0,) * actual[0].dim()] = 100.0
        assert_close(x, torch_to_numpy(t))


def test_cat_promotes_and_skips_legacy_empty(torch_mod):
    a = np.arange(6).reshape(2, 3)
    pairs = [(lambda M: M.cat([M.tensor(a, dtype=M.int32), M.tensor(a * 0.5)])),
             (lambda M: M.cat([M.tensor(a).bool(), M.tensor(a, dtype=M.uint8)], 1)),
             (lambda M: M.cat([M.zeros(0), M.tensor(a, dtype=M.float64), M.zeros(0)])),
             (lambda M: M.cat([M.zeros(0, dtype=M.int64), M.zeros(0)])),
             (lambda M: M.stack([M.tensor([1, 2]), M.tensor([0.5, 1.5], dtype=M.float16)]))]
    for fn in pairs:
        want, got = fn(torch_mod), fn(ember)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1]
        assert_close(got, torch_to_numpy(want))


def test_cat_gradient_skips_and_routes(torch_mod):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((1, 3))
    grads = []
    for M in (torch_mod, ember):
        x, y = M.tensor(a, requires_grad=True), M.tensor(b, requires_grad=True)
        out = M.cat([x, M.zeros(0, dtype=M.float64), y.float().double()])
        (out * M.arange(9.0, dtype=M.float64).reshape(3, 3)).sum().backward()
        grads.append((x.grad, y.grad))
    for g, w in zip(grads[1], grads[0]):
        assert_close(g, torch_to_numpy(w))


def test_out_arguments(torch_mod):
    out = ember.empty(0)
    r = ember.cat([ember.ones(2), ember.zeros(1)], out=out)
    assert r is out and out.tolist() == [1.0, 1.0, 0.0]
    out = ember.empty(2, 2)
    ember.stack([ember.ones(2), ember.zeros(2)], out=out)
    assert out.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    out = ember.zeros(3, 3)
    ember.tril(ember.ones(3, 3), out=out)
    assert out.tolist() == np.tril(np.ones((3, 3))).tolist()


def test_meshgrid_warns_without_indexing(torch_mod):
    with pytest.warns(UserWarning, match="indexing argument"):
        grids = ember.meshgrid(ember.arange(3), ember.arange(2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch_mod.meshgrid(torch_mod.arange(3), torch_mod.arange(2))
    for g, w in zip(grids, want):
        assert g.tolist() == w.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.meshgrid(ember.arange(3), indexing="ij")


def test_meshgrid_rejects_matrices():
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        ember.meshgrid(ember.zeros(3), ember.zeros(2, 3), indexing="ij")


def test_broadcast_shapes(torch_mod):
    for shapes in [((2, 1), (3,)), (3, (2, 1)), ((), (1, 4), (5, 1, 1)), ((0, 1), (3,))]:
        got = ember.broadcast_shapes(*shapes)
        assert isinstance(got, ember.Size)
        assert tuple(got) == tuple(torch_mod.broadcast_shapes(*shapes))


def test_split_family_shapes_match_torch(torch_mod):
    exprs = ["x.chunk(4)", "x.chunk(3, 1)", "x.split(4)", "x.tensor_split([1, 5])",
             "x.tensor_split(M.tensor([2, -1]), 1)", "x.tensor_split(M.tensor(3))",
             "M.zeros(0).chunk(2)", "M.zeros(0).split(2)", "M.zeros(0, 2).unbind()",
             "x.vsplit([1]) ", "x.dsplit(1) if x.dim() > 2 else (x,)"]
    for expr in exprs:
        got = eval(expr, {"x": ember.arange(30.0).reshape(5, 6), "M": ember})
        want = eval(expr, {"x": torch_mod.arange(30.0).reshape(5, 6), "M": torch_mod})
        assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want], expr
        for g, w in zip(got, want):
            assert_close(g, torch_to_numpy(w))


def test_repeat_interleave_counts_and_output_size(torch_mod):
    r = [2, 0, 1]
    assert ember.repeat_interleave(ember.tensor(r)).tolist() == \
        torch_mod.repeat_interleave(torch_mod.tensor(r)).tolist()
    got = ember.tensor([[1, 2], [3, 4]]).repeat_interleave(ember.tensor([1, 2]), dim=0,
                                                          output_size=3)
    assert got.tolist() == [[1, 2], [3, 4], [3, 4]]


def test_unfold_writes_through_and_accumulates_gradient(torch_mod):
    a = np.arange(7.0)
    grads = []
    for M in (torch_mod, ember):
        x = M.tensor(a, requires_grad=True)
        w = x.unfold(0, 3, 2)
        (w * M.arange(9.0, dtype=M.float64).reshape(3, 3)).sum().backward()
        grads.append(x.grad)
    assert_close(grads[1], torch_to_numpy(grads[0]))
    x = ember.zeros(5)
    x.unfold(0, 2, 1)[1, 1] = 3.0
    assert x.tolist() == [0.0, 0.0, 3.0, 0.0, 0.0]


def test_scatter_reduce_ties_and_zero_products(torch_mod):
    src = np.array([1.0, 3.0, 3.0, 0.0, 2.0, 0.0])
    base = np.array([3.0, 1.0, 0.0])
    index = np.array([0, 0, 0, 1, 1, 2])
    for reduce in ("amax", "amin", "prod", "mean", "sum"):
        for include_self in (True, False):
            grads = []
            for M in (torch_mod, ember):
                s = M.tensor(src, requires_grad=True)
                b = M.tensor(base, requires_grad=True)
                out = b.scatter_reduce(0, M.tensor(index), s, reduce, include_self=include_self)
                (out * M.tensor([1.0, 2.0, 3.0], dtype=M.float64)).sum().backward()
                grads.append((out, s.grad, b.grad))
            for g, w in zip(grads[1], grads[0]):
                assert_close(g, torch_to_numpy(w))
