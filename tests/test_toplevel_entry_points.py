"""torch's top-level ATen entry points: the *_copy view variants, native_* normalization and
dropout, convolution / pooling / grid sampling, embedding_bag, the recurrent cells and layers,
native_norm and the synchronized batch-norm kernels. Values, extra outputs, random streams,
gradients and errors compared with real torch on the same inputs."""

import numpy as np
import pytest

import ember
from checks import assert_close
from toplevel_checks import error_of, pair, same_error, same_grads, same_values


# ---------------------------------------------------------------------- view copies
VIEW_COPY_CASES = [
    ("alias_copy", ()), ("detach_copy", ()), ("diagonal_copy", (1, 0, 2)),
    ("expand_copy", ((3, 2, 3, 4),)), ("permute_copy", ((2, 0, 1),)),
    ("select_copy", (1, -1)), ("slice_copy", (2, 1, None, 2)), ("split_copy", (2, 2)),
    ("split_with_sizes_copy", ([1, 3], 2)), ("squeeze_copy", ()), ("squeeze_copy", (0,)),
    ("transpose_copy", (0, 2)), ("unbind_copy", (1,)), ("unfold_copy", (2, 2, 1)),
    ("unsqueeze_copy", (-1,)), ("view_copy", ((6, 4),)),
    ("as_strided_copy", ((2, 2), (1, 2), 1)),
]


@pytest.mark.parametrize("name,args", VIEW_COPY_CASES)
def test_view_copies_match_torch(torch_mod, name, args):
    data = np.random.default_rng(1).standard_normal((2, 3, 4))
    x = ember.tensor(data, requires_grad=True)
    tx = torch_mod.tensor(data, requires_grad=True)
    got, want = getattr(ember, name)(x, *args), getattr(torch_mod, name)(tx, *args)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and g.stride() == w.stride()
        assert_close(g.detach().numpy(), w.detach().numpy())
        assert g._base is None and g.data_ptr() != x.data_ptr()
        # NOTE: torch's detach_copy result claims requires_grad with a NotImplemented
        # grad_fn (its backward raises); ember's is detached, as the name says.
        assert g.requires_grad == (w.requires_grad and name != "detach_copy")
    if got[0].requires_grad:
        weights = [np.arange(w.numel()).reshape(tuple(w.shape)) * 0.5 for w in want]
        sum(((g * ember.tensor(c)).sum() for g, c in zip(got, weights)),
            ember.zeros(())).backward()
        sum((w * torch_mod.tensor(c)).sum() for w, c in zip(want, weights)).backward()
        assert_close(x.grad.numpy(), tx.grad.numpy())


def test_view_copies_complex_out_and_errors(torch_mod):
    data = np.arange(12.0).reshape(3, 2, 2)
    assert_close(ember.view_as_complex_copy(ember.tensor(data)).numpy(),
                 torch_mod.view_as_complex_copy(torch_mod.tensor(data)).numpy())
    c = data[..., 0] + 1j * data[..., 1]
    assert_close(ember.view_as_real_copy(ember.tensor(c)).numpy(),
                 torch_mod.view_as_real_copy(torch_mod.tensor(c)).numpy())
    assert_close(ember.t_copy(ember.tensor(data[0])).numpy(), data[0].T)
    out = ember.empty(0)
    ember.permute_copy(ember.tensor(data), (1, 0, 2), out=out)
    assert_close(out.numpy(), data.transpose(1, 0, 2))
    pieces = [ember.empty(0), ember.empty(0)]
    ember.split_copy(ember.tensor(data), 2, out=pieces)
    assert_close(pieces[1].numpy(), data[2:])
    x, tx = ember.tensor(data), torch_mod.tensor(data)
    same_error(lambda: ember.t_copy(x), lambda: torch_mod.t_copy(tx))
    same_error(lambda: ember.select_copy(x, 0, 5), lambda: torch_mod.select_copy(tx, 0, 5))
    same_error(lambda: ember.permute_copy(3, (0,)), lambda: torch_mod.permute_copy(3, (0,)))
    same_error(lambda: ember.slice_copy(x, 5), lambda: torch_mod.slice_copy(tx, 5))


