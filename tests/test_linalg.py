"""Linear algebra beyond the op table: named results, PyTorch's error messages, batched and
broadcast cases, gauge-free comparisons (reconstructions) and gradients against torch."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close, check_grad


def _pair(torch, a, requires_grad=False):
    e = ember.tensor(a, requires_grad=requires_grad)
    t = torch.tensor(a, requires_grad=requires_grad)
    return e, t


def _raises_like(torch_fn, ember_fn):
    """Both raise; same message; ember's exception is an instance of torch's base type."""
    with pytest.raises(Exception) as expected:
        torch_fn()
    with pytest.raises(Exception) as actual:
        ember_fn()
    assert str(actual.value) == str(expected.value)
    base = RuntimeError if isinstance(expected.value, RuntimeError) else type(expected.value)
    assert isinstance(actual.value, base)


def _well(rng, shape):
    return rng.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


# ---------------------------------------------------------------------- namespace
def test_namespace_and_aliases():
    import ember.linalg as L
    assert ember.linalg is L and callable(L.norm) and callable(L.inv)
    for name in ("det", "logdet", "slogdet", "inverse", "pinverse", "cholesky", "qr", "svd",
                 "matrix_power", "einsum", "tensordot", "kron", "addmm", "chain_matmul"):
        assert callable(getattr(ember, name)), name
    a = ember.tensor(_well(np.random.default_rng(0), (3, 3)))
    for name in ("det", "inverse", "slogdet", "addmm", "outer", "cross", "matrix_power"):
        assert callable(getattr(a, name)), name


def test_named_tuples(torch_mod):
    rng = np.random.default_rng(0)
    a = _well(rng, (3, 3))
    e, t = _pair(torch_mod, a)
    cases = [(ember.linalg.slogdet, torch_mod.linalg.slogdet), (ember.slogdet, torch_mod.slogdet),
             (ember.linalg.qr, torch_mod.linalg.qr), (ember.linalg.svd, torch_mod.linalg.svd),
             (ember.svd, torch_mod.svd), (ember.linalg.eigh, torch_mod.linalg.eigh),
             (ember.linalg.eig, torch_mod.linalg.eig), (ember.linalg.inv_ex,
                                                         torch_mod.linalg.inv_ex),
             (ember.linalg.cholesky_ex, torch_mod.linalg.cholesky_ex)]
    for fe, ft in cases:
        re, rt = fe(e @ e.mT), ft(t @ t.mT)
        assert type(re).__name__ == type(rt).__name__
        assert len(re) == len(rt)
        assert getattr(re, re._fields[0]) is re[0]
        assert repr(re).startswith(f"ember.return_types.{type(rt).__name__}(\n")
    x, y = ember.linalg.slogdet(e)
    assert_close(y, torch_mod.linalg.slogdet(t).logabsdet.numpy())
    r = ember.linalg.lstsq(e, ember.tensor(a[:, :2]))
    assert r._fields == ("solution", "residuals", "rank", "singular_values")


# ---------------------------------------------------------------------- errors
def test_errors_match_torch(torch_mod):
    T, E = torch_mod, ember
    sing = [[1., 2.], [2., 4.]]
    batch = [[[1., 0.], [0., 1.]], [[1., 2.], [2., 4.]]]
    cases = [
        (lambda m: m.linalg.inv(m.tensor(sing))),
        (lambda m: m.linalg.inv(m.tensor(batch))),
        (lambda m: m.linalg.inv(m.ones(2, 3))),
        (lambda m: m.linalg.inv(m.ones(3))),
        (lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.int64))),
        (lambda m: m.linalg.inv(m.ones(2, 2, dtype=m.float16))),
        (lambda m: m.linalg.det(m.ones(2, 2, dtype=m.int32))),
        (lambda m: m.linalg.solve(m.tensor(batch), m.ones(2, 2))),
        (lambda m: m.linalg.solve(m.eye(3), m.ones(4, 2))),
        (lambda m: m.linalg.solve(m.eye(3), m.ones(3, 2, dtype=m.float64))),
        (lambda m: m.linalg.cholesky(m.tensor(sing))),
        (lambda m: m.linalg.cholesky(-m.eye(2).expand(2, 2, 2))),
        (lambda m: m.linalg.cholesky(m.ones(2, 2, dtype=m.int64))),
        (lambda m: m.linalg.slogdet(m.ones(2, 3))),
        (lambda m: m.linalg.eigh(m.ones(2, 3))),
        (lambda m: m.linalg.eigvals(m.ones(2, 3))),
        (lambda m: m.linalg.pinv(m.ones(2, 2, dtype=m.int64))),
        (lambda m: m.linalg.matrix_rank(m.ones(3))),
        (lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 2, dtype=m.float64))),
        (lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 2), driver="foo")),
        (lambda m: m.linalg.matrix_power(m.ones(2, 3), 2)),
        (lambda m: m.linalg.multi_dot([m.ones(2, 3)])),
        (lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(2, 3)])),
        (lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(3, 2, dtype=m.float64)])),
        (lambda m: m.linalg.cross(m.ones(2, 2), m.ones(2, 2))),
        (lambda m: m.linalg.vecdot(m.ones(2, 3), m.ones(2, 3, dtype=m.float64))),
        (lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64))),
        (lambda m: m.linalg.vector_norm(m.ones(0), float("inf"))),
        (lambda m: m.linalg.matrix_norm(m.ones(3))),
        (lambda m: m.outer(m.ones(2, 2), m.ones(2))),
        (lambda m: m.vdot(m.ones(2), m.ones(2, dtype=m.float64))),
        (lambda m: m.einsum("ij,jk->ik", m.ones(2, 2), m.ones(2, 2, dtype=m.float64))),
        (lambda m: m.mm(m.ones(2, 3), m.ones(2, 3))),
    ]
    for case in cases:
        _raises_like(lambda: case(T), lambda: case(E))


def test_linalg_error_class(torch_mod):
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


# ---------------------------------------------------------------------- values vs torch
def test_batched_broadcast_solve(torch_mod):
    rng = np.random.default_rng(1)
    a = _well(rng, (2, 1, 3, 3))
    for b_shape, left in [((3, 3, 2), True), ((2, 3, 3), True), ((3,), True),
                          ((2, 1, 3), True), ((4, 3), False), ((2, 1, 5, 3), False)]:
        b = rng.standard_normal(b_shape)
        ea, ta = _pair(torch_mod, a)
        eb, tb = _pair(torch_mod, b)
        expected = torch_mod.linalg.solve(ta, tb, left=left)
        actual = ember.linalg.solve(ea, eb, left=left)
        assert tuple(actual.shape) == tuple(expected.shape)
        assert_close(actual, expected.numpy(), atol=1e-10, rtol=1e-10)


def test_float32_stays_float32(torch_mod):
    a = _well(np.random.default_rng(2), (3, 3)).astype(np.float32)
    e, t = _pair(torch_mod, a)
    for name in ("inv", "det", "cholesky", "pinv", "matrix_exp", "svdvals", "eigvalsh"):
        x, y = (e @ e.mT, t @ t.mT) if name in ("cholesky", "eigvalsh") else (e, t)
        re, rt = getattr(ember.linalg, name)(x), getattr(torch_mod.linalg, name)(y)
        assert re.dtype is ember.float32, name
        assert_close(re, rt.numpy(), atol=1e-4, rtol=1e-4)


def test_decomposition_reconstructions(torch_mod):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 3))
    e = ember.tensor(a)
    for mode in ("reduced", "complete"):
        q, r = ember.linalg.qr(e, mode=mode)
        assert tuple(q.shape) == tuple(torch_mod.linalg.qr(torch_mod.tensor(a), mode=mode)
                                       .Q.shape)
        assert_close(q @ r, a, atol=1e-10)
        assert_close(q.mT @ q, np.broadcast_to(np.eye(q.shape[-1]), (2,) + (q.shape[-1],) * 2),
                     atol=1e-10)
    for full in (True, False):
        u, s, vh = ember.linalg.svd(e, full_matrices=full)
        tu, ts, tvh = torch_mod.linalg.svd(torch_mod.tensor(a), full_matrices=full)
        assert (tuple(u.shape), tuple(vh.shape)) == (tuple(tu.shape), tuple(tvh.shape))
        assert_close(s, ts.numpy(), atol=1e-10)
        k = 3
        recon = (u._data[..., :k] * s._data[..., None, :]) @ vh._data[..., :k, :]
        assert_close(recon, a, atol=1e-10)
    u, s, v = ember.svd(e, some=True)
    assert_close((u * s.unsqueeze(-2)) @ v.mT, a, atol=1e-10)
    assert tuple(ember.svd(e, some=False).U.shape) == (2, 4, 4)
    # eigh reads one triangle only: garbage in the other must not matter
    sym = _well(rng, (3, 3))
    sym = sym + sym.T
    for uplo, junk in (("L", np.triu(np.full((3, 3), 9.0), 1)),
                       ("U", np.tril(np.full((3, 3), 9.0), -1))):
        half = np.tril(sym) if uplo == "L" else np.triu(sym)
        w, v = ember.linalg.eigh(ember.tensor(half + junk), UPLO=uplo)
        assert_close(w, torch_mod.linalg.eigvalsh(torch_mod.tensor(sym)).numpy(), atol=1e-10)
        assert_close((v * w.unsqueeze(-2)) @ v.mT, sym, atol=1e-10)
    w, v = ember.linalg.eig(ember.tensor(a[0, :3]))
    assert w.dtype is ember.complex128 and v.dtype is ember.complex128
    assert_close(ember.tensor(a[0, :3].astype(complex)) @ v, v._data * w._data[None, :],
                 atol=1e-10)


def test_lstsq_fields_per_driver(torch_mod):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    ea, ta = _pair(torch_mod, a)
    eb, tb = _pair(torch_mod, b)
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        re = ember.linalg.lstsq(ea, eb, driver=driver)
        rt = torch_mod.linalg.lstsq(ta, tb, driver=driver)
        for x, y in zip(re, rt):
            assert tuple(x.shape) == tuple(y.shape), driver
            assert str(x.dtype).split(".")[1] == str(y.dtype).split(".")[1]
            assert_close(x, y.numpy(), atol=1e-8, rtol=1e-8)
    # a vector right-hand side (one fewer dim) comes back as a vector
    r = ember.linalg.lstsq(ea, ember.tensor(b[..., 0]), driver="gelsd")
    t = torch_mod.linalg.lstsq(ta, tb[..., 0], driver="gelsd")
    assert tuple(r.solution.shape) == tuple(t.solution.shape)
    assert tuple(r.residuals.shape) == tuple(t.residuals.shape)


def test_rank_pinv_tolerances(torch_mod):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 2))
    a = x @ np.swapaxes(x, -1, -2) + 1e-3 * np.eye(4)  # rank 2 plus a small ridge
    e, t = _pair(torch_mod, a)
    for kw in ({}, {"atol": 0.01}, {"rtol": 1e-2}, {"hermitian": True, "atol": 0.01}):
        assert_close(ember.linalg.matrix_rank(e, **kw), torch_mod.linalg.matrix_rank(t, **kw)
                     .numpy())
        assert_close(ember.linalg.pinv(e, **kw), torch_mod.linalg.pinv(t, **kw).numpy(),
                     atol=1e-6, rtol=1e-6)
    assert_close(ember.pinverse(e), torch_mod.pinverse(t).numpy(), atol=1e-6, rtol=1e-6)


def test_inv_ex_and_cholesky_ex_info(torch_mod):
    sing = np.array([[[1., 0.], [0., 1.]], [[1., 2.], [2., 4.]]])
    e, t = _pair(torch_mod, sing)
    assert_close(ember.linalg.inv_ex(e).info, torch_mod.linalg.inv_ex(t).info.numpy())
    assert_close(ember.linalg.cholesky_ex(e).info, torch_mod.linalg.cholesky_ex(t).info.numpy())
    assert ember.linalg.inv_ex(e).info.dtype is ember.int32


def test_logdet_negative_and_matrix_norm_ords(torch_mod):
    a = np.array([[0., 1.], [1., 0.]])  # det = -1
    assert np.isnan(ember.logdet(ember.tensor(a)).item())
    assert np.isnan(torch_mod.logdet(torch_mod.tensor(a)).item())
    b = np.random.default_rng(6).standard_normal((2, 3, 4))
    e, t = _pair(torch_mod, b)
    for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        for dim in ((-2, -1), (0, 2), (2, 1)):
            assert_close(ember.linalg.matrix_norm(e, ord, dim, keepdim=True),
                         torch_mod.linalg.matrix_norm(t, ord, dim, keepdim=True).numpy(),
                         atol=1e-10)


def test_cross_default_dim_warns(torch_mod):
    a = np.random.default_rng(7).standard_normal((4, 3))
    with pytest.warns(UserWarning, match="without specifying the dim"):
        r = ember.cross(ember.tensor(a), ember.tensor(a[::-1].copy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch_mod.cross(torch_mod.tensor(a), torch_mod.tensor(a[::-1].copy()))
    assert_close(r, expected.numpy())


# ---------------------------------------------------------------------- gradients vs torch
def _grad_pair(torch_mod, fn_e, fn_t, *arrays):
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch_mod.tensor(a, requires_grad=True) for a in arrays]
    out_e, out_t = fn_e(*es), fn_t(*ts)
    w = np.random.default_rng(8).standard_normal(tuple(out_t.shape))
    (out_e * ember.tensor(w)).sum().backward()
    (out_t * torch_mod.tensor(w)).sum().backward()
    for e, t in zip(es, ts):
        assert_close(e.grad, t.grad.numpy(), atol=1e-8, rtol=1e-7)


@pytest.mark.parametrize("eq,shapes", [("ii->i", [(3, 3)]), ("iij->ij", [(2, 2, 3)]),
                                       ("ij,jk->", [(2, 3), (3, 2)]),
                                       ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
                                       ("ij,ij->i", [(1, 3), (2, 3)]), ("ii", [(3, 3)])])
def test_einsum_grad_matches_torch(torch_mod, eq, shapes):
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal(s) for s in shapes]
    _grad_pair(torch_mod, lambda *x: ember.einsum(eq, *x), lambda *x: torch_mod.einsum(eq, *x),
               *arrays)


@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, float("inf"), -float("inf")])
def test_vector_norm_grad_with_zeros_and_ties(torch_mod, ord):
    a = np.array([[0.0, 1.5, -1.5], [0.0, 0.0, 0.0], [2.0, -0.5, 1.0]])
    if ord == 0.5:
        a = a + 3.0  # |x|^(p-1) is infinite at 0 for p < 1
    _grad_pair(torch_mod, lambda x: ember.linalg.vector_norm(x, ord, dim=1),
               lambda x: torch_mod.linalg.vector_norm(x, ord, dim=1), a)


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "cholesky", "matrix_exp", "pinv",
                                  "eigvalsh", "svdvals"])
def test_decomposition_grads_match_torch(torch_mod, name):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((2, 3, 3))
    a = x @ np.swapaxes(x, -1, -2) + np.diag([1.0, 3.0, 6.0])

    def call(m, t):
        out = getattr(m.linalg, name)(t)
        return out[1] if name == "slogdet" else out
    _grad_pair(torch_mod, lambda t: call(ember, t), lambda t: call(torch_mod, t), a)


def test_matrix_exp_gradgrad():
    a = np.random.default_rng(11).uniform(-0.5, 0.5, (2, 2))
    check_grad(lambda x: ember.linalg.matrix_exp(x), [a])
