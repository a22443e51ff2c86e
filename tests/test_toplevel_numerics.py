"""torch's top-level numerical functions: gradient, histogramdd, segment_reduce, the legacy
norms, in-place function forms, poisson/binomial, svd_lowrank/pca_lowrank and lobpcg.
Compared with real torch on the same inputs (and seeds)."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close
from toplevel_checks import pair, same_error, same_grads, same_values


# ---------------------------------------------------------------------- numeric extras
GRADIENT_CASES = [
    {}, {"spacing": 2.0, "dim": 1}, {"spacing": [2.0, 3.0]}, {"edge_order": 2, "dim": 1},
    {"dim": (0, 1)}, {"edge_order": 2}, {"spacing": "coords", "dim": 1},
    {"spacing": "coords", "dim": 1, "edge_order": 2},
]


@pytest.mark.parametrize("kwargs", GRADIENT_CASES)
def test_gradient_matches_torch(torch_mod, rng, kwargs):
    data = rng.standard_normal((3, 5))
    x, tx = pair(torch_mod, data)
    ekw, tkw = dict(kwargs), dict(kwargs)
    if kwargs.get("spacing") == "coords":
        coords = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
        ekw["spacing"] = (ember.tensor(coords),)
        tkw["spacing"] = (torch_mod.tensor(coords),)
    got, want = ember.gradient(x, **ekw), torch_mod.gradient(tx, **tkw)
    same_values(got, want, atol=1e-12)
    same_grads(torch_mod, got[-1], want[-1], [(x, tx)])


def test_gradient_integer_input_and_errors(torch_mod):
    same_values(ember.gradient(ember.tensor([1, 2, 4])),
                 torch_mod.gradient(torch_mod.tensor([1, 2, 4])))
    for kwargs in ({"edge_order": 3}, {"edge_order": 2}):
        same_error(lambda: ember.gradient(ember.tensor([1.0, 2.0]), **kwargs),
                   lambda: torch_mod.gradient(torch_mod.tensor([1.0, 2.0]), **kwargs))


def test_histogramdd_matches_torch(torch_mod, rng):
    pts = rng.uniform(0, 3, (50, 2)).astype(np.float32)
    for kwargs in ({"bins": [3, 4]}, {"bins": 2, "range": [0.0, 1.5, 0.0, 1.5]},
                   {"bins": 3, "density": True, "weight": "w"}):
        ekw, tkw = dict(kwargs), dict(kwargs)
        if kwargs.get("weight") == "w":
            w = rng.uniform(0, 1, 50).astype(np.float32)
            ekw["weight"], tkw["weight"] = ember.tensor(w), torch_mod.tensor(w)
        got = ember.histogramdd(ember.tensor(pts), **ekw)
        want = torch_mod.histogramdd(torch_mod.tensor(pts), **tkw)
        same_values(got.hist, want.hist, atol=1e-5)
        same_values(got.bin_edges, want.bin_edges)
    edges = [np.array([0.0, 1.0, 3.0], np.float32), np.array([0.0, 2.0], np.float32)]
    got = ember.histogramdd(ember.tensor(pts), bins=[ember.tensor(e) for e in edges])
    want = torch_mod.histogramdd(torch_mod.tensor(pts), bins=[torch_mod.tensor(e)
                                                               for e in edges])
    same_values(got.hist, want.hist)
    assert repr(got).startswith("ember.return_types.histogramdd(\nhist=")


@pytest.mark.parametrize("reduce", ["sum", "prod", "max", "min", "mean"])
def test_segment_reduce_matches_torch(torch_mod, rng, reduce):
    data = rng.standard_normal((6, 2))
    for kwargs in ({"lengths": [2, 0, 4]}, {"offsets": [0, 1, 1, 6]},
                   {"lengths": [3, 0, 3], "initial": 0.5}):
        x, tx = pair(torch_mod, data)
        ekw = {k: ember.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        tkw = {k: torch_mod.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        got = ember.segment_reduce(x, reduce, **ekw)
        want = torch_mod.segment_reduce(tx, reduce, **tkw)
        same_values(got, want, atol=1e-12)
        finite = np.isfinite(want.detach().numpy())
        seed = np.where(finite, 1.0, 0.0)
        (ember.where(ember.tensor(finite), got, 0) * ember.tensor(seed)).sum().backward()
        (torch_mod.where(torch_mod.tensor(finite), want, 0) * torch_mod.tensor(seed)).sum() \
            .backward()
        assert_close(x.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    same_error(lambda: ember.segment_reduce(ember.ones(3), "foo", lengths=ember.tensor([3])),
               lambda: torch_mod.segment_reduce(torch_mod.ones(3), "foo",
                                                lengths=torch_mod.tensor([3])))


def test_legacy_norms_match_torch(torch_mod, rng):
    data = rng.standard_normal((3, 4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, args in (("norm_except_dim", (2, 0)), ("norm_except_dim", (3, 1)),
                           ("norm_except_dim", (2, -1)), ("frobenius_norm", ((0, 1),)),
                           ("frobenius_norm", ((2,), True)), ("nuclear_norm", ()),
                           ("nuclear_norm", ((0, 2), True))):
            x, tx = pair(torch_mod, data)
            got, want = getattr(ember, name)(x, *args), getattr(torch_mod, name)(tx, *args)
            same_values(got, want, atol=1e-10)
            same_grads(torch_mod, got, want, [(x, tx)])
    with pytest.warns(UserWarning, match="at::frobenius_norm is deprecated"):
        ember.frobenius_norm(ember.ones(2, 2), (0, 1))
    same_error(lambda: ember.matrix_rank(ember.ones(2, 2)),
               lambda: torch_mod.matrix_rank(torch_mod.ones(2, 2)))


def test_inplace_function_forms_match_torch(torch_mod):
    for name, a, b in (("gcd_", [4, 6, 9], [6, 4, 3]), ("lcm_", [4, 6, 9], [6, 4, 3]),
                       ("ldexp_", [1.0, 2.0], [2, 3]), ("i0_", [1.0, 2.0], None)):
        x, tx = ember.tensor(a), torch_mod.tensor(a)
        rest = () if b is None else (ember.tensor(b),)
        trest = () if b is None else (torch_mod.tensor(b),)
        assert getattr(ember, name)(x, *rest) is x
        getattr(torch_mod, name)(tx, *trest)
        same_values(x, tx)
    same_error(lambda: ember.ldexp_(ember.tensor([1, 2]), ember.tensor([2, 3])),
               lambda: torch_mod.ldexp_(torch_mod.tensor([1, 2]), torch_mod.tensor([2, 3])))
    x, tx = ember.arange(6.0), torch_mod.arange(6.0)
    same_values(ember.as_strided_(x, (2, 2), (1, 2)), torch_mod.as_strided_(tx, (2, 2), (1, 2)))
    x, tx = ember.arange(6.0), torch_mod.arange(6.0)
    assert ember.resize_as_(x, ember.ones(2, 2)).shape == \
        torch_mod.resize_as_(tx, torch_mod.ones(2, 2)).shape


def test_poisson_and_binomial_replay_torch(torch_mod):
    rates = [0.5, 4.0, 30.0, 200.0]
    ember.manual_seed(11)
    torch_mod.manual_seed(11)
    same_values(ember.poisson(ember.tensor(rates)), torch_mod.poisson(torch_mod.tensor(rates)))
    count, prob = [10.0, 20.0, 5.0, 400.0], [0.5, 0.2, 0.9, 0.3]
    same_values(ember.binomial(ember.tensor(count), ember.tensor(prob)),
                 torch_mod.binomial(torch_mod.tensor(count), torch_mod.tensor(prob)))
    same_values(ember.binomial(ember.tensor(count), ember.tensor([0.5])),
                 torch_mod.binomial(torch_mod.tensor(count), torch_mod.tensor([0.5])))
    same_error(lambda: ember.binomial(ember.tensor([10]), ember.tensor([0.5])),
               lambda: torch_mod.binomial(torch_mod.tensor([10]), torch_mod.tensor([0.5])))
    same_error(lambda: ember.poisson(ember.tensor([1, 2])),
               lambda: torch_mod.poisson(torch_mod.tensor([1, 2])))
    same_error(lambda: ember.poisson(ember.tensor([-1.0])),
               lambda: torch_mod.poisson(torch_mod.tensor([-1.0])))
    rate = ember.tensor([2.0], requires_grad=True)
    ember.poisson(rate).sum().backward()
    assert rate.grad.tolist() == [0.0]


# ---------------------------------------------------------------------- low-rank SVD / PCA
@pytest.mark.parametrize("shape", [(8, 5), (5, 8), (2, 7, 6)])
def test_svd_and_pca_lowrank_match_torch(torch_mod, shape):
    data = np.random.default_rng(4).standard_normal(shape)
    for name, kwargs in (("svd_lowrank", {"q": 3}), ("svd_lowrank", {"q": 4, "niter": 0}),
                         ("pca_lowrank", {}), ("pca_lowrank", {"q": 2, "center": False})):
        ember.manual_seed(5)
        torch_mod.manual_seed(5)     # the same Gaussian sketch
        U, S, V = getattr(ember, name)(ember.tensor(data), **kwargs)
        tU, tS, tV = getattr(torch_mod, name)(torch_mod.tensor(data), **kwargs)
        same_values(S, tS, atol=1e-10)
        # NOTE: singular vectors are compared up to sign: ember.linalg.svd's sign choice
        # differs from torch's for wide matrices; the factorisation itself is the same.
        # (a zero singular value, as centring leaves, has no defined vector)
        kept = tS.numpy() > 1e-8
        if kept.ndim == 1:
            assert_close(np.abs(U.numpy()[..., kept]), np.abs(tU.numpy()[..., kept]),
                         atol=1e-10)
            assert_close(np.abs(V.numpy()[..., kept]), np.abs(tV.numpy()[..., kept]),
                         atol=1e-10)
        rebuilt = (U * S.unsqueeze(-2)).matmul(V.mH)
        trebuilt = (tU * tS.unsqueeze(-2)).matmul(tV.mH)
        assert_close(rebuilt.numpy(), trebuilt.numpy(), atol=1e-10)
    with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer"):
        ember.pca_lowrank(ember.tensor(data), q=9)


def test_svd_lowrank_gradient_matches_torch(torch_mod):
    data = np.random.default_rng(6).standard_normal((6, 4))
    ember.manual_seed(1)
    torch_mod.manual_seed(1)
    x, tx = pair(torch_mod, data)
    S = ember.svd_lowrank(x, q=2)[1]
    tS = torch_mod.svd_lowrank(tx, q=2)[1]
    same_grads(torch_mod, S, tS, [(x, tx)])


# ---------------------------------------------------------------------- lobpcg
def test_lobpcg_matches_torch(torch_mod):
    g = np.random.default_rng(0).standard_normal((18, 18))
    spd = g @ g.T + np.eye(18) * 0.5
    for kwargs in ({"k": 2}, {"k": 2, "largest": False}, {"k": 3, "B": np.eye(18) * 2}):
        ekw, tkw = dict(kwargs), dict(kwargs)
        if "B" in kwargs:
            ekw["B"], tkw["B"] = ember.tensor(kwargs["B"]), torch_mod.tensor(kwargs["B"])
        E, X = ember.lobpcg(ember.tensor(spd), **ekw)
        tE, tX = torch_mod.lobpcg(torch_mod.tensor(spd), **tkw)
        same_values(E, tE, atol=1e-7)
        assert_close(np.abs(X.numpy()), np.abs(tX.numpy()), atol=1e-5)   # up to sign
    a, ta = pair(torch_mod, spd)
    E = ember.lobpcg(a, k=2)[0]
    tE = torch_mod.lobpcg(ta, k=2)[0]
    E.sum().backward()
    tE.sum().backward()
    assert_close(a.grad.numpy(), ta.grad.numpy(), atol=1e-6)
    batch = np.stack([spd, spd * 2])
    same_values(ember.lobpcg(ember.tensor(batch), k=1)[0],
                 torch_mod.lobpcg(torch_mod.tensor(batch), k=1)[0], atol=1e-6)
    same_error(lambda: ember.lobpcg(ember.tensor(spd[:5, :5]), k=2),
               lambda: torch_mod.lobpcg(torch_mod.tensor(spd[:5, :5]), k=2))
