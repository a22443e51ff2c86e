"""Sparse compressed tensors (CSR, CSC, BSR, BSC; batched and hybrid) and the sparse
constructors' argument parsing, against real PyTorch on the same inputs: components, repr,
densified values, conversions, invariant checks and error types and messages."""
import numpy as np
import pytest

import ember
from sparse_checks import _np, both, repr_of

pytestmark = pytest.mark.filterwarnings("ignore:Sparse")


def _components(t):
    names = ("crow_indices", "col_indices") if str(t.layout).split(".")[-1] in (
        "sparse_csr", "sparse_bsr") else ("ccol_indices", "row_indices")
    return [_np(getattr(t, n)()) for n in names] + [_np(t.values())]


def assert_same_compressed(e, t):
    assert str(e.layout).split(".")[-1] == str(t.layout).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert (e.sparse_dim(), e.dense_dim(), e._nnz()) == (t.sparse_dim(), t.dense_dim(),
                                                         t._nnz())
    for a, b in zip(_components(e), _components(t)):
        np.testing.assert_array_equal(a, b)
    assert repr_of(e) == repr(t)
    np.testing.assert_array_equal(_np(e.to_dense()), _np(t.to_dense()))


CONSTRUCTIONS = {
    "csc": lambda L: L.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [1., 2., 3.], (3, 2)),
    "csc_inferred": lambda L: L.sparse_csc_tensor([0, 1, 3], [1, 0, 2], [1., 2., 3.]),
    "bsr": lambda L: L.sparse_bsr_tensor([0, 1, 2], [1, 0], L.arange(8.).reshape(2, 2, 2),
                                         (4, 4)),
    "bsr_inferred": lambda L: L.sparse_bsr_tensor([0, 1, 2], [1, 0],
                                                  L.arange(12.).reshape(2, 2, 3)),
    "bsc": lambda L: L.sparse_bsc_tensor([0, 2], [0, 1], L.arange(4.).reshape(2, 1, 2),
                                         (2, 2)),
    "batched_csr": lambda L: L.sparse_csr_tensor(L.tensor([[0, 1, 2], [0, 2, 2]]),
                                                 L.tensor([[0, 1], [0, 1]]),
                                                 L.tensor([[1., 2.], [3., 4.]]), (2, 2, 2)),
    "hybrid_csr": lambda L: L.sparse_csr_tensor([0, 1, 1], [1], [[1., 2.]], (2, 2, 2)),
    "compressed_csc": lambda L: L.sparse_compressed_tensor(
        [0, 1, 1], [0], [5], (1, 2), layout=L.sparse_csc, dtype=L.float64),
    "int32_indices": lambda L: L.sparse_csr_tensor(L.tensor([0, 1], dtype=L.int32),
                                                   L.tensor([2], dtype=L.int32), [1.],
                                                   (1, 3)),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTIONS))
def test_construction_matches_torch(name, torch_mod):
    e, t = both(CONSTRUCTIONS[name], torch_mod)
    assert_same_compressed(e, t)
    assert e.is_sparse_csr == t.is_sparse_csr and not e.is_sparse


