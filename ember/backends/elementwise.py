"""Elementwise work behind named functions: `binary` (add, sub, mul, div of two arrays) and
`unary` (exp, sigmoid, sqrt).

With more than one thread set and arrays large enough for a thread team to pay, the compiled
binary kernel (csrc/elementwise.c) spreads the work over the team, as PyTorch does; each
element is one IEEE operation, so the result is NumPy's bit for bit. The unary functions are
vector_math.h's exp (within 1 ulp) and sigmoid 1 / (1 + exp(-x)) built on it, not NumPy's, so
they run compiled for every large contiguous float32 array whatever the thread count: the bits
never depend on the thread count (nor on the CPU); sqrt is IEEE's, NumPy's bits. Everything
else (small or broadcast operands, other dtypes, CuPy, no build, EMBER_KERNELS=numpy) is
NumPy's own operator or function, the reference. (float64's exp stays NumPy's: its AVX-512
loop beats the compiled one by 40% on one thread; so does float32 tanh, 0.3 ms a million
against 0.7 for a compiled one.)
"""
import operator

import numpy as np

from . import array_module
from .cpu_kernels import compiled

_CODES = {"add": 0, "sub": 1, "mul": 2, "div": 3}
_UNARY_CODES = {"exp": 0, "sigmoid": 1, "sqrt": 2}
_NUMPY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "div": operator.truediv}
# Elements from which the team pays for + - * / (csrc/ember_kernels.h EK_PARALLEL_MIN_F32/64).
_MIN_ELEMENTS = {np.dtype(np.float32): 1 << 16, np.dtype(np.float64): 1 << 15}
# Elements from which the compiled unary functions beat NumPy's on one thread (measured: 64K
# float32 exps 22 us against 26; below, the call's fixed cost eats the gain).
_UNARY_MIN = 1 << 16
_FLOAT32 = np.dtype(np.float32)
_EXACT_INT = 1 << 24   # Python ints below this are the same number in float32


def _team_takes(a, b):
    """Whether the compiled kernel can compute a op b: 'array', 'scalar' or None."""
    if compiled is None or type(a) is not np.ndarray:
        return None
    least = _MIN_ELEMENTS.get(a.dtype)
    if least is None or a.size < least or not a.flags.c_contiguous:
        return None
    if compiled.get_num_threads() < 2:
        return None
    if type(b) is np.ndarray:
        if b.dtype == a.dtype and b.shape == a.shape and b.flags.c_contiguous:
            return "array"
        return None
    if b.__class__ is float or (b.__class__ is int and -_EXACT_INT < b < _EXACT_INT):
        return "scalar"   # (NumPy reads a Python number as the array's dtype)
    return None


def binary(name, a, b):
    """a op b for op `name` ('add', 'sub', 'mul', 'div'), as NumPy's operator gives it."""
    kind = _team_takes(a, b)
    if kind is None:
        return _NUMPY[name](a, b)
    out = np.empty_like(a)
    if kind == "array":
        compiled.binary(_CODES[name], a, b, 0.0, out)
    else:
        compiled.binary(_CODES[name], a, None, float(b), out)
    return out


def _sigmoid(xp, a):
    # NOTE: exp(-x) overflows to inf for very negative x and 1/(1+inf) is exactly 0, so this
    # form is stable at both ends (the op runs with overflow warnings silenced).
    return xp.reciprocal(xp.exp(-a) + 1)


# The reference of each function, for any array module.
_REFERENCE = {"exp": lambda xp, a: xp.exp(a), "sigmoid": _sigmoid,
              "sqrt": lambda xp, a: xp.sqrt(a)}


def unary(name, a):
    """Function `name` ('exp', 'sigmoid', 'sqrt') of array `a`, as the reference computes it
    within an ulp or two."""
    if (compiled is None or type(a) is not np.ndarray or a.size < _UNARY_MIN
            or a.dtype != _FLOAT32 or not a.flags.c_contiguous):
        return _REFERENCE[name](array_module(a), a)
    out = np.empty_like(a)
    compiled.unary(_UNARY_CODES[name], a, out)
    return out