# ---------------------------------------------------------------------- functional entry points
def test_native_batch_norm_and_batch_norm(torch_mod, rng):
    data = rng.standard_normal((4, 3, 5))
    for training in (True, False):
        x, tx = pair(torch_mod, data)
        w, tw = pair(torch_mod, rng.standard_normal(3))
        rm, trm = ember.zeros(3, dtype=ember.float64), torch_mod.zeros(3, dtype=torch_mod.float64)
        rv, trv = ember.ones(3, dtype=ember.float64), torch_mod.ones(3, dtype=torch_mod.float64)
        got = ember.native_batch_norm(x, w, None, rm, rv, training, 0.1, 1e-5)
        want = torch_mod.native_batch_norm(tx, tw, None, trm, trv, training, 0.1, 1e-5)
        same_values(got, want)
        same_values((rm, rv), (trm, trv))
        same_grads(torch_mod, got[0], want[0], [(x, tx), (w, tw)])
        x, tx = pair(torch_mod, data, grad=False)
        same_values(ember.batch_norm(x, None, None, rm, rv, training, 0.1, 1e-5, False),
                     torch_mod.batch_norm(tx, None, None, trm, trv, training, 0.1, 1e-5, False))
    x, tx = pair(torch_mod, data, grad=False)
    rm, trm = ember.zeros(3, dtype=ember.float64), torch_mod.zeros(3, dtype=torch_mod.float64)
    rv, trv = ember.ones(3, dtype=ember.float64), torch_mod.ones(3, dtype=torch_mod.float64)
    same_values(ember.batch_norm_update_stats(x, rm, rv, 0.2),
                 torch_mod.batch_norm_update_stats(tx, trm, trv, 0.2))
    same_values((rm, rv), (trm, trv))


def test_native_layer_and_group_norm(torch_mod, rng):
    data = rng.standard_normal((2, 6, 5))
    x, tx = pair(torch_mod, data)
    w, tw = pair(torch_mod, rng.standard_normal(5))
    got = ember.native_layer_norm(x, (5,), w, None, 1e-5)
    want = torch_mod.native_layer_norm(tx, (5,), tw, None, 1e-5)
    same_values(got, want)
    same_grads(torch_mod, got[0], want[0], [(x, tx), (w, tw)])
    x, tx = pair(torch_mod, data)
    got = ember.native_group_norm(x, None, None, 2, 6, 5, 3, 1e-5)
    want = torch_mod.native_group_norm(tx, None, None, 2, 6, 5, 3, 1e-5)
    same_values(got, want)
    same_grads(torch_mod, got[0], want[0], [(x, tx)])
    x, tx = pair(torch_mod, data)
    same_values(ember.rms_norm(x, (6, 5)), torch_mod.rms_norm(tx, (6, 5)))


