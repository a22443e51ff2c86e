"""Sparse COO and CSR tensors (ember.sparse) against real PyTorch on the same inputs: values,
layouts, coalescing, repr text, errors, and the gradients PyTorch gives (sparse or dense)."""
import re
import warnings

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]          # (0, 2) appears twice: uncoalesced
V = [3.0, 4.0, 5.0, 1.0, -2.0]
D = np.arange(12.0).reshape(3, 4).T.copy() - 4   # (4, 3): the dense factor of s @ D


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _np(t):
    return t.detach().numpy()


def assert_same(e, t):
    """Same layout, shape, dtype and numbers; for sparse results the same coordinates too."""
    assert str(e.layout).split(".")[-1] == str(t.layout).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    if t.is_sparse:
        assert e.is_coalesced() == t.is_coalesced()
        np.testing.assert_array_equal(_np(e._indices()), _np(t._indices()))
        np.testing.assert_allclose(_np(e._values()), _np(t._values()), rtol=1e-6, atol=1e-6)
    elif str(t.layout).endswith("sparse_csr"):
        np.testing.assert_array_equal(_np(e.crow_indices()), _np(t.crow_indices()))
        np.testing.assert_array_equal(_np(e.col_indices()), _np(t.col_indices()))
        np.testing.assert_allclose(_np(e.values()), _np(t.values()), rtol=1e-6)
    else:
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-6, atol=1e-6)


def assert_same_grad(e, t):
    """Gradients: same layout; sparse ones compared coalesced (PyTorch's order of entries)."""
    assert (e is None) == (t is None)
    if t is None:
        return
    if t.is_sparse:
        assert e.is_sparse
        assert_same(e.coalesce(), t.coalesce())
    else:
        assert_same(e, t)


def repr_of(t):
    return repr(t).replace("ember", "torch")


def both(lib_fn, torch):
    return lib_fn(ember), lib_fn(torch)


def coo(lib, dtype=None, requires_grad=False, size=(3, 4)):
    return lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(V, dtype=dtype), size,
                                 requires_grad=requires_grad)


# ---------------------------------------------------------------------- construction, repr
CONSTRUCTIONS = {
    "uncoalesced": lambda L: coo(L),
    "inferred_size": lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.tensor(V)),
    "lists_int": lambda L: L.sparse_coo_tensor([[0, 1], [1, 2]], [1, 2]),
    "dtype_kw": lambda L: L.sparse_coo_tensor([[0, 1], [1, 2]], [1, 2], dtype=L.float64),
    "requires_grad": lambda L: coo(L, L.float64, True),
    "hybrid": lambda L: L.sparse_coo_tensor(L.tensor([[0, 2]]), L.tensor([[1., 2.], [3., 4.]]),
                                            (3, 2)),
    "empty": lambda L: L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.int64), L.zeros(0), (2, 3)),
    "coalesced": lambda L: coo(L).coalesce(),
    "to_sparse": lambda L: L.tensor([[0., 1.5, 0.], [2., 0., -3.]]).to_sparse(),
    "to_sparse_int": lambda L: L.tensor([[0, 1], [2, 0]], dtype=L.int32).to_sparse(),
    "to_sparse_1": lambda L: L.tensor([[0., 1.], [0., 0.], [2., 0.]]).to_sparse(1),
    "to_sparse_coo": lambda L: L.tensor([0., 0., 7.]).to_sparse_coo(),
    "bool": lambda L: L.tensor([True, False, True]).to_sparse(),
    "is_coalesced_kw": lambda L: L.sparse_coo_tensor([[0, 2]], [1., 2.], (3,),
                                                     is_coalesced=True),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTIONS))
def test_construction_matches_torch(name, torch_mod):
    e, t = both(CONSTRUCTIONS[name], torch_mod)
    assert_same(e, t)
    assert repr_of(e) == repr(t)
    assert isinstance(e, ember.Tensor) and e.is_sparse and not e.is_sparse_csr
    assert (e.sparse_dim(), e.dense_dim(), e._nnz(), e.requires_grad, e.dim(), e.numel()) == \
        (t.sparse_dim(), t.dense_dim(), t._nnz(), t.requires_grad, t.dim(), t.numel())
    assert_same(e.to_dense(), t.to_dense())
    assert_same(e.coalesce(), t.coalesce())


