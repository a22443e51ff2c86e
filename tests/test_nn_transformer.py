"""Transformer layers and stacks against real PyTorch (float64, identical weights), and a
char-level LSTM language model trained in both frameworks."""
import itertools
import warnings

import numpy as np
import pytest

import ember


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _copy(ours, theirs):
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


def _build(lib, cls, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # enable_nested_tensor notes
        return getattr(lib.nn, cls)(*args, **kwargs)


def _pair(torch_mod, cls, *args, **kwargs):
    torch_mod.manual_seed(0)
    theirs = _build(torch_mod, cls, *args, **kwargs).double()
    ours = _build(ember, cls, *args, **kwargs).double()
    _copy(ours, theirs)
    return ours, theirs


def _grads_match(ours, theirs, tol=1e-9):
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert (p.grad is None) == (tp.grad is None), n
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol,
                                       err_msg=n)


def _weighted_sum(lib, out):
    return (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))).sum()


def _activation(lib, kind):
    if kind == "callable":
        return lib.tanh
    if kind == "module":
        return lib.nn.GELU()
    return kind


@pytest.mark.filterwarnings("ignore:Support for mismatched")
@pytest.mark.parametrize("activation,norm_first,batch_first,bias", list(itertools.product(
    ("relu", "gelu", "callable", "module"), (False, True), (False, True), (True, False))))
def test_encoder_layer_matches_torch(activation, norm_first, batch_first, bias, torch_mod):
    rng = np.random.default_rng(0)
    N, S, E = 2, 5, 8
    torch_mod.manual_seed(0)
    theirs = torch_mod.nn.TransformerEncoderLayer(
        E, 2, 16, dropout=0.0, activation=_activation(torch_mod, activation),
        batch_first=batch_first, norm_first=norm_first, bias=bias).double()
    ours = ember.nn.TransformerEncoderLayer(
        E, 2, 16, dropout=0.0, activation=_activation(ember, activation),
        batch_first=batch_first, norm_first=norm_first, bias=bias).double()
    _copy(ours, theirs)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((N, S, E) if batch_first else (S, N, E))
    kpm = np.array([[False] * S, [False, False, False, True, True]])
    mask = np.triu(np.full((S, S), -np.inf), 1)
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        xs = lib.tensor(x, requires_grad=True)
        out = m(xs, src_mask=lib.tensor(mask), src_key_padding_mask=lib.tensor(kpm))
        out2 = m(xs)
        (_weighted_sum(lib, out) + (out2 ** 2).sum()).backward()
        res.append([out, out2, xs.grad])
    for a, b in zip(*res):
        _close(a, b)
    _grads_match(ours, theirs)


@pytest.mark.parametrize("norm_first,batch_first", list(itertools.product((False, True),
                                                                           (False, True))))
