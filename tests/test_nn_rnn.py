"""RNN, LSTM, GRU, their cells and nn.utils.rnn against real PyTorch with identical weights:
outputs, final states and every gradient."""
import itertools
import sys
import warnings

import numpy as np
import pytest

import ember
from ember.nn.utils import rnn as eru


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


def _pair(torch_mod, cls, *args, dtype="float64", **kwargs):
    torch_mod.manual_seed(0)
    theirs = getattr(torch_mod.nn, cls)(*args, **kwargs).to(getattr(torch_mod, dtype))
    ours = getattr(ember.nn, cls)(*args, **kwargs).to(getattr(ember, dtype))
    _copy_weights(ours, theirs)
    return ours, theirs


def _leaf(lib, array):
    return lib.tensor(array, requires_grad=True)


def _close(a, b, tol=1e-10, msg=""):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=tol,
                               atol=tol, err_msg=msg)


def _flat(out):
    """The tensors of an RNN's result: output (or packed data), then the states."""
    output, state = out
    if isinstance(output, tuple):  # PackedSequence
        output = output.data
    return [output] + (list(state) if isinstance(state, tuple) else [state])


def _compare_grads(ours, theirs, our_leaves, their_leaves, tol):
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        _close(p.grad, tp.grad, tol, n)
    for a, b in zip(our_leaves, their_leaves):
        _close(a.grad, b.grad, tol)


MODES = ["RNN", "LSTM", "GRU"]


@pytest.mark.parametrize("mode,layers,bidirectional,batch_first,packed,with_state",
                         list(itertools.product(MODES, (1, 2), (False, True), (False, True),
                                                (False, True), (False, True))))
def test_rnn_matches_torch(mode, layers, bidirectional, batch_first, packed, with_state,
                           torch_mod):
    rng = np.random.default_rng([MODES.index(mode), layers, int(bidirectional)])
    T, B, F, H = 5, 4, 3, 6
    ours, theirs = _pair(torch_mod, mode, F, H, num_layers=layers,
                         bidirectional=bidirectional, batch_first=batch_first)
    x = rng.standard_normal((B, T, F) if batch_first else (T, B, F))
    D = 2 if bidirectional else 1
    states = [rng.standard_normal((layers * D, B, H))]
    if mode == "LSTM":
        states.append(rng.standard_normal((layers * D, B, H)))
    lengths = [3, 5, 1, 4]
    results, leaves = [], []
    for lib, ru, module in ((ember, eru, ours), (torch_mod, torch_mod.nn.utils.rnn, theirs)):
        xs = _leaf(lib, x)
        hs = [_leaf(lib, s) for s in states]
        inp = ru.pack_padded_sequence(xs, lengths, batch_first, enforce_sorted=False) \
            if packed else xs
        hx = None
        if with_state:
            hx = tuple(hs) if mode == "LSTM" else hs[0]
        out = module(inp, hx)
        if packed:
            assert isinstance(out[0], ru.PackedSequence)
            padded, lens = ru.pad_packed_sequence(out[0], batch_first)
            assert lens.tolist() == lengths
            out = (padded, out[1])
        flat = _flat(out)
        loss = sum((t * lib.tensor(np.linspace(-1, 1, t.numel()).reshape(t.shape))).sum()
                   for t in flat)
        loss.backward()
        results.append(flat)
        leaves.append([xs] + (hs if with_state else []))
    for a, b in zip(*results):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)
    _compare_grads(ours, theirs, leaves[0], leaves[1], 1e-9)


