"""scaled_dot_product_attention, multi_head_attention_forward and nn.MultiheadAttention
against real PyTorch (float64, identical weights): outputs, attention weights, gradients."""
import itertools
import warnings

import numpy as np
import pytest

import ember


def _close(a, b, tol=1e-10):
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


# ---------------------------------------------------------------------- sdpa
def _masks(rng, L, S):
    bool_mask = rng.random((L, S)) > 0.3
    bool_mask[:, 0] = True  # every row sees something
    dead = bool_mask.copy()
    dead[1] = False  # one row sees nothing: PyTorch gives zeros there, not NaN
    return {
        "none": (None, False),
        "bool": (bool_mask, False),
        "bool4d": (rng.random((2, 3, L, S)) > 0.5, False),
        "float": (rng.standard_normal((L, S)), False),
        "float_neg_inf": (np.where(bool_mask, 0.0, -np.inf), False),
        "causal": (None, True),
        "causal_and_bool": (bool_mask, True),
        "causal_and_float": (rng.standard_normal((L, S)), True),
        "dead_row_bool": (dead, False),
        "dead_row_float": (np.where(dead, 0.0, -np.inf), False),
    }


@pytest.mark.parametrize("kind", list(_masks(np.random.default_rng(0), 4, 5)))
@pytest.mark.parametrize("L,S", [(4, 5), (5, 5)])
def test_sdpa_masks_match_torch(kind, L, S, torch_mod):
    rng = np.random.default_rng(1)
    mask, causal = _masks(rng, L, S)[kind]
    # (equal head sizes: PyTorch's fused kernel, the path that accepts causal + mask)
    arrays = [rng.standard_normal((2, 3, L, 8)), rng.standard_normal((2, 3, S, 8)),
              rng.standard_normal((2, 3, S, 8))]
    res = []
    for lib in (ember, torch_mod):
        q, k, v = _leaves(lib, arrays)
        m = None if mask is None else lib.tensor(mask)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                             is_causal=causal)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum().backward()
        res.append([out, q.grad, k.grad, v.grad])
    for a, b in zip(*res):
        assert np.isfinite(a.detach().numpy()).all()
        _close(a, b)


@pytest.mark.parametrize("opts", [{"scale": 0.3}, {"enable_gqa": True}, {"unbatched": True},
                                  {"broadcast_heads": True}])
def test_sdpa_options_match_torch(opts, torch_mod):
    rng = np.random.default_rng(2)
    hk = 2 if opts.get("enable_gqa") else (1 if opts.get("broadcast_heads") else 4)
    shapes = [(2, 4, 3, 8), (2, hk, 5, 8), (2, hk, 5, 8)]
    if opts.get("unbatched"):
        shapes = [(3, 8), (5, 8), (5, 8)]
    arrays = [rng.standard_normal(s) for s in shapes]
    kwargs = {k: v for k, v in opts.items() if k in ("scale", "enable_gqa")}
    res = []
    for lib in (ember, torch_mod):
        leaves = _leaves(lib, arrays)
        out = lib.nn.functional.scaled_dot_product_attention(*leaves, **kwargs)
        (out ** 2).sum().backward()
        res.append([out] + [t.grad for t in leaves])
    for a, b in zip(*res):
        _close(a, b)


def test_sdpa_dropout_draws_torch_stream(torch_mod):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 2, 4, 8)) for _ in range(3)]
    outs = []
    for lib in (ember, torch_mod):
        lib.manual_seed(5)
        q, k, v = (lib.tensor(a) for a in arrays)
        outs.append(lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5))
    _close(outs[0], outs[1])


