"""ember.compiler (torch.compiler): the public controls of ember.compile (ember/_compile)."""
import contextlib
import functools

from . import _dynamo
from ._compile import compile, settings  # noqa: F401

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "set_stance", "allow_in_graph", "assume_constant_result",
           "list_backends", "cudagraph_mark_step_begin", "substitute_in_graph",
           "get_default_backend", "set_default_backend", "wrap_numpy"]

_default_backend = ["inductor"]


def reset():
    """Forget every capture of every compiled function."""
    _dynamo.reset()


def is_compiling():
    """True while ember.compile captures a function (its first run on a signature)."""
    return settings.capturing > 0


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """`fn` runs eagerly even inside a compiled function: a capture meeting it breaks the
    graph there (as PyTorch's)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        _dynamo.graph_break(f"disabled function {getattr(fn, '__qualname__', fn)}"
                            + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    return eager


class set_stance(contextlib.ContextDecorator):
    """The compiler's stance: "default"; "force_eager" (compiled functions run their
    original code); "eager_on_recompile" (a signature not captured yet runs eagerly instead
    of capturing); "fail_on_recompile" (it raises). A function call sets it, a `with`
    block or decorator sets it for its duration."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        self.previous = settings.stance
        settings.stance = stance

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        settings.stance = self.previous
        return False


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    return lambda fn: fn


def wrap_numpy(fn):
    return fn


def list_backends(exclude_tags=("debug", "experimental")):
    return _dynamo.list_backends(exclude_tags)


def cudagraph_mark_step_begin():
    """No CUDA graphs in ember: nothing to mark."""


def get_default_backend():
    return _default_backend[0]


def set_default_backend(backend):
    _default_backend[0] = "inductor" if backend is None else backend
