"""ember.compile (torch.compile): capture a callable once per input signature, replay it.

The first call with a new signature runs the function eagerly under a capture
(`capture.py`), which records the op registry calls and state-changing calls it makes. Later
calls whose guards hold replay that record (`program.py`) without the function's Python.
The guards: the tensor arguments' shapes, dtypes, devices, `requires_grad`, leaf-ness and
contiguity; the other arguments' values; grad mode, inference mode and autocast; each module
in reach's training flag, the identities of its parameters and buffers and its hooks; the
identities of tensors read from globals, closures and module attributes. A failing guard
captures again, up to `ember._dynamo.config.recompile_limit` signatures (then the function
runs eagerly, with one warning). A function whose capture saw a graph break (see capture.py)
runs eagerly for that signature; `fullgraph=True` raises `ember._dynamo.exc.Unsupported` at
the break instead. Sizes: a second capture whose tensors differ only in some sizes and
whose program is step for step the same makes those sizes dynamic (`dynamic.py`; 0 and 1
stay specialized); `dynamic=False` specializes every size.

A Module comes back wrapped as PyTorch wraps it (`OptimizedModule`, state_dict keys prefixed
`_orig_mod.`), so checkpoints match PyTorch's.
"""
import builtins
import functools
import time
import warnings
import weakref

from ..autograd.grad_mode import state as grad_state
from ..func import _state as func_state
from ..nn.modules.module import Module
from ..ops import registry
from . import dynamic as dynamic_sizes, logs
from .capture import Recorder
from .guards import (Entry, aliasing, autocast_state, module_class, modules_key,
                     python_state, reachable, sources_of, spec, tensor_key)
from .program import Program

__all__ = ["compile", "OptimizedModule"]  # noqa: F822 (module __getattr__)

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "openxla", "tvm")


class _Settings:
    capturing = 0          # > 0 while a capture runs (is_compiling())
    stance = "default"     # ember.compiler.set_stance
    compiled = weakref.WeakSet()   # every compiled callable, for reset()


settings = _Settings()


