"""Argument checks shared across op families, raising the errors of PyTorch's argument
parser: a call matching none of a function's overloads, an int or a Number argument."""
import builtins

from .._creation import _is_int, _type_name
from .._tensor import Tensor
from ._elementwise import EMPTY, NUMBER_TYPES


def invalid_combination(name, args, signatures, keywords=EMPTY):
    """PyTorch's TypeError for arguments that match none of a function's overloads."""
    def kind(a):
        return "Tensor" if isinstance(a, Tensor) else type(a).__name__
    got = ", ".join([kind(a) for a in args] + [f"{k}={kind(v)}" for k, v in keywords.items()])
    lines = "".join(f" * ({s})\n" for s in signatures)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}")


def int_arg(fname, value, arg, position):
    """An int argument (a Python or NumPy int, or a one-element integer tensor), as an int."""
    if not _is_int(value):
        raise TypeError(f"{fname}(): argument '{arg}' (position {position}) must be int, not "
                        f"{_type_name(value)}")
    return builtins.int(value.__index__())


def check_int(name, arg, value):
    if type(value) is not int:
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")


def number_arg(name, arg, value, position=None):
    """A Number argument (a 0-dim tensor counts, as in PyTorch), as a Python number."""
    if isinstance(value, Tensor):
        return value.item()
    if not isinstance(value, NUMBER_TYPES):
        where_ = f" (position {position})" if position else ""
        raise TypeError(f"{name}(): argument '{arg}'{where_} must be Number, not "
                        f"{type(value).__name__}")
    return value
