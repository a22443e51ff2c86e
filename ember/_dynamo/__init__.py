"""ember._dynamo (torch._dynamo): the controls programs use around torch.compile.

`reset()` forgets every capture, `explain(fn)(*args)` captures once and reports graphs,
breaks and guards, `config` holds Dynamo's settings (`recompile_limit` is honoured), `exc`
its errors. ember specializes every shape (see ember/_compile), so the dynamic/static marks
change nothing, and the decorators return their function.
"""
from .. import _compile
from .._compile import capture, settings
from . import _explain, config, exc, utils  # noqa: F401

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "explain", "export", "forbid_in_graph", "graph_break", "is_compiling",
           "list_backends", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "optimize", "reset", "run", "OptimizedModule"]


def reset():
    """Forget every capture of every compiled function."""
    for compiled in list(settings.compiled):
        compiled.reset()
    utils.counters.clear()


def is_compiling():
    return settings.capturing > 0


def list_backends(exclude_tags=("debug", "experimental")):
    return ["cudagraphs", "inductor", "openxla", "tvm"]


def _identity_decorator(fn=None, *args, **kwargs):
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


allow_in_graph = disallow_in_graph = forbid_in_graph = assume_constant_result = run = \
    _identity_decorator


def disable(fn=None, recursive=True, *, reason=None):
    """torch._dynamo.disable: see ember.compiler.disable."""
    from ..compiler import disable as compiler_disable   # (cycle: ember.compiler imports this)
    return compiler_disable(fn, recursive, reason=reason)


def optimize(backend="inductor", *, nopython=False, guard_export_fn=None, guard_fail_fn=None,
             disable=False, dynamic=None):
    """A decorator compiling with `backend`: here, the function itself."""
    return lambda fn: fn


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    pass


def maybe_mark_dynamic(t, index):
    pass


def mark_static(t, index=None):
    pass


def mark_static_address(t, guard=True):
    pass


def graph_break(msg=""):
    """A graph break where it is called (inside a capture), as PyTorch's."""
    if capture.active is not None and not capture.active.passing():
        capture.active.graph_break(f"graph_break() called{': ' + msg if msg else ''}")


def explain(f, *extra_args, **extra_kwargs):
    """`explain(f)(*args, **kwargs)`: capture `f` once on those arguments and return what
    the capture saw (an ExplainOutput). The call runs `f` for real."""
    if extra_args or extra_kwargs:
        return _explain.explain(f, *extra_args, **extra_kwargs)
    return lambda *args, **kwargs: _explain.explain(f, *args, **kwargs)


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("ember has no graph capture: use ember.onnx or run eagerly")


def __getattr__(name):
    if name == "OptimizedModule":
        return _compile.OptimizedModule   # (built on first use)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")

