"""The margin, embedding, probabilistic and CTC losses against real PyTorch: values and
gradients (float32 and float64, several reductions and options), float64 gradchecks,
module reprs and PyTorch's error messages."""
import numpy as np
import pytest
from checks import check_grad

import ember


def _x(shape, seed=0, low=-2, high=2):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _sign(shape, seed=5):
    return np.random.default_rng(seed).choice([-1.0, 1.0], shape)


def _int(arr):
    return ("int", arr)


def _run(lib, call, arrays, dtype, grad=True):
    ts = []
    for a in arrays:
        if isinstance(a, tuple):
            ts.append(lib.tensor(a[1]))
        else:
            ts.append(lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=grad))
    out = call(lib, *ts)
    if grad and out.requires_grad:
        w = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape) + 1.5,
                       dtype=out.dtype)
        (out * w).sum().backward()
    grads = [t.grad.numpy() if not isinstance(a, tuple) and t.grad is not None else None
             for a, t in zip(arrays, ts)]
    return out.detach().numpy(), grads


def compare(call, arrays, torch_mod, dtype="float64", rtol=None):
    rtol = rtol or (1e-9 if dtype == "float64" else 2e-5)
    a, ga = _run(ember, call, arrays, dtype)
    b, gb = _run(torch_mod, call, arrays, dtype)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)
    for x, y in zip(ga, gb):
        if y is not None and x is None:
            assert not y.any()   # an input outside the graph: PyTorch's zeros
        elif y is not None:
            np.testing.assert_allclose(x, y, rtol=rtol * 10, atol=rtol * 10)


def _F(lib):
    return lib.nn.functional


Y = _int(np.array([2, 0, 3, 1, 3]))
MULTI = _int(np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3], [-1, 0, 1, 2],
                       [2, 2, 1, -1]]))