DENSE = [[[1., 0., 0., 0.], [0., 0., 2., 3.]], [[0., 4., 0., 0.], [5., 0., 0., 6.]]]
CONVERSIONS = {
    "csc": lambda L: L.tensor(DENSE[0]).to_sparse_csc(),
    "bsr": lambda L: L.tensor(DENSE[0]).to_sparse_bsr((1, 2)),
    "bsr_int": lambda L: L.tensor(DENSE[1]).to_sparse_bsr(2),
    "bsc": lambda L: L.tensor(DENSE[1]).to_sparse_bsc((2, 1)),
    "batched_csr": lambda L: L.tensor([[[1., 0.], [0., 2.]], [[0., 3.], [4., 0.]]])
    .to_sparse_csr(),
    "hybrid_csr": lambda L: L.tensor(DENSE).permute(1, 2, 0).to_sparse_csr(1),
    "to_sparse_layout": lambda L: L.tensor(DENSE[0]).to_sparse(layout=L.sparse_bsc,
                                                               blocksize=(1, 1)),
    "csr_to_csc": lambda L: L.tensor(DENSE[1]).to_sparse_csr().to_sparse_csc(),
    "csc_to_bsr": lambda L: L.tensor(DENSE[1]).to_sparse_csc().to_sparse_bsr(2),
    "coo_to_bsc": lambda L: L.tensor(DENSE[1]).to_sparse().to_sparse_bsc(1),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversions_match_torch(name, torch_mod):
    e, t = both(CONVERSIONS[name], torch_mod)
    assert_same_compressed(e, t)


def test_compressed_to_coo_densifies_as_torch(torch_mod):
    e, t = both(lambda L: L.tensor(DENSE[1]).to_sparse_bsr(2).to_sparse_coo(), torch_mod)
    np.testing.assert_array_equal(_np(e.to_dense()), _np(t.to_dense()))
    assert e.layout is ember.sparse_coo


def _same_error(fn, torch_mod):
    with pytest.raises(Exception) as te:
        fn(torch_mod)
    with pytest.raises(type(te.value)) as ee:
        fn(ember)
    assert str(ee.value).replace("ember", "torch") == str(te.value).split("\n")[0] or \
        str(te.value).startswith(str(ee.value).replace("ember", "torch").split("\n")[0])


ERRORS = {
    "accessor": lambda L: L.sparse_csc_tensor([0, 1], [0], [1.]).crow_indices(),
    "column_accessor": lambda L: L.tensor(DENSE[0]).to_sparse_bsr(1).row_indices(),
    "indivisible": lambda L: L.ones(2, 2).to_sparse_bsr((3, 3)),
    "blocksize_len": lambda L: L.ones(2, 2).to_sparse_bsr((1, 1, 1)),
    "blocksize_sign": lambda L: L.ones(2, 2).to_sparse_bsr((0, 1)),
    "dense_dim": lambda L: L.ones(2, 2).to_sparse_csr(1),
    "batch_nnz": lambda L: L.tensor([[[1., 0.], [0., 0.]], [[1., 1.], [0., 0.]]])
    .to_sparse_csr(),
    "no_blocksize": lambda L: L.ones(2, 2).to_sparse(layout=L.sparse_bsc),
    "blocksize_for_csr": lambda L: L.ones(2, 2).to_sparse(layout=L.sparse_csr,
                                                          blocksize=(1, 1)),
    "layout_none": lambda L: L.sparse_compressed_tensor([0, 1], [0], [1.]),
    "layout_strided": lambda L: L.sparse_compressed_tensor([0, 1], [0], [1.],
                                                           layout=L.strided),
    "layout_mismatch": lambda L: L.sparse_csr_tensor([0, 1], [0], [1.], layout=L.sparse_csc),
    "0d_indices": lambda L: L.sparse_csr_tensor(0, 1, [3.]),
    "0d_values": lambda L: L.sparse_csr_tensor([0, 1], [0], 3.),
    "float_plain_indices": lambda L: L.sparse_csr_tensor([0, 1], [0.], [3.]),
    "int_grad": lambda L: L.sparse_csr_tensor([0, 1], [0], [1], requires_grad=True),
    "negative_size": lambda L: L.sparse_bsr_tensor([0, 1], [0], [[[1.]]], (-1, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name, torch_mod):
    _same_error(ERRORS[name], torch_mod)


INVARIANTS = {
    "first": ([1, 1, 2], [0, 1], [1., 2.], (2, 2)),
    "last": ([0, 1, 3], [0, 1], [1., 2.], (2, 2)),
    "plain_range": ([0, 1, 2], [0, 5], [1., 2.], (2, 2)),
    "unsorted": ([0, 2, 2], [1, 0], [1., 2.], (2, 2)),
    "duplicate": ([0, 2, 2], [1, 1], [1., 2.], (2, 2)),
    "nnz": ([0, 2, 2], [1, 1], [1., 2., 3.], (2, 2)),
    "dimensionality": ([0, 2, 2], [0, 1], [1., 2.], (2, 2, 2)),
    "rows": ([0, 1], [0], [1.], (2, 3)),
    "batch": ([[0, 2, 2]], [[0, 1]], [[1., 2.]], (3, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(INVARIANTS))
def test_invariant_messages_match_torch(name, torch_mod):
    def make(L):
        c, p, v, size = INVARIANTS[name]
        return L.sparse_csr_tensor(L.tensor(c), L.tensor(p), L.tensor(v), size,
                                   check_invariants=True)
    _same_error(make, torch_mod)


def test_unchecked_tensor_is_checked_on_first_use(torch_mod):
    """PyTorch builds a broken tensor without check_invariants (and reads garbage from it);
    ember builds it too, then refuses to densify it with the invariant's message."""
    c, p, v, size = INVARIANTS["unsorted"]
    t = torch_mod.sparse_csr_tensor(torch_mod.tensor(c), torch_mod.tensor(p),
                                    torch_mod.tensor(v), size)
    e = ember.sparse_csr_tensor(ember.tensor(c), ember.tensor(p), ember.tensor(v), size)
    assert repr_of(e) == repr(t)
    with pytest.raises(RuntimeError) as te:
        torch_mod.sparse_csr_tensor(torch_mod.tensor(c), torch_mod.tensor(p),
                                    torch_mod.tensor(v), size, check_invariants=True)
    with pytest.raises(RuntimeError, match="sorted and distinct") as ee:
        e.to_dense()
    assert str(ee.value) == str(te.value)


PARSER_ERRORS = {
    "no_arguments": lambda L: L.sparse_csr_tensor(),
    "one_argument": lambda L: L.sparse_bsc_tensor(L.ones(2)),
    "dtype_as_size": lambda L: L.sparse_csc_tensor([0, 1], [0], [1.], L.float32),
    "int_keyword": lambda L: L.sparse_compressed_tensor([0, 1], [0], [1.], (1, 1),
                                                        requires_grad=1),
    "coo_keyword": lambda L: L.sparse_coo_tensor([[0]], [1.], is_coalesced=1.5),
    "coo_size": lambda L: L.sparse_coo_tensor([[0]], [1.], L.float32),
}


@pytest.mark.parametrize("name", sorted(PARSER_ERRORS))
def test_parser_type_errors_match_torch(name, torch_mod):
    with pytest.raises(TypeError) as te:
        PARSER_ERRORS[name](torch_mod)
    with pytest.raises(TypeError) as ee:
        PARSER_ERRORS[name](ember)
    # (ember's type names print dtype where PyTorch prints torch.dtype)
    assert str(ee.value).replace("(dtype", "(torch.dtype") \
        .replace(", dtype)", ", torch.dtype)") == str(te.value)


def test_coo_size_overload_and_int64_indices_match_torch(torch_mod):
    e, t = both(lambda L: L.sparse_coo_tensor((2, 3), dtype=L.float64), torch_mod)
    assert (tuple(e.shape), e._nnz(), e.sparse_dim(), str(e.dtype)[-7:]) == \
        (tuple(t.shape), t._nnz(), t.sparse_dim(), str(t.dtype)[-7:])
    e, t = both(lambda L: L.sparse_coo_tensor([[0.9, 1.2]], [1., 2.], (3,)), torch_mod)
    np.testing.assert_array_equal(_np(e._indices()), _np(t._indices()))
    _same_error(lambda L: L.sparse_coo_tensor(L.bfloat16, L.ones(2, 3)), torch_mod)
