"""Dropout family (masks bit-identical to PyTorch's under the same seed), Embedding,
EmbeddingBag and one_hot against real PyTorch: values, gradients, in-place renorm, default
initialisation, reprs and errors."""
import warnings

import numpy as np
import pytest

import ember
from checks import check_grad, check_gradgrad


def _both(torch_mod, seed, fn):
    """fn(lib) under manual_seed(seed) in each library."""
    out = []
    for lib in (ember, torch_mod):
        lib.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib))
    return out


# ---------------------------------------------------------------------- dropout
DROPOUTS = [
    ("dropout", lambda F, x, p: F.dropout(x, p), (7, 33)),
    ("dropout_3d", lambda F, x, p: F.dropout(x, p, training=True), (3, 5, 17)),
    ("dropout_transposed", lambda F, x, p: F.dropout(x.t(), p), (9, 4)),
    ("dropout1d", lambda F, x, p: F.dropout1d(x, p), (4, 6, 5)),
    ("dropout1d_unbatched", lambda F, x, p: F.dropout1d(x, p), (6, 5)),
    ("dropout2d", lambda F, x, p: F.dropout2d(x, p), (3, 8, 2, 2)),
    ("dropout2d_3d_input", lambda F, x, p: F.dropout2d(x, p), (3, 8, 2)),
    ("dropout3d", lambda F, x, p: F.dropout3d(x, p), (2, 5, 2, 2, 2)),
    ("dropout3d_unbatched", lambda F, x, p: F.dropout3d(x, p), (5, 2, 2, 2)),
    ("alpha_dropout", lambda F, x, p: F.alpha_dropout(x, p, training=True), (6, 20)),
    ("feature_alpha_dropout",
     lambda F, x, p: F.feature_alpha_dropout(x, p, training=True), (4, 7, 3)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("seed", [0, 7, 123])
@pytest.mark.parametrize("name,fn,shape", DROPOUTS, ids=[d[0] for d in DROPOUTS])
def test_dropout_matches_torch_bit_for_bit(torch_mod, name, fn, shape, seed, p, dtype):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    g = np.random.default_rng(seed + 1).standard_normal(x.shape).astype(dtype)

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        out = fn(lib.nn.functional, t, p)
        out.backward(lib.tensor(g.T.copy() if name == "dropout_transposed" else g))
        return out.detach().numpy(), t.grad.numpy()
    (a, ga), (b, gb) = _both(torch_mod, seed, run)
    np.testing.assert_array_equal(a != 0, b != 0)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ga, gb, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("cls", ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
                                 "AlphaDropout", "FeatureAlphaDropout"])
def test_dropout_modules(torch_mod, cls):
    shape = {"Dropout1d": (3, 4, 5), "Dropout3d": (2, 3, 2, 2, 2)}.get(cls, (2, 3, 4, 5))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(lib):
        m = getattr(lib.nn, cls)(0.3)
        train = m(lib.tensor(x)).numpy()
        m.eval()
        t = lib.tensor(x)
        assert m(t) is t  # identity in eval mode: the input itself
        return repr(m), train
    (ra, a), (rb, b) = _both(torch_mod, 3, run)
    assert ra == rb
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn", ["dropout", "dropout1d", "dropout2d", "dropout3d"])
def test_dropout_inplace(torch_mod, fn):
    shape = {"dropout1d": (3, 4, 5), "dropout3d": (2, 3, 2, 2, 2)}.get(fn, (2, 3, 4, 5))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

    def run(lib):
        t = lib.tensor(x)
        out = getattr(lib.nn.functional, fn)(t, 0.4, inplace=True)
        assert out.data_ptr() == t.data_ptr()
        return t.numpy()
    a, b = _both(torch_mod, 5, run)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_dropout_edge_probabilities(torch_mod):
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for lib in (ember, torch_mod):
        t = lib.tensor(x, requires_grad=True)
        assert lib.nn.functional.dropout(t, 0.0) is t
        assert lib.nn.functional.dropout(t, 0.5, training=False) is t
        out = lib.nn.functional.dropout(t, 1.0)
        assert (out.detach().numpy() == 0).all()
        out.sum().backward()
        assert (t.grad.numpy() == 0).all()


def _error(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e), str(e)
    return None


ERRORS = [
    lambda lib: lib.nn.functional.dropout(lib.randn(4), 1.5),
    lambda lib: lib.nn.Dropout(-0.1),
    lambda lib: lib.nn.functional.dropout1d(lib.randn(4, 3, 2, 2)),
    lambda lib: lib.nn.functional.alpha_dropout(lib.randn(4, 3, 2), 2),
    lambda lib: lib.nn.functional.feature_alpha_dropout(lib.randn(4, 3, 2), 2),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0, 2])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1, -2])),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 2]), 2),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([], dtype=lib.long)),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1]), -3),
    lambda lib: lib.nn.functional.one_hot(lib.tensor([1, 2], dtype=lib.int32)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1, 5]), lib.randn(4, 3)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1.0, 2]), lib.randn(4, 3)),
    lambda lib: lib.nn.functional.embedding(lib.tensor([1, 2]), lib.randn(4, 3),
                                            padding_idx=4),
    lambda lib: lib.nn.Embedding(4, 3, padding_idx=-5),
    lambda lib: lib.nn.Embedding(4, 3, _weight=lib.randn(3, 3)),
    lambda lib: lib.nn.Embedding.from_pretrained(lib.randn(3)),
    lambda lib: lib.nn.EmbeddingBag(4, 3, padding_idx=7),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[1, 2, 3]]), lib.randn(4, 3),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3),
                                                lib.tensor([1])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3),
                                                lib.tensor([0]), mode="foo"),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3),
                                                lib.tensor([0]), mode="mean",
                                                per_sample_weights=lib.ones(3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3),
                                                lib.tensor([0, 4])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 3]), lib.randn(4, 3),
                                                lib.tensor([0]),
                                                per_sample_weights=lib.ones(2)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2, 8]), lib.randn(4, 3),
                                                lib.tensor([0])),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([[[1, 2, 3]]]), lib.randn(4, 3)),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(4, 3),
                                                lib.tensor([0]), mode="max",
                                                scale_grad_by_freq=True),
    lambda lib: lib.nn.functional.embedding_bag(lib.tensor([1, 2]), lib.randn(4),
                                                lib.tensor([0])),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torch(torch_mod, fn):
    ours, theirs = _error(ember, fn), _error(torch_mod, fn)
    assert theirs is not None and ours is not None
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("call", [
    lambda F, x: F.dropout2d(x.reshape(2, 3, 2, 2, 1)),
    lambda F, x: F.dropout2d(x.reshape(4, 3, 2)),
    lambda F, x: F.dropout3d(x.reshape(4, 3, 2))])
