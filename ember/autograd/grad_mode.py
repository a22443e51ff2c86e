"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

All work as context managers and as decorators, like PyTorch's. The flag is thread-local
(as PyTorch's), read on every op through `state.enabled`.
"""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generators) with itself."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError("grad-mode decorators apply to functions, not classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    with self.clone():
                        try:
                            response = gen.send(request)
                        except StopIteration as e:
                            return e.value

            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecorator(_DecoratorContextManager):
    """Also usable bare: `@no_grad` as well as `@no_grad()` (PyTorch accepts both)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecorator):
    """Disable gradient recording inside the block."""

    def __init__(self):
        self.prev = None

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev
        return False


class enable_grad(_NoParamDecorator):
    """Enable gradient recording inside the block (inside a no_grad block, say)."""

    def __init__(self):
        self.prev = None

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True

    def __exit__(self, *exc):
        state.enabled = self.prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; takes effect at once, and as a context manager restores it."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled() argument 'mode' must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = state.enabled
        self.mode = mode
        state.enabled = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self.prev
        return False

    def __call__(self, func):
        state.enabled = self.prev
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad; tensors made inside are inference tensors in PyTorch (here: plain)."""

    def __init__(self, mode=True):
        self.mode = mode
        self.prev = None
        self.prev_inference = None

    def __new__(cls, mode_or_func=True):
        if callable(mode_or_func) and not isinstance(mode_or_func, bool):
            return cls()(mode_or_func)
        return super().__new__(cls)

    def __enter__(self):
        self.prev, self.prev_inference = state.enabled, state.inference
        if self.mode:
            state.enabled, state.inference = False, True

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev, self.prev_inference
        return False

    def clone(self):
        return self.__class__(self.mode)
