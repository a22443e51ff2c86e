"""ember.overrides (torch.overrides): the __torch_function__ protocol's Python helpers.

Library code written for PyTorch routes its own functions through `has_torch_function` /
`handle_torch_function` so that tensor-like types can override them; Tensor subclasses define
`__torch_function__` and call `super().__torch_function__`. Both work here.

NOTE: ember's own ops do not consult `__torch_function__` or TorchFunctionMode (the dispatch
door stays one attribute check): `ember.add(subclass_instance, 1)` runs ember's add and
returns a plain Tensor, where PyTorch calls the subclass's override first. A mode entered with
`with MyMode():` is on the stack (for handle_torch_function and code that inspects it) but
does not see ember's own calls.
"""
import contextlib
import functools
import inspect

import ember

from . import _names
from ._tensor import Tensor

__all__ = ["enable_reentrant_dispatch", "get_ignored_functions", "get_overridable_functions",
           "get_testing_overrides", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "resolve_name", "wrap_torch_function",
           "TorchFunctionMode", "BaseTorchFunctionMode", "get_default_nowrap_functions",
           "redispatch_function"]

_mode_stack = []
_disabled = [0]   # > 0 inside Tensor.__torch_function__'s call of the function
_skip_one_hop = [False]   # set by redispatch_function for the function it calls


def _overrides(obj):
    """Whether `obj` takes part in __torch_function__ dispatch (PyTorch: anything whose type
    defines it, except exact Tensors)."""
    t = type(obj)
    return t is not Tensor and getattr(t, "__torch_function__", None) is not None


def has_torch_function(relevant_args):
    """True when a mode is active or an argument's type overrides __torch_function__."""
    if _disabled[0]:
        return False
    if _skip_one_hop[0]:   # redispatch_function's call: this check, and only this, says no
        _skip_one_hop[0] = False
        return False
    return bool(_mode_stack) or any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def _overloaded_args(relevant_args):
    """The arguments to try, one per type whose class defines __torch_function__ (exact
    Tensors too: their default runs the function), subclasses before their bases, else in
    order."""
    found = []
    for arg in relevant_args:
        if getattr(type(arg), "__torch_function__", None) is None or \
                any(type(arg) is type(f) for f in found):
            continue
        index = len(found)
        for i, f in enumerate(found):
            if issubclass(type(arg), type(f)):
                index = i
                break
        found.insert(index, arg)
    return found


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the active mode's, then each overriding type's __torch_function__ until one
    returns something other than NotImplemented (PyTorch's order)."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(a) for a in overloaded)
    if _mode_stack:
        mode = _mode_stack.pop()   # (the mode runs with itself off the stack, as in PyTorch)
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            _mode_stack.append(mode)
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def wrap_torch_function(dispatcher):
    """Decorator: route calls of the function through handle_torch_function when the
    arguments `dispatcher(*args, **kwargs)` picks override it."""
    def decorator(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return decorator


def is_tensor_like(inp):
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func):
    return getattr(Tensor, getattr(func, "__name__", ""), None) is func


class TorchFunctionMode:
    """Base of __torch_function__ modes: entering one pushes it on the mode stack."""

    inner = None

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _mode_stack.append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _mode_stack.remove(self)

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)


def _get_current_function_mode():
    return _mode_stack[-1] if _mode_stack else None


def _get_current_function_mode_stack():
    return list(_mode_stack)


def _is_torch_function_mode_enabled():
    return bool(_mode_stack)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    yield


def tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor.__torch_function__: run `func` with dispatch off, results as `cls`."""
    kwargs = kwargs or {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    _disabled[0] += 1
    try:
        ret = func(*args, **kwargs)
    finally:
        _disabled[0] -= 1
    return _convert(ret, cls)


def _convert(ret, cls):
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(_convert(r, cls) for r in ret)
    return ret


def resolve_name(f):
    """'ember.add' for ember's functions ('torch.add' under `ember run`), None otherwise."""
    name = getattr(f, "__name__", None)
    if name is not None and getattr(ember, name, None) is f:
        return f"{_names.MODULE}.{name}"
    if name is not None and getattr(Tensor, name, None) is f:
        return f"{_names.MODULE}.Tensor.{name}"
    return None


def get_ignored_functions():
    """Public functions that take no tensors and so cannot be overridden."""
    names = ("typename", "is_tensor", "is_storage", "set_default_dtype", "get_default_dtype",
             "manual_seed", "seed", "initial_seed", "set_printoptions", "is_grad_enabled",
             "set_num_threads", "get_num_threads", "zeros", "ones", "empty", "full", "arange",
             "eye", "tensor", "as_tensor", "from_numpy", "linspace", "logspace", "rand",
             "randn", "randint", "randperm", "load", "save", "compile", "no_grad",
             "enable_grad")
    return {getattr(ember, n) for n in names if hasattr(ember, n)}


def get_overridable_functions():
    """{namespace: [functions]} of the functions taking tensors (ember, Tensor, nn.functional)."""
    # (cycle: this module loads with ember.autograd, before the ops nn.functional needs)
    from .nn import functional as F
    ignored = get_ignored_functions()
    table = {}
    for space in (ember, F):
        table[space] = [f for n, f in sorted(vars(space).items())
                        if not n.startswith("_") and callable(f) and not isinstance(f, type)
                        and f not in ignored]
    table[Tensor] = [getattr(Tensor, n) for n in sorted(dir(Tensor))
                     if not n.startswith("_") and callable(getattr(Tensor, n))]
    return table


def get_testing_overrides():
    """{function: a lambda with its signature returning -1} (PyTorch's test helper)."""
    def dummy(f):
        try:
            sig = inspect.signature(f)
        except (TypeError, ValueError):
            return lambda *args, **kwargs: -1
        params = ", ".join(str(p) for p in sig.parameters.values())
        namespace = {}
        try:   # (a default without an evaluable repr falls back to *args, **kwargs)
            exec(f"def _dummy({params}): return -1", {}, namespace)   # noqa: S102
        except Exception:
            return lambda *args, **kwargs: -1
        return namespace["_dummy"]
    return {f: dummy(f) for fs in get_overridable_functions().values() for f in fs}


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose __torch_function__ just calls the function (subclass it and override
    what you need)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)


def get_default_nowrap_functions():
    """The Tensor attribute getters whose results Tensor.__torch_function__ leaves unwrapped
    (a subclass's `.grad` and `._base` stay what they are)."""
    return {Tensor._base.__get__, Tensor.grad.__get__, Tensor._grad.__get__}


def redispatch_function(func, types, args, kwargs):
    """Call `func` skipping one level of __torch_function__ dispatch: its own check says no
    override, while the functions it calls in turn dispatch as usual."""
    _skip_one_hop[0] = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _skip_one_hop[0] = False
