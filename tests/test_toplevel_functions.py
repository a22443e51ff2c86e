"""torch's top-level callables that are not ops: settings and queries, the default device,
control flow, sym_* helpers, buffer and DLPack factories, legacy names and re-exported
classes. Each compared with real torch on the same inputs."""
import warnings

import numpy as np
import pytest

import ember
from checks import assert_close
from toplevel_checks import same_error, same_values


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
    assert ember.cudnn_is_acceptable(x) is torch_mod.cudnn_is_acceptable(tx) is False
    same_error(lambda: ember.cudnn_is_acceptable(3), lambda: torch_mod.cudnn_is_acceptable(3))
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
        for t in (ember.eye(2), ember.linspace(0, 1, 3), ember.randint(0, 5, (2,)),
                  ember.as_tensor([1, 2]), ember.empty_permuted((2, 3), (1, 0)),
                  ember.hann_window(4), ember.scalar_tensor(1.0)):
            assert t.device == ember.device("cuda:1")
        # not among PyTorch's default-device factories: these stay on the cpu
        assert ember.normal(0.0, 1.0, (2,)).device.type == "cpu"
        assert ember.frombuffer(bytearray(4), dtype=ember.int8).device.type == "cpu"
        assert ember.block_diag().device.type == "cpu"
        assert ember.Tensor(2).device.type == ember.FloatTensor(2).device.type == "cpu"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            host = ember.ones(2, device="cpu")
            for t in (ember.tensor(host), ember.as_tensor(host), ember.asarray(host)):
                assert t.device == ember.device("cuda:1")   # moved, as torch's
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
        same_values(ember.from_file(path, **kwargs), torch_mod.from_file(path, **kwargs))
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


# ---------------------------------------------------------------------- legacy names, classes
def test_legacy_sparse_products_match_torch(torch_mod):
    dense = [[0.0, 2.0], [3.0, 0.0]]
    other = [[1.0, 2.0], [3.0, 4.0]]
    s, ts = ember.tensor(dense).to_sparse(), torch_mod.tensor(dense).to_sparse()
    d, td = ember.tensor(other), torch_mod.tensor(other)
    same_values(ember.dsmm(s, d), torch_mod.dsmm(ts, td))
    same_values(ember.dsmm(d, d), torch_mod.dsmm(td, td))
    same_values(ember.hsmm(s, d).to_dense(), torch_mod.hsmm(ts, td).to_dense())
    got = ember.saddmm(s, s, d, beta=2, alpha=3)
    want = torch_mod.saddmm(ts, ts, td, beta=2, alpha=3)
    assert got.is_sparse and want.is_sparse
    same_values(got.to_dense(), want.to_dense())


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


def test_symbolic_scalar_classes_match_no_value():
    for cls in (ember.SymInt, ember.SymFloat, ember.SymBool):
        assert not isinstance(3, cls) and not isinstance(ember.ones(2).shape[0], cls)
        with pytest.raises(TypeError, match="ember does not support symbolic shapes"):
            cls(3)


def test_legacy_typed_storages_match_torch(torch_mod):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("FloatStorage", "LongStorage", "BoolStorage", "ComplexDoubleStorage",
                     "HalfStorage", "ByteStorage"):
            ours, theirs = getattr(ember, name), getattr(torch_mod, name)
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
            assert ours(4).size() == theirs(4).size() == 4 and ours().size() == 0
            assert ours([1, 0, 2]).tolist() == theirs([1, 0, 2]).tolist()
            assert type(ours(2)) is ember.TypedStorage
        assert isinstance(ember.ones(2).storage(), ember.FloatStorage) is \
            isinstance(torch_mod.ones(2).storage(), torch_mod.FloatStorage) is True
        assert isinstance(ember.ones(2).storage(), ember.LongStorage) is \
            isinstance(torch_mod.ones(2).storage(), torch_mod.LongStorage) is False
        assert ember.Storage is ember.FloatStorage and torch_mod.Storage is torch_mod.FloatStorage
        wrapped = ember.FloatStorage(wrap_storage=ember.ones(2).untyped_storage())
        assert wrapped.tolist() == torch_mod.FloatStorage(
            wrap_storage=torch_mod.ones(2).untyped_storage()).tolist()
        same_error(lambda: ember.FloatStorage(3, device="cpu"),
                   lambda: torch_mod.FloatStorage(3, device="cpu"))


def test_generic_stream_and_event_on_cpu_match_torch(torch_mod):
    for mod in (ember, torch_mod):
        s, e = mod.Stream(), mod.Event()
        assert (s.query(), s.synchronize(), s.wait_event(e), e.query(), e.synchronize(),
                e.wait()) == (True, None, None, True, None, None)
        assert s.device == mod.device("cpu") == e.device and s == mod.Stream()
        assert (s.device_type, s.device_index, s.stream_id, e.event_id) == (0, -1, 0, 0)
    assert repr(ember.Stream()).replace("ember", "torch") == repr(torch_mod.Stream())
    assert repr(ember.Event()).replace("ember", "torch") == repr(torch_mod.Event())
    for fn in (lambda m: m.Stream().record_event(), lambda m: m.Event().record(),
               lambda m: m.Stream().wait_stream(m.Stream()),
               lambda m: m.Event().elapsed_time(m.Event()), lambda m: m.Stream(3)):
        same_error(lambda: fn(ember), lambda: fn(torch_mod))


def test_generic_stream_and_event_on_cuda(cuda_standin):
    s = ember.Stream("cuda:1")
    assert s.device == ember.device("cuda:1") and s.device_index == 1 and s.query()
    event = s.record_event()
    assert isinstance(event, ember.Event) and event.query()
    other = ember.Stream("cuda:1")
    other.wait_event(event)
    other.wait_stream(s)
    s.synchronize()
    start, end = ember.Event("cuda:1", enable_timing=True), ember.Event("cuda:1",
                                                                        enable_timing=True)
    start.record(s)
    end.record(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0
