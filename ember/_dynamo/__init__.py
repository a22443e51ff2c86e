"""ember._dynamo (torch._dynamo): the controls programs use around torch.compile.

ember has no graph capture (ember.compile runs the code eagerly, see ember/_compile.py), so
these keep programs that reset, configure or decorate for Dynamo running: reset() and the
marks do nothing, decorators return their function, `config` holds Dynamo's settings.
"""
from . import config  # noqa: F401

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "disallow_in_graph",
           "explain", "export", "forbid_in_graph", "graph_break", "is_compiling",
           "list_backends", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "optimize", "reset", "run", "OptimizedModule"]


def reset():
    """Clear compiled code (there is none to clear)."""


def is_compiling():
    return False


def list_backends(exclude_tags=("debug", "experimental")):
    return ["cudagraphs", "inductor", "openxla", "tvm"]


def _identity_decorator(fn=None, *args, **kwargs):
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


disable = allow_in_graph = disallow_in_graph = forbid_in_graph = assume_constant_result = \
    run = _identity_decorator


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
    pass


def explain(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("ember has no graph capture: torch._dynamo.explain has nothing "
                              "to explain")


def export(f, *extra_args, **extra_kwargs):
    raise NotImplementedError("ember has no graph capture: use ember.onnx or run eagerly")


def __getattr__(name):
    if name == "OptimizedModule":
        from .._compile import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")