def test_dropout_rank_warnings(torch_mod, call):
    messages = []
    for lib in (ember, torch_mod):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(lib.nn.functional, lib.randn(24))
            messages.append([str(m.message) for m in w])
    assert messages[0] == messages[1] and messages[0]


# ---------------------------------------------------------------------- one_hot
@pytest.mark.parametrize("values,num_classes", [([0, 2, 1, 2], -1), ([[1, 0], [3, 3]], 5),
                                                ([], 3), (4, -1)])
def test_one_hot_matches_torch(torch_mod, values, num_classes):
    a = ember.nn.functional.one_hot(ember.tensor(values, dtype=ember.int64), num_classes)
    b = torch_mod.nn.functional.one_hot(torch_mod.tensor(values, dtype=torch_mod.int64),
                                        num_classes)
    assert a.dtype == ember.int64
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# ---------------------------------------------------------------------- embedding
@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("padding_idx", [None, 0, 3, -1])
def test_embedding_default_init_bit_identical(torch_mod, seed, padding_idx):
    a, b = _both(torch_mod, seed,
                 lambda lib: lib.nn.Embedding(10, 7, padding_idx=padding_idx).weight)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    a, b = _both(torch_mod, seed, lambda lib: lib.nn.EmbeddingBag(6, 20).weight)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


EMBEDDINGS = [
    ("plain", {}, [[1, 2, 4], [4, 3, 1]]),
    ("padding", {"padding_idx": 1}, [[1, 2, 1], [0, 1, 1]]),
    ("negative_padding", {"padding_idx": -2}, [3, 4, 3, 0]),
    ("freq", {"scale_grad_by_freq": True}, [[1, 2, 1], [1, 2, 4]]),
    ("freq_padding", {"scale_grad_by_freq": True, "padding_idx": 2}, [2, 2, 0, 0, 1]),
    ("max_norm", {"max_norm": 1.5}, [[1, 2, 1], [0, 4, 4]]),
    ("max_norm_p1", {"max_norm": 0.7, "norm_type": 1.0}, [3, 1, 0]),
    ("scalar_index", {}, 3),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs,idx", EMBEDDINGS, ids=[e[0] for e in EMBEDDINGS])
def test_embedding_matches_torch(torch_mod, name, kwargs, idx, dtype):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)).astype(dtype)
    results = []
    for lib in (ember, torch_mod):
        m = lib.nn.Embedding(5, 3, _weight=lib.tensor(w), **kwargs)
        i = lib.tensor(idx)
        out = m(i)
        g = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        out.backward(g)
        results.append((out.detach().numpy(), m.weight.grad.numpy(),
                        m.weight.detach().numpy(), repr(m)))
    for a, b in zip(*results):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_embedding_from_pretrained(torch_mod):
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    for freeze in (True, False):
        ours = ember.nn.Embedding.from_pretrained(ember.tensor(w), freeze=freeze, padding_idx=1)
        theirs = torch_mod.nn.Embedding.from_pretrained(torch_mod.tensor(w), freeze=freeze,
                                                        padding_idx=1)
        assert ours.weight.requires_grad == theirs.weight.requires_grad == (not freeze)
        assert repr(ours) == repr(theirs)
        # from_pretrained keeps the given padding row (no zeroing)
        np.testing.assert_array_equal(ours.weight.detach().numpy(), w)
    bag = ember.nn.EmbeddingBag.from_pretrained(ember.tensor(w), mode="sum")
    assert not bag.weight.requires_grad
    np.testing.assert_array_equal(bag(ember.tensor([[1, 0]])).numpy(), [w[0] + w[1]])