CASES = [
    ("poisson", lambda L, x, t: _F(L).poisson_nll_loss(x, t), [_x((4, 3)), _x((4, 3), 1, 0, 3)]),
    ("poisson_full_sum", lambda L, x, t: _F(L).poisson_nll_loss(
        x, t, log_input=False, full=True, reduction="sum"),
     [_x((4, 3), 0, 0.1, 3), _x((4, 3), 1, 0, 4)]),
    ("gaussian", lambda L, x, t, v: _F(L).gaussian_nll_loss(x, t, v),
     [_x((4, 3)), _x((4, 3), 1), _x((4, 3), 2, 0.1, 2)]),
    ("gaussian_full_none_hetero", lambda L, x, t, v: _F(L).gaussian_nll_loss(
        x, t, v, full=True, reduction="none"), [_x((4, 3)), _x((4, 3), 1), _x((4, 1), 2, .1, 2)]),
    ("gaussian_vec_var_sum", lambda L, x, t, v: _F(L).gaussian_nll_loss(
        x, t, v, reduction="sum", eps=0.3), [_x((4, 3)), _x((4, 3), 1), _x((4,), 2, 0.01, 1)]),
    ("margin_ranking", lambda L, a, b, y: _F(L).margin_ranking_loss(a, b, y.detach()),
     [_x((6,)), _x((6,), 1), _sign((6,))]),
    ("margin_ranking_m_none", lambda L, a, b, y: _F(L).margin_ranking_loss(
        a, b, y.detach(), margin=0.5, reduction="none"), [_x((6,)), _x((6,), 1), _sign((6,))]),
    ("hinge", lambda L, x, y: _F(L).hinge_embedding_loss(x, y.detach()),
     [_x((4, 3)), _sign((4, 3))]),
    ("hinge_m_sum", lambda L, x, y: _F(L).hinge_embedding_loss(
        x, y.detach(), margin=0.3, reduction="sum"), [_x((4, 3)), _sign((4, 3))]),
    ("cosine_emb", lambda L, a, b, y: _F(L).cosine_embedding_loss(a, b, y.detach()),
     [_x((5, 3)), _x((5, 3), 1), _sign((5,))]),
    ("cosine_emb_m_none", lambda L, a, b, y: _F(L).cosine_embedding_loss(
        a, b, y.detach(), margin=0.2, reduction="none"), [_x((5, 3)), _x((5, 3), 1), _sign((5,))]),
    ("cosine_emb_unbatched", lambda L, a, b, y: _F(L).cosine_embedding_loss(
        a, b, y.detach()), [_x((3,)), _x((3,), 1), np.array(-1.0)]),
    ("triplet", lambda L, a, p, n: _F(L).triplet_margin_loss(a, p, n),
     [_x((5, 3)), _x((5, 3), 1), _x((5, 3), 2)]),
    ("triplet_p1_swap_none", lambda L, a, p, n: _F(L).triplet_margin_loss(
        a, p, n, margin=2.0, p=1, swap=True, reduction="none"),
     [_x((5, 3)), _x((5, 3), 1), _x((5, 3), 2)]),
    ("triplet_dist_default", lambda L, a, p, n: _F(L).triplet_margin_with_distance_loss(
        a, p, n), [_x((5, 3)), _x((5, 3), 1), _x((5, 3), 2)]),
    ("triplet_dist_cos_swap", lambda L, a, p, n: _F(L).triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - _F(L).cosine_similarity(u, v),
        margin=0.5, swap=True, reduction="sum"), [_x((5, 3)), _x((5, 3), 1), _x((5, 3), 2)]),
    ("multilabel_margin", lambda L, x, y: _F(L).multilabel_margin_loss(x, y),
     [_x((5, 4)), MULTI]),
    ("multilabel_margin_none", lambda L, x, y: _F(L).multilabel_margin_loss(
        x, y, reduction="none"), [_x((5, 4)), MULTI]),
    ("multilabel_margin_1d", lambda L, x, y: _F(L).multilabel_margin_loss(x, y),
     [_x((4,)), _int(np.array([3, 1, -1, 0]))]),
    ("multilabel_soft", lambda L, x, y: _F(L).multilabel_soft_margin_loss(x * 20, y),
     [_x((5, 4)), _x((5, 4), 1, 0, 1)]),
    ("multilabel_soft_w_none", lambda L, x, y, w: _F(L).multilabel_soft_margin_loss(
        x, y, weight=w, reduction="none"), [_x((5, 4)), _x((5, 4), 1, 0, 1), _x((4,), 2, 0, 2)]),
    ("multi_margin", lambda L, x, y: _F(L).multi_margin_loss(x, y), [_x((5, 4)), Y]),
    ("multi_margin_p2_w", lambda L, x, y, w: _F(L).multi_margin_loss(
        x, y, p=2, margin=0.7, weight=w.detach(), reduction="sum"),
     [_x((5, 4)), Y, _x((4,), 2, 0, 2)]),
    ("multi_margin_1d_none", lambda L, x, y: _F(L).multi_margin_loss(x, y, reduction="none"),
     [_x((4,)), _int(np.array(1))]),
    ("soft_margin", lambda L, x, y: _F(L).soft_margin_loss(x * 30, y.detach()),
     [_x((4, 3)), _sign((4, 3))]),
    ("soft_margin_none", lambda L, x, y: _F(L).soft_margin_loss(x, y.detach(), reduction="none"),
     [_x((4, 3)), _sign((4, 3))]),
]


