"""Op-table entries for ops/matmul.py and the linear-algebra ops (ops/linalg*.py).

Matrices are generated well conditioned (random + n*I, SPD where the op needs it); ops whose
outputs carry a sign gauge (qr, svd, eigh) are wrapped to fix it, so that values compare
across libraries and finite differences see a smooth function."""
import numpy as np

from . import OpInfo, Sample, make_array


def _np(x):
    return x.detach().numpy()


def well(rng, shape, dtype, shift=None):
    """A random (batch of) square matrices, diagonally dominant enough to invert stably."""
    a = make_array(rng, shape, dtype, -1.0, 1.0)
    n = shape[-1]
    return (a + np.eye(n, dtype=a.dtype) * (shift if shift is not None else n)).astype(dtype)


def spd(rng, shape, dtype):
    a = make_array(rng, shape, dtype, -1.0, 1.0)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def sym(m, a):
    """Symmetrised input: ops that read one triangle see every entry's perturbation."""
    return (a + a.mT) * 0.5


def _col_signs(m, x, rows=None):
    """Signs making each column's largest entry positive (a gauge fix, constant in x)."""
    a = _np(x)
    idx = np.abs(a).argmax(-2)[..., None, :]
    s = np.sign(np.take_along_axis(a, idx, -2))
    s[s == 0] = 1
    return m.tensor(s.astype(a.dtype))


def _qr(m, a, mode="reduced"):
    q, r = m.linalg.qr(a, mode=mode)
    d = np.sign(np.diagonal(_np(r), 0, -2, -1)).astype(_np(r).dtype)
    d[d == 0] = 1
    if mode == "r":
        return r * m.tensor(d[..., :, None])
    k = d.shape[-1]
    dq = np.concatenate([d, np.ones(d.shape[:-1] + (q.shape[-1] - k,), d.dtype)], -1)
    return q * m.tensor(dq[..., None, :]), r * m.tensor(dq[..., :r.shape[-2], None])


def _svd(m, a, full_matrices=False):
    # NOTE: with full_matrices the extra columns are not functions of A (only their span is),
    # so their gradient is not checked: PyTorch's backward ignores them as well.
    u, s, vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    sg = _col_signs(m, u)
    su = _np(sg)
    sv = su[..., :, :k].swapaxes(-1, -2)
    if vh.shape[-2] > k:
        sv = np.concatenate([sv, np.ones(sv.shape[:-2] + (vh.shape[-2] - k, 1), sv.dtype)],
                            -2)
    if full_matrices:
        return s, vh * m.tensor(sv) if vh.shape[-2] == k else u * sg
    return u * sg, s, vh * m.tensor(sv)


def _legacy_svd(m, a, some=True):
    u, s, v = m.svd(a, some=some)
    sg = _col_signs(m, u)
    k = s.shape[-1]
    sv = _np(sg)[..., :, :k]
    if v.shape[-1] > k:
        sv = np.concatenate([sv, np.ones(sv.shape[:-1] + (v.shape[-1] - k,), sv.dtype)], -1)
    if not some:
        return (u * sg, s) if v.shape[-1] > k else (s, v * m.tensor(sv))
    return u * sg, s, v * m.tensor(sv)


def _eigh(m, a, UPLO="L"):
    w, v = m.linalg.eigh(sym(m, a), UPLO=UPLO)
    return w, v * _col_signs(m, v)


def _samples(*specs):
    """specs: (maker, kwargs) where maker(rng, dtype) -> tuple of args."""
    def samples(rng, dtype):
        return [Sample(tuple(make(rng, dtype)), dict(kw)) for make, kw in specs]
    return samples


def _arr(*shapes, low=-2.0, high=2.0):
    return lambda rng, d: tuple(make_array(rng, s, d, low, high) for s in shapes)


def _sq(*shapes):
    return lambda rng, d: tuple(well(rng, s, d) for s in shapes)


def _sq_rhs(shape, rhs):
    """A well-conditioned square (batch) and a right-hand side of any shape."""
    return lambda rng, d: (well(rng, shape, d), make_array(rng, rhs, d))