def test_indices_and_values(torch_mod):
    e, t = both(coo, torch_mod)
    for lib_t in (e, t):
        with pytest.raises(RuntimeError, match="^Cannot get indices on an uncoalesced tensor, "
                                               r"please call \.coalesce\(\) first$"):
            lib_t.indices()
    np.testing.assert_array_equal(_np(e._indices()), _np(t._indices()))
    np.testing.assert_array_equal(_np(e._values()), _np(t._values()))
    ec, tc = e.coalesce(), t.coalesce()
    np.testing.assert_array_equal(_np(ec.indices()), _np(tc.indices()))
    np.testing.assert_array_equal(_np(ec.values()), _np(tc.values()))
    assert ec.coalesce() is ec


CONSTRUCTION_ERRORS = {
    "nnz": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(3), (3,)),
    "out_of_range": lambda L: L.sparse_coo_tensor(L.tensor([[0, 5]]), L.ones(2), (3,),
                                                  check_invariants=True),
    "len_size": lambda L: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.ones(2), ()),
    "1d_indices": lambda L: L.sparse_coo_tensor(L.tensor([0, 1]), L.ones(2), (3,)),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTION_ERRORS))
def test_construction_errors_match_torch(name, torch_mod):
    with pytest.raises(Exception) as te:
        CONSTRUCTION_ERRORS[name](torch_mod)
    with pytest.raises(type(te.value)) as ee:
        CONSTRUCTION_ERRORS[name](ember)
    assert str(ee.value) == str(te.value).split("\n")[0]


def test_dense_tensors_answer_sparse_queries_as_torch(torch_mod):
    e, t = ember.ones(2, 3), torch_mod.ones(2, 3)
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    assert e.to_dense() is e and t.to_dense() is t
    assert e.layout is ember.strided and not e.is_sparse
    for name in ("indices", "values", "coalesce", "crow_indices", "col_indices", "_indices",
                 "ccol_indices", "row_indices"):
        with pytest.raises(RuntimeError) as te:
            getattr(t, name)()
        with pytest.raises(RuntimeError) as ee:
            getattr(e, name)()
        if name not in ("_indices", "row_indices"):
            assert str(ee.value) == str(te.value), name
    s = e.to_sparse()
    with pytest.raises(RuntimeError) as te:
        t.to_sparse().crow_indices()
    with pytest.raises(RuntimeError, match=f"^{te.value}$"):
        s.crow_indices()


def test_unsupported_dense_ops_raise_not_implemented(torch_mod):
    e, t = both(coo, torch_mod)
    for fn in (lambda x: x.exp(), lambda x: x.view(12), lambda x: x.mean(),
               lambda x: x.cumsum(0)):
        with pytest.raises(NotImplementedError):
            fn(t)
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            fn(e)
    with pytest.raises(RuntimeError, match="reshape is not implemented for sparse tensors"):
        e.reshape(12)
    with pytest.raises(TypeError, match=r"^can't convert Sparse layout tensor to numpy. Use "
                                        r"Tensor.to_dense\(\) first.$"):
        e.numpy()
    with pytest.raises(TypeError):
        t.numpy()


# ---------------------------------------------------------------------- arithmetic
def _dense(L):
    return L.tensor(np.arange(12.0).reshape(3, 4) - 5)


ARITHMETIC = {
    "sparse+sparse": lambda L: coo(L) + coo(L) * 2,
    "dense+sparse": lambda L: _dense(L) + coo(L),
    "add_alpha": lambda L: L.add(coo(L), coo(L), alpha=2),
    "dense.add_alpha": lambda L: L.add(_dense(L), coo(L), alpha=-3),
    "sparse*scalar": lambda L: coo(L) * 2.5,
    "scalar*sparse": lambda L: 2 * coo(L),
    "sparse*dense": lambda L: coo(L) * _dense(L),
    "dense*sparse": lambda L: _dense(L) * coo(L),
    "sparse*sparse": lambda L: coo(L).coalesce() * L.tensor(
        [[0., 1., 2., 0.], [0., 0., 7., 0.], [0., 0., 0., 0.]]).to_sparse(),
    "sparse-sparse": lambda L: coo(L) - coo(L).coalesce(),
    "dense-sparse": lambda L: _dense(L) - coo(L),
    "div": lambda L: coo(L) / 4,
    "neg": lambda L: -coo(L),
    "sparse_mask": lambda L: _dense(L).sparse_mask(coo(L).coalesce()),
    "transpose": lambda L: coo(L).t(),
}


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
def test_arithmetic_matches_torch(name, torch_mod):
    e, t = both(ARITHMETIC[name], torch_mod)
    assert_same(e, t)
    assert_same(e.to_dense(), t.to_dense())