@pytest.mark.parametrize("name,call,arrays", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_loss_matches_torch(name, call, arrays, dtype, torch_mod):
    compare(call, arrays, torch_mod, dtype)


GRADCHECK = ["poisson_full_sum", "gaussian_full_none_hetero", "cosine_emb",
             "triplet_p1_swap_none", "multilabel_margin_none", "multi_margin_p2_w",
             "multilabel_soft_w_none"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_loss_gradcheck(name):
    _, call, arrays = next(c for c in CASES if c[0] == name)
    arrays = [a[1] if isinstance(a, tuple) else a for a in arrays]
    # multi_margin's class weight is a constant (PyTorch does not differentiate it).
    idx = [0] if name == "multi_margin_p2_w" else None
    check_grad(lambda *ts: call(ember, *ts), arrays, grad_indices=idx)


def test_legacy_reduction_arguments(torch_mod):
    for kw in (dict(size_average=False), dict(reduce=False), dict(size_average=True)):
        with pytest.warns(UserWarning):
            compare(lambda L, x, y: _F(L).soft_margin_loss(x, y.detach(), **kw),
                    [_x((4, 3)), _sign((4, 3))], torch_mod)
        with pytest.warns(UserWarning):
            compare(lambda L, x, y: L.nn.MultiMarginLoss(**kw)(x, y), [_x((5, 4)), Y],
                    torch_mod)


def test_large_logits(torch_mod):
    """multilabel_soft_margin_loss goes through log-sigmoid and stays finite; soft_margin_loss
    is torch's literal log1p(exp(-x y)), which overflows to inf (and a nan gradient) there."""
    for name, target in (("multilabel_soft_margin_loss", [[0.0, 1.0]]),
                         ("soft_margin_loss", [[-1.0, 1.0]])):
        got = []
        for lib in (ember, torch_mod):
            x = lib.tensor([[800.0, -800.0]], requires_grad=True)
            loss = getattr(lib.nn.functional, name)(x, lib.tensor(target))
            loss.backward()
            got.append((loss.item(), x.grad.numpy()))
        (a, ga), (b, gb) = got
        np.testing.assert_array_equal([a], [b])
        np.testing.assert_array_equal(ga, gb)


# ---------------------------------------------------------------------- CTC
def _ctc_inputs(t=12, n=3, c=5, s=4, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((t, n, c))
    targets = rng.integers(1, c, (n, s))
    targets[0, 1] = targets[0, 0]   # a repeated label needs a blank between
    in_len = np.array([t, t - 3, t - 1])[:n]
    tg_len = np.array([s, 2, 0])[:n]
    return logits, targets, in_len, tg_len


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concat", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ctc_matches_torch(reduction, concat, dtype, torch_mod):
    logits, targets, in_len, tg_len = _ctc_inputs()
    flat = np.concatenate([targets[i, :tg_len[i]] for i in range(len(tg_len))])

    def call(L, x):
        tg = L.tensor(flat if concat else targets)
        return _F(L).ctc_loss(_F(L).log_softmax(x, 2), tg, L.tensor(in_len), L.tensor(tg_len),
                              reduction=reduction)
    compare(call, [logits], torch_mod, dtype, rtol=1e-9 if dtype == "float64" else 1e-4)


def test_ctc_blank_lists_unbatched_and_infinity(torch_mod):
    logits, targets, _, _ = _ctc_inputs(t=6, n=2, c=4, s=3)
    in_len, tg_len = [6, 2], [3, 3]        # the second cannot fit: infinite loss
    for zero_inf in (False, True):
        def call(L, x):
            return _F(L).ctc_loss(_F(L).log_softmax(x, 2), L.tensor(targets - 1), in_len,
                                  tg_len, blank=3, reduction="none", zero_infinity=zero_inf)
        a, _ = _run(ember, call, [logits], "float64", grad=False)
        b, _ = _run(torch_mod, call, [logits], "float64", grad=False)
        np.testing.assert_allclose(a, b, rtol=1e-9)
    compare(lambda L, x: L.nn.CTCLoss(blank=3, zero_infinity=True)(
        _F(L).log_softmax(x, 2), L.tensor(targets - 1), L.tensor(in_len), L.tensor(tg_len)),
        [logits], torch_mod)

    def unbatched(L, x):
        return _F(L).ctc_loss(_F(L).log_softmax(x, 1), L.tensor(targets[0]), L.tensor(6),
                              L.tensor(3), reduction="none")
    compare(unbatched, [logits[:, 0]], torch_mod)


def test_ctc_gradcheck():
    logits, targets, in_len, tg_len = _ctc_inputs(t=5, n=2, c=3, s=2)
    F = ember.nn.functional
    check_grad(lambda x: F.ctc_loss(F.log_softmax(x, 2), ember.tensor(targets),
                                    ember.tensor(in_len[:2]), ember.tensor([2, 1])), [logits])


# ---------------------------------------------------------------------- modules and errors
def test_module_forms_and_reprs(torch_mod):
    def build(lib):
        nn = lib.nn
        return [nn.PoissonNLLLoss(), nn.GaussianNLLLoss(full=True), nn.MarginRankingLoss(0.5),
                nn.HingeEmbeddingLoss(), nn.CosineEmbeddingLoss(), nn.TripletMarginLoss(),
                nn.TripletMarginWithDistanceLoss(), nn.MultiLabelMarginLoss(),
                nn.MultiLabelSoftMarginLoss(), nn.MultiMarginLoss(p=2),
                nn.SoftMarginLoss(), nn.CTCLoss(blank=1)]
    assert [repr(m) for m in build(ember)] == [repr(m) for m in build(torch_mod)]
    compare(lambda L, x, t, v: L.nn.GaussianNLLLoss(reduction="sum")(x, t, v),
            [_x((4, 3)), _x((4, 3), 1), _x((4, 3), 2, 0.1, 2)], torch_mod)
    compare(lambda L, a, p, n: L.nn.TripletMarginWithDistanceLoss(swap=True)(a, p, n),
            [_x((5, 3)), _x((5, 3), 1), _x((5, 3), 2)], torch_mod)
    compare(lambda L, x, y: L.nn.MultiLabelMarginLoss()(x, y), [_x((5, 4)), MULTI], torch_mod)
    compare(lambda L, x, y: L.nn.PoissonNLLLoss(full=True)(x, y),
            [_x((5, 4)), _x((5, 4), 1, 0, 4)], torch_mod)


ERRORS = [
    lambda L: _F(L).gaussian_nll_loss(L.zeros(2, 3), L.zeros(2, 3), -L.ones(2, 3)),
    lambda L: _F(L).gaussian_nll_loss(L.zeros(2, 3), L.zeros(2, 3), L.ones(3, 2)),
    lambda L: _F(L).gaussian_nll_loss(L.zeros(2, 3), L.zeros(2, 3), L.ones(2, 3), reduction="x"),
    lambda L: _F(L).margin_ranking_loss(L.zeros(3), L.zeros(3), L.zeros(3, 1)),
    lambda L: _F(L).triplet_margin_loss(L.zeros(3, 2), L.zeros(2), L.zeros(3, 2)),
    lambda L: _F(L).triplet_margin_with_distance_loss(L.zeros(3, 2), L.zeros(3, 2),
                                                      L.zeros(3, 2), margin=0),
    lambda L: _F(L).multi_margin_loss(L.zeros(2, 3), L.tensor([0, 1]), p=3),
    lambda L: _F(L).multi_margin_loss(L.zeros(2, 3), L.tensor([0, 1]), weight=L.ones(2, 2)),
    lambda L: L.nn.TripletMarginLoss(margin=-1),
    lambda L: L.nn.MultiMarginLoss(weight=L.ones(2, 2)),
    lambda L: _F(L).soft_margin_loss(L.zeros(2), L.zeros(2), reduction="bad"),
    lambda L: _F(L).ctc_loss(L.zeros(4, 2, 3), L.ones(2, 2, dtype=L.long), L.tensor([5, 4]),
                             L.tensor([2, 2])),
    lambda L: _F(L).ctc_loss(L.zeros(4, 2, 3), L.ones(2, 2, dtype=L.long), L.tensor([4, 4]),
                             L.tensor([3, 2])),
    lambda L: _F(L).nll_loss(L.zeros(3, 4), L.tensor([0, -1, 1])),
    lambda L: _F(L).nll_loss(L.zeros(3, 4), L.tensor([0, 1, 1]), weight=L.ones(5)),
    lambda L: _F(L).nll_loss(L.zeros(3, 4), L.tensor([0, 1, 1]), weight=L.ones(4).double()),
    lambda L: _F(L).nll_loss(L.zeros(3, 4), L.tensor([0, 1, 1]), reduction="foo"),
    lambda L: _F(L).nll_loss(L.zeros(3, 4, dtype=L.long), L.tensor([0, 1, 1])),
    lambda L: _F(L).nll_loss(L.zeros(3, 4, 2, 2, dtype=L.long), L.zeros(3, 2, 2, dtype=L.long)),
    lambda L: _F(L).cross_entropy(L.zeros(3, 4), L.tensor([0, 1, 1]),
                                  weight=L.ones(4, requires_grad=True)),
    lambda L: _F(L).cross_entropy(L.zeros(3, 4, 2), L.tensor([[0, 4], [1, 1], [0, 0]])),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case, torch_mod):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch_mod)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[case](ember)
    assert str(ours.value) == str(theirs.value)


def test_cross_entropy_k_dim_and_probabilities(torch_mod):
    logits = _x((2, 4, 3, 2))
    probs = np.random.default_rng(4).dirichlet(np.ones(4), (2, 3, 2)).transpose(0, 3, 1, 2)
    compare(lambda L, x, p: _F(L).cross_entropy(x, p, label_smoothing=0.1), [logits, probs],
            torch_mod)
    tgt = _int(np.random.default_rng(3).integers(0, 4, (2, 3, 2)))
    compare(lambda L, x, t: _F(L).cross_entropy(x, t, reduction="none"), [logits, tgt],
            torch_mod)


NLL_SHAPES = [((5, 4), (5,)), ((4,), ()), ((3, 4, 6), (3, 6)), ((2, 4, 3, 2), (2, 3, 2)),
              ((2, 4, 2, 2, 2), (2, 2, 2, 2)), ((0, 4), (0,))]


@pytest.mark.parametrize("shapes", NLL_SHAPES, ids=[str(s[0]) for s in NLL_SHAPES])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_nll_graph_and_double_backward_match_torch(shapes, reduction, loss, torch_mod):
    """nll_loss is one node (NllLossBackward0; NllLoss2DBackward0 from 3 dims, through a view
    of the input as PyTorch's), its gradient another (NllLossBackwardBackward0, ...); values,
    gradients and second derivatives PyTorch's, with weights and an ignored class."""
    shape, tshape = shapes
    x = np.random.default_rng(0).standard_normal(shape)
    target = np.random.default_rng(1).integers(0, 4, tshape)
    for weight, ignore in ((None, -100), (np.array([0.5, 1.0, 2.0, 0.1]), 1)):
        res = []
        for lib in (ember, torch_mod):
            t = lib.tensor(x, requires_grad=True)
            w = None if weight is None else lib.tensor(weight)
            out = getattr(lib.nn.functional, loss)(t, lib.tensor(target), weight=w,
                                                   ignore_index=ignore, reduction=reduction)
            gout = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(out.shape))
            g, = lib.autograd.grad(out, t, gout, create_graph=True)
            gg, = lib.autograd.grad((g * g).sum(), t)
            res.append(([type(out.grad_fn).__name__, type(g.grad_fn).__name__],
                        [a.detach().numpy() for a in (out, g, gg)]))
        assert res[0][0] == res[1][0]
        for a, b in zip(res[0][1], res[1][1]):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_cross_entropy_low_precision_matches_torch(dtype, torch_mod):
    x = _x((64, 10)) * 3
    target = np.random.default_rng(1).integers(0, 10, 64)
    for reduction in ("mean", "sum", "none"):
        res = []
        for lib in (ember, torch_mod):
            t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
            out = lib.nn.functional.cross_entropy(t, lib.tensor(target), reduction=reduction)
            out.backward(lib.ones_like(out))
            res.append([out.dtype == getattr(lib, dtype), out.detach().float().numpy(),
                        t.grad.float().numpy()])
        assert res[0][0] and res[1][0]
        eps = float(ember.finfo(getattr(ember, dtype)).eps)
        for a, b in zip(res[0][1:], res[1][1:]):
            np.testing.assert_allclose(a, b, rtol=eps, atol=eps)


def test_nll_loss_ignored_sample_reads_nothing(torch_mod):
    """An ignored sample contributes 0 even where its log-probability is -inf (no 0 * inf)."""
    for lib in (ember, torch_mod):
        x = lib.tensor([[float("-inf"), 0.0], [-1.0, -2.0]], requires_grad=True)
        out = lib.nn.functional.nll_loss(x, lib.tensor([0, 1]), ignore_index=0,
                                         reduction="none")
        out.sum().backward()
        assert out.tolist() == [0.0, 2.0] and x.grad.tolist() == [[0.0, 0.0], [0.0, -1.0]]