@pytest.mark.parametrize("proj,bidirectional", [(3, False), (2, True)])
def test_lstm_projection_matches_torch(proj, bidirectional, torch_mod):
    rng = np.random.default_rng(1)
    ours, theirs = _pair(torch_mod, "LSTM", 3, 5, num_layers=2, proj_size=proj,
                         bidirectional=bidirectional)
    assert [n for n, _ in ours.named_parameters()] == \
        [n for n, _ in theirs.named_parameters()]
    x = rng.standard_normal((4, 2, 3))
    D = 2 if bidirectional else 1
    h0, c0 = rng.standard_normal((2 * D, 2, proj)), rng.standard_normal((2 * D, 2, 5))
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        xs = _leaf(lib, x)
        out, (h, c) = m(xs, (lib.tensor(h0), lib.tensor(c0)))
        (out.sum() + h.pow(2).sum() + c.sum()).backward()
        res.append((out, h, c, xs))
    for a, b in zip(res[0], res[1]):
        _close(a, b)
    _close(res[0][3].grad, res[1][3].grad)
    _compare_grads(ours, theirs, [], [], 1e-9)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_input_matches_torch(mode, batch_first, torch_mod):
    rng = np.random.default_rng(2)
    ours, theirs = _pair(torch_mod, mode, 3, 4, num_layers=2, bidirectional=True,
                         batch_first=batch_first)
    x = rng.standard_normal((5, 3))
    h = rng.standard_normal((4, 4))
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        hx = (lib.tensor(h), lib.tensor(h)) if mode == "LSTM" else lib.tensor(h)
        res.append(_flat(m(lib.tensor(x), hx)) + _flat(m(lib.tensor(x))))
    for a, b in zip(*res):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b)


def test_dropout_between_layers_matches_torch(torch_mod):
    """Same seed, same dropout masks (the RNG stream is torch's)."""
    if not hasattr(ember.nn.functional, "dropout"):
        pytest.skip("F.dropout not available yet")
    ours, theirs = _pair(torch_mod, "GRU", 3, 4, num_layers=3, dropout=0.5)
    x = np.random.default_rng(3).standard_normal((6, 2, 3))
    torch_mod.manual_seed(7)
    ember.manual_seed(7)
    a, b = ours(ember.tensor(x))[0], theirs(torch_mod.tensor(x))[0]
    _close(a, b)
    ours.eval()
    theirs.eval()
    _close(ours(ember.tensor(x))[0], theirs(torch_mod.tensor(x))[0])


@pytest.mark.parametrize("cls,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                        ("LSTMCell", {}), ("GRUCell", {}),
                                        ("GRUCell", {"bias": False})])
def test_cells_match_torch(cls, kwargs, torch_mod):
    rng = np.random.default_rng(4)
    ours, theirs = _pair(torch_mod, cls, 3, 5, **kwargs)
    assert repr(ours) == repr(theirs)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 5))
    res = []
    for lib, m in ((ember, ours), (torch_mod, theirs)):
        xs, hs = _leaf(lib, x), _leaf(lib, h)
        hx = (hs, hs * 2) if cls == "LSTMCell" else hs
        out = m(xs, hx)
        outs = list(out) if isinstance(out, tuple) else [out]
        unb = m(xs[0], tuple(t[0] for t in hx) if isinstance(hx, tuple) else hx[0])
        outs += list(unb) if isinstance(unb, tuple) else [unb]
        none = m(xs)
        outs += list(none) if isinstance(none, tuple) else [none]
        sum((o * o).sum() for o in outs).backward()
        res.append((outs, xs, hs))
    for a, b in zip(res[0][0], res[1][0]):
        _close(a, b)
    _compare_grads(ours, theirs, res[0][1:], res[1][1:], 1e-9)


@pytest.mark.parametrize("make", [
    lambda nn: nn.LSTM(32, 128, batch_first=True),
    lambda nn: nn.RNN(4, 8, 2, nonlinearity="relu", bias=False, batch_first=True,
                      dropout=0.1, bidirectional=True),
    lambda nn: nn.LSTM(4, 8, proj_size=3, num_layers=2, bidirectional=True),
    lambda nn: nn.GRU(5, 7, 3),
    lambda nn: nn.GRUCell(4, 8, bias=False),
    lambda nn: nn.RNNCell(4, 8, nonlinearity="relu"),
    lambda nn: nn.LSTMCell(4, 8)])
