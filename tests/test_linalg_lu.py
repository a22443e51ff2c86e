"""The LU / LDL / Householder family and the linalg composites, beyond the op table: named
result types, pivots and info, check_errors, out=, the deprecated and removed torch-level forms,
errors (type and message, against torch's on the same inputs), complex gradients against
torch's, and which outputs PyTorch does not differentiate."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close, torch_to_numpy

RNG = np.random.default_rng(7)
SQ = RNG.standard_normal((3, 3))
BATCH = RNG.standard_normal((2, 3, 3))
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
SYM = np.array([[4.0, 1, 2], [1, -3, 0.5], [2, 0.5, -1]])
TALL = RNG.standard_normal((4, 3))


def _t(m, a, dtype=None):
    t = m.tensor(a)
    return t if dtype is None else t.to(getattr(m, dtype))


def _same(e, t):
    """ember result `e` equals torch result `t` (tensors, tuples of them, or named tuples)."""
    if isinstance(t, tuple):
        assert type(e).__name__ == type(t).__name__
        assert len(e) == len(t)
        for x, y in zip(e, t):
            _same(x, y)
        return
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
    assert tuple(e.shape) == tuple(t.shape)
    # float32 results went through float32 LAPACK in one library and maybe not the other
    tol = 1e-4 if "float32" in str(t.dtype) or "complex64" in str(t.dtype) else 1e-6
    assert_close(e, torch_to_numpy(t), atol=tol, rtol=tol)


# ---------------------------------------------------------------------- results and types
RESULTS = [
    ("lu_factor", lambda m: m.linalg.lu_factor(_t(m, SQ))),
    ("lu_factor batch", lambda m: m.linalg.lu_factor(_t(m, BATCH))),
    ("lu_factor tall", lambda m: m.linalg.lu_factor(_t(m, TALL))),
    ("lu_factor empty batch", lambda m: m.linalg.lu_factor(m.zeros(2, 3, 0))),
    ("lu_factor_ex singular", lambda m: m.linalg.lu_factor_ex(_t(m, SINGULAR))),
    ("lu_factor_ex batch", lambda m: m.linalg.lu_factor_ex(
        _t(m, np.stack([np.eye(2), SINGULAR])))),
    ("lu", lambda m: m.linalg.lu(_t(m, TALL))),
    ("lu empty", lambda m: m.linalg.lu(m.zeros(2, 0, 3))),
    ("lu singular", lambda m: m.linalg.lu(_t(m, SINGULAR))),
    ("lu_unpack", lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, TALL.T.copy())))),
    ("lu_unpack no data", lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQ)),
                                                unpack_data=False)),
    ("lu_unpack no pivots", lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQ)),
                                                  unpack_pivots=False)),
    ("lu_unpack neither", lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQ)), False, False)),
    ("lu_solve broadcast", lambda m: m.linalg.lu_solve(
        *m.linalg.lu_factor(_t(m, SQ)), m.ones(4, 3, 2, dtype=m.float64))),
    ("torch.lu", lambda m: m.lu(_t(m, SQ))),
    ("torch.lu get_infos", lambda m: m.lu(_t(m, SINGULAR), get_infos=True)),
    ("Tensor.lu", lambda m: _t(m, SQ).lu(get_infos=True)),
    ("Tensor.lu_solve", lambda m: _t(m, SQ[:, :2].copy()).lu_solve(
        *m.linalg.lu_factor(_t(m, SQ)))),
    ("ldl_factor", lambda m: m.linalg.ldl_factor(_t(m, SYM))),
    ("ldl_factor 2x2 pivot", lambda m: m.linalg.ldl_factor(_t(m, np.array([[0.0, 1], [1, 0]])))),
    ("ldl_factor_ex singular", lambda m: m.linalg.ldl_factor_ex(m.zeros(2, 2))),
    ("ldl_factor hermitian", lambda m: m.linalg.ldl_factor(
        _t(m, np.array([[4.0, 1 + 1j], [1 - 1j, -3]])), hermitian=True)),
    ("ldl_factor empty", lambda m: m.linalg.ldl_factor(m.zeros(2, 0, 0))),
    ("ldl_solve long pivots", lambda m: m.linalg.ldl_solve(
        m.linalg.ldl_factor(_t(m, SYM)).LD, m.linalg.ldl_factor(_t(m, SYM)).pivots.long(),
        m.ones(2, 3, 1, dtype=m.float64))),
    ("geqrf", lambda m: m.geqrf(_t(m, TALL))),
    ("Tensor.geqrf", lambda m: _t(m, TALL.T.copy()).geqrf()),
    ("geqrf empty", lambda m: m.geqrf(m.zeros(0, 3))),
    ("Tensor.orgqr", lambda m: _t(m, TALL).orgqr(m.geqrf(_t(m, TALL)).tau)),
    ("Tensor.ormqr", lambda m: _t(m, TALL).ormqr(m.geqrf(_t(m, TALL)).tau,
                                                 m.eye(4, dtype=m.float64), False, True)),
    ("householder_product empty", lambda m: m.linalg.householder_product(
        m.zeros(4, 0), m.zeros(0))),
    ("cond singular fro", lambda m: m.linalg.cond(_t(m, np.stack([SQ[:2, :2], SINGULAR])),
                                                  "fro")),
    ("cond empty", lambda m: m.linalg.cond(m.zeros(2, 0, 0), 1)),
    ("cond complex", lambda m: m.linalg.cond(_t(m, SQ + 1j * SQ.T))),
    ("cond zeros", lambda m: m.linalg.cond(m.zeros(2, 2))),
    ("tensorinv", lambda m: m.linalg.tensorinv(_t(m, np.eye(24).reshape(4, 6, 8, 3)))),
    ("tensorinv empty", lambda m: m.linalg.tensorinv(m.zeros(0, 2, 0, 2))),
    ("lu_factor out", lambda m: m.linalg.lu_factor(
        _t(m, SQ), out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)))),
    ("lu_factor_ex out", lambda m: m.linalg.lu_factor_ex(
        _t(m, SQ), out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32),
                        m.empty(0, dtype=m.int32)))),
    ("lu out", lambda m: m.linalg.lu(_t(m, SQ), out=tuple(m.empty(0, dtype=m.float64)
                                                          for _ in range(3)))),
    ("lu_unpack out", lambda m: m.lu_unpack(*m.linalg.lu_factor(_t(m, SQ)), out=tuple(
        m.empty(0, dtype=m.float64) for _ in range(3)))),
    ("ldl_factor out", lambda m: m.linalg.ldl_factor(
        _t(m, SYM), out=(m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)))),
    ("geqrf out casts", lambda m: m.geqrf(_t(m, SQ).float(), out=(m.empty(0, dtype=m.float64),
                                                                   m.empty(0)))),
    ("cond out casts", lambda m: m.linalg.cond(_t(m, SQ), out=m.empty(0))),
    ("vander int", lambda m: m.linalg.vander(m.tensor([[1, 2], [3, 4]], dtype=m.int32), N=4)),
    ("vander uint8", lambda m: m.linalg.vander(m.tensor([1, 2], dtype=m.uint8))),
    ("vander empty", lambda m: m.linalg.vander(m.zeros(0), N=2)),
    ("vander complex", lambda m: m.linalg.vander(m.tensor([1 + 2j, 3j]))),
]


@pytest.mark.parametrize("name,call", RESULTS, ids=[r[0] for r in RESULTS])
def test_results_match_torch(name, call, torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = call(torch_mod)
        actual = call(ember)
    _same(actual, expected)


def test_named_tuple_fields_and_repr():
    A = ember.tensor(SQ)
    assert ember.linalg.lu_factor(A)._fields == ("LU", "pivots")
    assert ember.linalg.lu_factor_ex(A)._fields == ("LU", "pivots", "info")
    assert ember.linalg.lu(A)._fields == ("P", "L", "U")
    assert ember.lu_unpack(*ember.linalg.lu_factor(A))._fields == ("P", "L", "U")
    assert ember.linalg.ldl_factor(ember.tensor(SYM))._fields == ("LD", "pivots")
    assert ember.linalg.ldl_factor_ex(ember.tensor(SYM))._fields == ("LD", "pivots", "info")
    assert ember.geqrf(A)._fields == ("a", "tau")
    r = ember.linalg.lu_factor(ember.tensor([[1.0, 2], [3, 4]]))
    assert repr(r) == ("ember.return_types.linalg_lu_factor(\nLU=tensor([[3.0000, 4.0000],\n"
                       "        [0.3333, 0.6667]]),\npivots=tensor([2, 2], dtype=ember.int32))")
    assert isinstance(r, ember.return_types.linalg_lu_factor)
    # Tensor.lu returns a plain tuple, torch.lu(get_infos=True) a named one
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert type(A.lu(get_infos=True)) is tuple
        assert type(ember.lu(A)) is tuple
        assert type(ember.lu(A, get_infos=True)).__name__ == "_lu_with_info"


def test_pivots_reconstruct_the_matrix():
    """An independent check of the pivots: P L U == A with P built by hand from LAPACK's
    sequential 1-based swaps."""
    A = RNG.standard_normal((2, 5, 4))
    LU, piv = ember.linalg.lu_factor(ember.tensor(A))
    for b in range(2):
        lu, p = LU[b].numpy(), piv[b].numpy()
        perm = list(range(5))
        for i, j in enumerate(p):
            perm[i], perm[j - 1] = perm[j - 1], perm[i]
        L = np.tril(lu, -1)[:, :4] + np.eye(5, 4)
        U = np.triu(lu)[:4]
        np.testing.assert_allclose((L @ U), A[b][perm], atol=1e-12)


# ---------------------------------------------------------------------- errors
def _expect_same_error(call, torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            call(torch_mod)
        with pytest.raises(Exception) as actual:
            call(ember)
    t_type = type(expected.value).__name__.lstrip("_")       # torch's _LinAlgError
    assert type(actual.value).__name__ == t_type
    # torch's ldl messages carry an internal-assert preamble naming its source file
    t_msg = str(expected.value).split("please report a bug to PyTorch. ")[-1]
    assert str(actual.value) == t_msg.replace("torch.", "ember.") or \
        str(actual.value) == t_msg


LU_A = np.array([[1.0, 2], [3, 4]], np.float32)
PIV = np.array([2, 2], np.int32)
B2 = np.array([[1.0], [2]], np.float32)

ERRORS = [
    lambda m: m.linalg.lu_factor(_t(m, SINGULAR)),
    lambda m: m.linalg.lu_factor_ex(_t(m, SINGULAR), check_errors=True),
    lambda m: m.linalg.lu_factor_ex(_t(m, np.stack([np.eye(2), SINGULAR])), check_errors=True),
    lambda m: m.linalg.lu_factor(m.tensor([[1, 2], [3, 4]])),
    lambda m: m.linalg.lu_factor(m.tensor([1.0, 2])),
    lambda m: m.linalg.lu_factor_ex(m.tensor([1.0, 2])),
    lambda m: m.linalg.lu(m.tensor([1.0, 2])),
    lambda m: m.linalg.lu(m.eye(2).half()),
    lambda m: m.linalg.lu_factor(m.eye(2), pivot=False),
    lambda m: m.linalg.lu(m.eye(2), pivot=False),
    lambda m: m.linalg.lu_factor([1]),
    lambda m: m.linalg.lu([1]),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV), m.tensor([1.0, 2])),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV), m.ones(3, 1)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV), m.ones(1, 3), left=False),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV), m.ones(2, 1, dtype=m.float64)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV).long(), _t(m, B2)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), _t(m, PIV)[:1], _t(m, B2)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A).long(), _t(m, PIV), _t(m, B2).long()),
    lambda m: m.linalg.lu_solve(m.ones(2, 3), _t(m, PIV), _t(m, B2)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), m.tensor([5, 2], dtype=m.int32), _t(m, B2)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A), m.tensor([0, 2], dtype=m.int32), _t(m, B2)),
    lambda m: m.linalg.lu_solve(_t(m, LU_A).expand(3, 2, 2), _t(m, PIV), m.ones(2, 1)),
    lambda m: m.lu_unpack(_t(m, LU_A), _t(m, PIV).long()),
    lambda m: m.lu_unpack(_t(m, LU_A), m.tensor([3, 1], dtype=m.int32)),
    lambda m: m.lu_unpack(_t(m, LU_A), m.tensor([0, 1], dtype=m.int32)),
    lambda m: m.linalg.ldl_factor(_t(m, np.zeros((2, 2)))),
    lambda m: m.linalg.ldl_factor(_t(m, np.stack([np.eye(2), np.ones((2, 2))]))),
    lambda m: m.linalg.ldl_factor_ex(m.zeros(2, 2), check_errors=True),
    lambda m: m.linalg.ldl_factor(m.ones(2, 3)),
    lambda m: m.linalg.ldl_factor(m.ones(3)),
    lambda m: m.linalg.ldl_factor(m.ones(2, 2).long()),
    lambda m: m.linalg.ldl_factor(m.ones(2, 2).half()),
    lambda m: m.linalg.ldl_factor([1]),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(2, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3, 1).double()),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(2, dtype=m.int32), m.ones(3, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3), m.ones(3, 1)),
    lambda m: m.linalg.ldl_solve(m.ones(3), m.ones(3, dtype=m.int32), m.ones(3, 1)),
    lambda m: m.linalg.ldl_solve(m.ones(2, 3), m.ones(2, dtype=m.int32), m.ones(2, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(2).long(), m.ones(2, dtype=m.int32), m.ones(2, 1)),
    lambda m: m.linalg.ldl_solve(m.eye(2).half(), m.ones(2, dtype=m.int32), m.ones(2, 1).half()),
    lambda m: m.geqrf(m.ones(2)),
    lambda m: m.geqrf(m.ones(2, 2).long()),
    lambda m: m.geqrf(m.ones(2, 2).half()),
    lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(4)),
    lambda m: m.linalg.householder_product(m.ones(3, 4), m.ones(3)),
    lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(3).double()),
    lambda m: m.linalg.householder_product(m.ones(2, 4, 3), m.ones(3)),
    lambda m: m.linalg.householder_product(m.ones(2, 4, 3), m.ones(3, 3)),
    lambda m: m.linalg.householder_product(m.ones(4), m.ones(3)),
    lambda m: m.linalg.householder_product(m.ones(4, 3), m.ones(3, 1)),
    lambda m: m.linalg.householder_product(m.ones(4, 3).long(), m.ones(3).long()),
    lambda m: m.linalg.householder_product(m.ones(4, 3).half(), m.ones(3).half()),
    lambda m: m.orgqr(m.ones(4, 3), m.ones(3).double()),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(2), m.ones(4, 2)),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(3), m.ones(2, 4)),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(3), m.ones(2, 3), left=False),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(2), m.ones(3, 4), left=False),
    lambda m: m.ormqr(m.ones(2, 4, 3), m.ones(3), m.ones(2, 4, 2)),
    lambda m: m.ormqr(m.ones(2, 4, 3), m.ones(3, 3), m.ones(2, 4, 2)),
    lambda m: m.ormqr(m.ones(2, 4, 3), m.ones(2, 3), m.ones(4, 2)),
    lambda m: m.ormqr(m.ones(2, 4, 3), m.ones(2, 3), m.ones(3, 4, 2)),
    lambda m: m.ormqr(m.ones(4), m.ones(3), m.ones(4, 2)),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(3), m.ones(4)),
    lambda m: m.ormqr(m.ones(4, 3).long(), m.ones(3).long(), m.ones(4, 2).long()),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(3).double(), m.ones(4, 2)),
    lambda m: m.ormqr(m.ones(4, 3), m.ones(3), m.ones(4, 2).half()),
    lambda m: m.linalg.cond(m.ones(2, 2), 3),
    lambda m: m.linalg.cond(m.ones(2, 2), "bad"),
    lambda m: m.linalg.cond(m.ones(3)),
    lambda m: m.linalg.cond(m.ones(3), "bad"),
    lambda m: m.linalg.cond(m.ones(2, 3), "fro"),
    lambda m: m.linalg.cond(m.ones(2, 3), float("inf")),
    lambda m: m.linalg.cond(m.ones(2, 2).long()),
    lambda m: m.linalg.cond(m.ones(2, 2).long(), "fro"),
    lambda m: m.linalg.cond(m.eye(2).half()),
    lambda m: m.linalg.cond(m.eye(2).half(), 1),
    lambda m: m.linalg.cond([1]),
    lambda m: m.linalg.tensorinv(m.eye(24).reshape(4, 6, 8, 3), ind=1),
    lambda m: m.linalg.tensorinv(m.eye(4).reshape(2, 2, 2, 2), ind=0),
    lambda m: m.linalg.tensorinv(m.eye(4).reshape(2, 2, 2, 2), 2.0),
    lambda m: m.linalg.tensorinv(m.zeros(2, 2, 2, 2)),
    lambda m: m.linalg.tensorinv(m.eye(4).reshape(2, 2, 2, 2).long()),
    lambda m: m.linalg.tensorinv(m.zeros(0, 0)),
    lambda m: m.linalg.tensorinv([1]),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(6)),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(3, 2), dims=(0,)),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6), m.ones(2, 3).double()),
    lambda m: m.linalg.tensorsolve(m.ones(2, 3, 6).long(), m.ones(2, 3).long()),
    lambda m: m.linalg.tensorsolve(m.zeros(2, 3, 6), m.ones(2, 3)),
    lambda m: m.linalg.tensorsolve(m.ones(6, 6), m.ones(6), dims=[5]),
    lambda m: m.linalg.vander(m.tensor([1.0, 2]), 2),
    lambda m: m.linalg.vander(m.tensor([1.0, 2]), N=1.5),
    lambda m: m.linalg.vander(m.tensor([1.0, 2]), N=1),
    lambda m: m.linalg.vander(m.tensor(1.0)),
    lambda m: m.linalg.vander(m.tensor([True, False])),
    lambda m: m.linalg.vander(m.tensor([1.0, 2]).half()),
    lambda m: m.linalg.vander(m.tensor([1.0, 2]).bfloat16()),
    lambda m: m.linalg.vander([1, 2]),
    # out= of the LAPACK-backed functions: the dtypes must be the results' exactly
    lambda m: m.linalg.lu_factor(m.eye(2), out=(m.empty(0, dtype=m.float64),
                                                m.empty(0, dtype=m.int32))),
    lambda m: m.linalg.lu_factor(m.eye(2), out=(m.empty(0), m.empty(0, dtype=m.int64))),
    lambda m: m.linalg.lu_factor(m.eye(2), out=(m.empty(0, dtype=m.complex64),
                                                m.empty(0, dtype=m.int32))),
    lambda m: m.linalg.lu(m.eye(2), out=(m.empty(0, dtype=m.float64), m.empty(0), m.empty(0))),
    lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.eye(2)), m.ones(2, 1),
                                out=m.empty(0, dtype=m.float64)),
    lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(m.eye(2)), m.ones(2, 1),
                                 out=m.empty(0, dtype=m.float64)),
    lambda m: m.ormqr(m.eye(2), m.ones(2), m.eye(2), out=m.empty(0, dtype=m.float64)),
    lambda m: m.linalg.lu_factor(m.eye(2).requires_grad_(), out=(m.empty(0),
                                                                 m.empty(0, dtype=m.int32))),
    lambda m: m.lu_solve([1], *m.linalg.lu_factor(m.eye(2))),
]


@pytest.mark.parametrize("call", ERRORS, ids=[f"error{i}" for i in range(len(ERRORS))])
def test_errors_match_torch(call, torch_mod):
    _expect_same_error(call, torch_mod)


@pytest.mark.parametrize("name", ["eig", "lstsq", "solve", "symeig"])
def test_removed_functions_raise_torchs_message(name, torch_mod):
    args = (torch_mod.eye(2),) if name in ("lstsq", "solve") else ()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch_mod.eye(2), name)(*args)
    e_args = (ember.eye(2),) if args else ()
    for fn in (getattr(ember.eye(2), name), lambda *a: getattr(ember, name)(ember.eye(2), *a)):
        with pytest.raises(RuntimeError) as actual:
            fn(*e_args)
        assert str(actual.value) == str(expected.value)
    if args:   # the method's missing argument is named as PyTorch's
        with pytest.raises(TypeError, match=rf"Tensor\.{name}\(\) missing 1 required"):
            getattr(ember.eye(2), name)()


# ---------------------------------------------------------------------- out=, warnings
def test_out_arguments_are_written_and_returned():
    A = ember.tensor(SQ)
    LU, piv, info = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32), \
        ember.empty(0, dtype=ember.int32)
    r = ember.linalg.lu_factor_ex(A, out=(LU, piv, info))
    assert r.LU is LU and r.pivots is piv and r.info is info
    expected = ember.linalg.lu_factor_ex(A)
    assert_close(LU, expected.LU.numpy())
    assert_close(piv, expected.pivots.numpy())
    X = ember.empty(0, dtype=ember.float64)
    B = ember.ones(3, 2, dtype=ember.float64)
    assert ember.linalg.lu_solve(LU, piv, B, out=X) is X
    np.testing.assert_allclose(SQ @ X.numpy(), np.ones((3, 2)), atol=1e-12)
    a, tau = ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.float64)
    assert ember.geqrf(A, out=(a, tau)).a is a
    c = ember.empty(0, dtype=ember.float64)
    assert ember.linalg.cond(A, "fro", out=c) is c
    np.testing.assert_allclose(c.item(), np.linalg.cond(SQ, "fro"), rtol=1e-12)


def test_deprecated_lu_and_lu_solve_warn_once(torch_mod):
    import ember.ops.linalg_lu as lu_module
    lu_module._warned.clear()
    A = ember.tensor(SQ)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        LU, piv = ember.lu(A)
        A.lu()
        ember.lu_solve(ember.ones(3, 1, dtype=ember.float64), LU, piv)
        ember.lu_solve(ember.ones(3, 1, dtype=ember.float64), LU, piv)
    texts = [str(w.message) for w in seen]
    assert len(texts) == 2
    assert all(w.filename == __file__ for w in seen)   # attributed to the caller
    with warnings.catch_warnings(record=True) as t_seen:
        warnings.simplefilter("always")
        tLU, tpiv = torch_mod.lu(torch_mod.tensor(SQ))
        torch_mod.lu_solve(torch_mod.ones(3, 1, dtype=torch_mod.float64), tLU, tpiv)
    # torch appends where in its C++ sources the warning came from
    t_texts = [str(w.message).split(" (Triggered internally")[0] for w in t_seen]
    assert texts == t_texts or len(t_texts) < 2   # torch's own once-flag may be spent


# ---------------------------------------------------------------------- autograd
def _complex(shape, shift=0.0):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    return a + shift * np.eye(shape[-1]) if shift else a


GRAD_CASES = [
    ("lu_factor", lambda m, a: m.linalg.lu_factor(a).LU.abs().sum(), [(3, 3)]),
    ("lu wide", lambda m, a: (m.linalg.lu(a).L.abs().sum() + m.linalg.lu(a).U.abs().sum()),
     [(2, 4)]),
    ("lu tall", lambda m, a: (m.linalg.lu(a).L.abs().sum() + m.linalg.lu(a).U.abs().sum()),
     [(4, 2)]),
    ("lu_unpack", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)).U.abs().sum(), [(2, 3, 3)]),
    ("lu_solve adjoint right", lambda m, a, b: m.linalg.lu_solve(
        *m.linalg.lu_factor(a), b, left=False, adjoint=True).abs().sum(), [(3, 3), (2, 3)]),
    ("householder_product", lambda m, a, t: m.linalg.householder_product(a, t).abs().sum(),
     [(4, 3), (2,)]),
    ("ormqr", lambda m, a, t, c: m.ormqr(a, t, c, transpose=True).abs().sum(),
     [(4, 3), (3,), (4, 2)]),
    ("cond", lambda m, a: m.linalg.cond(a), [(3, 3)]),
    # (cond(A, 'fro') of a complex A: torch 2.13's own backward fails, an in-place error)
    ("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b).abs().sum(), [(2, 2, 4), (2, 2)]),
    ("vander", lambda m, x: m.linalg.vander(x, N=3).abs().sum(), [(2, 3)]),
]


@pytest.mark.parametrize("name,loss,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_complex_gradients_match_torch(name, loss, shapes, torch_mod):
    arrays = [_complex(s, 3.0 if len(s) >= 2 and s[-1] == s[-2] else 0.0) for s in shapes]
    e_in = [ember.tensor(a, requires_grad=True) for a in arrays]
    t_in = [torch_mod.tensor(a, requires_grad=True) for a in arrays]
    e_grads = ember.autograd.grad(loss(ember, *e_in), e_in)
    t_grads = torch_mod.autograd.grad(loss(torch_mod, *t_in), t_in)
    for g, tg in zip(e_grads, t_grads):
        assert_close(g, torch_to_numpy(tg), atol=1e-9, rtol=1e-9)


def test_grad_fn_names_and_non_differentiable_outputs(torch_mod):
    A = ember.tensor(SQ, requires_grad=True)
    tA = torch_mod.tensor(SQ, requires_grad=True)
    pairs = [(ember.linalg.lu_factor(A).LU, torch_mod.linalg.lu_factor(tA).LU),
             (ember.linalg.lu(A).L, torch_mod.linalg.lu(tA).L),
             (ember.lu_unpack(*ember.linalg.lu_factor(A)).U,
              torch_mod.lu_unpack(*torch_mod.linalg.lu_factor(tA)).U),
             (ember.linalg.householder_product(A, A[0]), torch_mod.linalg.householder_product(
                 tA, tA[0])),
             (ember.ormqr(A, A[0], A), torch_mod.ormqr(tA, tA[0], tA)),
             (ember.geqrf(A).a, torch_mod.geqrf(tA).a)]
    for e, t in pairs:
        assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
    # P is not differentiable; pivots and info are integers
    assert not ember.linalg.lu(A).P.requires_grad
    assert not ember.linalg.lu_factor_ex(A).info.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not "):
        ember.geqrf(A).a.sum().backward()
    S = ember.tensor(SYM, requires_grad=True)
    LD = ember.linalg.ldl_factor(S).LD
    assert LD.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                           "implemented"):
        LD.sum().backward()
    LD, piv = ember.linalg.ldl_factor(ember.tensor(SYM))
    X = ember.linalg.ldl_solve(LD, piv, ember.ones(3, 1, dtype=ember.float64,
                                                    requires_grad=True))
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not "):
        X.sum().backward()


# ---------------------------------------------------------------------- devices
def test_results_stay_on_the_inputs_device(cuda_standin):
    """The host LAPACK round trip hands results back on the input's device (the NumPy-backed
    'cuda' stand-in here), with the values the CPU path gives."""
    A = ember.tensor(SQ)
    for device in ("cuda", "cuda:1"):
        Ad = A.to(device)
        LU, piv = ember.linalg.lu_factor(Ad)
        assert LU.device == Ad.device and piv.device == Ad.device
        assert_close(LU.cpu(), ember.linalg.lu_factor(A).LU.numpy())
        X = ember.linalg.lu_solve(LU, piv, ember.ones(3, 1, dtype=ember.float64, device=device))
        assert X.device == Ad.device
        np.testing.assert_allclose(SQ @ X.cpu().numpy(), np.ones((3, 1)), atol=1e-12)
        assert ember.linalg.lu(Ad).P.device == Ad.device
        assert ember.geqrf(Ad).tau.device == Ad.device
        assert ember.linalg.ldl_factor(ember.tensor(SYM, device=device)).LD.device == Ad.device
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            ember.linalg.lu_solve(LU, piv, ember.ones(3, 1, dtype=ember.float64))