def _message(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - type and text are compared
            return type(e).__name__, str(e)
    return None


def _sdpa(lib, shapes, dtypes=("float32",) * 3, grad=False, **kw):
    ts = [lib.randn(*s).to(getattr(lib, d)).requires_grad_(grad)
          for s, d in zip(shapes, dtypes)]
    return lib.nn.functional.scaled_dot_product_attention(*ts, **kw)


BAD = [
    lambda lib: _sdpa(lib, [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)],
                      ("float64", "float32", "float32")),
    lambda lib: _sdpa(lib, [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)],
                      attn_mask=lib.ones(4, 5, dtype=lib.int64)),
    lambda lib: _sdpa(lib, [(2, 3, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8)], enable_gqa=True),
    lambda lib: lib.nn.MultiheadAttention(10, 3),
    lambda lib: lib.nn.MultiheadAttention(0, 3),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8),
                                                key_padding_mask=lib.zeros(2, 3, 1)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8),
                                                attn_mask=lib.zeros(3, 4)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8),
                                                attn_mask=lib.zeros(3, 3, dtype=lib.int64)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8), is_causal=True),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 8),
                                                lib.randn(3, 2, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 6), lib.randn(3, 2, 6),
                                                lib.randn(3, 2, 6)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(4, 2, 8),
                                                lib.randn(3, 2, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(2, 3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.randn(3, 2, 8), lib.randn(3, 2, 8),
                                                lib.randn(3, 2, 8),
                                                key_padding_mask=lib.zeros(2, 4)),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_errors_match_torch(k, torch_mod):
    theirs = _message(lambda: BAD[k](torch_mod))
    ours = _message(lambda: BAD[k](ember))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "ember."))


# ---------------------------------------------------------------------- MultiheadAttention
def _mha_pair(torch_mod, *args, **kwargs):
    torch_mod.manual_seed(0)
    theirs = torch_mod.nn.MultiheadAttention(*args, **kwargs).double()
    ours = ember.nn.MultiheadAttention(*args, **kwargs).double()
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


MASK_KINDS = ["none", "kpm_bool", "kpm_float", "attn_bool", "attn_float3d", "both_bool",
              "causal"]


def _mha_masks(rng, kind, N, heads, L, S):
    kpm = rng.random((N, S)) > 0.7
    kpm[:, 0] = False
    attn = rng.random((L, S)) > 0.7
    attn[:, 0] = False
    out = {"key_padding_mask": None, "attn_mask": None, "is_causal": False}
    if kind == "kpm_bool":
        out["key_padding_mask"] = kpm
    elif kind == "kpm_float":
        out["key_padding_mask"] = rng.standard_normal((N, S))
    elif kind == "attn_bool":
        out["attn_mask"] = attn
    elif kind == "attn_float3d":
        out["attn_mask"] = rng.standard_normal((N * heads, L, S))
    elif kind == "both_bool":
        out["key_padding_mask"], out["attn_mask"] = kpm, attn
    elif kind == "causal":
        out["attn_mask"] = np.triu(np.ones((L, S), bool), 1)
        out["is_causal"] = True
    return out


