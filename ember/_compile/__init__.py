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
the break instead. ember specializes on every shape: `dynamic` is accepted, and each new
shape is a new signature.

A Module comes back wrapped as PyTorch wraps it (`OptimizedModule`, state_dict keys prefixed
`_orig_mod.`), so checkpoints match PyTorch's.
"""
import builtins
import functools
import time
import warnings
import weakref

from .._tensor import Tensor
from ..amp import autocast_mode
from ..autograd.grad_mode import state as grad_state
from .capture import Recorder
from .program import Program

__all__ = ["compile", "OptimizedModule"]  # noqa: F822 (module __getattr__)

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "openxla", "tvm")


class _Settings:
    capturing = 0          # > 0 while a capture runs (is_compiling())
    stance = "default"     # ember.compiler.set_stance
    compiled = weakref.WeakSet()   # every compiled callable, for reset()


settings = _Settings()


class Entry:
    """What one input signature gets: a Program, or eager running with the reasons.

    `matches(args)` is the quick form of the guards for positional arguments that are
    tensors or plain values: each argument against what the capture saw, the global modes,
    the module revision counter (nn/modules/module.py) and the identity of the modules and
    tensors read from outside."""

    def __init__(self, program, reasons, breaks, capture_seconds, recorder, args, roots,
                 fn, state):
        self.program = program
        self.reasons = reasons
        self.breaks = breaks
        self.capture_seconds = capture_seconds
        self.steps = recorder.steps
        self.guards = _identity_guards(recorder) if program is not None else ()
        self.fast_args = _fast_args(args) if program is not None and args is not None \
            else None
        self.tensor_positions = None if self.fast_args is None or \
            all(e.__class__ is tuple for e in self.fast_args) else \
            [i for i, e in enumerate(self.fast_args) if e.__class__ is tuple]
        self.modes = (grad_state.enabled, grad_state.inference, autocast_mode.active)
        self.roots = roots
        self.root_getters = _root_getters(fn, roots)
        self.revision = _module_revision()
        self.state = state   # [(getter, fingerprint)] of the Python values the function reads

    def refresh(self, roots):
        self.roots = roots
        self.revision = _module_revision()

    def guards_hold(self):
        for getter, t in self.guards:
            if getter() is not t:
                return False
        for getter, fingerprint in self.state:
            if _fingerprint(getter()) != fingerprint:
                return False
        return True

    def matches(self, args):
        expected = self.fast_args
        if len(args) != len(expected) or self.revision != _revision().n or \
                grad_state.enabled is not self.modes[0] or \
                grad_state.inference is not self.modes[1] or \
                autocast_mode.active != self.modes[2]:
            return False
        for a, e in zip(args, expected):
            if e.__class__ is tuple:
                if a.__class__ is not e[0]:
                    return False
                data = a._data
                if data.shape != e[1] or a.dtype is not e[2] or a._device is not e[3] or \
                        a._requires_grad is not e[4] or (a.grad_fn is None) is not e[5] or \
                        data.flags.c_contiguous is not e[6]:
                    return False
            elif a.__class__ is not e.__class__ or a != e:
                return False
        if len(args) > 1 and len(set(map(id, args))) != len(args):
            return False
        for getter, root in self.root_getters:
            if getter() is not root:
                return False
        return not (self.guards or self.state) or self.guards_hold()


def _fast_args(args):
    """What `Entry.matches` compares each positional argument with, or None when an
    argument is neither a tensor nor a plain value (that entry is found by its key)."""
    out = []
    for a in args:
        if isinstance(a, Tensor):
            data = a._data
            out.append((a.__class__, data.shape, a.dtype, a._device, a._requires_grad,
                        a.grad_fn is None, data.flags.c_contiguous))
        elif type(a) in (int, float, bool, str, type(None)):
            out.append(a)
        else:
            return None
    return out


def _root_getters(fn, roots):
    """How to find each module in reach again (a global or closure cell may be rebound)."""
    getters = []
    code = _code_of(fn)
    if code is None or getattr(fn, "__self__", None) is not None:
        return getters
    g = code.__globals__
    for n in code.__code__.co_names:
        if any(g.get(n) is r for r in roots):
            getters.append((functools.partial(g.get, n), g[n]))
    for cell in code.__closure__ or ():
        if _cell_full(cell) and any(cell.cell_contents is r for r in roots):
            getters.append((functools.partial(getattr, cell, "cell_contents"),
                            cell.cell_contents))
    return getters


def _python_state(fn):
    """[(getter, fingerprint)] of the plain values and containers the function reads from
    its globals and closure (a flag, a cache dict, a list of layers): the capture saw their
    state at the start of the call, and a replay is only right while it stands."""
    code = _code_of(fn)
    if code is None:
        return []
    found = []
    g = code.__globals__
    for n in code.__code__.co_names:
        if n in g and _fingerprint(g[n]) is not None:
            found.append(functools.partial(g.get, n))
    for cell in code.__closure__ or ():
        if _cell_full(cell) and _fingerprint(cell.cell_contents) is not None:
            found.append(functools.partial(getattr, cell, "cell_contents"))
    return [(getter, _fingerprint(getter())) for getter in found]


_PLAIN = (int, float, bool, str, bytes, type(None), complex)


def _fingerprint(value):
    """What a guard compares: a plain value itself, a container's length and the identity
    of its items (and keys); None for anything else (modules and tensors have their own
    guards, functions and classes are taken as fixed)."""
    cls = type(value)
    if cls in _PLAIN:
        return (cls, value)
    if cls in (list, tuple, set, frozenset):
        return (cls, len(value), tuple(map(id, value)))
    if cls is dict:
        return (cls, tuple(value), tuple(map(id, value.values())))
    return None


def _module_revision():
    return _revision().n


@functools.lru_cache(maxsize=None)
def _revision():
    from ..nn.modules import module   # (nn imports after this module)
    return module.revision


def _identity_guards(recorder):
    return [(kind[1], recorder.tensors[i]) for i, kind in enumerate(recorder.kinds)
            if kind is not None and kind[0] == "const" and kind[1] is not None
            and kind[1] is not _STATE_OF_MODULE]


_STATE_OF_MODULE = object()   # source of a parameter or buffer: guarded by the module key


class CompiledFunction:
    """The callable `compile` returns (inside OptimizedModule for a Module)."""

    def __init__(self, fn, module, fullgraph, recompile_limit=None):
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.recompile_limit = recompile_limit
        self.entries = {}
        self.fast = []       # entries whose guards `Entry.matches` checks without a key
        self.replays = 0     # calls answered by a replay (tests and explain read it)
        self.captures = 0
        self.warned = False
        settings.compiled.add(self)

    def reset(self):
        self.entries.clear()
        self.fast.clear()
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
        spec = _spec((args, kwargs), tensors)
        roots = self.roots()
        key = (spec, tuple(_tensor_key(t) for t in tensors), _aliasing(tensors),
               grad_state.enabled, grad_state.inference, autocast_mode.active,
               _modules_key(roots))
        entry = self.entries.get(key)
        if entry is not None and (entry.program is None or entry.guards_hold()):
            if entry.program is None:
                return self.fn(*args, **kwargs)
            entry.refresh(roots)   # (the module guards were walked just now)
            self.replays += 1
            return entry.program.replay(tensors)
        return self.capture(key, tensors, args, kwargs, roots)


    def roots(self):
        """The modules whose state the guards check: the compiled module, or the modules the
        function reads from its globals and closure."""
        if self.module is not None:
            return (self.module,)
        return tuple(m for m in _reachable(self.fn) if isinstance(m, _module_class()))

    def capture(self, key, tensors, args, kwargs, roots):
        from .._dynamo import config
        limit = self.recompile_limit or config.recompile_limit
        if len(self.entries) >= limit and key not in self.entries:
            if not self.warned:
                self.warned = True
                warnings.warn(f"ember._dynamo hit config.recompile_limit ({limit}): function "
                              f"{getattr(self.fn, '__name__', '?')} will run eagerly for new "
                              "input signatures", stacklevel=3)
            return self.fn(*args, **kwargs)
        sources = _sources(self.fn, roots)
        state = _python_state(self.fn)
        recorder = Recorder(sources, self.fullgraph)
        for i, t in enumerate(tensors):
            if id(t) not in recorder.slots:
                recorder.bind(t, ("input", i))
        if _has_hooks(roots):
            recorder.refuse("modules in reach have forward hooks")
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
        from .._dynamo.utils import counters
        counters["stats"]["calls_captured"] += 1
        counters["stats"]["unique_graphs"] += ok
        for b in recorder.breaks:
            counters["graph_break"][b.reason] += 1
        program = Program(recorder, template) if ok else None
        self.captures += 1
        old = self.entries.get(key)
        if old in self.fast:   # (a guard on an outside tensor failed: this one replaces it)
            self.fast.remove(old)
        entry = self.entries[key] = Entry(program, recorder.refusals, recorder.breaks,
                                          time.perf_counter() - start, recorder,
                                          None if kwargs else args, roots, self.fn, state)
        if entry.fast_args is not None:
            self.fast.insert(0, entry)
        return output


def _spec(obj, tensors):
    """A hashable picture of the arguments with each tensor replaced by its position in
    `tensors` (which it fills); other values by value where hashable, else by identity."""
    if isinstance(obj, Tensor):
        tensors.append(obj)
        return _TENSOR
    cls = type(obj)
    if cls is tuple or cls is list:
        return (cls, tuple(_spec(o, tensors) for o in obj))
    if cls is dict:
        return (dict, tuple((k, _spec(v, tensors)) for k, v in obj.items()))
    try:
        hash(obj)
    except TypeError:
        return (cls, id(obj))
    return (cls, obj)


_TENSOR = object()


def _tensor_key(t):
    a = t._data
    return (a.shape, t.dtype, t._device, t._requires_grad, t.grad_fn is None,
            a.flags.c_contiguous, t.__class__)


def _aliasing(tensors):
    ids = [id(t) for t in tensors]
    if len(set(ids)) == len(ids):
        return None
    return tuple(ids.index(i) for i in ids)


def _modules_key(roots):
    key = []
    for root in roots:
        for m in _walk(root):
            key.append(m.training)
            key.append(tuple(map(id, m._parameters.values())))
            key.append(tuple(map(id, m._buffers.values())))
            key.append(len(m._forward_hooks) + len(m._forward_pre_hooks))
            key.append(tuple((k, v) for k, v in vars(m).items() if type(v) in _PLAIN))
    return tuple(key)


def _walk(module):
    yield module
    for child in module._modules.values():
        if child is not None:
            yield from _walk(child)


def _module_class():
    from ..nn.modules.module import Module
    return Module


def _is_module(obj):
    return isinstance(obj, _module_class())


def _has_hooks(roots):
    from ..nn.modules import module
    if module._global_forward_hooks or module._global_forward_pre_hooks:
        return True
    return any(m._forward_hooks or m._forward_pre_hooks for r in roots for m in _walk(r))


def _code_of(fn):
    fn = getattr(fn, "__func__", fn)
    if _is_module(fn):
        fn = type(fn).forward
    return fn if hasattr(fn, "__code__") else None


def _reachable(fn):
    """Objects the function names: its globals and its closure's cells (and `self` of a
    bound method)."""
    found = []
    owner = getattr(fn, "__self__", None)
    if owner is not None:
        found.append(owner)
    code = _code_of(fn)
    if code is not None:
        g = code.__globals__
        found.extend(g[n] for n in code.__code__.co_names if n in g)
        found.extend(c.cell_contents for c in code.__closure__ or () if _cell_full(c))
    return found


def _cell_full(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _sources(fn, roots):
    """id(tensor) -> how to find it again, for every tensor the function can read without
    being given it: parameters and buffers (guarded by the module key), tensors in module
    attributes, globals and closure cells (each guarded by identity)."""
    out = {}
    for root in roots:
        for m in _walk(root):
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is not None:
                    out[id(t)] = _STATE_OF_MODULE
            for name, v in vars(m).items():
                if isinstance(v, Tensor) and id(v) not in out:
                    out[id(v)] = functools.partial(_attribute, m, name)
    for code in {_code_of(fn), _code_of(roots[0]) if roots else None} - {None}:
        g = code.__globals__
        for n in code.__code__.co_names:
            if n in g:
                _add_source(out, g[n], functools.partial(g.get, n))
        for cell in code.__closure__ or ():
            if _cell_full(cell):
                _add_source(out, cell.cell_contents,
                            functools.partial(getattr, cell, "cell_contents"))
    return out


def _add_source(out, value, getter):
    """A tensor found through `getter`, or the tensors of a tuple, list or dict it holds
    (one level: a batch kept in a closure)."""
    if isinstance(value, Tensor):
        out.setdefault(id(value), getter)
    elif type(value) in (tuple, list):
        for i, v in enumerate(value):
            if isinstance(v, Tensor):
                out.setdefault(id(v), functools.partial(_item, getter, i))
    elif type(value) is dict:
        for k, v in value.items():
            if isinstance(v, Tensor):
                out.setdefault(id(v), functools.partial(_item, getter, k))


def _item(getter, key):
    try:
        return getter()[key]
    except (IndexError, KeyError, TypeError):
        return None


def _attribute(module, name):
    return vars(module).get(name)


def _optimized_module_class():
    from ..nn.modules.module import Module

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
    from ..nn.modules.module import Module
    if isinstance(model, Module):
        compiled = None if disable else CompiledFunction(model, model, fullgraph,
                                                         recompile_limit)
        return __getattr__("OptimizedModule")(model, compiled)
    if disable:
        return model
    compiled = CompiledFunction(model, None, fullgraph, recompile_limit)

    @functools.wraps(model)
    def compiled_fn(*args, **kw):
        return compiled(*args, **kw)
    compiled_fn._torchdynamo_orig_callable = model
    compiled_fn._ember_compiled = compiled
    return compiled_fn
