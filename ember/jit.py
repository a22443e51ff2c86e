"""ember.jit (torch.jit): script and trace return working callables (the original module or
function: ember runs eagerly, there is no TorchScript). Saving a TorchScript archive is not
possible; `save` says so and points at ember.save."""
import contextlib
import warnings

from .nn.modules.module import Module as _Module

__all__ = ["script", "trace", "trace_module", "save", "load", "ignore", "unused", "export",
           "is_scripting", "is_tracing", "annotate", "Final", "fork", "wait", "freeze",
           "optimize_for_inference", "interface", "ScriptModule",  # noqa: F822
           "ScriptFunction",
           "Attribute", "enable_onednn_fusion", "onednn_fusion_enabled", "strict_fusion",
           "set_fusion_strategy", "optimized_execution", "fuser", "export_opnames"]


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The object itself: it runs eagerly with the same results as a scripted one."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """The module or function itself (tracing would record the same eager computation)."""
    return func


def trace_module(mod, inputs, **kwargs):
    return mod


def save(m, f, _extra_files=None):
    raise NotImplementedError(
        "ember.jit.save: ember has no TorchScript, so it cannot write a TorchScript archive. "
        "Save the weights with ember.save(model.state_dict(), f) instead.")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise NotImplementedError(
        "ember.jit.load: ember cannot run TorchScript archives. Load a state_dict saved with "
        "torch.save(model.state_dict(), f) via ember.load and model.load_state_dict.")


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


class _Final:
    def __getitem__(self, item):
        return item


Final = _Final()


def Attribute(value, type):  # noqa: A002  (PyTorch's parameter name)
    return value


class _Future:
    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    """Runs `func` now (ember has one thread of ops); `wait` returns its result."""
    return _Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


class ScriptFunction:
    """Never instantiated by ember (script returns plain functions); for isinstance checks."""


def __getattr__(name):
    # NOTE: ScriptModule is Module itself, so `isinstance(m, torch.jit.ScriptModule)` on a
    # scripted module keeps working.
    if name in ("ScriptModule", "RecursiveScriptModule", "TopLevelTracedModule"):
        return _Module
    raise AttributeError(f"module 'ember.jit' has no attribute '{name}'")


_onednn = [False]


def enable_onednn_fusion(enabled):
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled():
    return _onednn[0]


class strict_fusion:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_fusion_strategy(strategy):
    return [("STATIC", 2), ("DYNAMIC", 10)]


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


@contextlib.contextmanager
def fuser(name):
    yield


def export_opnames(m):
    return []