def _spd(*shapes):
    return lambda rng, d: tuple(spd(rng, s, d) for s in shapes)


def _tri(shape, upper, rhs):
    def make(rng, d):
        a = well(rng, shape, d)
        a = np.triu(a) if upper else np.tril(a)
        return a, make_array(rng, rhs, d)
    return make


def _distinct(shape):
    """Matrices with well-separated singular values / eigenvalues (smooth gauges)."""
    def make(rng, d):
        a = make_array(rng, shape, d, -1.0, 1.0)
        k = min(shape[-2:])
        scale = np.zeros(shape[-2:])
        scale[np.arange(k), np.arange(k)] = np.arange(1, k + 1) * 2.0
        return ((a * 0.2 + scale)[..., :, :],)
    return make


def _distinct_sym(shape):
    def make(rng, d):
        a = make_array(rng, shape, d, -1.0, 1.0) * 0.2
        n = shape[-1]
        return ((a + np.diag(np.arange(1, n + 1) * 2.0)).astype(d),)
    return make


_MATMUL_PAIRS = [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 2)), ((3, 4), (4,)),
                 ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (3, 4, 2)), ((0, 4), (4, 2)),
                 ((3, 0), (0, 2))]
_EINSUMS = [("ij,jk->ik", (3, 4), (4, 2)), ("ii->i", (3, 3)), ("ii", (3, 3)),
            ("bij,bjk->bik", (2, 3, 4), (2, 4, 2)), ("...ij,...j->...i", (2, 3, 4), (4,)),
            ("i,j->ij", (3,), (2,)), ("ij->", (2, 3)), ("iij->j", (2, 2, 3)),
            ("ij,ij->ij", (1, 3), (2, 3)), ("ij,jk,kl->il", (2, 3), (3, 2), (2, 2)),
            ("ba", (2, 3))]
_VNORMS = [(2, {}), (1, {}), (3, {"dim": 1}), (0.5, {"dim": -1}), (float("inf"), {}),
           (-float("inf"), {"dim": 0}), (0, {}), (2, {"dim": (0, 1), "keepdim": True})]
_MNORMS = ["fro", "nuc", float("inf"), -float("inf"), 1, -1, 2, -2]

