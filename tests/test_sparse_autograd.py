"""Gradients of and through sparse tensors against real PyTorch: sparse or dense as torch gives
them, accumulation, CSR leaves, embeddings with sparse gradients, random hybrid tensors, double
backward (finite differences where torch has no gradient to compare with)."""
import numpy as np
import pytest

import ember
from sparse_checks import (D, IDX, V, _dense, _np, assert_same, assert_same_grad,  # noqa: F401
                           both, coo, csr, hybrid, quiet_sparse_warnings, repr_of)

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


REDUCTIONS = {
    "sum": lambda L, x: L.sparse.sum(x),
    "sum0": lambda L, x: L.sparse.sum(x, 0),
    "sum1": lambda L, x: L.sparse.sum(x, dim=1),
    "sum01": lambda L, x: L.sparse.sum(x, dim=(0, 1)),
    "softmax0": lambda L, x: L.sparse.softmax(x, 0),
    "softmax1": lambda L, x: L.sparse.softmax(x, 1),
    "log_softmax1": lambda L, x: L.sparse.log_softmax(x, 1),
    "log_softmax0": lambda L, x: L.sparse.log_softmax(x, 0),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("make", [coo, hybrid], ids=["2d", "hybrid"])
def test_reductions_and_gradients_match_torch(name, make, torch_mod):
    results, grads = [], []
    for lib in (ember, torch_mod):
        x = make(lib, requires_grad=True)
        out = REDUCTIONS[name](lib, x)
        results.append(out)
        dense = out.to_dense() if out.is_sparse else out
        weights = lib.tensor(np.linspace(-1, 2, dense.numel()).reshape(tuple(dense.shape)),
                             dtype=dense.dtype)
        (dense * weights).sum().backward()
        grads.append(x.grad)
    assert_same(*results)
    assert type(results[0].grad_fn).__name__ == type(results[1].grad_fn).__name__
    assert_same_grad(*grads)


GRAD_CASES = {
    "to_dense": lambda L, s, d: s.to_dense() * L.arange(12.).reshape(3, 4),
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d) ** 2,
    "mm": lambda L, s, d: L.mm(s, d) ** 2,
    "matmul": lambda L, s, d: (s @ d) ** 2,
    "dense@sparse": lambda L, s, d: (d @ s) ** 2,
    "addmm": lambda L, s, d: L.sparse.addmm(L.ones(3, 3, dtype=L.float64), s, d, beta=2.0,
                                                 alpha=0.5) ** 2,
    "dense+sparse": lambda L, s, d: (L.ones(3, 4) + s) ** 2,
    "sparse*2": lambda L, s, d: (s * 2).to_dense() ** 2,
    "sparse*dense": lambda L, s, d: (s * d.t()).to_dense() ** 2,
    "sparse+sparse": lambda L, s, d: (s + s * 3).to_dense() ** 2,
    "coalesce": lambda L, s, d: s.coalesce().to_dense() ** 2,
    "used_twice": lambda L, s, d: L.sparse.mm(s, d).sum() + (s.to_dense() ** 2).sum(),
    "sparse_and_dense_grads": lambda L, s, d: L.mm(s, d).sum() + s.to_dense().sum(),
    "sparse_mask": lambda L, s, d: d.t().sparse_mask(s.detach().coalesce()).to_dense() ** 2,
}


def _grad_run(lib, name, leaf):
    values = lib.tensor(V, dtype=lib.float64, requires_grad=True)
    dense = lib.tensor(D, dtype=lib.float64, requires_grad=True)
    if leaf:
        s = lib.sparse_coo_tensor(lib.tensor(IDX), values.detach(), (3, 4), requires_grad=True)
    else:
        s = lib.sparse_coo_tensor(lib.tensor(IDX), values, (3, 4))
    out = GRAD_CASES[name](lib, s, dense)
    out.sum().backward()
    return out, (s.grad if leaf else values.grad), dense.grad


@pytest.mark.parametrize("leaf", [True, False], ids=["sparse_leaf", "values"])
@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_torch(name, leaf, torch_mod):
    (eo, eg, ed), (to, tg, td) = _grad_run(ember, name, leaf), _grad_run(torch_mod, name, leaf)
    assert_same(eo, to)
    if name not in ("dense+sparse", "sparse_and_dense_grads", "used_twice", "addmm"):
        assert type(eo.grad_fn).__name__ == type(to.grad_fn).__name__
    assert_same_grad(eg, tg)
    assert_same_grad(ed, td)