def test_init_names_and_repr_match_torch(make, torch_mod):
    """Bit-identical default initialisation under manual_seed, names, shapes and repr."""
    torch_mod.manual_seed(123)
    ember.manual_seed(123)
    theirs, ours = make(torch_mod.nn), make(ember.nn)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert tuple(p.shape) == tuple(tp.shape), n
        assert np.array_equal(p.detach().numpy(), tp.detach().numpy()), n
    if hasattr(theirs, "_flat_weights_names"):
        assert ours._flat_weights_names == theirs._flat_weights_names
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
        ours.flatten_parameters()


def _message(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - we compare type and text
            return type(e).__name__, str(e)
    return None


BAD_CALLS = [
    lambda lib: lib.nn.LSTM(32, 128, batch_first=True)(lib.randn(2, 3, 16)),
    lambda lib: lib.nn.LSTM(32, 128)(lib.randn(2, 3, 4, 32)),
    lambda lib: lib.nn.RNN(32, 16)(lib.randn(2, 3, 4, 32)),
    lambda lib: lib.nn.GRU(32, 16)(lib.randn(2, 3, 4, 32)),
    lambda lib: lib.nn.GRU(32, 16)(lib.randn(3, 2, 32), lib.randn(1, 3, 16)),
    lambda lib: lib.nn.GRU(32, 16)(lib.randn(3, 32), lib.randn(1, 3, 16)),
    lambda lib: lib.nn.GRU(32, 16)(lib.randn(3, 2, 32), lib.randn(2, 16)),
    lambda lib: lib.nn.LSTM(32, 8)(lib.randn(2, 3, 32), (lib.randn(1, 2, 8),
                                                         lib.randn(1, 3, 8))),
    lambda lib: lib.nn.LSTM(32, 8)(lib.randn(2, 3, 32), (lib.randn(1, 4, 8),
                                                         lib.randn(1, 3, 8))),
    lambda lib: lib.nn.LSTM(32, 8)(lib.randn(3, 32), (lib.randn(1, 2, 8), lib.randn(1, 2, 8))),
    lambda lib: lib.nn.LSTM(32, 8)(lib.randn(2, 3, 32), (lib.randn(2, 8), lib.randn(2, 8))),
    lambda lib: lib.nn.LSTM(4, 8)(lib.randn(2, 3, 4, dtype=lib.float64)),
    lambda lib: lib.nn.LSTM(4, 8, dropout=1.5),
    lambda lib: lib.nn.LSTM(4, 0),
    lambda lib: lib.nn.LSTM(4, 8, num_layers=0),
    lambda lib: lib.nn.LSTM(4, 8, proj_size=8),
    lambda lib: lib.nn.LSTM(4, 8, proj_size=-1),
    lambda lib: lib.nn.GRU(4, 8, proj_size=2),
    lambda lib: lib.nn.RNN(4, 8, nonlinearity="sigmoid"),
    lambda lib: lib.nn.RNN(4, 8.0),
    lambda lib: lib.nn.LSTM(4, 8, bias=1),
    lambda lib: lib.nn.LSTMCell(4, 8)(lib.randn(2, 3, 4)),
    lambda lib: lib.nn.LSTMCell(4, 8)(lib.randn(2, 5)),
    lambda lib: lib.nn.LSTMCell(4, 8)(lib.randn(2, 4), (lib.randn(3, 8), lib.randn(2, 8))),
    lambda lib: lib.nn.LSTMCell(4, 8)(lib.randn(2, 4), (lib.randn(2, 7), lib.randn(2, 8))),
    lambda lib: lib.nn.GRUCell(4, 8)(lib.randn(2, 4), lib.randn(3, 8)),
    lambda lib: lib.nn.RNNCell(4, 8, nonlinearity="x")(lib.randn(2, 4)),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 3, 2), [2, 3, 1]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 3, 2), [3, 3, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 3, 2), [3, 2]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.randn(4, 3, 2),
                                                      lib.tensor([[3, 2, 1]])),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_sequence([lib.ones(3), lib.ones(1)]), total_length=2),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3)], padding_side="middle"),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2, 3), lib.ones(3, 2)]),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.PackedSequence(lib.ones(3)),
]


