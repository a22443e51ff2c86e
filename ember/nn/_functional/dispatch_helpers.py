"""nn.functional's argument and dispatch helpers: assert_int_or_pair, boolean_dispatch (one
public function choosing between two implementations by a boolean argument, as
max_pool2d(return_indices=...) does), the __torch_function__ protocol's entry points
(re-exported from ember.overrides), and the Tensor class itself."""
from ..._tensor import Tensor
from ...overrides import (handle_torch_function, has_torch_function,  # noqa: F401
                          has_torch_function_unary, has_torch_function_variadic)

__all__ = ["assert_int_or_pair", "boolean_dispatch", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "Tensor"]

# fn -> how it dispatches (PyTorch keeps this table for TorchScript's compiler)
boolean_dispatched = {}


def assert_int_or_pair(arg, arg_name, message):
    """AssertionError(message formatted with arg_name) unless `arg` is an int or has 2
    items."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name,
                     func_name):
    """A function calling `if_true` or `if_false` with its arguments, by the value of the
    boolean argument `arg_name` (keyword) or at position `arg_index` (else `default`). The
    two share one docstring: at most one of them may have its own."""
    def fn(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return (if_true if flag else if_false)(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) == 2:
        raise RuntimeError("only one function can have a docstring")
    doc = docs[0] if docs else None
    if_true.__doc__ = if_false.__doc__ = fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index,
                              "default": default, "arg_name": arg_name}
    return fn