def test_sparse_grad_node_names_match_torch(torch_mod):
    for lib_pair in [both(lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(
            V, requires_grad=True), (3, 4)), torch_mod)]:
        e, t = lib_pair
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
        assert repr_of(e) == repr(t)
    e, t = both(lambda L: coo(L, requires_grad=True) * 2, torch_mod)
    assert repr_of(e) == repr(t)


def test_sparse_gradients_accumulate_across_backward_calls(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        s = coo(lib, requires_grad=True)
        d = lib.tensor(D, dtype=lib.float32)
        lib.sparse.mm(s, d).sum().backward()
        lib.sparse.mm(s, d * 2).sum().backward()
        grads.append(s.grad)
    assert_same_grad(*grads)


def test_csr_values_gradient_matches_torch(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        v = lib.tensor([1., 2., 3.], requires_grad=True)
        m = lib.sparse_csr_tensor(lib.tensor([0, 2, 2, 3]), lib.tensor([1, 3, 0]), v, (3, 4))
        ((m @ lib.tensor(D, dtype=lib.float32)) ** 2).sum().backward()
        grads.append(v.grad)
    assert_same(*grads)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"max_norm": 1.0}])
def test_embedding_sparse_gradient_matches_torch(kwargs, torch_mod):
    grads, outs = [], []
    for lib in (ember, torch_mod):
        lib.manual_seed(0)
        m = lib.nn.Embedding(5, 3, sparse=True, **kwargs)
        x = lib.tensor([[0, 1, 3], [3, 4, 0]])
        out = m(x)
        (out ** 2).sum().backward()
        outs.append(out)
        grads.append(m.weight.grad)
    assert_same(*outs)
    assert grads[0].is_sparse
    assert_same(*grads)                          # uncoalesced, entry for entry
    assert_same_grad(*grads)


def test_functional_embedding_sparse_and_freq_scaling_error(torch_mod):
    for lib in (ember, torch_mod):
        w = lib.randn(4, 2, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([1, 2, 1]), w, sparse=True,
                                          scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="^embedding_backward: scale_grad_by_freq not "
                                               "supported with sparse gradients$"):
            out.sum().backward()