def test_sparse_plus_dense_is_torchs_error(torch_mod):
    for lib in (ember, torch_mod):
        with pytest.raises(RuntimeError, match=r"^add\(sparse, dense\) is not supported. Use "
                                               r"add\(dense, sparse\) instead.$"):
            coo(lib) + _dense(lib)


# ---------------------------------------------------------------------- products
PRODUCTS = {
    "sparse.mm": lambda L: L.sparse.mm(coo(L), L.tensor(D, dtype=L.float32)),
    "mm": lambda L: L.mm(coo(L), L.tensor(D, dtype=L.float32)),
    "matmul": lambda L: L.matmul(coo(L), L.tensor(D, dtype=L.float32)),
    "operator": lambda L: coo(L) @ L.tensor(D, dtype=L.float32),
    "method": lambda L: coo(L).mm(L.tensor(D, dtype=L.float32)),
    "dense@sparse": lambda L: L.tensor(D, dtype=L.float32) @ coo(L),
    "mm(dense,sparse)": lambda L: L.mm(L.tensor(D, dtype=L.float32), coo(L)),
    "sparse@sparse": lambda L: L.sparse.mm(coo(L), coo(L).t()),
    "addmm": lambda L: L.sparse.addmm(L.ones(3, 3), coo(L), L.tensor(D, dtype=L.float32), beta=0.5,
                                      alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_match_torch(name, torch_mod):
    e, t = both(PRODUCTS[name], torch_mod)
    assert_same(e, t)


def test_product_errors_match_torch(torch_mod):
    cases = [lambda L: L.sparse.mm(coo(L), L.ones(3, 2)),
             lambda L: L.mm(coo(L), L.ones(3, 2)),
             lambda L: L.sparse.mm(coo(L), L.ones(4, 2, dtype=L.float64))]
    for fn in cases:
        with pytest.raises(RuntimeError) as te:
            fn(torch_mod)
        with pytest.raises(RuntimeError) as ee:
            fn(ember)
        assert str(ee.value) == str(te.value)


# ---------------------------------------------------------------------- sum, softmax
HYBRID_I = [[0, 2, 0, 1], [1, 1, 1, 0]]
HYBRID_V = np.arange(8.0).reshape(4, 2) - 3


def hybrid(lib, requires_grad=False):
    return lib.sparse_coo_tensor(lib.tensor(HYBRID_I), lib.tensor(HYBRID_V), (3, 2, 2),
                                 requires_grad=requires_grad)


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


def test_hybrid_softmax_over_a_dense_dim(torch_mod):
    e, t = both(lambda L: L.sparse.softmax(hybrid(L), 2), torch_mod)
    assert_same(e.coalesce(), t.coalesce())


# ---------------------------------------------------------------------- autograd
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


# ---------------------------------------------------------------------- CSR
def csr(lib):
    return lib.tensor([[0., 1.5, 0., 2.], [0., 0., 0., 0.], [3., 0., -1., 0.]]).to_sparse_csr()


CSR_CASES = {
    "to_sparse_csr": lambda L: csr(L),
    "coo_to_csr": lambda L: coo(L).to_sparse_csr(),
    "constructor": lambda L: L.sparse_csr_tensor(L.tensor([0, 2, 2, 3]), L.tensor([1, 3, 0]),
                                                 L.tensor([1., 2., 3.]), (3, 4)),
    "constructor_inferred": lambda L: L.sparse_csr_tensor([0, 1, 3], [2, 0, 1], [1., 2., 3.]),
    "to_dense": lambda L: csr(L).to_dense(),
    "to_sparse_coo": lambda L: csr(L).to_sparse(),
    "mm": lambda L: L.sparse.mm(csr(L), L.tensor(D, dtype=L.float32)),
    "matmul": lambda L: L.matmul(csr(L), L.tensor(D, dtype=L.float32)),
    "operator": lambda L: csr(L) @ L.tensor(D, dtype=L.float32),
}


@pytest.mark.parametrize("name", sorted(CSR_CASES))
def test_csr_matches_torch(name, torch_mod):
    e, t = both(CSR_CASES[name], torch_mod)
    assert_same(e, t)
    if t.layout == torch_mod.sparse_csr:
        assert repr_of(e) == repr(t)
        assert e.is_sparse_csr and not e.is_sparse and e._nnz() == t._nnz()


def test_csr_values_gradient_matches_torch(torch_mod):
    grads = []
    for lib in (ember, torch_mod):
        v = lib.tensor([1., 2., 3.], requires_grad=True)
        m = lib.sparse_csr_tensor(lib.tensor([0, 2, 2, 3]), lib.tensor([1, 3, 0]), v, (3, 4))
        ((m @ lib.tensor(D, dtype=lib.float32)) ** 2).sum().backward()
        grads.append(v.grad)
    assert_same(*grads)


@pytest.mark.parametrize("method", ["to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"])
def test_other_compressed_layouts_are_a_clear_error(method):
    with pytest.raises(NotImplementedError, match="ember does not support the sparse_"):
        getattr(ember.ones(2, 2), method)((1, 1)) if method != "to_sparse_csc" else \
            ember.ones(2, 2).to_sparse_csc()


# ---------------------------------------------------------------------- embedding
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


# ---------------------------------------------------------------------- more of torch.*
def test_spmm_hspmm_and_compressed_constructor_match_torch(torch_mod):
    for fn in (lambda L: L.spmm(coo(L), L.tensor(D, dtype=L.float32)),
               lambda L: L.hspmm(coo(L), L.tensor(D, dtype=L.float32)),
               lambda L: L.sparse_compressed_tensor(L.tensor([0, 1, 2]), L.tensor([1, 0]),
                                                    L.tensor([1., 2.]), (2, 2),
                                                    layout=L.sparse_csr)):
        e, t = both(fn, torch_mod)
        assert_same(e, t)
        assert repr_of(e) == repr(t)
    for name in ("sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor"):
        with pytest.raises(NotImplementedError, match="ember does not support the sparse_"):
            getattr(ember, name)([0, 1], [0], [1.])


def test_check_sparse_tensor_invariants_toggles_as_torch(torch_mod):
    for lib in (ember, torch_mod):
        cls = lib.sparse.check_sparse_tensor_invariants
        assert not cls.is_enabled()
        with cls():
            assert cls.is_enabled()
        assert not cls.is_enabled()


def test_copies_and_conversions_match_torch(torch_mod):
    import copy
    import pickle
    for fn in (lambda x: x.detach(), lambda x: x.clone(), lambda x: x.double(),
               lambda x: copy.deepcopy(x), lambda x: x.to(x.dtype)):
        e, t = fn(coo(ember)), fn(coo(torch_mod))
        assert_same(e, t)
    e = pickle.loads(pickle.dumps(coo(ember)))
    assert_same(e, coo(torch_mod))
    s = coo(ember)
    assert not hasattr(s._data, "__cuda_array_interface__")   # (a protocol probe: no error)
    assert (s.stride(), s.is_contiguous()) == (coo(torch_mod).stride(),
                                               coo(torch_mod).is_contiguous())


# ---------------------------------------------------------------------- pointwise, in place
@pytest.mark.parametrize("name,args", [("abs", ()), ("sqrt", ()), ("tanh", ()), ("relu", ()),
                                       ("sin", ()), ("sign", ()), ("pow", (2,)),
                                       ("isnan", ()), ("square", ()), ("expm1", ())])
def test_zero_preserving_pointwise_ops_match_torch(name, args, torch_mod):
    e, t = both(lambda L: getattr(coo(L), name)(*args), torch_mod)
    assert_same(e, t)
    assert repr_of(e) == repr(t)
    e, t = both(lambda L: getattr(coo(L, requires_grad=True), name)(*args), torch_mod)
    if t.grad_fn is not None:
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__


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


INPLACE = {
    "zero_": lambda L, s: s.zero_(),
    "mul_": lambda L, s: s.mul_(3),
    "div_": lambda L, s: s.div_(2),
    "neg_": lambda L, s: s.neg_(),
    "add_": lambda L, s: s.add_(coo(L), alpha=2),
    "sub_": lambda L, s: s.sub_(coo(L)),
    "copy_": lambda L, s: s.copy_(coo(L) * 5),
    "dense.add_": lambda L, s: L.ones(3, 4).add_(s),
    "dense+=": lambda L, s: L.ones(3, 4).__iadd__(s),
    "zeros_like": lambda L, s: L.zeros_like(s),
    "empty_like": lambda L, s: L.empty_like(s, dtype=L.float64),
    "new_zeros": lambda L, s: s.new_zeros((2, 5)),
    "new_empty": lambda L, s: s.new_empty((4,)),
    "data": lambda L, s: s.data,
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_in_place_ops_and_like_constructors_match_torch(name, torch_mod):
    results = []
    for lib in (ember, torch_mod):
        s = coo(lib)
        out = INPLACE[name](lib, s)
        results.append((out, s))
    (e, es), (t, ts) = results
    assert_same(e, t)
    assert_same(es, ts)
    if name.endswith("_") and not name.startswith("dense"):
        assert e is es


def test_in_place_and_fill_refusals_match_torch(torch_mod):
    for fn in (lambda L: coo(L, requires_grad=True).mul_(2),):
        with pytest.raises(RuntimeError) as te:
            fn(torch_mod)
        with pytest.raises(RuntimeError, match=f"^{te.value}$"):
            fn(ember)
    for fn in (lambda L: L.ones_like(coo(L)), lambda L: L.full_like(coo(L), 2.0),
               lambda L: coo(L).new_ones(2)):
        with pytest.raises(NotImplementedError):
            fn(torch_mod)
        with pytest.raises(NotImplementedError, match="fill_"):
            fn(ember)
    assert coo(ember).type() == coo(torch_mod).type()


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


def test_to_sparse_edge_cases_match_torch(torch_mod):
    for fn in (lambda L: L.tensor(5.).to_sparse(), lambda L: L.zeros(2, 0).to_sparse(),
               lambda L: L.zeros(3, 2).to_sparse()):
        e, t = both(fn, torch_mod)
        assert_same(e, t)
        assert repr_of(e) == repr(t)
        assert_same(e.to_dense(), t.to_dense())
    for fn in (lambda L: L.ones(2, 2).to_sparse(0), lambda L: L.ones(2, 2).to_sparse(3)):
        with pytest.raises(RuntimeError) as te:
            fn(torch_mod)
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(te.value))}$"):
            fn(ember)


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


SPARSE_EXTRAS = {
    "spdiags": lambda L: L.sparse.spdiags(L.tensor([[1., 2., 3.], [4., 5., 6.]]),
                                          L.tensor([0, 1]), (3, 3)),
    "spdiags_wide": lambda L: L.sparse.spdiags(L.tensor([[1., 2., 3.], [4., 5., 6.]]),
                                               L.tensor([-1, 1]), (3, 4)),
    "spdiags_one": lambda L: L.sparse.spdiags(L.tensor([[1., 2., 3.]]), L.tensor([1]), (3, 3)),
    "spdiags_csr": lambda L: L.sparse.spdiags(L.tensor([[1., 2., 3.]]), L.tensor([0]), (3, 3),
                                              layout=L.sparse_csr),
    "sampled_addmm": lambda L: L.sparse.sampled_addmm(csr(L), L.tensor(D.T.copy()).float(),
                                                      L.ones(4, 4), beta=0.5, alpha=2.0),
}


@pytest.mark.parametrize("name", sorted(SPARSE_EXTRAS))
def test_torch_sparse_extras_match_torch(name, torch_mod):
    e, t = both(SPARSE_EXTRAS[name], torch_mod)
    assert_same(e, t)
    assert repr_of(e) == repr(t)


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


def test_spsolve_is_not_implemented_as_in_torch_cpu(torch_mod):
    for lib in (ember, torch_mod):
        with pytest.raises(NotImplementedError, match="aten::_spsolve"):
            lib.sparse.spsolve(csr(lib), lib.ones(3))


def test_legacy_sparse_constructors_match_torch(torch_mod):
    for fn in (lambda L: L.sparse.FloatTensor(L.tensor(IDX), L.tensor(V), (3, 4)),
               lambda L: L.sparse.FloatTensor(2, 3), lambda L: L.sparse.LongTensor(2),
               lambda L: L.sparse.DoubleTensor(L.tensor(IDX), L.tensor(V), (3, 4))):
        e, t = both(fn, torch_mod)
        assert_same(e, t)
        assert repr_of(e) == repr(t)
    for lib in (ember, torch_mod):
        assert isinstance(lib.sparse.FloatTensor(2, 3), lib.sparse.FloatTensor)
        assert not isinstance(lib.ones(2), lib.sparse.FloatTensor)
        assert not isinstance(lib.sparse.FloatTensor(2, 3), lib.sparse.DoubleTensor)


def test_smm_and_sspaddmm_match_torch(torch_mod):
    def dense_factor(L):
        return L.tensor([[1., 0.], [0., 0.], [3., 0.], [2., -1.]])

    def addend(L):
        return L.tensor([[0., 5.], [7., 0.], [0., 0.]]).to_sparse()

    for fn in (lambda L: L.smm(coo(L), dense_factor(L)),
               lambda L: coo(L).smm(dense_factor(L)),
               lambda L: L.sspaddmm(addend(L), coo(L), dense_factor(L), beta=2., alpha=3.)):
        e, t = both(fn, torch_mod)
        assert_same(e, t)


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