OPS = [
    OpInfo("matmul", lambda m, a, b: m.matmul(a, b), np.matmul,
           lambda rng, d: [Sample((make_array(rng, a, d), make_array(rng, b, d)))
                           for a, b in _MATMUL_PAIRS],
           atol=1e-4, rtol=1e-4),
    OpInfo("addmm", lambda m, c, a, b, **k: m.addmm(c, a, b, **k),
           lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b),
           _samples((_arr((3, 5), (3, 4), (4, 5)), {}), (_arr((5,), (3, 4), (4, 5)),
                                                          {"beta": 0.5, "alpha": 2.0}),
                    (_arr((1, 5), (3, 4), (4, 5)), {"beta": 0}), (_arr((), (3, 0), (0, 2)), {}),
                    (_arr((5,), (3, 4), (4, 5)), {}), (_arr((3, 1), (3, 4), (4, 5)), {})),
           inplace="addmm_", atol=1e-4, rtol=1e-4),
    OpInfo("addmv", lambda m, c, a, b, **k: m.addmv(c, a, b, **k),
           lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b),
           _samples((_arr((3,), (3, 4), (4,)), {}), (_arr((), (3, 4), (4,)), {"alpha": -1.5})),
           inplace="addmv_", atol=1e-4, rtol=1e-4),
    OpInfo("addr", lambda m, c, a, b, **k: m.addr(c, a, b, **k),
           lambda c, a, b, beta=1, alpha=1: beta * c + alpha * np.outer(a, b),
           _samples((_arr((3, 4), (3,), (4,)), {}), (_arr((4,), (3,), (4,)), {"beta": 2.0})),
           inplace="addr_", atol=1e-4, rtol=1e-4),
    OpInfo("baddbmm", lambda m, c, a, b, **k: m.baddbmm(c, a, b, **k),
           lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b),
           _samples((_arr((2, 3, 2), (2, 3, 4), (2, 4, 2)), {}),
                    (_arr((3, 2), (2, 3, 4), (2, 4, 2)), {"beta": 0.5, "alpha": 0.5})),
           inplace="baddbmm_", atol=1e-4, rtol=1e-4),
    OpInfo("addbmm", lambda m, c, a, b, **k: m.addbmm(c, a, b, **k),
           lambda c, a, b, beta=1, alpha=1: beta * c + alpha * (a @ b).sum(0),
           _samples((_arr((3, 2), (2, 3, 4), (2, 4, 2)), {}),
                    (_arr((2,), (2, 3, 4), (2, 4, 2)), {"alpha": 3.0})),
           inplace="addbmm_", atol=1e-4, rtol=1e-4),
    OpInfo("vdot", lambda m, a, b: m.vdot(a, b), np.vdot,
           _samples((_arr((4,), (4,)), {}), (_arr((0,), (0,)), {})),
           dtypes=("float32", "float64", "complex128"), grad_atol=1e-5),
    OpInfo("outer", lambda m, a, b: m.outer(a, b), np.outer,
           _samples((_arr((3,), (4,)), {}), (_arr((0,), (2,)), {}))),
    OpInfo("inner", lambda m, a, b: m.inner(a, b), np.inner,
           _samples((_arr((3,), (3,)), {}), (_arr((2, 3), (4, 3)), {}),
                    (_arr((), (2, 3)), {}), (_arr((2, 1, 3), (3,)), {}))),
    OpInfo("tensordot", lambda m, a, b, **k: m.tensordot(a, b, **k),
           lambda a, b, dims=2: np.tensordot(a, b, dims),
           _samples((_arr((2, 3, 4), (3, 4, 2)), {}), (_arr((2, 3), (3, 2)), {"dims": 1}),
                    (_arr((2, 3, 4), (4, 2, 3)), {"dims": ([1, 2], [2, 0])}),
                    (_arr((2,), (3,)), {"dims": 0})), atol=1e-4, rtol=1e-4),
    OpInfo("kron", lambda m, a, b: m.kron(a, b), np.kron,
           _samples((_arr((2, 3), (2, 2)), {}), (_arr((3,), (2, 2)), {}),
                    (_arr((2, 1, 2), (2,)), {}))),
    OpInfo("cross", lambda m, a, b, **k: m.cross(a, b, **k),
           lambda a, b, dim=None: np.cross(a, b, axis=dim),
           _samples((_arr((3,), (3,)), {"dim": 0}), (_arr((4, 3), (4, 3)), {"dim": 1}),
                    (_arr((3, 2), (3, 2)), {"dim": 0}))),
    OpInfo("linalg.cross", lambda m, a, b, **k: m.linalg.cross(a, b, **k),
           lambda a, b, dim=-1: np.cross(a, b, axis=dim),
           _samples((_arr((2, 3), (1, 3)), {}), (_arr((3, 4), (3, 1)), {"dim": 0}))),
    OpInfo("einsum", lambda m, eq, *ops: m.einsum(eq, *ops), np.einsum,
           lambda rng, d: [Sample((eq,) + tuple(make_array(rng, s, d) for s in shapes))
                           for eq, *shapes in _EINSUMS], atol=1e-4, rtol=1e-4),
    OpInfo("einsum (sublist form)",
           lambda m, a, b: m.einsum(a, [0, 1, 2], b, [0, 2, 3], [0, 1, 3]),
           lambda a, b: np.einsum("ijk,ikl->ijl", a, b),
           _samples((_arr((2, 3, 4), (2, 4, 5)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("einsum (sublist form, ellipsis, implicit output)",
           lambda m, a, b: m.einsum(a, [Ellipsis, 25, 26], b, [26, 51]),
           lambda a, b: np.einsum("...Za,az", a, b),
           _samples((_arr((2, 3, 4), (4, 2)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("chain_matmul", lambda m, *a: m.chain_matmul(*a),
           lambda *a: np.linalg.multi_dot(a), _samples((_arr((2, 3), (3, 4), (4, 2)), {}))),
    OpInfo("linalg.multi_dot", lambda m, *a: m.linalg.multi_dot(list(a)),
           lambda *a: np.linalg.multi_dot(a),
           _samples((_arr((3,), (3, 4), (4, 2)), {}), (_arr((2, 3), (3, 4), (4,)), {}),
                    (_arr((5, 2), (2, 6), (6, 3)), {}), (_arr((3,), (3,)), {}),
                    (_arr((2, 3), (3, 2), (2, 2), (2, 2)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.vecdot", lambda m, a, b, **k: m.linalg.vecdot(a, b, **k),
           lambda a, b, dim=-1: (a * b).sum(dim),
           _samples((_arr((2, 3), (2, 3)), {}), (_arr((3, 2), (3, 1)), {"dim": 0}))),
    # ------------------------------------------------------------------ decompositions
    OpInfo("linalg.inv", lambda m, a: m.linalg.inv(a), np.linalg.inv,
           _samples((_sq((3, 3)), {}), (_sq((2, 2, 2)), {}), (_sq((0, 0)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.det", lambda m, a: m.linalg.det(a), np.linalg.det,
           _samples((_sq((3, 3)), {}), (_sq((2, 2, 2)), {}), (_arr((1, 1)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.slogdet", lambda m, a: m.linalg.slogdet(a),
           lambda a: tuple(np.linalg.slogdet(a)),
           _samples((_sq((3, 3)), {}), (_arr((2, 2, 2)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("logdet", lambda m, a: m.logdet(a), lambda a: np.log(np.linalg.det(a)),
           _samples((_spd((3, 3)), {}), (_spd((2, 2, 2)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.solve", lambda m, a, b, **k: m.linalg.solve(a, b, **k), None,
           lambda rng, d: [Sample((well(rng, (3, 3), d), make_array(rng, (3, 2), d))),
                           Sample((well(rng, (3, 3), d), make_array(rng, (3,), d))),
                           Sample((well(rng, (2, 3, 3), d), make_array(rng, (2, 3), d))),
                           Sample((well(rng, (2, 1, 3, 3), d), make_array(rng, (3, 3, 1), d))),
                           Sample((well(rng, (3, 3), d), make_array(rng, (2, 3), d)),
                                  {"left": False})], atol=1e-4, rtol=1e-4),
    OpInfo("linalg.cholesky", lambda m, a, **k: m.linalg.cholesky(sym(m, a), **k),
           lambda a, upper=False: (np.swapaxes if upper else lambda x, *_: x)(
               np.linalg.cholesky((a + np.swapaxes(a, -1, -2)) / 2), -1, -2),
           _samples((_spd((3, 3)), {}), (_spd((2, 2, 2)), {"upper": True})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.qr", _qr, None,
           lambda rng, d: _samples((_sq((3, 3)), {}), (_arr((4, 2)), {}), (_arr((2, 4)), {}),
                                   (_sq((2, 3, 3)), {}),
                                   (_arr((2, 3)), {"mode": "complete"}))(rng, d) +
           # not differentiable (as in PyTorch): R alone, and complete Q of a tall matrix
           [Sample(_arr((2, 3))(rng, d), {"mode": "r"}, grad=()),
            Sample(_arr((3, 2))(rng, d), {"mode": "complete"}, grad=())],
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.svd", _svd, None,
           _samples((_distinct((3, 3)), {}), (_distinct((4, 2)), {}), (_distinct((2, 3)), {}),
                    (_distinct((3, 2)), {"full_matrices": True})), atol=1e-4, rtol=1e-4),
    OpInfo("svd", _legacy_svd, None,
           _samples((_distinct((4, 2)), {}), (_distinct((2, 3)), {"some": False})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.svdvals", lambda m, a: m.linalg.svdvals(a),
           lambda a: np.linalg.svd(a, compute_uv=False),
           _samples((_distinct((3, 3)), {}), (_distinct((4, 2)), {}), (_distinct((2, 3)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.eigh", _eigh, None,
           _samples((_distinct_sym((3, 3)), {}), (_distinct_sym((2, 3, 3)), {"UPLO": "U"})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.eigvalsh", lambda m, a, **k: m.linalg.eigvalsh(sym(m, a), **k),
           lambda a, UPLO="L": np.linalg.eigvalsh((a + np.swapaxes(a, -1, -2)) / 2),
           _samples((_distinct_sym((3, 3)), {}), (_distinct_sym((2, 3, 3)), {"UPLO": "U"})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.eigvals", lambda m, a: m.linalg.eigvals(a), np.linalg.eigvals,
           _samples((_distinct_sym((3, 3)), {})), grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.pinv", lambda m, a, **k: m.linalg.pinv(sym(m, a) if k.get("hermitian")
                                                          else a, **k), None,
           _samples((_arr((3, 2)), {}), (_arr((2, 3)), {}), (_sq((2, 3, 3)), {}),
                    (_spd((3, 3)), {"hermitian": True}), (_sq((3, 3)), {"rtol": 0.1})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution,
           lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
           _samples((_arr((5, 3), (5, 2)), {}), (_arr((3, 3), (3, 1)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.matrix_rank", lambda m, a, **k: m.linalg.matrix_rank(a, **k),
           lambda a, atol=None: np.linalg.matrix_rank(a, tol=atol),
           _samples((_arr((3, 4)), {}), (_arr((2, 3, 3)), {}), (_arr((3, 3)), {"atol": 0.5})),
           grad=False),
    OpInfo("linalg.matrix_power", lambda m, a, n: m.linalg.matrix_power(a, n),
           np.linalg.matrix_power,
           lambda rng, d: [Sample((well(rng, (3, 3), d), n)) for n in (0, 1, 3, -2)] +
           [Sample((well(rng, (2, 2, 2), d), 2))], atol=1e-4, rtol=1e-4),
    OpInfo("linalg.matrix_exp", lambda m, a: m.linalg.matrix_exp(a), None,
           _samples((_arr((3, 3), low=-1, high=1), {}), (_arr((2, 2, 2), low=-1, high=1), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("cholesky_solve", lambda m, b, a, **k: m.cholesky_solve(b, m.linalg.cholesky(
        sym(m, a)), **k), lambda b, a: np.linalg.solve((a + a.T) / 2, b),
        lambda rng, d: [Sample((make_array(rng, (3, 2), d), spd(rng, (3, 3), d)))],
        atol=1e-4, rtol=1e-4),
    OpInfo("linalg.solve_triangular", lambda m, a, b, **k: m.linalg.solve_triangular(a, b, **k),
           None, _samples((_tri((3, 3), True, (3, 2)), {"upper": True}),
                          (_tri((2, 3, 3), False, (3, 2)), {"upper": False}),
                          (_tri((3, 3), False, (2, 3)), {"upper": False, "left": False}),
                          (_tri((3, 3), True, (3, 1)), {"upper": True, "unitriangular": True})),
           atol=1e-4, rtol=1e-4),
    OpInfo("triangular_solve", lambda m, b, a, **k: m.triangular_solve(b, a, **k), None,
           lambda rng, d: [Sample(tuple(reversed(_tri((3, 3), True, (3, 2))(rng, d)))),
                           Sample(tuple(reversed(_tri((3, 3), False, (3, 2))(rng, d))),
                                  {"upper": False, "transpose": True})],
           atol=1e-4, rtol=1e-4),
    # ------------------------------------------------------------------ LU, LDL, Householder
    OpInfo("linalg.lu_factor", lambda m, a: m.linalg.lu_factor(a), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 3, 3)), {}), (_arr((4, 2)), {}),
                    (_arr((2, 4)), {}), (_arr((0, 0)), {})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 3, 4)), {})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.lu", lambda m, a: m.linalg.lu(a), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 3, 3)), {}), (_arr((4, 3)), {}),
                    (_arr((2, 4)), {})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("lu_unpack", lambda m, a, **k: m.lu_unpack(*m.linalg.lu_factor(a), **k), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 4, 3)), {}), (_arr((3, 4)), {}),
                    (_arr((3, 3)), {"unpack_pivots": False})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.lu_solve",
           lambda m, a, b, **k: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, **k), None,
           _samples((_sq_rhs((3, 3), (3, 2)), {}), (_sq_rhs((2, 3, 3), (3, 1)), {}),
                    (_sq_rhs((3, 3), (2, 3, 2)), {"adjoint": True}),
                    (_sq_rhs((3, 3), (2, 3)), {"left": False}),
                    (_sq_rhs((3, 3), (2, 3)), {"left": False, "adjoint": True})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("lu_solve", lambda m, b, a: m.lu_solve(b, *m.linalg.lu_factor(a)), None,
           _samples((lambda rng, d: (make_array(rng, (3, 2), d), well(rng, (3, 3), d)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_factor", lambda m, a, **k: m.linalg.ldl_factor(a, **k), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 4, 4)), {}), (_arr((3, 3)), {"hermitian": True})),
           dtypes=("float32", "float64", "complex128"), grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_factor_ex", lambda m, a: m.linalg.ldl_factor_ex(a), None,
           _samples((_arr((3, 3)), {}), (_arr((2, 4, 4)), {})),
           dtypes=("float32", "float64"), grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_solve",
           lambda m, a, b, **k: m.linalg.ldl_solve(*m.linalg.ldl_factor(a, **k), b, **k), None,
           _samples((_arr((3, 3), (3, 2)), {}), (_arr((2, 4, 4), (4, 1)), {}),
                    (_arr((3, 3), (3, 2)), {"hermitian": True})),
           dtypes=("float32", "float64", "complex128"), grad=False, atol=1e-3, rtol=1e-3),
    OpInfo("geqrf", lambda m, a: m.geqrf(a), None,
           _samples((_arr((3, 3)), {}), (_arr((4, 2)), {}), (_arr((2, 4)), {}),
                    (_arr((2, 3, 2)), {})),
           dtypes=("float32", "float64", "complex128"), grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.householder_product", lambda m, a, t: m.linalg.householder_product(a, t),
           None, _samples((_arr((4, 3), (3,)), {}), (_arr((4, 3), (2,)), {}),
                          (_arr((2, 3, 3), (2, 3)), {}), (_arr((3, 2), (0,)), {})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("orgqr", lambda m, a, t: m.orgqr(a, t), None,
           _samples((_arr((4, 3), (3,)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("ormqr", lambda m, a, t, c, **k: m.ormqr(a, t, c, **k), None,
           _samples((_arr((4, 3), (3,), (4, 2)), {}),
                    (_arr((4, 3), (3,), (2, 4)), {"left": False, "transpose": True}),
                    (_arr((3, 4), (3,), (3, 2)), {"transpose": True}),
                    (_arr((2, 3, 2), (2, 2), (2, 3, 2)), {})),
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    # ------------------------------------------------------------------ composites
    OpInfo("linalg.cond", lambda m, a, *p: m.linalg.cond(a, *p), None,
           lambda rng, d: [Sample((_distinct((3, 3))(rng, d)[0].astype(d),) + p)
                           for p in ((), (2,), (-2,), ("nuc",))] +
           [Sample((well(rng, (3, 3), d), p)) for p in ("fro", 1, -1, float("inf"),
                                                        -float("inf"))] +
           [Sample((_distinct((3, 2))(rng, d)[0].astype(d),)),
            Sample((well(rng, (2, 3, 3), d), "fro"))],
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.tensorinv", lambda m, a, **k: m.linalg.tensorinv(a, **k),
           lambda a, ind=2: np.linalg.tensorinv(a, ind),
           lambda rng, d: [Sample((well(rng, (6, 6), d).reshape(2, 3, 6),)),
                           Sample((well(rng, (6, 6), d).reshape(6, 2, 3),), {"ind": 1})],
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.tensorsolve", lambda m, a, b, **k: m.linalg.tensorsolve(a, b, **k),
           lambda a, b, dims=None: np.linalg.tensorsolve(a, b, dims),
           lambda rng, d: [Sample((well(rng, (6, 6), d).reshape(2, 3, 6),
                                   make_array(rng, (2, 3), d))),
                           Sample((well(rng, (6, 6), d).reshape(6, 2, 3),
                                   make_array(rng, (6,), d))),
                           Sample((well(rng, (6, 6), d).reshape(2, 3, 6).transpose(2, 0, 1),
                                   make_array(rng, (2, 3), d)), {"dims": (0,)})],
           dtypes=("float32", "float64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.vander", lambda m, x, **k: m.linalg.vander(x, **k),
           lambda x, N=None: x[..., None] ** np.arange(x.shape[-1] if N is None else N),
           _samples((_arr((3,)), {}), (_arr((2, 3)), {"N": 4}), (_arr((4,)), {"N": 2})),
           dtypes=("float32", "float64", "int64", "complex128"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.diagonal", lambda m, a, **k: m.linalg.diagonal(a, **k),
           lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2),
           _samples((_arr((3, 4)), {}), (_arr((2, 3, 4)), {"offset": 1}),
                    (_arr((2, 3, 4)), {"offset": -1, "dim1": 0, "dim2": 2})),
           dtypes=("int64", "float32", "float64")),
    # ------------------------------------------------------------------ norms
    OpInfo("linalg.vector_norm", lambda m, a, ord, **k: m.linalg.vector_norm(a, ord, **k), None,
           lambda rng, d: [Sample((make_array(rng, (3, 4), d), o), k) for o, k in _VNORMS] +
           [Sample((np.asarray(make_array(rng, (), d)), 2.0)),
            Sample((make_array(rng, (0, 2), d), 2.0))],
           dtypes=("float32", "float64", "complex64", "float16"), atol=1e-4, rtol=1e-4),
    OpInfo("linalg.matrix_norm", lambda m, a, ord, **k: m.linalg.matrix_norm(a, ord, **k), None,
           lambda rng, d: [Sample((_distinct((3, 4))(rng, d)[0].astype(d), o))
                           for o in _MNORMS] +
           [Sample((_distinct((2, 3, 3))(rng, d)[0].astype(d), "fro"), {"keepdim": True}),
            Sample((_distinct((3, 3, 2))(rng, d)[0].astype(d), 1), {"dim": (0, 2)}),
            Sample((_distinct((3, 2, 3))(rng, d)[0].astype(d), "nuc"),
                   {"dim": (2, 0), "keepdim": True})],
           atol=1e-4, rtol=1e-4),
    OpInfo("linalg.norm", lambda m, a, *o, **k: m.linalg.norm(a, *o, **k), None,
           lambda rng, d: [Sample((make_array(rng, (3, 4), d),)),
                           Sample((make_array(rng, (3, 4), d), "nuc")),
                           Sample((make_array(rng, (4,), d), 3)),
                           Sample((make_array(rng, (2, 3, 4), d),), {"dim": (0, 2)}),
                           Sample((make_array(rng, (2, 3), d), 1), {"dim": 1})],
           atol=1e-4, rtol=1e-4),
    OpInfo("mm", lambda m, a, b: m.mm(a, b), np.matmul,
           _samples((_arr((3, 4), (4, 5)), {}), (_arr((0, 4), (4, 2)), {}),
                    (_arr((3, 0), (0, 2)), {})), atol=1e-4, rtol=1e-4),
    OpInfo("bmm", lambda m, a, b: m.bmm(a, b), np.matmul,
           _samples((_arr((2, 3, 4), (2, 4, 5)), {}), (_arr((0, 3, 4), (0, 4, 2)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("mv", lambda m, a, b: m.mv(a, b), np.matmul,
           _samples((_arr((3, 4), (4,)), {}), (_arr((0, 4), (4,)), {})),
           atol=1e-4, rtol=1e-4),
    OpInfo("dot", lambda m, a, b: m.dot(a, b), np.dot,
           _samples((_arr((4,), (4,)), {}), (_arr((0,), (0,)), {})),
           dtypes=("float32", "float64", "int64"), atol=1e-4, rtol=1e-4),
]