def test_pointwise_gradient_against_finite_differences():
    """PyTorch cannot differentiate tanh of a sparse tensor; ember can: check the values'
    gradient against central differences of the same function on the dense values."""
    v = np.array(V)
    w = np.linspace(-1, 2, 12).reshape(3, 4)

    def f(values):
        dense = np.zeros((3, 4))
        np.add.at(dense, tuple(np.array(IDX)), values)   # coalesce, then tanh of the sums
        return float((np.tanh(dense) * w).sum())

    values = ember.tensor(v, requires_grad=True)
    s = ember.sparse_coo_tensor(ember.tensor(IDX), values, (3, 4))
    (s.tanh().to_dense() * ember.tensor(w)).sum().backward()
    eps = 1e-6
    numeric = [(f(v + eps * np.eye(5)[k]) - f(v - eps * np.eye(5)[k])) / (2 * eps)
               for k in range(5)]
    np.testing.assert_allclose(values.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_values_gradient_and_matrix_vector_products_match_torch(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        s = lib.tensor([[0., 1.], [2., 0.]]).to_sparse().requires_grad_()
        assert s._values().grad_fn is None
        v = s.values()
        assert type(v.grad_fn).__name__ == "ValuesBackward0"
        (v * lib.tensor([1., 2.])).sum().backward()
        grads.append(s.grad)
    assert_same(*grads)
    for fn in (lambda L: coo(L) @ L.arange(4.), lambda L: L.mv(coo(L), L.arange(4.)),
               lambda L: L.matmul(coo(L), L.arange(4.))):
        assert_same(*both(fn, torch_mod))


@pytest.mark.parametrize("mode,kwargs", [("sum", {}), ("mean", {}), ("sum", {"padding_idx": 2}),
                                         ("sum", {"per_sample_weights": True}),
                                         ("mean", {"include_last_offset": True})])
def test_embedding_bag_sparse_gradient_matches_torch(mode, kwargs, torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        lib.manual_seed(0)
        kw = dict(kwargs)
        psw = lib.tensor([0.5, 1., 2., -1., 3., 0.25]) if kw.pop("per_sample_weights", 0) \
            else None
        bag = lib.nn.EmbeddingBag(5, 3, mode=mode, sparse=True, **kw)
        out = bag(lib.tensor([1, 2, 4, 4, 3, 2]), lib.tensor([0, 2, 5]), per_sample_weights=psw)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        grads.append(bag.weight.grad)
    assert grads[0].is_sparse and grads[1].is_sparse
    assert_same_grad(*grads)


@pytest.mark.parametrize("offsets", [[0, 2, 4], [0, 1, 2, 6], [0, 3, 3]])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_last_offset_runs_to_the_end_as_torch(offsets, mode, torch_mod):
    """PyTorch's CPU kernel ends the last bag at the input's end, not at offsets[-1]."""
    w = np.arange(18.0).reshape(6, 3)
    outs = [lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), mode=mode,
                                                include_last_offset=True)(
        lib.tensor([1, 2, 4, 4, 3, 2]), lib.tensor(offsets)) for lib in (ember, torch_mod)]
    assert_same(*outs)


def test_sampled_addmm_gradients_match_torch(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        a = lib.tensor(D.T.copy(), requires_grad=True)
        b = lib.tensor(np.arange(16.0).reshape(4, 4) / 7, requires_grad=True)
        m = lib.sparse.sampled_addmm(csr(lib).double(), a, b, beta=0.5, alpha=2.0)
        (m.to_dense() * lib.arange(12.0).reshape(3, 4)).sum().backward()
        grads.append((a.grad, b.grad))
    assert_same(grads[0][0], grads[1][0])
    assert_same(grads[0][1], grads[1][1])


CSR_GRADS = {
    "matmul": lambda L, c: (c @ L.tensor(D, dtype=L.float32)).sum(),
    "sparse.mm": lambda L, c: L.sparse.mm(c, L.tensor(D, dtype=L.float32)).sum(),
    "to_dense": lambda L, c: (c.to_dense() * L.arange(12.).reshape(3, 4)).sum(),
    "twice": lambda L, c: (c.to_dense() * L.arange(12.).reshape(3, 4)).sum() +
    L.sparse.mm(c, L.tensor(D, dtype=L.float32)).sum(),
}


@pytest.mark.parametrize("name", sorted(CSR_GRADS))
def test_csr_leaf_gradients_match_torch(name, torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        c = csr(lib).requires_grad_()
        CSR_GRADS[name](lib, c).backward()
        CSR_GRADS[name](lib, c).backward()    # (accumulated into the first)
        grads.append(c.grad)
    e, t = grads
    assert str(e.layout).split(".")[-1] == str(t.layout).split(".")[-1]
    assert_same(e.to_dense(), t.to_dense())


def _random_case(rng):
    sd, dd = int(rng.integers(1, 4)), int(rng.integers(0, 2))
    shape = tuple(int(x) for x in rng.integers(1, 5, sd + dd))
    nnz = int(rng.integers(0, 7))
    idx = np.stack([rng.integers(0, shape[d], nnz) for d in range(sd)]).reshape(sd, nnz)
    return shape, idx, rng.standard_normal((nnz,) + shape[sd:]), int(rng.integers(0, sd + dd))


@pytest.mark.parametrize("seed", range(6))
def test_random_hybrid_tensors_match_torch(seed, torch_mod):
    """Random shapes, sparse/dense dims and repeated coordinates: values and gradients of
    to_dense, coalesce, sum, softmax, log_softmax and arithmetic against torch."""
    rng = np.random.default_rng(seed)
    for _ in range(8):
        shape, idx, vals, dim = _random_case(rng)
        results = []
        for lib in (ember, torch_mod):
            s = lib.sparse_coo_tensor(lib.tensor(idx, dtype=lib.int64), lib.tensor(vals), shape,
                                      requires_grad=True)
            outs = [s.to_dense(), s.coalesce().to_dense(), lib.sparse.sum(s),
                    lib.sparse.sum(s, dim), lib.sparse.softmax(s, dim),
                    lib.sparse.log_softmax(s, dim), s * 1.5 + s]
            dense = [o.to_dense() if o.is_sparse else o for o in outs]
            total = sum((d * lib.tensor(np.linspace(-1, 1, d.numel()).reshape(d.shape))).sum()
                        for d in dense)
            total.backward()
            results.append(([_np(d) for d in dense], _np(s.grad.to_dense())))
        for ours, theirs in zip(results[0][0], results[1][0]):
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-12)


def _second_order(lib, which, v_np=None, d_np=None):
    v = lib.tensor(V if v_np is None else v_np, dtype=lib.float64, requires_grad=True)
    d = lib.tensor(D / 5 if d_np is None else d_np, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 4))
    y = (lib.sparse.mm(s, d) ** 2).sum()
    gd, gv = lib.autograd.grad(y, (d, v), create_graph=True)
    z = gd.sum() if which == "gd" else (gv ** 2).sum()
    if v_np is not None:
        return float(z)
    z.backward()
    return _np(v.grad), _np(d.grad)


def test_double_backward_through_sparse_mm(torch_mod):
    """The dense factor's gradient differentiates as torch's; the values' gradient (which
    torch leaves without a graph) against central differences."""
    for ours, theirs in zip(_second_order(ember, "gd"), _second_order(torch_mod, "gd")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    gv, gd = _second_order(ember, "gv")
    eps, v0, d0 = 1e-6, np.array(V), D / 5
    numeric_v = [(_second_order(ember, "gv", v0 + eps * e, d0) -
                  _second_order(ember, "gv", v0 - eps * e, d0)) / (2 * eps) for e in np.eye(5)]
    np.testing.assert_allclose(gv, numeric_v, rtol=1e-5)
    bump = np.zeros_like(d0)
    bump[1, 2] = eps
    numeric_d = (_second_order(ember, "gv", v0, d0 + bump) -
                 _second_order(ember, "gv", v0, d0 - bump)) / (2 * eps)
    np.testing.assert_allclose(gd[1, 2], numeric_d, rtol=1e-5)


def test_anomaly_mode_reads_sparse_gradients(torch_mod):
    """COO gradients under detect_anomaly against torch's; CSR ones against torch's computed
    without it (torch's own NaN check fails on CSR gradients: no 'aten::any' for
    SparseCsrCPU)."""
    grads = []
    for lib in (ember, torch_mod):
        with lib.autograd.detect_anomaly():
            emb = lib.nn.Embedding(5, 2, sparse=True)
            emb(lib.tensor([1, 2, 1])).sum().backward()
        grads.append(emb.weight.grad)
    assert_same_grad(*grads)
    csr_grads = []
    for lib in (ember, torch_mod):
        with lib.autograd.set_detect_anomaly(lib is ember):
            c = csr(lib).requires_grad_()
            lib.sparse.mm(c, lib.tensor(D, dtype=lib.float32)).sum().backward()
        csr_grads.append(c.grad)
    assert_same(*csr_grads)


@pytest.mark.parametrize("leaf", [True, False], ids=["sparse_leaf", "values"])
def test_clone_and_dtype_copies_differentiate_as_torch(leaf, torch_mod):
    results = []
    for lib in (ember, torch_mod):
        values = lib.tensor(V, requires_grad=not leaf)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), values, (3, 4), requires_grad=leaf) \
            if leaf else lib.sparse_coo_tensor(lib.tensor(IDX), values, (3, 4))
        c, d = s.clone(), s.double()
        names = (type(c.grad_fn).__name__, type(d.grad_fn).__name__)
        (c.to_dense().sum() + (d.to_dense() * 2).sum()).backward()
        results.append((names, s.grad if leaf else values.grad))
    assert results[0][0] == results[1][0]
    assert_same_grad(results[0][1], results[1][1])