class CompiledFunction:
    """The callable `compile` returns (inside OptimizedModule for a Module)."""

    def __init__(self, fn, module, fullgraph, recompile_limit=None, dynamic=None):
        self.fn = fn
        self.dynamic = dynamic   # False: every size specialized (see dynamic.py)
        self.module = module
        self.fullgraph = fullgraph
        self.recompile_limit = recompile_limit
        self.entries = {}
        self.fast = []       # entries whose guards `Entry.matches` checks without a key
        self.replays = 0     # calls answered by a replay (tests and explain read it)
        self.captures = 0
        self.pieces = {}     # id(module) -> the CompiledFunction of its forward (run_in_pieces)
        self.warned = False
        settings.compiled.add(self)

    def reset(self):
        self.entries.clear()
        self.fast.clear()
        self.pieces.clear()
        self.warned = False

    def __call__(self, *args, **kwargs):
        if settings.capturing or settings.stance == "force_eager":
            return self.fn(*args, **kwargs)   # inside another capture: it records our ops
        if not kwargs:
            for entry in self.fast:
                if entry.matches(args):
                    if entry.tensor_positions is not None:
                        args = [args[i] for i in entry.tensor_positions]
                    self.replays += 1
                    return entry.program.replay(args)
        tensors = []
        signature = spec((args, kwargs), tensors)
        roots = self.roots()
        key = (signature, tuple(tensor_key(t) for t in tensors), aliasing(tensors),
               grad_state.enabled, grad_state.inference, autocast_state(),
               modules_key(roots))
        entry = self.entries.get(key)
        if entry is not None and (entry.program is None or entry.guards_hold()):
            if entry.program is None:
                if entry.breaks and not entry.reasons:
                    return self.run_in_pieces(args, kwargs, roots)
                return self.fn(*args, **kwargs)
            entry.refresh()
            self.replays += 1
            return entry.program.replay(tensors)
        return self.capture(key, tensors, args, kwargs, roots)

    def run_in_pieces(self, args, kwargs, roots):
        """A function with a graph break runs its own Python eagerly, while each module it
        calls (the children of a compiled module) runs through its own compiled forward,
        captured and guarded apart: the pieces before and after the break replay."""
        targets = [m for r in roots for m in r._modules.values() if m is not None] \
            if self.module is not None else list(roots)
        installed = []
        for m in targets:
            if "forward" in vars(m):
                continue   # (already a piece of an enclosing call)
            piece = self.pieces.get(id(m))
            if piece is None or piece.module is not m:
                piece = self.pieces[id(m)] = CompiledFunction(
                    type(m).forward.__get__(m), m, False, self.recompile_limit, self.dynamic)
            vars(m)["forward"] = piece     # (not a module attribute write: no revision)
            installed.append(m)
        try:
            return self.fn(*args, **kwargs)
        finally:
            for m in installed:
                del vars(m)["forward"]

    def roots(self):
        """The modules whose state the guards check: the compiled module, or the modules the
        function reads from its globals and closure."""
        if self.module is not None:
            return (self.module,)
        roots = {id(m): m for m, _ in reachable(self.fn) if isinstance(m, module_class())}
        return tuple(roots.values())

    def capture(self, key, tensors, args, kwargs, roots):
        if registry.profiler is not None or func_state.depth:
            return self.fn(*args, **kwargs)   # (under ember.profiler or vmap: no capture)
        from .._dynamo import config, exc   # (deferred: `import ember` skips ember._dynamo)
        if self.captures and settings.stance == "fail_on_recompile":
            raise exc.RecompileError(
                "Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                f"function name: '{getattr(self.fn, '__name__', '?')}'")
        if self.captures and settings.stance == "eager_on_recompile":
            return self.fn(*args, **kwargs)
        limit = self.recompile_limit or config.recompile_limit
        if len(self.entries) >= limit and key not in self.entries:
            if not self.warned:
                self.warned = True
                warnings.warn(f"ember._dynamo hit config.recompile_limit ({limit}): function "
                              f"{getattr(self.fn, '__name__', '?')} will run eagerly for new "
                              "input signatures", stacklevel=3)
            return self.fn(*args, **kwargs)
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        logs.recompile(name, key, list(self.entries))
        sources = sources_of(self.fn, roots)
        state = python_state(self.fn)
        recorder = Recorder(sources, self.fullgraph, roots)
        for i, t in enumerate(tensors):
            if id(t) not in recorder.slots:
                recorder.bind(t, ("input", i))
        start = time.perf_counter()
        settings.capturing += 1
        recorder.install()
        try:
            output = self.fn(*args, **kwargs)
        finally:
            recorder.uninstall()
            settings.capturing -= 1
        template = recorder.finish(output)
        ok = not recorder.breaks and not recorder.refusals
        from .._dynamo.utils import counters   # (deferred: as above)
        counters["stats"]["calls_captured"] += 1
        counters["stats"]["unique_graphs"] += ok
        for b in recorder.breaks:
            counters["graph_break"][b.reason] += 1
        program = Program(recorder, template) if ok else None
        if ok:
            logs.program(name, recorder.steps)
        self.captures += 1
        old = self.entries.get(key)
        if old in self.fast:   # (a guard on an outside tensor failed: this one replaces it)
            self.fast.remove(old)
        entry = self.entries[key] = Entry(program, recorder.refusals, recorder.breaks,
                                          time.perf_counter() - start, recorder,
                                          None if kwargs else args, roots, self.fn, state)
        if entry.fast_args is not None and not (
                self.dynamic is not False and
                any(dynamic_sizes.generalize(other, entry) for other in self.fast)):
            self.fast.insert(0, entry)
        return output


def _optimized_module_class():
    class OptimizedModule(Module):
        """A Module wrapping `_orig_mod`: calls replay its captured forward, attribute
        reads go to the original."""

        def __init__(self, mod, dynamo_ctx=None):
            super().__init__()
            self._orig_mod = mod
            self.dynamo_ctx = dynamo_ctx

        def forward(self, *args, **kwargs):
            compiled = self.dynamo_ctx
            if compiled is None:
                return self._orig_mod(*args, **kwargs)
            return compiled(*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                if name == "_orig_mod":
                    raise
                return getattr(self._orig_mod, name)

        def __repr__(self):
            return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)".replace(
                "\n)\n)", "\n  )\n)")
    OptimizedModule.__module__ = "ember._compile"
    return OptimizedModule


_cls = []


def __getattr__(name):
    if name == "OptimizedModule":
        if not _cls:
            _cls.append(_optimized_module_class())
        return _cls[0]
    raise AttributeError(f"module 'ember._compile' has no attribute '{name}'")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, recompile_limit=None, **kwargs):
    """Arguments checked as PyTorch checks them; see the module docstring for what the
    result does."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: '{backend}', see "
                           "`torch._dynamo.list_backends()` for available backends.")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, disable=disable,
                           recompile_limit=recompile_limit)
        return decorator
    if not builtins.callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    if isinstance(model, Module):
        compiled = None if disable else CompiledFunction(model, model, fullgraph,
                                                         recompile_limit, dynamic)
        return __getattr__("OptimizedModule")(model, compiled)
    if disable:
        return model
    compiled = CompiledFunction(model, None, fullgraph, recompile_limit, dynamic)

    @functools.wraps(model)
    def compiled_fn(*args, **kw):
        return compiled(*args, **kw)
    compiled_fn._torchdynamo_orig_callable = model
    compiled_fn._ember_compiled = compiled
    return compiled_fn
