"""Sparse COO and CSR tensors (ember.sparse) against real PyTorch on the same inputs: values,
layouts, coalescing, repr text, errors, products, pointwise and in-place ops. Gradients are in
test_sparse_autograd.py, optimizers in test_sparse_optim.py."""
import re

import numpy as np
import pytest

import ember
from sparse_checks import (D, IDX, V, _dense, _np, assert_same, assert_same_grad,  # noqa: F401
                           both, coo, csr, hybrid, quiet_sparse_warnings, repr_of)

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


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
    assert (ec.coalesce() is ec) == (tc.coalesce() is tc)


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


def test_hybrid_softmax_over_a_dense_dim(torch_mod):
    e, t = both(lambda L: L.sparse.softmax(hybrid(L), 2), torch_mod)
    assert_same(e.coalesce(), t.coalesce())


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


def test_spmm_hspmm_and_compressed_constructor_match_torch(torch_mod):
    for fn in (lambda L: L.spmm(coo(L), L.tensor(D, dtype=L.float32)),
               lambda L: L.hspmm(coo(L), L.tensor(D, dtype=L.float32)),
               lambda L: L.sparse_compressed_tensor(L.tensor([0, 1, 2]), L.tensor([1, 0]),
                                                    L.tensor([1., 2.]), (2, 2),
                                                    layout=L.sparse_csr)):
        e, t = both(fn, torch_mod)
        assert_same(e, t)
        assert repr_of(e) == repr(t)


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
        assert (e is es) == (t is ts)


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


DTYPE_CASES = {
    "sum": lambda L, s: L.sparse.sum(s),
    "sum0": lambda L, s: L.sparse.sum(s, 0).to_dense(),
    "sum01": lambda L, s: L.sparse.sum(s, (0, 1)),
    "mm": lambda L, s: L.sparse.mm(s, L.ones(4, 2, dtype=s.dtype)),
    "dense": lambda L, s: s.to_dense(),
    "coalesce": lambda L, s: s.coalesce(),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("name", sorted(DTYPE_CASES))
def test_dtypes_match_torch(name, dtype, torch_mod):
    outs = []
    for lib in (ember, torch_mod):
        s = coo(lib).to(getattr(lib, dtype))
        try:
            outs.append(DTYPE_CASES[name](lib, s))
        except NotImplementedError:
            outs.append(None)
    if outs[1] is None:   # (torch has no kernel for this dtype; ember may compute it)
        return
    assert_same(outs[0].float() if outs[0].dtype is ember.bfloat16 else outs[0],
                outs[1].float() if outs[1].dtype is torch_mod.bfloat16 else outs[1])


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_integers_is_torchs_error(fn, torch_mod):
    with pytest.raises(NotImplementedError) as theirs:
        getattr(torch_mod.sparse, fn)(coo(torch_mod).long(), 1)
    with pytest.raises(NotImplementedError, match=f"^{re.escape(str(theirs.value))}$"):
        getattr(ember.sparse, fn)(coo(ember).long(), 1)


SSPADDMM_ERRORS = {
    "smm_dense": lambda L: L.smm(L.ones(2, 2), L.ones(2, 2)),
    "sspaddmm_dense_mat1": lambda L: L.sspaddmm(coo(L), L.ones(3, 4), L.ones(4, 2)),
    "sspaddmm_sparse_mat2": lambda L: L.sspaddmm(coo(L), coo(L), coo(L).t()),
    "smm_shape": lambda L: L.smm(coo(L), L.ones(3, 2)),
    "smm_1d": lambda L: L.smm(coo(L), L.ones(4)),
    "hspmm_sparse_mat2": lambda L: L.hspmm(coo(L), coo(L).t()),
}


@pytest.mark.parametrize("name", sorted(SSPADDMM_ERRORS))
def test_sparse_product_argument_errors_match_torch(name, torch_mod):
    with pytest.raises(Exception) as theirs:
        SSPADDMM_ERRORS[name](torch_mod)
    with pytest.raises(type(theirs.value)) as ours:
        SSPADDMM_ERRORS[name](ember)
    assert str(ours.value) == str(theirs.value)


SHAPE_OPS = {
    "unsqueeze0": lambda L, s: s.unsqueeze(0),
    "unsqueeze_last": lambda L, s: s.unsqueeze(-1),
    "permute": lambda L, s: s.permute(1, 0),
    "index_select0": lambda L, s: s.index_select(0, L.tensor([2, 0, 0])),
    "index_select1": lambda L, s: s.index_select(1, L.tensor([2, 0])),
    "int_index": lambda L, s: s[0],
    "negative_index": lambda L, s: s[-1],
    "two_indices": lambda L, s: s[0, 2],
    "column": lambda L, s: s[:, 1],
    "select1": lambda L, s: s.select(1, 2),
}


@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_indexing_and_shape_ops_match_torch(name, coalesced, torch_mod):
    e, t = both(lambda L: SHAPE_OPS[name](L, coo(L).coalesce() if coalesced else coo(L)),
                torch_mod)
    assert_same(e, t)


def test_indexing_errors_match_torch(torch_mod):
    for fn in (lambda L: coo(L)[5], lambda L: coo(L).select(1, -7)):
        with pytest.raises(IndexError) as theirs:
            fn(torch_mod)
        with pytest.raises(IndexError, match=f"^{re.escape(str(theirs.value))}$"):
            fn(ember)


@pytest.mark.parametrize("fn", ["cat0", "cat1", "stack", "stack_last", "mixed"])
def test_cat_and_stack_match_torch(fn, torch_mod):
    def run(L):
        s, c = coo(L), coo(L).coalesce()
        return {"cat0": lambda: L.cat([s, c]), "cat1": lambda: L.cat([s, c], 1),
                "stack": lambda: L.stack([s, c]), "stack_last": lambda: L.stack([s, c], -1),
                "mixed": lambda: L.cat([s, L.ones(3, 4)])}[fn]()
    try:
        theirs = run(torch_mod)
    except RuntimeError as exc:
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(exc))}$"):
            run(ember)
        return
    assert_same(run(ember), theirs)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isreal", "isfinite", "rand_like", "randn_like",
                                  "fill", "bernoulli"])
def test_shape_only_functions_refuse_or_stay_sparse_as_torch(name, torch_mod):
    """Functions whose dense kernels read only the shape must not turn a sparse tensor into a
    dense one: the same layout, or the same kind of refusal, as torch."""
    def run(L):
        s = coo(L)
        args = {"fill": (1.0,), "bernoulli": (0.5,)}.get(name, ())
        return getattr(L, name)(s, *args)
    try:
        theirs = run(torch_mod)
    except (RuntimeError, NotImplementedError) as exc:
        with pytest.raises(type(exc)):
            run(ember)
        return
    assert_same(run(ember), theirs)


def test_sparse_only_methods_on_a_dense_tensor_raise_torchs_error(torch_mod):
    for call in (lambda t: t.ones(2, 2).smm(t.ones(2, 2)),
                 lambda t: t.ones(2, 2).sspaddmm(t.ones(2, 2), t.ones(2, 2))):
        with pytest.raises(RuntimeError) as ours:
            call(ember)
        with pytest.raises(RuntimeError) as theirs:
            call(torch_mod)
        assert str(ours.value) == str(theirs.value)
