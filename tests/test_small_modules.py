"""The smaller torch submodules' public helpers on ember, each against real PyTorch on the same
program: torch.types, torch.storage.Storage, torch.overrides' modes and redispatch,
torch.utils.swap_tensors/set_module, multiprocessing.SpawnContext, hub.tqdm,
cuda.amp.amp_definitely_not_available, nn.parallel.DistributedDataParallelCPU."""
import importlib
import inspect
import warnings

import pytest

import ember


def _both(torch_mod, program):
    return program(torch_mod), program(ember)


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


def test_types_aliases(torch_mod):
    def program(lib):
        T = _mod(lib, "types")
        return (T.Size is lib.Size, T.Tensor is lib.Tensor,
                [isinstance(v, T.py_sym_types) for v in (1, 2.0, True)],
                T.Number.__args__, len(T.Device.__args__),
                _mod(lib, "storage").Storage is T.Storage,
                _mod(lib, "serialization").Storage is T.Storage)
    t, e = _both(torch_mod, program)
    assert e == t


def test_base_torch_function_mode_and_nowrap(torch_mod):
    def program(lib):
        ov = lib.overrides
        seen = []

        def scaled(a, b):
            if ov.has_torch_function((a, b)):
                return ov.handle_torch_function(scaled, (a, b), a, b)
            return a * b + 1

        class Recording(ov.BaseTorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                return super().__torch_function__(func, types, args, kwargs)
        a, b = lib.tensor([3.0]), lib.tensor([4.0])
        with Recording():
            out = scaled(a, b)
        nowrap = ov.get_default_nowrap_functions()
        t = lib.ones(1)
        return (issubclass(ov.BaseTorchFunctionMode, ov.TorchFunctionMode), seen[:1],
                out.tolist(), len(nowrap), lib.Tensor.grad.__get__ in nowrap,
                lib.Tensor._base.__get__ in nowrap, type(t).grad.__get__ in nowrap)
    t, e = _both(torch_mod, program)
    assert e == t


def test_redispatch_function_skips_one_hop(torch_mod):
    def program(lib):
        ov = lib.overrides
        calls = []

        def inner(x):
            if ov.has_torch_function((x,)):
                return ov.handle_torch_function(inner, (x,), x)
            return x + 1

        def outer(x):
            if ov.has_torch_function((x,)):
                return ov.handle_torch_function(outer, (x,), x)
            return inner(x) * 2

        class Logging(ov.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                calls.append(func.__name__)
                if func in (outer, inner):
                    with self:   # the inner user function is seen again, as PyTorch shows
                        return ov.redispatch_function(func, types, args, kwargs)
                return func(*args, **(kwargs or {}))
        with Logging():
            out = outer(lib.tensor([2.0]))
        return [c for c in calls if c in ("outer", "inner")], out.tolist()
    t, e = _both(torch_mod, program)
    assert e == t


def test_swap_tensors(torch_mod):
    def program(lib):
        U = lib.utils
        a = lib.ones(2, requires_grad=True)
        (a * 2).sum().backward()
        b = lib.zeros(3, requires_grad=True)
        U.swap_tensors(a, b)
        (a * 3).sum().backward()
        p = lib.nn.Parameter(lib.ones(1))
        q = lib.arange(3.0)
        q.note = "mine"
        U.swap_tensors(p, q)
        out = [a.tolist(), a.grad.tolist(), b.tolist(), b.grad.tolist(), type(p).__name__,
               type(q).__name__, p.tolist(), q.tolist(), getattr(p, "note", None)]
        with pytest.raises(AttributeError) as info:
            U.swap_tensors(1, lib.ones(1))
        out.append(str(info.value))
        import weakref
        held = lib.ones(1)
        ref = weakref.ref(held)
        with pytest.raises(RuntimeError) as info:
            U.swap_tensors(held, lib.ones(1))
        out.append(str(info.value))
        del ref
        return out
    t, e = _both(torch_mod, program)
    assert e == t


def test_set_module(torch_mod):
    def program(lib):
        def f():
            pass
        lib.utils.set_module(f, "somewhere")
        with pytest.raises(TypeError) as info:
            lib.utils.set_module(f, 3)
        return f.__module__, str(info.value)
    t, e = _both(torch_mod, program)
    assert e == t


def test_spawn_context_warns_and_is_a_process_context(torch_mod):
    def program(lib):
        MP = lib.multiprocessing
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = MP.SpawnContext([], [])
        return ([str(w.message) for w in caught], isinstance(ctx, MP.ProcessContext),
                list(inspect.signature(MP.SpawnContext).parameters))
    t, e = _both(torch_mod, program)
    assert e == t


def test_hub_tqdm_standin(torch_mod, capsys):
    results = []
    for lib in (torch_mod, ember):
        bar_cls = lib.hub.tqdm
        with bar_cls(total=200, unit="B") as bar:
            bar.update(50)
            bar.update(100)
            bar.set_description("x")
            bar.write("note")
        bar_cls(disable=True).update(10)
        with bar_cls() as plain:
            plain.update(3)
        results.append((bar_cls.__name__, capsys.readouterr().err))
    assert results[1] == results[0]


def test_amp_and_ddp_cpu(torch_mod):
    def program(lib):
        available = lib.cuda.amp.amp_definitely_not_available()
        cls = lib.nn.parallel.DistributedDataParallelCPU
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(Exception) as info:
                cls(lib.nn.Linear(1, 1))   # no process group: DDP's own error
        return (available, issubclass(cls, lib.nn.parallel.DistributedDataParallel),
                [(w.category.__name__, str(w.message)) for w in caught
                 if w.category is FutureWarning], type(info.value).__name__)
    t, e = _both(torch_mod, program)
    assert e == t