@pytest.mark.parametrize("product", ["sparse.mm", "mm", "@"])
def test_sparse_sparse_product_gradients_match_torch(product, torch_mod):
    results = []
    for lib in (ember, torch_mod):
        a = lib.tensor([[0., 1., 0.], [2., 0., 3.]]).to_sparse().requires_grad_()
        b = lib.tensor([[1., 0.], [0., 4.], [5., 0.], ]).to_sparse().requires_grad_()
        out = {"sparse.mm": lib.sparse.mm, "mm": lib.mm, "@": lambda x, y: x @ y}[product](a, b)
        (out.to_dense() * lib.tensor([[1., 2.], [3., 4.]])).sum().backward()
        results.append((out, a.grad, b.grad))
    for ours, theirs in zip(*results):
        assert_same_grad(ours, theirs)


@pytest.mark.parametrize("name", ["unsqueeze", "permute", "index_select", "select", "index"])
def test_indexing_and_shape_gradients_against_torch_dense_ops(name, torch_mod):
    """torch differentiates only permute of a sparse tensor; the reference for each is the
    gradient of the same op on torch's dense tensor, at the sparse tensor's entries."""
    def op(lib, x):
        return {"unsqueeze": lambda: x.unsqueeze(1), "permute": lambda: x.permute(1, 0),
                "index_select": lambda: x.index_select(0, lib.tensor([2, 0, 0])),
                "select": lambda: x.select(1, 2), "index": lambda: x[1]}[name]()

    s = coo(ember, ember.float64, requires_grad=True)
    out = op(ember, s)
    dense_out = out.to_dense() if out.is_sparse else out
    weights = np.linspace(-1, 2, dense_out.numel()).reshape(tuple(dense_out.shape))
    (dense_out * ember.tensor(weights)).sum().backward()
    d = coo(torch_mod, torch_mod.float64).to_dense().requires_grad_()
    (op(torch_mod, d) * torch_mod.tensor(weights)).sum().backward()
    expected = d.grad.sparse_mask(coo(torch_mod).coalesce())
    assert_same_grad(s.grad, expected)


