"""ember.compile (torch.compile): returns a callable with the same results, uncompiled.

ember has no graph compiler yet: the returned object runs the original code eagerly. A real
compiler (tracing the op registry into fused NumPy/CuPy kernels) may come later; programs that
call torch.compile already run unchanged. A Module comes back wrapped as PyTorch does it
(`OptimizedModule`, state_dict keys prefixed `_orig_mod.`), so checkpoints match PyTorch's.
"""
import builtins
import functools

__all__ = ["compile", "OptimizedModule"]  # noqa: F822 (module __getattr__)

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "onnxrt", "openxla", "tvm")


def _optimized_module_class():
    from .nn.modules.module import Module

    class OptimizedModule(Module):
        """A Module wrapping `_orig_mod`: calls and attribute reads go to the original."""

        def __init__(self, mod, dynamo_ctx=None):
            super().__init__()
            self._orig_mod = mod
            self.dynamo_ctx = dynamo_ctx

        def forward(self, *args, **kwargs):
            return self._orig_mod(*args, **kwargs)

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
            options=None, disable=False, **kwargs):
    """Arguments checked as PyTorch checks them; the model then runs eagerly (no compiler
    yet: results are exactly the uncompiled ones)."""
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
                           mode=mode, options=options, disable=disable)
        return decorator
    if not builtins.callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    from .nn.modules.module import Module
    if isinstance(model, Module):
        return __getattr__("OptimizedModule")(model)
    if disable:
        return model

    @functools.wraps(model)
    def compiled(*args, **kw):
        return model(*args, **kw)
    compiled._torchdynamo_orig_callable = model
    return compiled
