"""nn.functional's argument and dispatch helpers: assert_int_or_pair, boolean_dispatch (one
public function choosing between two implementations by a boolean argument, as
max_pool2d(return_indices=...) does), the __torch_function__ protocol's entry points
(re-exported from ember.overrides), and the Tensor class itself."""
from ..._dtype import dtype
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


def _doc(obj):
    """obj.__doc__ as PyTorch sees it: its tensors and dtypes are C objects without one."""
    return None if isinstance(obj, (Tensor, dtype)) else obj.__doc__


def _set_doc(obj, doc):
    if not isinstance(obj, Tensor):   # (PyTorch's tensors take any attribute; ember's slots
        obj.__doc__ = doc             # have no room for one, and nothing reads it back)


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

    true_doc, false_doc = _doc(if_true), _doc(if_false)
    if true_doc is not None and false_doc is not None:
        raise RuntimeError("only one function can have a docstring")
    doc = false_doc if true_doc is None else true_doc
    if doc is not None:   # (the one without gets the other's)
        _set_doc(if_false if false_doc is None else if_true, doc)
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index,
                              "default": default, "arg_name": arg_name}
    return fn