def test_embedding_gradcheck():
    w = np.random.default_rng(0).standard_normal((5, 3))
    idx = ember.tensor([[0, 2, 2], [4, 1, 2]])
    F = ember.nn.functional
    # padding_idx and scale_grad_by_freq deliberately change the derivative (they are compared
    # with torch instead); double backward differentiates whatever the VJP computes.
    check_grad(lambda t: F.embedding(idx, t), [w])
    for kwargs in ({}, {"padding_idx": 2}):
        check_gradgrad(lambda t: F.embedding(idx, t, **kwargs) ** 2, [w])


BAGS = [
    ("sum_offsets", "sum", [1, 2, 4, 4, 3], [0, 2], {}),
    ("mean_offsets", "mean", [1, 2, 4, 4, 3], [0, 2], {}),
    ("max_offsets", "max", [1, 2, 4, 0, 3], [0, 3], {}),
    ("empty_bag", "mean", [1, 2, 4], [0, 0, 2], {}),
    ("empty_bag_max", "max", [1, 2, 4], [0, 2, 2], {}),
    # NOTE: with include_last_offset, offsets[-1] is the input length (PyTorch's float32 and
    # float64 kernels disagree on the elements past a smaller last offset).
    ("last_offset", "sum", [1, 2, 4, 0, 3], [0, 2, 2, 5], {"include_last_offset": True}),
    ("last_offset_mean", "mean", [1, 2, 4, 0, 3], [0, 1, 5], {"include_last_offset": True}),
    ("two_d_mean", "mean", [[1, 2], [4, 0], [3, 3]], None, {}),
    ("two_d_max", "max", [[1, 2], [4, 0], [3, 3]], None, {}),
    ("padding_mean", "mean", [1, 2, 2, 2, 3], [0, 3], {"padding_idx": 2}),
    ("padding_sum", "sum", [2, 2, 0, 1], [0, 2], {"padding_idx": 2}),
    ("padding_max", "max", [1, 2, 2, 0, 3], [0, 3], {"padding_idx": 2}),
]


# per_sample_weights exists for mode='sum' only: weighted cases are generated for those.
BAG_CASES = [pytest.param(*b, weighted, id=f"{b[0]}-{'weighted' if weighted else 'plain'}")
             for b in BAGS for weighted in (False, True) if not weighted or b[1] == "sum"]


@pytest.mark.parametrize("name,mode,idx,offsets,kwargs,weighted", BAG_CASES)
def test_embedding_bag_matches_torch(torch_mod, name, mode, idx, offsets, kwargs, weighted):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 4))
    psw = rng.standard_normal(np.shape(idx)) if weighted else None
    results = []
    for lib in (ember, torch_mod):
        m = lib.nn.EmbeddingBag(5, 4, mode=mode, _weight=lib.tensor(w), **kwargs)
        sw = lib.tensor(psw, requires_grad=True) if weighted else None
        out = m(lib.tensor(idx), None if offsets is None else lib.tensor(offsets),
                per_sample_weights=sw)
        out.backward(lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))))
        results.append([out.detach().numpy(), m.weight.grad.numpy()] +
                       ([sw.grad.numpy()] if weighted else []))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_embedding_bag_scale_grad_by_freq():
    # NOTE: PyTorch's embedding_bag divides by the wrong counts here (index 4, seen once, gets
    # 1/3), so the reference is the same bag built from F.embedding, whose scaling is right.
    w = np.random.default_rng(2).standard_normal((5, 3))
    idx, offsets = ember.tensor([1, 1, 4, 1]), ember.tensor([0, 1])
    ours = ember.tensor(w, requires_grad=True)
    ref = ember.tensor(w, requires_grad=True)
    out = ember.nn.functional.embedding_bag(idx, ours, offsets, mode="sum",
                                            scale_grad_by_freq=True)
    rows = ember.nn.functional.embedding(idx, ref, scale_grad_by_freq=True)
    expected = ember.stack([rows[:1].sum(0), rows[1:].sum(0)])
    g = ember.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    out.backward(g)
    expected.backward(g)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy())


def test_embedding_bag_max_norm_renormalises_like_torch(torch_mod):
    w = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32) * 2
    weights = []
    for lib in (ember, torch_mod):
        m = lib.nn.EmbeddingBag(5, 3, max_norm=1.0, mode="sum", _weight=lib.tensor(w))
        m(lib.tensor([[0, 1], [1, 3]]))
        weights.append(m.weight.detach().numpy())
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-6)