def test_decoder_layer_matches_torch(norm_first, batch_first, torch_mod):
    rng = np.random.default_rng(1)
    N, T, S, E = 2, 4, 6, 8
    ours, theirs = _pair(torch_mod, "TransformerDecoderLayer", E, 4, 12, dropout=0.0,
                         activation="gelu", norm_first=norm_first, batch_first=batch_first)
    assert repr(ours) == repr(theirs)
    shape = (lambda L: (N, L, E)) if batch_first else (lambda L: (L, N, E))
    tgt, mem = rng.standard_normal(shape(T)), rng.standard_normal(shape(S))
    tgt_mask = np.triu(np.ones((T, T), bool), 1)
    mem_kpm = rng.random((N, S)) > 0.6
    mem_kpm[:, 0] = False
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        t, mm = lib.tensor(tgt, requires_grad=True), lib.tensor(mem, requires_grad=True)
        out = m(t, mm, tgt_mask=lib.tensor(tgt_mask), memory_key_padding_mask=lib.tensor(
            mem_kpm), tgt_is_causal=True)
        _weighted_sum(lib, out).backward()
        res.append([out, t.grad, mm.grad])
    for a, b in zip(*res):
        _close(a, b)
    _grads_match(ours, theirs)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first, torch_mod):
    """The whole encoder-decoder: xavier re-initialisation bit-identical under manual_seed,
    state_dict keys, repr, outputs and every gradient."""
    kwargs = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                  dim_feedforward=16, dropout=0.0, batch_first=batch_first)
    torch_mod.manual_seed(7)
    ember.manual_seed(7)
    theirs = _build(torch_mod, "Transformer", **kwargs)
    ours = _build(ember, "Transformer", **kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert np.array_equal(p.detach().numpy(), tp.detach().numpy()), n
    ours.double()
    theirs.double()
    rng = np.random.default_rng(2)
    N, S, T = 3, 5, 4
    src = rng.standard_normal((N, S, 8) if batch_first else (S, N, 8))
    tgt = rng.standard_normal((N, T, 8) if batch_first else (T, N, 8))
    kpm = np.zeros((N, S), bool)
    kpm[1, 3:] = True
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        mask = m.generate_square_subsequent_mask(T, dtype=lib.float64)
        s, t = lib.tensor(src, requires_grad=True), lib.tensor(tgt, requires_grad=True)
        out = m(s, t, tgt_mask=mask, src_key_padding_mask=lib.tensor(kpm),
                memory_key_padding_mask=lib.tensor(kpm))
        _weighted_sum(lib, out).backward()
        res.append([out, s.grad, t.grad, mask])
    for a, b in zip(*res):
        _close(a, b)
    _grads_match(ours, theirs)


def test_encoder_stack_with_norm_and_causal_detection(torch_mod):
    rng = np.random.default_rng(3)
    res = []
    torch_mod.manual_seed(1)
    layer_t = torch_mod.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    layer_e = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    theirs = torch_mod.nn.TransformerEncoder(layer_t, 3, norm=torch_mod.nn.LayerNorm(8),
                                             enable_nested_tensor=False).double()
    ours = ember.nn.TransformerEncoder(layer_e, 3, norm=ember.nn.LayerNorm(8),
                                       enable_nested_tensor=False).double()
    _copy(ours, theirs)
    assert repr(ours) == repr(theirs)
    assert ours.layers[0] is not layer_e and ours.layers[0] is not ours.layers[1]
    x = rng.standard_normal((2, 5, 8))
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        xs = lib.tensor(x, requires_grad=True)
        causal = lib.nn.Transformer.generate_square_subsequent_mask(5, dtype=lib.float64)
        out = m(xs, mask=causal)
        out.pow(2).sum().backward()
        res.append([out, xs.grad])
    for a, b in zip(*res):
        _close(a, b)
    _grads_match(ours, theirs)
    from ember.nn.modules.transformer import _detect_is_causal_mask
    mask = ember.nn.Transformer.generate_square_subsequent_mask(4)
    assert _detect_is_causal_mask(mask) and not _detect_is_causal_mask(mask.t())
    assert _detect_is_causal_mask(None, True) and not _detect_is_causal_mask(mask, False)


def test_unbatched_encoder_decoder_match_torch(torch_mod):
    rng = np.random.default_rng(4)
    ours, theirs = _pair(torch_mod, "Transformer", 8, 2, 1, 1, 16, dropout=0.0)
    src, tgt = rng.standard_normal((5, 8)), rng.standard_normal((3, 8))
    outs = [m(lib.tensor(src), lib.tensor(tgt)) for lib, m in ((ember, ours),
                                                               (torch_mod, theirs))]
    _close(outs[0], outs[1])


def test_dropout_training_matches_torch_stream(torch_mod):
    """Same seed, same dropout masks through a training-mode encoder layer."""
    ours, theirs = _pair(torch_mod, "TransformerEncoderLayer", 8, 2, 16, dropout=0.25)
    x = np.random.default_rng(5).standard_normal((4, 2, 8))
    outs = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        lib.manual_seed(9)
        outs.append(m(lib.tensor(x)))
    _close(outs[0], outs[1])


def test_warnings_and_errors_match_torch(torch_mod):
    def capture(fn):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            try:
                fn()
                err = None
            except Exception as e:  # noqa: BLE001 - type and text are compared
                err = (type(e).__name__, str(e))
        return [str(r.message) for r in record], err

    cases = [
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2), 2),
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
            9, 3, batch_first=True), 1),
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
            8, 2, batch_first=True, activation=lib.tanh), 1),
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
            8, 2, batch_first=True), 1),
        lambda lib: lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(
            8, 2, batch_first=True, norm_first=True), 1),
        lambda lib: lib.nn.TransformerEncoderLayer(8, 2, activation="tanh"),
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.randn(3, 2, 8), lib.randn(3, 4, 8)),
        lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16)(lib.randn(3, 2, 8), lib.randn(3, 2, 6)),
    ]
    for case in cases:
        assert capture(lambda: case(ember)) == capture(lambda: case(torch_mod))


def test_generate_square_subsequent_mask_matches_torch(torch_mod):
    ours = ember.nn.Transformer.generate_square_subsequent_mask(4)
    theirs = torch_mod.nn.Transformer.generate_square_subsequent_mask(4)
    assert ours.dtype == ember.float32
    assert np.array_equal(ours.numpy(), theirs.numpy())


# ---------------------------------------------------------------------- char-level LM
TEXT = ("the quick brown fox jumps over the lazy dog. " * 6 +
        "pack my box with five dozen liquor jugs. " * 6)


def _train_char_lm(lib, state, batches, vocab, steps):
    """One-hot characters -> 2-layer LSTM -> Linear, trained with Adam; the loss per step."""
    class CharLM(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = lib.nn.LSTM(vocab, 24, num_layers=2, batch_first=True)
            self.head = lib.nn.Linear(24, vocab)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out)

    model = CharLM().double()
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.Adam(model.parameters(), lr=0.03)
    eye = lib.eye(vocab, dtype=lib.float64)
    losses = []
    for step in range(steps):
        idx = batches[step % len(batches)]
        x = eye[lib.tensor(idx[:, :-1])]
        y = lib.tensor(idx[:, 1:])
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_char_lm_training_matches_torch(torch_mod):
    chars = sorted(set(TEXT))
    codes = np.array([chars.index(c) for c in TEXT])
    rng = np.random.default_rng(6)
    batches = []
    for _ in range(10):
        starts = rng.integers(0, len(codes) - 21, size=8)
        batches.append(np.stack([codes[s:s + 21] for s in starts]))
    torch_mod.manual_seed(0)
    ref = torch_mod.nn.Module()
    ref.rnn = torch_mod.nn.LSTM(len(chars), 24, num_layers=2, batch_first=True)
    ref.head = torch_mod.nn.Linear(24, len(chars))
    state = {k: v.double().numpy() for k, v in ref.state_dict().items()}
    theirs = _train_char_lm(torch_mod, state, batches, len(chars), 50)
    ours = _train_char_lm(ember, state, batches, len(chars), 50)
    assert theirs[-1] < theirs[0] * 0.7  # it learns
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-4)