@pytest.mark.parametrize("k", range(len(BAD_CALLS)))
def test_errors_match_torch(k, torch_mod):
    theirs = _message(lambda: BAD_CALLS[k](torch_mod))
    ours = _message(lambda: BAD_CALLS[k](ember))
    assert theirs is not None
    assert ours == (theirs[0], theirs[1].replace("torch.", "ember."))


def test_dropout_warning_matches_torch(torch_mod):
    texts = []
    for lib in (ember, torch_mod):
        with pytest.warns(UserWarning) as record:
            lib.nn.LSTM(4, 8, dropout=0.5)
        texts.append(str(record[0].message))
    assert texts[0] == texts[1]


# ---------------------------------------------------------------------- nn.utils.rnn
def test_pack_pad_roundtrip_matches_torch(torch_mod):
    tru = torch_mod.nn.utils.rnn
    x = np.random.default_rng(5).standard_normal((4, 3, 2))
    for batch_first, enforce_sorted, lengths in itertools.product(
            (False, True), (True, False), ([4, 2, 1], [2, 4, 1])):
        if enforce_sorted and lengths != sorted(lengths, reverse=True):
            continue
        xi = x.transpose(1, 0, 2).copy() if batch_first else x
        for lens in (lengths, ember.tensor(lengths)):
            ours = eru.pack_padded_sequence(_leaf(ember, xi), lens, batch_first,
                                            enforce_sorted)
            theirs = tru.pack_padded_sequence(_leaf(torch_mod, xi), lengths, batch_first,
                                              enforce_sorted)
            _close(ours.data, theirs.data, 0)
            for a, b in zip(ours[1:], theirs[1:]):
                assert (a is None and b is None) or a.tolist() == b.tolist()
            for total in (None, 6):
                pa, la = eru.pad_packed_sequence(ours, batch_first, -1.5, total)
                pb, lb = tru.pad_packed_sequence(theirs, batch_first, -1.5, total)
                _close(pa, pb, 0)
                assert la.tolist() == lb.tolist() and la.dtype == ember.int64
            assert [u.tolist() for u in eru.unpack_sequence(ours)] == \
                [u.tolist() for u in tru.unpack_sequence(theirs)]


def test_pack_pad_gradients_match_torch(torch_mod):
    tru = torch_mod.nn.utils.rnn
    x = np.random.default_rng(6).standard_normal((4, 3, 2))
    w = np.random.default_rng(7).standard_normal((5, 4, 2))
    grads = []
    for lib, ru in ((ember, eru), (torch_mod, tru)):
        xs = _leaf(lib, x)
        p = ru.pack_padded_sequence(xs, [1, 3, 2, 3], batch_first=True, enforce_sorted=False)
        padded, _ = ru.pad_packed_sequence(p, total_length=5, padding_value=2.0)
        (padded * lib.tensor(w)).sum().backward()
        grads.append(xs.grad)
    _close(grads[0], grads[1], 0)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["left", "right"])
def test_pad_sequence_matches_torch(batch_first, side, torch_mod):
    tru = torch_mod.nn.utils.rnn
    rng = np.random.default_rng(8)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 5, 0, 3)]
    res = []
    for lib, ru in ((ember, eru), (torch_mod, tru)):
        leaves = [_leaf(lib, s) for s in seqs]
        out = ru.pad_sequence(leaves, batch_first, 7.0, side)
        (out * out).sum().backward()
        res.append((out, leaves))
    _close(res[0][0], res[1][0], 0)
    for a, b in zip(res[0][1], res[1][1]):
        _close(a.grad, b.grad, 0)
    padded = eru.pad_sequence([ember.tensor(s) for s in seqs], batch_first)
    back = eru.unpad_sequence(padded, ember.tensor([2, 5, 0, 3]), batch_first)
    assert [b.tolist() for b in back] == [s.tolist() for s in seqs]