@pytest.mark.parametrize("dim", [0, 1])
def test_cat_gradients_against_torch_dense_cat(dim, torch_mod):
    """torch cannot differentiate cat of sparse tensors: the reference is its dense cat's
    gradient at each input's entries."""
    a = coo(ember, ember.float64, requires_grad=True)
    b = coo(ember, ember.float64).coalesce().detach().requires_grad_()
    out = ember.cat([a, b * 2], dim).to_dense()
    weights = np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape))
    (out * ember.tensor(weights)).sum().backward()
    da = coo(torch_mod, torch_mod.float64).to_dense().requires_grad_()
    db = coo(torch_mod, torch_mod.float64).to_dense().requires_grad_()
    (torch_mod.cat([da, db * 2], dim) * torch_mod.tensor(weights)).sum().backward()
    pattern = coo(torch_mod).coalesce()
    assert_same_grad(a.grad, da.grad.sparse_mask(pattern))
    assert_same_grad(b.grad, db.grad.sparse_mask(pattern))


GRADCHECKED = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "to_dense": lambda L, s, d: s.to_dense() * 3,
    "softmax": lambda L, s, d: L.sparse.softmax(s, 1),
    "log_softmax": lambda L, s, d: L.sparse.log_softmax(s, 0),
    "sum": lambda L, s, d: L.sparse.sum(s, 1),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKED))
def test_as_sparse_gradcheck_agrees_with_torch(name, torch_mod):
    verdicts = []
    for lib in (ember, torch_mod):
        check = lib.sparse.as_sparse_gradcheck(lib.autograd.gradcheck)
        s = coo(lib, lib.float64, requires_grad=True)
        d = lib.tensor(D / 3, requires_grad=True)
        verdicts.append(check(lambda a, b: GRADCHECKED[name](lib, a, b), (s, d)))
    assert verdicts == [True, True]


def test_as_sparse_gradcheck_of_sparse_times_dense():
    """torch's gradcheck refuses the sparse gradient its s * d gives d ("grad is incorrect
    layout"); ember's compares it densified with finite differences."""
    check = ember.sparse.as_sparse_gradcheck(ember.autograd.gradcheck)
    s = coo(ember, ember.float64, requires_grad=True)
    d = ember.tensor(D / 3, requires_grad=True)
    assert check(lambda a, b: a * b.t(), (s, d)) is True


def test_as_sparse_gradcheck_catches_a_wrong_gradient():
    class WrongScale(ember.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            return v * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3   # (should be 2)

    check = ember.sparse.as_sparse_gradcheck(ember.autograd.gradcheck)
    s = coo(ember, ember.float64, requires_grad=True)
    wrong = lambda a: ember.sparse_coo_tensor(a._indices(), WrongScale.apply(a._values()),  # noqa
                                              a.shape)
    assert check(wrong, (s,), raise_exception=False) is False


def test_sparse_gradient_into_a_dense_view_against_torch_dense_ops(torch_mod):
    """torch's slicing backward cannot take the sparse gradient that s * d gives d (no
    as_strided for SparseCPU); ember hands such a VJP the dense gradient. The reference is
    the same function of torch's dense tensors."""
    s = coo(ember, ember.float64, requires_grad=True)
    d = ember.tensor(np.arange(15.0).reshape(5, 3), requires_grad=True)
    (s * d.t()[:, :4]).to_dense().pow(2).sum().backward()
    ts = coo(torch_mod, torch_mod.float64).to_dense().requires_grad_()
    td = torch_mod.tensor(np.arange(15.0).reshape(5, 3), requires_grad=True)
    (ts * td.t()[:, :4]).pow(2).sum().backward()
    np.testing.assert_allclose(_np(d.grad), _np(td.grad), rtol=1e-12)
    assert_same_grad(s.grad, ts.grad.sparse_mask(coo(torch_mod).coalesce()))