def test_dropout_entry_points_replay_torch_stream(torch_mod):
    data = np.arange(1.0, 97.0).reshape(2, 4, 3, 4)
    for name, args in (("native_dropout", (0.3, True)), ("native_dropout", (0.3, None)),
                       ("native_dropout", (0.3, False)), ("feature_dropout", (0.5, True)),
                       ("feature_dropout", (0.5, False)), ("native_channel_shuffle", (2,))):
        ember.manual_seed(7)
        torch_mod.manual_seed(7)
        x, tx = pair(torch_mod, data)
        got, want = getattr(ember, name)(x, *args), getattr(torch_mod, name)(tx, *args)
        same_values(got, want)
        first = got[0] if isinstance(got, tuple) else got
        if first.requires_grad and name != "native_channel_shuffle":   # torch: no derivative
            same_grads(torch_mod, first, want[0] if isinstance(want, tuple) else want,
                        [(x, tx)])
    for name in ("feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
        ember.manual_seed(3)
        torch_mod.manual_seed(3)
        x, tx = ember.tensor(data), torch_mod.tensor(data)
        assert getattr(ember, name)(x, 0.5, True) is x
        getattr(torch_mod, name)(tx, 0.5, True)
        same_values(x, tx)


def test_convolution_pool_and_grid_entry_points(torch_mod, rng):
    x, tx = pair(torch_mod, rng.standard_normal((2, 2, 6)))
    w, tw = pair(torch_mod, rng.standard_normal((4, 2, 3)))
    got = ember.convolution(x, w, None, (2,), (1,), (1,), False, (0,), 1)
    want = torch_mod.convolution(tx, tw, None, (2,), (1,), (1,), False, (0,), 1)
    same_values(got, want)
    same_grads(torch_mod, got, want, [(x, tx), (w, tw)])
    x, tx = pair(torch_mod, rng.standard_normal((1, 2, 4, 4)))
    w, tw = pair(torch_mod, rng.standard_normal((2, 3, 3, 3)))
    b, tb = pair(torch_mod, rng.standard_normal(3))
    got = ember.convolution(x, w, b, (2, 2), (1, 1), (1, 1), True, (1, 1), 1)
    want = torch_mod.convolution(tx, tw, tb, (2, 2), (1, 1), (1, 1), True, (1, 1), 1)
    same_values(got, want)
    same_grads(torch_mod, got, want, [(x, tx), (w, tw), (b, tb)])
    x, tx = pair(torch_mod, rng.standard_normal((2, 3, 9)))
    same_values(ember.max_pool1d_with_indices(x, 3, 2, 1),
                 torch_mod.max_pool1d_with_indices(tx, 3, 2, 1))
    theta = rng.standard_normal((2, 2, 3))
    grid = ember.affine_grid_generator(ember.tensor(theta), (2, 1, 4, 5), False)
    same_values(grid, torch_mod.affine_grid_generator(torch_mod.tensor(theta),
                                                        (2, 1, 4, 5), False))
    img = rng.standard_normal((2, 1, 4, 5))
    for mode in (0, 1, 2):
        for padding in (0, 1, 2):
            for fn in ("grid_sampler", "grid_sampler_2d"):
                x, tx = pair(torch_mod, img)
                got = getattr(ember, fn)(x, grid * 1.2, mode, padding, True)
                want = getattr(torch_mod, fn)(tx, torch_mod.tensor(grid.numpy()) * 1.2,
                                              mode, padding, True)
                same_values(got, want)
    vol = rng.standard_normal((1, 1, 3, 3, 3))
    g3 = rng.uniform(-1, 1, (1, 2, 2, 2, 3))
    same_values(ember.grid_sampler_3d(ember.tensor(vol), ember.tensor(g3), 0, 0, False),
                 torch_mod.grid_sampler_3d(torch_mod.tensor(vol), torch_mod.tensor(g3), 0, 0,
                                           False))


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_entry_point(torch_mod, rng, mode):
    table = rng.standard_normal((10, 3))
    idx = [1, 2, 4, 5, 4, 3]
    offsets = [0, 3, 3]
    w, tw = pair(torch_mod, table)
    got = ember.embedding_bag(w, ember.tensor(idx), ember.tensor(offsets), False, mode)
    want = torch_mod.embedding_bag(tw, torch_mod.tensor(idx), torch_mod.tensor(offsets),
                                   False, mode)
    same_values(got, want)
    same_grads(torch_mod, got[0], want[0], [(w, tw)])
    for dtype in ("float32", "float64"):
        for bag_idx, offs in (([1, 2, 4, 5, 4, 3], [0, 3]), ([4, 4, 1], [0, 2])):
            args = (False, mode, False, None, False, 4)   # padding_idx 4
            got = ember.embedding_bag(ember.tensor(table, dtype=getattr(ember, dtype)),
                                      ember.tensor(bag_idx), ember.tensor(offs), *args)
            want = torch_mod.embedding_bag(torch_mod.tensor(table,
                                                            dtype=getattr(torch_mod, dtype)),
                                           torch_mod.tensor(bag_idx), torch_mod.tensor(offs),
                                           *args)
            same_values(got, want)
    if mode == 0:
        weights = rng.uniform(0.5, 2, 6)
        got = ember.embedding_bag(ember.tensor(table), ember.tensor(idx), ember.tensor(offsets),
                                  False, 0, False, ember.tensor(weights))
        want = torch_mod.embedding_bag(tw.detach(), torch_mod.tensor(idx),
                                       torch_mod.tensor(offsets), False, 0, False,
                                       torch_mod.tensor(weights))
        same_values(got, want)


def test_embedding_renorm_(torch_mod, rng):
    table = rng.standard_normal((6, 4)) * 3
    w, tw = ember.tensor(table), torch_mod.tensor(table)
    assert ember.embedding_renorm_(w, ember.tensor([0, 2, 2, 5]), 1.5, 2.0) is w
    torch_mod.embedding_renorm_(tw, torch_mod.tensor([0, 2, 2, 5]), 1.5, 2.0)
    same_values(w, tw)


# ---------------------------------------------------------------------- recurrent entry points
@pytest.mark.parametrize("name,gates", [("lstm_cell", 4), ("gru_cell", 3),
                                        ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)])