def test_pack_sequence_and_packed_sequence_methods(torch_mod):
    seqs = [[1, 2, 3], [4, 5], [6]]
    ours = eru.pack_sequence([ember.tensor(s) for s in seqs])
    theirs = torch_mod.nn.utils.rnn.pack_sequence([torch_mod.tensor(s) for s in seqs])
    assert repr(ours) == repr(theirs)
    assert ours.data.tolist() == theirs.data.tolist()
    assert ours._fields == theirs._fields and isinstance(ours, tuple)
    d = ours.double()
    assert d.data.dtype == ember.float64 and d.batch_sizes is ours.batch_sizes
    assert ours.to(ember.int64) is ours and not ours.is_cuda
    u = eru.pack_sequence([ember.tensor(s) for s in seqs[::-1]], enforce_sorted=False)
    assert u.sorted_indices.tolist() == [2, 1, 0] and u.unsorted_indices.tolist() == [2, 1, 0]
    assert eru.invert_permutation(ember.tensor([2, 0, 1])).tolist() == [1, 2, 0]


# ---------------------------------------------------------------------- long sequences
@pytest.mark.parametrize("packed", [False, True])
def test_lstm_backward_over_1000_steps_has_no_recursion_limit(packed, torch_mod):
    """Unpacked, a layer is one op; packed, the graph runs through the 1000 cell steps."""
    rng = np.random.default_rng(9)
    ours, theirs = _pair(torch_mod, "LSTM", 2, 3)
    x = rng.standard_normal((1000, 1, 2)) * 0.5
    outs = []
    for lib, ru, module in ((ember, eru, ours), (torch_mod, torch_mod.nn.utils.rnn, theirs)):
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(400)  # a recursive engine would need thousands of frames
        try:
            inp = ru.pack_padded_sequence(_leaf(lib, x), [1000]) if packed else _leaf(lib, x)
            out, (h, c) = module(inp)
            out = out.data if packed else out
            out.sum().backward()
        finally:
            sys.setrecursionlimit(limit)
        outs.append(out)
    _close(*outs, 1e-9)
    _compare_grads(ours, theirs, [], [], 1e-8)


# ---------------------------------------------------------------------- the graph
@pytest.mark.parametrize("batch_first,bidirectional", [(False, False), (True, True)])
def test_lstm_graph_and_output_layout_match_torch(batch_first, bidirectional, torch_mod):
    """grad_fn names (one node per layer and direction, as PyTorch's float32 CPU LSTM) and
    the output's strides (a batch_first output is a transposed time-major buffer)."""
    ours, theirs = _pair(torch_mod, "LSTM", 3, 4, num_layers=2, batch_first=batch_first,
                         bidirectional=bidirectional, dtype="float32")
    x = np.random.default_rng(5).standard_normal((2, 5, 3)).astype(np.float32)
    res = []
    for lib, module in ((ember, ours), (torch_mod, theirs)):
        out, (h, c) = module(_leaf(lib, x))
        fn = out.grad_fn if not batch_first else out.grad_fn.next_functions[0][0]
        res.append((type(out.grad_fn).__name__, type(fn).__name__, out.stride(),
                    type(h.grad_fn).__name__,
                    type(c.grad_fn).__name__,
                    [type(e[0]).__name__ for e in h.grad_fn.next_functions]))
    assert res[0] == res[1]


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_double_backward_matches_torch(bidirectional, torch_mod):
    """create_graph=True through a whole LSTM layer: the gradient is differentiable again."""
    rng = np.random.default_rng(6)
    ours, theirs = _pair(torch_mod, "LSTM", 2, 3, bidirectional=bidirectional)
    x = rng.standard_normal((4, 2, 2))
    h0 = rng.standard_normal((2 if bidirectional else 1, 2, 3))
    res = []
    for lib, module in ((ember, ours), (torch_mod, theirs)):
        xs, hs = _leaf(lib, x), _leaf(lib, h0)
        out, (h, c) = module(xs, (hs, hs * 0.5))
        loss = (out * out).sum() + (h * c).sum()
        gx, gh = lib.autograd.grad(loss, [xs, hs], create_graph=True)
        ((gx * gx).sum() + gh.sum()).backward()
        res.append([gx, gh, xs.grad, hs.grad] + [p.grad for p in module.parameters()])
    for a, b in zip(*res):
        _close(a, b, 1e-9)