@pytest.mark.parametrize("kind", MASK_KINDS)
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_self_attention_matches_torch(kind, need_weights, average, batch_first,
                                          torch_mod):
    rng = np.random.default_rng(4)
    N, L, E, heads = 2, 5, 8, 2
    ours, theirs = _mha_pair(torch_mod, E, heads, batch_first=batch_first)
    x = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
    masks = _mha_masks(rng, kind, N, heads, L, L)
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        (xs,) = _leaves(lib, [x])
        kw = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in masks.items()}
        out, w = m(xs, xs, xs, need_weights=need_weights, average_attn_weights=average, **kw)
        loss = (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()
        if w is not None:
            loss = loss + (w * w).sum()
        loss.backward()
        res.append([out, w, xs.grad] + [p.grad for p in m.parameters()])
    for a, b in zip(*res):
        _close(a, b)


@pytest.mark.parametrize("opts", list(itertools.product((False, True), (False, True),
                                                         (False, True), (False, True))))
def test_mha_cross_attention_options_match_torch(opts, torch_mod):
    """kdim/vdim (separate projections) x add_bias_kv x add_zero_attn x bias, with masks."""
    kv_dims, bias_kv, zero_attn, bias = opts
    rng = np.random.default_rng(5)
    N, L, S, E, heads = 3, 4, 6, 8, 4
    kdim, vdim = (5, 7) if kv_dims else (E, E)
    ours, theirs = _mha_pair(torch_mod, E, heads, bias=bias, add_bias_kv=bias_kv,
                             add_zero_attn=zero_attn, kdim=kdim, vdim=vdim)
    assert [n for n, _ in ours.named_parameters()] == \
        [n for n, _ in theirs.named_parameters()]
    arrays = [rng.standard_normal((L, N, E)), rng.standard_normal((S, N, kdim)),
              rng.standard_normal((S, N, vdim))]
    masks = _mha_masks(rng, "both_bool", N, heads, L, S)
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        q, k, v = _leaves(lib, arrays)
        kw = {k_: (lib.tensor(v_) if isinstance(v_, np.ndarray) else v_)
              for k_, v_ in masks.items()}
        out, w = m(q, k, v, **kw)
        ((out ** 2).sum() + (w * w).sum()).backward()
        res.append([out, w, q.grad, k.grad, v.grad] + [p.grad for p in m.parameters()])
    for a, b in zip(*res):
        _close(a, b)


def test_mha_unbatched_and_key_is_value_match_torch(torch_mod):
    rng = np.random.default_rng(6)
    ours, theirs = _mha_pair(torch_mod, 6, 3)
    q, kv = rng.standard_normal((4, 6)), rng.standard_normal((5, 6))
    kpm = np.array([False, True, False, False, True])
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        qs, kvs = _leaves(lib, [q, kv])
        out, w = m(qs, kvs, kvs, key_padding_mask=lib.tensor(kpm))
        out2, _ = m(qs, kvs, kvs, need_weights=False)
        (out.sum() + w.sum() + out2.pow(2).sum()).backward()
        res.append([out, w, out2, qs.grad, kvs.grad])
    for a, b in zip(*res):
        _close(a, b)


def test_mha_eval_dropout_and_train_dropout_stream(torch_mod):
    rng = np.random.default_rng(7)
    ours, theirs = _mha_pair(torch_mod, 8, 2, dropout=0.3)
    x = rng.standard_normal((3, 2, 8))
    outs = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        lib.manual_seed(11)
        xs = lib.tensor(x)
        train = m(xs, xs, xs)
        m.eval()
        outs.append(list(train) + list(m(xs, xs, xs)))
    for a, b in zip(*outs):
        _close(a, b)


def test_functional_mha_static_kv_matches_torch(torch_mod):
    rng = np.random.default_rng(8)
    E, heads, N, L, S = 8, 2, 2, 3, 4
    arrays = [rng.standard_normal(s) for s in ((L, N, E), (S, N, E), (S, N, E), (3 * E, E),
                                               (3 * E,), (E, E), (E,),
                                               (N * heads, S, E // heads),
                                               (N * heads, S, E // heads))]
    res = []
    for lib in (ember, torch_mod):
        q, k, v, w_in, b_in, w_out, b_out, sk, sv = _leaves(lib, arrays)
        out, w = lib.nn.functional.multi_head_attention_forward(
            q, k, v, E, heads, w_in, b_in, None, None, False, 0.0, w_out, b_out,
            static_k=sk, static_v=sv, average_attn_weights=False)
        (out.sum() + (w ** 2).sum()).backward()
        res.append([out, w] + [t.grad for t in (q, w_in, b_in, w_out, b_out, sk, sv)])
    for a, b in zip(*res):
        _close(a, b)


@pytest.mark.parametrize("kwargs", [{}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True},
                                    {"bias": False}])
def test_mha_init_and_repr_match_torch(kwargs, torch_mod):
    """Bit-identical initialisation under manual_seed (xavier_uniform_ in_proj, kaiming
    out_proj, zero biases, xavier_normal_ bias_k/bias_v), names and repr."""
    torch_mod.manual_seed(3)
    ember.manual_seed(3)
    theirs = torch_mod.nn.MultiheadAttention(8, 2, **kwargs)
    ours = ember.nn.MultiheadAttention(8, 2, **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(p.detach().numpy(), tp.detach().numpy()), n
    assert type(ours.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(ours.out_proj, ember.nn.Linear)


def test_mismatched_mask_types_warn_like_torch(torch_mod):
    texts = []
    for lib in (ember, torch_mod):
        m = lib.nn.MultiheadAttention(4, 2)
        x = lib.randn(3, 2, 4)
        with pytest.warns(UserWarning) as record:
            m(x, x, x, key_padding_mask=lib.zeros(2, 3, dtype=lib.bool),
              attn_mask=lib.zeros(3, 3))
        texts.append([str(r.message) for r in record])
    assert texts[0] == texts[1]