def test_rnn_cells_match_torch(torch_mod, rng, name, gates):
    arrays = [rng.standard_normal(s) for s in ((3, 4), (3, 5), (gates * 5, 4), (gates * 5, 5),
                                               (gates * 5,), (gates * 5,))]
    pairs = [pair(torch_mod, a) for a in arrays]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    if name == "lstm_cell":
        c = rng.standard_normal((3, 5))
        ec, tc = pair(torch_mod, c)
        got = ember.lstm_cell(ours[0], (ours[1], ec), *ours[2:])
        want = torch_mod.lstm_cell(theirs[0], (theirs[1], tc), *theirs[2:])
        pairs.append((ec, tc))
        same_values(got, want)
        got, want = got[0] + got[1] * 2, want[0] + want[1] * 2
    else:
        got, want = getattr(ember, name)(*ours), getattr(torch_mod, name)(*theirs)
        same_values(got, want)
    same_grads(torch_mod, got, want, pairs)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional,batch_first", [(False, False), (True, True)])
def test_rnn_layer_entry_points_match_torch(torch_mod, rng, name, bidirectional,
                                            batch_first):
    gates = {"lstm": 4, "gru": 3}.get(name, 1)
    layers, dirs, hidden = 2, 2 if bidirectional else 1, 3
    params = []
    for layer in range(layers):
        width = 4 if layer == 0 else hidden * dirs
        for _ in range(dirs):
            params += [rng.standard_normal((gates * hidden, width)) * 0.5,
                       rng.standard_normal((gates * hidden, hidden)) * 0.5,
                       rng.standard_normal(gates * hidden) * 0.1,
                       rng.standard_normal(gates * hidden) * 0.1]
    pairs = [pair(torch_mod, p) for p in params]
    x_shape = (2, 5, 4) if batch_first else (5, 2, 4)
    x, tx = pair(torch_mod, rng.standard_normal(x_shape))
    h, th = pair(torch_mod, rng.standard_normal((layers * dirs, 2, hidden)))
    hx, thx = (h, h * 0.5), (th, th * 0.5)
    if name != "lstm":
        hx, thx = h, th
    args = (True, layers, 0.0, False, bidirectional, batch_first)
    got = getattr(ember, name)(x, hx, [p[0] for p in pairs], *args)
    want = getattr(torch_mod, name)(tx, thx, [p[1] for p in pairs], *args)
    same_values(got, want, atol=1e-6)
    same_grads(torch_mod, got[0] + got[1].sum(), want[0] + want[1].sum(),
                [(x, tx), (h, th)] + pairs)


def test_rnn_layer_dropout_out_of_range_is_atens_error(torch_mod):
    """torch.lstm checks its dropout only where it applies it (between layers, in
    training), with ATen's RuntimeError."""
    for m in (ember, torch_mod):
        m.manual_seed(0)
    for layers in (1, 2):
        shapes = [(20, 4), (20, 5), (20,), (20,)] + ([(20, 5), (20, 5), (20,), (20,)]
                                                      if layers == 2 else [])
        results = []
        for m in (ember, torch_mod):
            x, h = m.ones(3, 2, 4), (m.zeros(layers, 2, 5), m.zeros(layers, 2, 5))
            params = [m.full(s, 0.1) for s in shapes]
            try:
                out = m.lstm(x, h, params, True, layers, 1.5, True, False, False)[0]
                results.append(("ok", out.detach().numpy()))
            except Exception as exc:  # noqa: BLE001 - compared below
                results.append((type(exc).__name__, str(exc)))
        assert results[0][0] == results[1][0]
        if results[0][0] == "ok":
            np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-6)
        else:
            assert results[0][1] == results[1][1]


