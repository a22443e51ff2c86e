"""The sym_* helpers of torch's namespace (sym_int, sym_max, sym_constrain_range, ...) on
concrete Python numbers: ember traces no symbolic shapes, so every size is a plain int and
these reduce to their eager meaning with PyTorch's promotion (a float anywhere gives a
float) and errors."""
import builtins
import math

import numpy as np

from ._creation import tensor

__all__ = ["sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum",
           "sym_ite", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size",
           "SymInt", "SymFloat", "SymBool"]

_NUMBERS = (np.integer, np.floating, builtins.int, builtins.float)
_FLOATS = (np.floating, builtins.float)


def _check(a):
    if not isinstance(a, _NUMBERS):
        raise AssertionError(f"expected {_NUMBERS}, got {type(a)}")


def sym_int(a):
    """int(a), truncating toward zero."""
    return builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def sym_not(a):
    return not a


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of `args` (sym_sum(a, b, c) or sym_sum([a, b, c])), from 0 as sum() adds."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_ite(b, t, f):
    """`t if b else f`, for a bool condition and branches of one type (PyTorch's asserts)."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def _extreme(pick, a, b):
    _check(a)
    _check(b)
    if isinstance(a, _FLOATS) or isinstance(b, _FLOATS):
        return builtins.float(pick(a, b))
    return pick(a, b)


def sym_max(a, b):
    """max(a, b), a float when either is (max(1, 1.0) is 1.0 either way round)."""
    return _extreme(builtins.max, a, b)


def sym_min(a, b):
    return _extreme(builtins.min, a, b)


def sym_constrain_range(size, *, min=None, max=None):
    """Checks a concrete size against [min, max] (the bounds a tracer would assume)."""
    low = -(1 << 63) if min is None else min
    high = (1 << 63) - 1 if max is None else max
    if not low <= size <= high:
        raise RuntimeError(f"Invalid value range for {size} between [{low}, {high}].")


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """As sym_constrain_range, for a value used as a size (so at least 0)."""
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. "
                           f"got: {max}")
    sym_constrain_range(size, min=0 if min is None else min, max=max)


def sym_fresh_size(expr):
    """A fresh size's value: `expr` read as a one-element tensor's number (so a non-number
    or a tensor of several elements raises tensor()'s or item()'s error)."""
    return tensor(expr).item()


class _Symbolic:
    """A symbolic scalar of a traced shape. ember traces no symbolic shapes, so no value is
    ever one: the classes exist for the `isinstance(x, torch.SymInt)` checks library code
    makes, which answer False as on an eager PyTorch program."""

    def __init__(self, node):
        raise TypeError(f"ember does not support symbolic shapes: a {type(self).__name__} "
                        "cannot be created (sizes are plain ints)")


class SymInt(_Symbolic):
    pass


class SymFloat(_Symbolic):
    pass


class SymBool(_Symbolic):
    pass
