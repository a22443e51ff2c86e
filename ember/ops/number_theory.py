"""Integer divisors: gcd and lcm, with PyTorch's results where an operand is the dtype's
minimum (Euclid's loop with C's truncating remainder) and its widening for narrow types."""
import numpy as np

from .._dtype import INTEGER
from ..backends import array_module
from ._elementwise import (binary, binary_not_implemented, check_tensor, defpointwise,
                           result_of)
from .registry import export


def _euclid(xp, a, b):
    """PyTorch's calc_gcd: abs (wrapping at the dtype's minimum), then Euclid's loop with C's
    truncating remainder, which gives -gcd where an operand was the minimum."""
    a, b = xp.abs(a), xp.abs(b)
    while True:
        live = a != 0
        if not live.any():
            return b
        a, b = xp.where(live, xp.fmod(b, xp.where(live, a, 1)), 0), xp.where(live, a, b)


@defpointwise("gcd", save=())
def _gcd(a, b):
    xp = array_module(a, b)
    g = xp.gcd(a, b)
    if a.dtype.kind == "i":   # NOTE: only operands at the minimum differ from xp.gcd
        low = np.iinfo(a.dtype).min
        odd = (a == low) | (b == low)
        if odd.any():
            a, b = xp.broadcast_arrays(a, b)
            g[odd] = _euclid(xp, a[odd], b[odd])
    return g


@defpointwise("lcm", save=())
def _lcm(a, b):
    # NOTE: PyTorch computes abs(a / g * b) in C's int for narrow types (no wrap before abs)
    # and wraps in the type itself for int32/int64; the widening below reproduces both.
    xp = array_module(a, b)
    d = a.dtype
    g = _gcd.forward(a, b)
    wide = d if d.itemsize >= 4 else np.dtype(np.int32)
    a, b, g = a.astype(wide), b.astype(wide), g.astype(wide)
    r = xp.abs(a // xp.where(g == 0, 1, g) * b)
    return xp.where(g == 0, 0, r).astype(d)


def _integer_binary(op, name, input, other, out):
    check_tensor(name, input)
    check_tensor(name, other, "other", 2)
    result = result_of(input, other)
    if result.category != INTEGER:
        raise binary_not_implemented(f"{name}_cpu", result, input, other)
    return binary(op, input, other, result, out=out)


@export(inplace=True)
def gcd(input, other, *, out=None):
    return _integer_binary(_gcd, "gcd", input, other, out)


@export(inplace=True)
def lcm(input, other, *, out=None):
    return _integer_binary(_lcm, "lcm", input, other, out)