def test_rnn_packed_form_is_refused():
    with pytest.raises(NotImplementedError, match="packed sequences"):
        ember.gru(ember.ones(6, 4), ember.tensor([3, 3]), ember.zeros(1, 3, 3),
                  [ember.ones(9, 4), ember.ones(9, 3)], False, 1, 0.0, False, False)


def test_entry_point_shape_errors_match_torch(torch_mod):
    def cell_call(m, name, gates, x, h):
        hidden = (h, h) if name == "lstm_cell" else h
        return getattr(m, name)(x, hidden, m.ones(gates * 5, 4), m.ones(gates * 5, 5))
    for name, gates in (("lstm_cell", 4), ("gru_cell", 3), ("rnn_tanh_cell", 1)):
        for x_shape, h_shape in (((4,), (5,)), ((3, 3), (3, 5)), ((3, 4), (2, 5)),
                                 ((3, 4), (3, 6))):
            same_error(lambda: cell_call(ember, name, gates, ember.ones(*x_shape),
                                         ember.ones(*h_shape)),
                       lambda: cell_call(torch_mod, name, gates, torch_mod.ones(*x_shape),
                                         torch_mod.ones(*h_shape)))
    for shape, kwargs in (((5,), {"lengths": [2, 2]}), ((5, 2), {"lengths": [2, 3], "axis": 1})):
        same_error(lambda: ember.segment_reduce(
            ember.ones(*shape), "sum", **{k: ember.tensor(v) if isinstance(v, list) else v
                                          for k, v in kwargs.items()}),
            lambda: torch_mod.segment_reduce(
                torch_mod.ones(*shape), "sum", **{k: torch_mod.tensor(v) if isinstance(v, list)
                                                  else v for k, v in kwargs.items()}))
    same_values(ember.segment_reduce(ember.ones(5), "sum", lengths=ember.tensor([2, 2]),
                                      unsafe=True),
                 torch_mod.segment_reduce(torch_mod.ones(5), "sum",
                                          lengths=torch_mod.tensor([2, 2]), unsafe=True))


def test_rnn_layer_errors_match_torch(torch_mod):
    def call(m, name, hx, params):
        return getattr(m, name)(m.ones(5, 2, 4), hx(m), [p(m) for p in params], False, 1, 0.0,
                                False, False, False)
    cases = [("lstm", lambda m: (m.ones(1, 2, 3),), [lambda m: m.ones(12, 4),
                                                     lambda m: m.ones(12, 3)]),
             ("gru", lambda m: m.ones(1, 2, 3), [lambda m: m.ones(9, 4), lambda m: m.ones(9, 3),
                                                 lambda m: m.ones(9)]),
             ("gru", lambda m: m.ones(0, 2, 3), [lambda m: m.ones(9, 4),
                                                 lambda m: m.ones(9, 3)])]
    for name, hx, params in cases:
        same_error(lambda: call(ember, name, hx, params), lambda: call(torch_mod, name, hx, params))


def test_native_norm_sparse_only_as_torch(torch_mod):
    dense = [[0.0, 3.0], [4.0, 0.0]]
    s, ts = ember.tensor(dense).to_sparse(), torch_mod.tensor(dense).to_sparse()
    for args in ((), (1,), (3, (0, 1), False, None)):
        same_values(ember.native_norm(s, *args), torch_mod.native_norm(ts, *args))
    same_error(lambda: ember.native_norm(s, 2, (0,), False, None),
               lambda: torch_mod.native_norm(ts, 2, (0,), False, None))
    got = error_of(lambda: ember.native_norm(ember.ones(2)))
    want = error_of(lambda: torch_mod.native_norm(torch_mod.ones(2)))
    assert got[0] is want[0] is NotImplementedError
    assert got[1].split(". ")[0] == want[1].split(". ")[0]


