"""torch's top-level callables that are not Tensor ops: settings and queries, the default
device, control flow, sym_* helpers; and (further down) the functional entry points, view
copies and samplers. Each compared with real torch on the same inputs."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001  (the type is what is compared)
        return type(exc), str(exc).split("\n")[0]
    return None


def same_error(ember_fn, torch_fn):
    got, want = _error(ember_fn), _error(torch_fn)
    assert want is not None and got is not None, (got, want)
    assert got[0].__name__ == want[0].__name__, (got, want)
    assert got[1].replace("ember", "torch") == want[1], (got, want)


# ---------------------------------------------------------------------- settings, queries
def test_typename_matches_torch(torch_mod):
    for make in (lambda m: m.ones(2), lambda m: m.ones(2, dtype=m.int64),
                 lambda m: m.zeros(1, dtype=m.float64), lambda m: 3, lambda m: "s",
                 lambda m: m.float32):
        want = torch_mod.typename(make(torch_mod))
        assert ember.typename(make(ember)).replace("ember", "torch") == want
    assert ember.typename(ember.nn.Linear(1, 1)) == "ember.nn.modules.linear.Linear"


def test_storage_distributed_device_queries(torch_mod):
    x, tx = ember.ones(2), torch_mod.ones(2)
    assert ember.is_storage(x.untyped_storage()) is torch_mod.is_storage(tx.untyped_storage())
    assert ember.is_storage(x) is torch_mod.is_storage(tx) is False
    assert ember.is_distributed(x) is torch_mod.is_distributed(tx)
    assert ember.get_device(x) == torch_mod.get_device(tx) == -1
    same_error(lambda: ember.get_device(3), lambda: torch_mod.get_device(3))
    same_error(lambda: ember.is_distributed(3), lambda: torch_mod.is_distributed(3))
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cuda:0")) is ember.cuda
    same_error(lambda: ember.get_device_module("foo"), lambda: torch_mod.get_device_module("foo"))
    same_error(lambda: ember.get_device_module(3), lambda: torch_mod.get_device_module(3))
    same_error(lambda: ember.get_device_module("meta"),
               lambda: torch_mod.get_device_module("meta"))
    assert ember.compiled_with_cxx11_abi() is torch_mod.compiled_with_cxx11_abi()
    assert ember.init_num_threads() is None
    assert ember.is_vulkan_available() is torch_mod.is_vulkan_available()
    assert ember.set_flush_denormal(False) is False


def test_warn_always_repeats_once_only_warnings():
    assert ember.is_warn_always_enabled() is False
    x = ember.ones(4)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ember.stft(x, 4, return_complex=True)      # the rectangular-window warning: once
        ember.stft(x, 4, return_complex=True)
        ember.set_warn_always(True)
        try:
            assert ember.is_warn_always_enabled() is True
            ember.stft(x, 4, return_complex=True)
            ember.stft(x, 4, return_complex=True)
        finally:
            ember.set_warn_always(False)
    texts = [str(w.message) for w in seen if "window was not provided" in str(w.message)]
    assert len(texts) >= 2 and len(texts) <= 3   # at most one before, two while on
    with pytest.raises(TypeError):
        ember.set_warn_always(1)


def test_deterministic_debug_mode(torch_mod):
    try:
        for mode in ("warn", 2, "default", 1, 0, "error"):
            torch_mod.set_deterministic_debug_mode(mode)
            ember.set_deterministic_debug_mode(mode)
            assert ember.get_deterministic_debug_mode() == \
                torch_mod.get_deterministic_debug_mode()
            assert ember.are_deterministic_algorithms_enabled() == \
                torch_mod.are_deterministic_algorithms_enabled()
        for bad in ("x", 3, 1.0):
            same_error(lambda: ember.set_deterministic_debug_mode(bad),
                       lambda: torch_mod.set_deterministic_debug_mode(bad))
    finally:
        ember.set_deterministic_debug_mode(0)
        torch_mod.set_deterministic_debug_mode(0)


def test_set_anomaly_enabled():
    try:
        ember.set_anomaly_enabled(True, False)
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
        ember.set_anomaly_enabled(False)
        assert not ember.is_anomaly_enabled() and ember.is_anomaly_check_nan_enabled()
    finally:
        ember.set_anomaly_enabled(False)


def test_legacy_autocast_accessors_share_amp_state(torch_mod):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert ember.is_autocast_cpu_enabled() is False
        ember.set_autocast_cpu_enabled(True)
        try:
            assert ember.is_autocast_enabled("cpu") is True
        finally:
            ember.set_autocast_cpu_enabled(False)
        assert ember.get_autocast_cpu_dtype() is ember.bfloat16
        ember.set_autocast_cpu_dtype(ember.float16)
        assert ember.get_autocast_dtype("cpu") is ember.float16
        ember.set_autocast_cpu_dtype(ember.bfloat16)
        assert ember.get_autocast_gpu_dtype() is ember.float16
        ember.set_autocast_gpu_dtype(ember.bfloat16)
        assert ember.get_autocast_dtype("cuda") is ember.bfloat16
        ember.set_autocast_gpu_dtype(ember.float16)
    assert all(w.category is DeprecationWarning for w in seen) and len(seen) == 9
    assert str(seen[0].message).startswith("torch.is_autocast_cpu_enabled() is deprecated. "
                                           "Please use torch.is_autocast_enabled('cpu')")
    same_error(lambda: ember.set_autocast_cpu_enabled(1),
               lambda: torch_mod.set_autocast_cpu_enabled(1))
    first = ember.autocast_increment_nesting()
    assert ember.autocast_decrement_nesting() == first - 1


def test_set_default_tensor_type(torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ember.set_default_tensor_type(ember.DoubleTensor)
            assert ember.get_default_dtype() is ember.float64 and ember.ones(1).dtype is \
                ember.float64
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.get_default_dtype() is ember.float32
        finally:
            ember.set_default_dtype(ember.float32)
        same_error(lambda: ember.set_default_tensor_type(ember.IntTensor),
                   lambda: torch_mod.set_default_tensor_type(torch_mod.IntTensor))
        same_error(lambda: ember.set_default_tensor_type(3),
                   lambda: torch_mod.set_default_tensor_type(3))


# ---------------------------------------------------------------------- default device
def test_default_device_cpu(torch_mod):
    assert repr(ember.get_default_device()) == repr(torch_mod.get_default_device())
    ember.set_default_device("cpu")
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    same_error(lambda: ember.set_default_device("foo"),
               lambda: torch_mod.set_default_device("foo"))


def test_factories_honour_default_device(cuda_standin):
    try:
        ember.set_default_device("cuda:1")
        assert ember.get_default_device() == ember.device("cuda:1")
        for t in (ember.zeros(2), ember.tensor([1, 2]), ember.arange(3), ember.rand(2),
                  ember.empty(2), ember.full((2,), 3.0), ember.randn(2), ember.randperm(3)):
            assert t.device == ember.device("cuda:1")
        assert ember.ones(2, device="cpu").device.type == "cpu"
        cpu = ember.from_numpy(np.ones(2))
        assert cpu.device.type == "cpu" and ember.zeros_like(cpu).device.type == "cpu"
        ember.set_default_device(None)
        assert ember.zeros(1).device.type == "cpu"
        with ember.device("cuda:0"):
            assert ember.get_default_device() == ember.device("cuda:0")
            assert ember.ones(1).device == ember.device("cuda:0")
            with ember.device("cpu"):
                assert ember.ones(1).device.type == "cpu"
            assert ember.ones(1).device == ember.device("cuda:0")
        assert ember.ones(1).device.type == "cpu"
    finally:
        ember.set_default_device(None)


# ---------------------------------------------------------------------- control flow
def test_cond_and_while_loop_match_torch(torch_mod):
    # NOTE: torch is the reference for Python-bool predicates only: its tensor-predicate
    # and while_loop paths compile a graph first (seconds); their eager meaning is Python's.
    for pred in (True, False):
        for mod in (ember, torch_mod):
            x = mod.tensor([1.0, 2.0], requires_grad=True)
            r = mod.cond(pred, lambda a: a * 2, lambda a: a * 3, (x,))
            r.sum().backward()
            if mod is ember:
                got = (r.detach().numpy(), x.grad.numpy())
            else:
                assert_close(got[0], r.detach().numpy())
                assert_close(got[1], x.grad.numpy())
    assert ember.cond(ember.tensor(0.0), lambda: 1, lambda: 2) == 2
    assert ember.cond(1, lambda: 1, lambda: 2) == 1
    same_error(lambda: ember.cond(ember.ones(2) > 0, lambda: 1, lambda: 2),
               lambda: torch_mod.cond(torch_mod.ones(2) > 0, lambda: 1, lambda: 2))
    same_error(lambda: ember.cond("a", lambda: 1, lambda: 2),
               lambda: torch_mod.cond("a", lambda: 1, lambda: 2))
    got = ember.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2),
                           (ember.tensor(0), ember.ones(2)))
    assert type(got) is tuple and int(got[0]) == 3 and got[1].tolist() == [8.0, 8.0]
    future = ember.fork(lambda a: a + 1, ember.ones(1))
    assert ember.wait(future).item() == 2.0


def test_sym_helpers_match_torch(torch_mod):
    cases = [("sym_int", (-3.7,)), ("sym_int", (True,)), ("sym_float", (2,)),
             ("sym_max", (2, 3.0)), ("sym_max", (2, 3)), ("sym_min", (2.5, 3)),
             ("sym_not", (0,)), ("sym_sqrt", (2,)), ("sym_sum", ([1.5, 2],)),
             ("sym_ite", (False, 1, 2)), ("sym_fresh_size", (3,))]
    for name, args in cases:
        got, want = getattr(ember, name)(*args), getattr(torch_mod, name)(*args)
        assert got == want and type(got) is type(want), (name, got, want)
    with pytest.raises(AssertionError, match="expected .*, got <class 'ember.*Tensor'>"):
        ember.sym_max(ember.tensor(2), 3)
    with pytest.raises(AssertionError):
        torch_mod.sym_max(torch_mod.tensor(2), 3)
    assert ember.sym_constrain_range(3, min=0, max=5) is None
    same_error(lambda: ember.sym_constrain_range(7, min=0, max=5),
               lambda: torch_mod.sym_constrain_range(7, min=0, max=5))
    same_error(lambda: ember.sym_constrain_range_for_size(-1),
               lambda: torch_mod.sym_constrain_range_for_size(-1))


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
def _pair(torch_mod, data, grad=True):
    return (ember.tensor(data, requires_grad=grad), torch_mod.tensor(data, requires_grad=grad))


def _same_values(got, want, atol=1e-6):
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape), (g.shape, w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        assert_close(g.detach().numpy(), w.detach().numpy(), atol=atol, rtol=1e-5)


def _same_grads(torch_mod, got, want, leaves):
    seed = np.random.default_rng(3).standard_normal(tuple(want.shape))
    (got * ember.tensor(seed)).sum().backward()
    (want * torch_mod.tensor(seed)).sum().backward()
    for e, t in leaves:
        assert_close(e.grad.numpy(), t.grad.numpy(), atol=1e-6, rtol=1e-5)


def test_native_batch_norm_and_batch_norm(torch_mod, rng):
    data = rng.standard_normal((4, 3, 5))
    for training in (True, False):
        x, tx = _pair(torch_mod, data)
        w, tw = _pair(torch_mod, rng.standard_normal(3))
        rm, trm = ember.zeros(3, dtype=ember.float64), torch_mod.zeros(3, dtype=torch_mod.float64)
        rv, trv = ember.ones(3, dtype=ember.float64), torch_mod.ones(3, dtype=torch_mod.float64)
        got = ember.native_batch_norm(x, w, None, rm, rv, training, 0.1, 1e-5)
        want = torch_mod.native_batch_norm(tx, tw, None, trm, trv, training, 0.1, 1e-5)
        _same_values(got, want)
        _same_values((rm, rv), (trm, trv))
        _same_grads(torch_mod, got[0], want[0], [(x, tx), (w, tw)])
        x, tx = _pair(torch_mod, data, grad=False)
        _same_values(ember.batch_norm(x, None, None, rm, rv, training, 0.1, 1e-5, False),
                     torch_mod.batch_norm(tx, None, None, trm, trv, training, 0.1, 1e-5, False))
    x, tx = _pair(torch_mod, data, grad=False)
    rm, trm = ember.zeros(3, dtype=ember.float64), torch_mod.zeros(3, dtype=torch_mod.float64)
    rv, trv = ember.ones(3, dtype=ember.float64), torch_mod.ones(3, dtype=torch_mod.float64)
    _same_values(ember.batch_norm_update_stats(x, rm, rv, 0.2),
                 torch_mod.batch_norm_update_stats(tx, trm, trv, 0.2))
    _same_values((rm, rv), (trm, trv))


def test_native_layer_and_group_norm(torch_mod, rng):
    data = rng.standard_normal((2, 6, 5))
    x, tx = _pair(torch_mod, data)
    w, tw = _pair(torch_mod, rng.standard_normal(5))
    got = ember.native_layer_norm(x, (5,), w, None, 1e-5)
    want = torch_mod.native_layer_norm(tx, (5,), tw, None, 1e-5)
    _same_values(got, want)
    _same_grads(torch_mod, got[0], want[0], [(x, tx), (w, tw)])
    x, tx = _pair(torch_mod, data)
    got = ember.native_group_norm(x, None, None, 2, 6, 5, 3, 1e-5)
    want = torch_mod.native_group_norm(tx, None, None, 2, 6, 5, 3, 1e-5)
    _same_values(got, want)
    _same_grads(torch_mod, got[0], want[0], [(x, tx)])
    x, tx = _pair(torch_mod, data)
    _same_values(ember.rms_norm(x, (6, 5)), torch_mod.rms_norm(tx, (6, 5)))


def test_dropout_entry_points_replay_torch_stream(torch_mod):
    data = np.arange(1.0, 97.0).reshape(2, 4, 3, 4)
    for name, args in (("native_dropout", (0.3, True)), ("native_dropout", (0.3, None)),
                       ("native_dropout", (0.3, False)), ("feature_dropout", (0.5, True)),
                       ("feature_dropout", (0.5, False)), ("native_channel_shuffle", (2,))):
        ember.manual_seed(7)
        torch_mod.manual_seed(7)
        x, tx = _pair(torch_mod, data)
        got, want = getattr(ember, name)(x, *args), getattr(torch_mod, name)(tx, *args)
        _same_values(got, want)
        first = got[0] if isinstance(got, tuple) else got
        if first.requires_grad and name != "native_channel_shuffle":   # torch: no derivative
            _same_grads(torch_mod, first, want[0] if isinstance(want, tuple) else want,
                        [(x, tx)])
    for name in ("feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
        ember.manual_seed(3)
        torch_mod.manual_seed(3)
        x, tx = ember.tensor(data), torch_mod.tensor(data)
        assert getattr(ember, name)(x, 0.5, True) is x
        getattr(torch_mod, name)(tx, 0.5, True)
        _same_values(x, tx)


def test_convolution_pool_and_grid_entry_points(torch_mod, rng):
    x, tx = _pair(torch_mod, rng.standard_normal((2, 2, 6)))
    w, tw = _pair(torch_mod, rng.standard_normal((4, 2, 3)))
    got = ember.convolution(x, w, None, (2,), (1,), (1,), False, (0,), 1)
    want = torch_mod.convolution(tx, tw, None, (2,), (1,), (1,), False, (0,), 1)
    _same_values(got, want)
    _same_grads(torch_mod, got, want, [(x, tx), (w, tw)])
    x, tx = _pair(torch_mod, rng.standard_normal((1, 2, 4, 4)))
    w, tw = _pair(torch_mod, rng.standard_normal((2, 3, 3, 3)))
    b, tb = _pair(torch_mod, rng.standard_normal(3))
    got = ember.convolution(x, w, b, (2, 2), (1, 1), (1, 1), True, (1, 1), 1)
    want = torch_mod.convolution(tx, tw, tb, (2, 2), (1, 1), (1, 1), True, (1, 1), 1)
    _same_values(got, want)
    _same_grads(torch_mod, got, want, [(x, tx), (w, tw), (b, tb)])
    x, tx = _pair(torch_mod, rng.standard_normal((2, 3, 9)))
    _same_values(ember.max_pool1d_with_indices(x, 3, 2, 1),
                 torch_mod.max_pool1d_with_indices(tx, 3, 2, 1))
    theta = rng.standard_normal((2, 2, 3))
    grid = ember.affine_grid_generator(ember.tensor(theta), (2, 1, 4, 5), False)
    _same_values(grid, torch_mod.affine_grid_generator(torch_mod.tensor(theta),
                                                        (2, 1, 4, 5), False))
    img = rng.standard_normal((2, 1, 4, 5))
    for mode in (0, 1, 2):
        for padding in (0, 1, 2):
            for fn in ("grid_sampler", "grid_sampler_2d"):
                x, tx = _pair(torch_mod, img)
                got = getattr(ember, fn)(x, grid * 1.2, mode, padding, True)
                want = getattr(torch_mod, fn)(tx, torch_mod.tensor(grid.numpy()) * 1.2,
                                              mode, padding, True)
                _same_values(got, want)
    vol = rng.standard_normal((1, 1, 3, 3, 3))
    g3 = rng.uniform(-1, 1, (1, 2, 2, 2, 3))
    _same_values(ember.grid_sampler_3d(ember.tensor(vol), ember.tensor(g3), 0, 0, False),
                 torch_mod.grid_sampler_3d(torch_mod.tensor(vol), torch_mod.tensor(g3), 0, 0,
                                           False))


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_entry_point(torch_mod, rng, mode):
    table = rng.standard_normal((10, 3))
    idx = [1, 2, 4, 5, 4, 3]
    offsets = [0, 3, 3]
    w, tw = _pair(torch_mod, table)
    got = ember.embedding_bag(w, ember.tensor(idx), ember.tensor(offsets), False, mode)
    want = torch_mod.embedding_bag(tw, torch_mod.tensor(idx), torch_mod.tensor(offsets),
                                   False, mode)
    _same_values(got, want)
    _same_grads(torch_mod, got[0], want[0], [(w, tw)])
    for dtype in ("float32", "float64"):
        for bag_idx, offs in (([1, 2, 4, 5, 4, 3], [0, 3]), ([4, 4, 1], [0, 2])):
            args = (False, mode, False, None, False, 4)   # padding_idx 4
            got = ember.embedding_bag(ember.tensor(table, dtype=getattr(ember, dtype)),
                                      ember.tensor(bag_idx), ember.tensor(offs), *args)
            want = torch_mod.embedding_bag(torch_mod.tensor(table,
                                                            dtype=getattr(torch_mod, dtype)),
                                           torch_mod.tensor(bag_idx), torch_mod.tensor(offs),
                                           *args)
            _same_values(got, want)
    if mode == 0:
        weights = rng.uniform(0.5, 2, 6)
        got = ember.embedding_bag(ember.tensor(table), ember.tensor(idx), ember.tensor(offsets),
                                  False, 0, False, ember.tensor(weights))
        want = torch_mod.embedding_bag(tw.detach(), torch_mod.tensor(idx),
                                       torch_mod.tensor(offsets), False, 0, False,
                                       torch_mod.tensor(weights))
        _same_values(got, want)


def test_embedding_renorm_(torch_mod, rng):
    table = rng.standard_normal((6, 4)) * 3
    w, tw = ember.tensor(table), torch_mod.tensor(table)
    assert ember.embedding_renorm_(w, ember.tensor([0, 2, 2, 5]), 1.5, 2.0) is w
    torch_mod.embedding_renorm_(tw, torch_mod.tensor([0, 2, 2, 5]), 1.5, 2.0)
    _same_values(w, tw)


# ---------------------------------------------------------------------- recurrent entry points
@pytest.mark.parametrize("name,gates", [("lstm_cell", 4), ("gru_cell", 3),
                                        ("rnn_tanh_cell", 1), ("rnn_relu_cell", 1)])
def test_rnn_cells_match_torch(torch_mod, rng, name, gates):
    arrays = [rng.standard_normal(s) for s in ((3, 4), (3, 5), (gates * 5, 4), (gates * 5, 5),
                                               (gates * 5,), (gates * 5,))]
    pairs = [_pair(torch_mod, a) for a in arrays]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    if name == "lstm_cell":
        c = rng.standard_normal((3, 5))
        ec, tc = _pair(torch_mod, c)
        got = ember.lstm_cell(ours[0], (ours[1], ec), *ours[2:])
        want = torch_mod.lstm_cell(theirs[0], (theirs[1], tc), *theirs[2:])
        pairs.append((ec, tc))
        _same_values(got, want)
        got, want = got[0] + got[1] * 2, want[0] + want[1] * 2
    else:
        got, want = getattr(ember, name)(*ours), getattr(torch_mod, name)(*theirs)
        _same_values(got, want)
    _same_grads(torch_mod, got, want, pairs)


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
    pairs = [_pair(torch_mod, p) for p in params]
    x_shape = (2, 5, 4) if batch_first else (5, 2, 4)
    x, tx = _pair(torch_mod, rng.standard_normal(x_shape))
    h, th = _pair(torch_mod, rng.standard_normal((layers * dirs, 2, hidden)))
    hx, thx = (h, h * 0.5), (th, th * 0.5)
    if name != "lstm":
        hx, thx = h, th
    args = (True, layers, 0.0, False, bidirectional, batch_first)
    got = getattr(ember, name)(x, hx, [p[0] for p in pairs], *args)
    want = getattr(torch_mod, name)(tx, thx, [p[1] for p in pairs], *args)
    _same_values(got, want, atol=1e-6)
    _same_grads(torch_mod, got[0] + got[1].sum(), want[0] + want[1].sum(),
                [(x, tx), (h, th)] + pairs)


def test_rnn_packed_form_is_refused():
    with pytest.raises(NotImplementedError, match="packed sequences"):
        ember.gru(ember.ones(6, 4), ember.tensor([3, 3]), ember.zeros(1, 3, 3),
                  [ember.ones(9, 4), ember.ones(9, 3)], False, 1, 0.0, False, False)


# ---------------------------------------------------------------------- numeric extras
GRADIENT_CASES = [
    {}, {"spacing": 2.0, "dim": 1}, {"spacing": [2.0, 3.0]}, {"edge_order": 2, "dim": 1},
    {"dim": (0, 1)}, {"edge_order": 2}, {"spacing": "coords", "dim": 1},
    {"spacing": "coords", "dim": 1, "edge_order": 2},
]


@pytest.mark.parametrize("kwargs", GRADIENT_CASES)
def test_gradient_matches_torch(torch_mod, rng, kwargs):
    data = rng.standard_normal((3, 5))
    x, tx = _pair(torch_mod, data)
    ekw, tkw = dict(kwargs), dict(kwargs)
    if kwargs.get("spacing") == "coords":
        coords = np.array([0.0, 0.5, 1.7, 2.0, 3.5])
        ekw["spacing"] = (ember.tensor(coords),)
        tkw["spacing"] = (torch_mod.tensor(coords),)
    got, want = ember.gradient(x, **ekw), torch_mod.gradient(tx, **tkw)
    _same_values(got, want, atol=1e-12)
    _same_grads(torch_mod, got[-1], want[-1], [(x, tx)])


def test_gradient_integer_input_and_errors(torch_mod):
    _same_values(ember.gradient(ember.tensor([1, 2, 4])),
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
        _same_values(got.hist, want.hist, atol=1e-5)
        _same_values(got.bin_edges, want.bin_edges)
    edges = [np.array([0.0, 1.0, 3.0], np.float32), np.array([0.0, 2.0], np.float32)]
    got = ember.histogramdd(ember.tensor(pts), bins=[ember.tensor(e) for e in edges])
    want = torch_mod.histogramdd(torch_mod.tensor(pts), bins=[torch_mod.tensor(e)
                                                               for e in edges])
    _same_values(got.hist, want.hist)
    assert repr(got).startswith("ember.return_types.histogramdd(\nhist=")


@pytest.mark.parametrize("reduce", ["sum", "prod", "max", "min", "mean"])
def test_segment_reduce_matches_torch(torch_mod, rng, reduce):
    data = rng.standard_normal((6, 2))
    for kwargs in ({"lengths": [2, 0, 4]}, {"offsets": [0, 1, 1, 6]},
                   {"lengths": [3, 0, 3], "initial": 0.5}):
        x, tx = _pair(torch_mod, data)
        ekw = {k: ember.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        tkw = {k: torch_mod.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        got = ember.segment_reduce(x, reduce, **ekw)
        want = torch_mod.segment_reduce(tx, reduce, **tkw)
        _same_values(got, want, atol=1e-12)
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
            x, tx = _pair(torch_mod, data)
            got, want = getattr(ember, name)(x, *args), getattr(torch_mod, name)(tx, *args)
            _same_values(got, want, atol=1e-10)
            _same_grads(torch_mod, got, want, [(x, tx)])
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
        _same_values(x, tx)
    same_error(lambda: ember.ldexp_(ember.tensor([1, 2]), ember.tensor([2, 3])),
               lambda: torch_mod.ldexp_(torch_mod.tensor([1, 2]), torch_mod.tensor([2, 3])))
    x, tx = ember.arange(6.0), torch_mod.arange(6.0)
    _same_values(ember.as_strided_(x, (2, 2), (1, 2)), torch_mod.as_strided_(tx, (2, 2), (1, 2)))
    x, tx = ember.arange(6.0), torch_mod.arange(6.0)
    assert ember.resize_as_(x, ember.ones(2, 2)).shape == \
        torch_mod.resize_as_(tx, torch_mod.ones(2, 2)).shape


def test_poisson_and_binomial_replay_torch(torch_mod):
    rates = [0.5, 4.0, 30.0, 200.0]
    ember.manual_seed(11)
    torch_mod.manual_seed(11)
    _same_values(ember.poisson(ember.tensor(rates)), torch_mod.poisson(torch_mod.tensor(rates)))
    count, prob = [10.0, 20.0, 5.0, 400.0], [0.5, 0.2, 0.9, 0.3]
    _same_values(ember.binomial(ember.tensor(count), ember.tensor(prob)),
                 torch_mod.binomial(torch_mod.tensor(count), torch_mod.tensor(prob)))
    _same_values(ember.binomial(ember.tensor(count), ember.tensor([0.5])),
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


# ---------------------------------------------------------------------- buffers, dlpack
def test_frombuffer_shares_memory_and_checks_like_torch(torch_mod):
    raw = bytearray(np.arange(1, 4, dtype=np.int32).tobytes())
    t = ember.frombuffer(raw, dtype=ember.int32)
    raw[0] = 9
    assert t.tolist() == [9, 2, 3]
    for kwargs in ({"count": 1, "offset": 4}, {"dtype": "int16", "offset": 2}):
        e_kw = dict(kwargs, dtype=getattr(ember, kwargs.get("dtype", "int32")))
        t_kw = dict(kwargs, dtype=getattr(torch_mod, kwargs.get("dtype", "int32")))
        assert ember.frombuffer(raw, **e_kw).tolist() == \
            torch_mod.frombuffer(raw, **t_kw).tolist()
    for buffer, kwargs in ((raw, {"offset": 13}), (raw, {"count": 5}), (bytearray(), {}),
                           (3, {}), (raw, {"offset": 2})):
        same_error(lambda: ember.frombuffer(buffer, dtype=ember.int32, **kwargs),
                   lambda: torch_mod.frombuffer(buffer, dtype=torch_mod.int32, **kwargs))
    assert ember.frombuffer(raw, dtype=ember.float32, requires_grad=True).requires_grad


def test_from_file_and_empty_permuted(torch_mod, tmp_path):
    path = str(tmp_path / "values.bin")
    np.arange(6, dtype=np.float32).tofile(path)
    for kwargs in ({"size": 6}, {"size": 3, "shared": False}, {}):
        _same_values(ember.from_file(path, **kwargs), torch_mod.from_file(path, **kwargs))
    same_error(lambda: ember.from_file(path, size=10), lambda: torch_mod.from_file(path, size=10))
    mapped = ember.from_file(path, shared=True, size=6)
    mapped[0] = 42.0
    assert np.fromfile(path, dtype=np.float32)[0] == 42.0
    for size, order in (((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((5,), (0,))):
        got = ember.empty_permuted(size, order)
        want = torch_mod.empty_permuted(size, order)
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    same_error(lambda: ember.empty_permuted((2, 3), (0, 0)),
               lambda: torch_mod.empty_permuted((2, 3), (0, 0)))


def test_dlpack_round_trips_share_memory(torch_mod):
    array = np.arange(4.0)
    t = ember.from_dlpack(array)
    array[0] = 7
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    source = torch_mod.arange(3.0)
    shared = ember.from_dlpack(source)
    source[0] = 5
    assert shared.tolist() == [5.0, 1.0, 2.0]
    mine = ember.arange(3.0)
    theirs = torch_mod.from_dlpack(ember.to_dlpack(mine))
    theirs[1] = -1
    assert mine.tolist() == [0.0, -1.0, 2.0]
    back = ember.from_dlpack(torch_mod.to_dlpack(torch_mod.ones(2)))
    back[0] = 3.0     # writable, as torch's import is
    assert back.tolist() == [3.0, 1.0]
    copied = ember.from_dlpack(array, copy=True)
    array[1] = 9
    assert copied[1].item() == 1.0
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        ember.to_dlpack(ember.ones(1, requires_grad=True))


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
        _same_values(S, tS, atol=1e-10)
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
    x, tx = _pair(torch_mod, data)
    S = ember.svd_lowrank(x, q=2)[1]
    tS = torch_mod.svd_lowrank(tx, q=2)[1]
    _same_grads(torch_mod, S, tS, [(x, tx)])


# ---------------------------------------------------------------------- legacy names, classes
def test_legacy_sparse_products_match_torch(torch_mod):
    dense = [[0.0, 2.0], [3.0, 0.0]]
    other = [[1.0, 2.0], [3.0, 4.0]]
    s, ts = ember.tensor(dense).to_sparse(), torch_mod.tensor(dense).to_sparse()
    d, td = ember.tensor(other), torch_mod.tensor(other)
    _same_values(ember.dsmm(s, d), torch_mod.dsmm(ts, td))
    _same_values(ember.dsmm(d, d), torch_mod.dsmm(td, td))
    _same_values(ember.hsmm(s, d).to_dense(), torch_mod.hsmm(ts, td).to_dense())
    got = ember.saddmm(s, s, d, beta=2, alpha=3)
    want = torch_mod.saddmm(ts, ts, td, beta=2, alpha=3)
    assert got.is_sparse and want.is_sparse
    _same_values(got.to_dense(), want.to_dense())


def test_toplevel_classes_are_the_submodules_ones():
    assert ember.TypedStorage is ember.storage.TypedStorage
    assert ember.UntypedStorage is ember.storage.UntypedStorage
    assert ember.is_storage(ember.ones(2).untyped_storage())
    assert ember.Future is ember.futures.Future
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError
    future = ember.Future()
    future.set_result(3)
    assert ember.wait(future) == 3


def test_package_utilities(torch_mod):
    import os
    assert ember.get_file_path("a", "b") == os.path.join(
        os.path.dirname(os.path.dirname(ember.__file__)), "a", "b")
    assert torch_mod.get_file_path("a", "b").endswith(os.path.join("", "a", "b"))
    assert ember.prepare_multiprocessing_environment("/tmp") is \
        torch_mod.prepare_multiprocessing_environment("/tmp")
    assert ember.thread_safe_generator() is torch_mod.thread_safe_generator()

    for mod in (ember, torch_mod):
        class Named:
            @mod.classproperty
            def label(cls):
                return cls.__name__ + "!"
        assert Named.label == Named().label == "Named!"


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
        _same_values(E, tE, atol=1e-7)
        assert_close(np.abs(X.numpy()), np.abs(tX.numpy()), atol=1e-5)   # up to sign
    a, ta = _pair(torch_mod, spd)
    E = ember.lobpcg(a, k=2)[0]
    tE = torch_mod.lobpcg(ta, k=2)[0]
    E.sum().backward()
    tE.sum().backward()
    assert_close(a.grad.numpy(), ta.grad.numpy(), atol=1e-6)
    batch = np.stack([spd, spd * 2])
    _same_values(ember.lobpcg(ember.tensor(batch), k=1)[0],
                 torch_mod.lobpcg(torch_mod.tensor(batch), k=1)[0], atol=1e-6)
    same_error(lambda: ember.lobpcg(ember.tensor(spd[:5, :5]), k=2),
               lambda: torch_mod.lobpcg(torch_mod.tensor(spd[:5, :5]), k=2))


# ---------------------------------------------------------------------- sync batch norm kernels
def test_sync_batch_norm_kernels_refuse_cpu_as_torch(torch_mod):
    x, tx = ember.ones(2, 3), torch_mod.ones(2, 3)
    for name, args in (("batch_norm_stats", (1e-5,)),
                       ("batch_norm_elemt", (None, None, "m", "m", 1e-5))):
        e_args = [ember.zeros(3) if a == "m" else a for a in args]
        t_args = [torch_mod.zeros(3) if a == "m" else a for a in args]
        got, want = _error(lambda: getattr(ember, name)(x, *e_args)), \
            _error(lambda: getattr(torch_mod, name)(tx, *t_args))
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
    _same_values(rm.cpu(), t_rm)
    _same_values(rv.cpu(), t_rv)
    w, b = cuda(weight), cuda(bias)
    out = ember.cat([ember.batch_norm_elemt(h, w, b, g_mean, g_invstd, eps) for h in halves])
    _same_values(out.cpu(), want, atol=1e-10)
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
    _same_values(g_mean2.cpu(), torch_mod.tensor(data[:2]).mean((0, 2)))


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
    _same_values(ember.segment_reduce(ember.ones(5), "sum", lengths=ember.tensor([2, 2]),
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
        _same_values(ember.native_norm(s, *args), torch_mod.native_norm(ts, *args))
    same_error(lambda: ember.native_norm(s, 2, (0,), False, None),
               lambda: torch_mod.native_norm(ts, 2, (0,), False, None))
    got = _error(lambda: ember.native_norm(ember.ones(2)))
    want = _error(lambda: torch_mod.native_norm(torch_mod.ones(2)))
    assert got[0] is want[0] is NotImplementedError
    assert got[1].split(". ")[0] == want[1].split(". ")[0]