# ---------------------------------------------------------------------- sync batch norm kernels
def test_sync_batch_norm_kernels_refuse_cpu_as_torch(torch_mod):
    x, tx = ember.ones(2, 3), torch_mod.ones(2, 3)
    for name, args in (("batch_norm_stats", (1e-5,)),
                       ("batch_norm_elemt", (None, None, "m", "m", 1e-5))):
        e_args = [ember.zeros(3) if a == "m" else a for a in args]
        t_args = [torch_mod.zeros(3) if a == "m" else a for a in args]
        got, want = error_of(lambda: getattr(ember, name)(x, *e_args)), \
            error_of(lambda: getattr(torch_mod, name)(tx, *t_args))
        assert got[0] is want[0] is NotImplementedError
        assert got[1].split(". ")[0] == want[1].split(". ")[0]


def test_sync_batch_norm_kernels_reproduce_batch_norm(torch_mod, cuda_standin, rng):
    """Two 'devices' holding halves of a batch: the kernels' forward and input gradient
    equal torch's batch_norm (training) on the whole batch."""
    data = rng.standard_normal((6, 3, 4))
    weight, bias = rng.standard_normal(3), rng.standard_normal(3)
    seed = rng.standard_normal((6, 3, 4))
    eps, momentum = 1e-5, 0.1
    tx = torch_mod.tensor(data, requires_grad=True)
    t_rm, t_rv = torch_mod.zeros(3, dtype=torch_mod.float64), torch_mod.ones(3,
                                                                           dtype=torch_mod.float64)
    want = torch_mod.nn.functional.batch_norm(tx, t_rm, t_rv, torch_mod.tensor(weight),
                                              torch_mod.tensor(bias), True, momentum, eps)
    (want * torch_mod.tensor(seed)).sum().backward()

    def cuda(a):
        return ember.tensor(a, device="cuda")
    halves = [cuda(data[:2]), cuda(data[2:])]
    stats = [ember.batch_norm_stats(h, eps) for h in halves]
    mean = ember.stack([s[0] for s in stats])
    invstd = ember.stack([s[1] for s in stats])
    counts = cuda(np.array([2 * 4, 4 * 4], dtype=np.float64))
    rm = ember.zeros(3, dtype=ember.float64, device="cuda")
    rv = ember.ones(3, dtype=ember.float64, device="cuda")
    g_mean, g_invstd = ember.batch_norm_gather_stats_with_counts(
        halves[0], mean, invstd, rm, rv, momentum, eps, counts)
    same_values(rm.cpu(), t_rm)
    same_values(rv.cpu(), t_rv)
    w, b = cuda(weight), cuda(bias)
    out = ember.cat([ember.batch_norm_elemt(h, w, b, g_mean, g_invstd, eps) for h in halves])
    same_values(out.cpu(), want, atol=1e-10)
    grads = [cuda(seed[:2]), cuda(seed[2:])]
    reduced = [ember.batch_norm_backward_reduce(g, h, g_mean, g_invstd, w, True, True, True)
               for g, h in zip(grads, halves)]
    sum_dy = reduced[0][0] + reduced[1][0]
    sum_dy_xmu = reduced[0][1] + reduced[1][1]
    grad_in = ember.cat([ember.batch_norm_backward_elemt(g, h, g_mean, g_invstd, w, sum_dy,
                                                         sum_dy_xmu, counts)
                         for g, h in zip(grads, halves)])
    assert_close(grad_in.cpu().numpy(), tx.grad.numpy(), atol=1e-10)
    t_w = torch_mod.tensor(weight, requires_grad=True)
    t_b = torch_mod.tensor(bias, requires_grad=True)
    again = torch_mod.nn.functional.batch_norm(torch_mod.tensor(data), None, None, t_w, t_b,
                                               True, momentum, eps)
    (again * torch_mod.tensor(seed)).sum().backward()
    assert_close((reduced[0][2] + reduced[1][2]).cpu().numpy(), t_w.grad.numpy(), atol=1e-10)
    assert_close((reduced[0][3] + reduced[1][3]).cpu().numpy(), t_b.grad.numpy(), atol=1e-10)
    g_mean2, _ = ember.batch_norm_gather_stats(halves[0], mean[:1], invstd[:1], None, None,
                                               momentum, eps, 8)
    same_values(g_mean2.cpu(), torch_mod.tensor(data[:2]).mean((0, 2)))
