"""Elementwise work behind named functions: `binary` (add, sub, mul, div of two arrays),
`unary` (exp, sigmoid, sqrt), `relu` and its backward, and `run_chain` (a fused chain of
these, for ember.compile).

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
import struct

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
_FLOATS = (_FLOAT32, np.dtype(np.float64))
# csrc/fused.c's instructions: op name -> (opcode, operands). Each is one IEEE operation per
# element, or NumPy's maximum(x, 0) (relu: nan kept), or a select (relu's backward: 0 where
# output <= 0, else g, as PyTorch's threshold_backward): the NumPy forms' bits, so the
# compiled path is taken for speed alone.
CHAIN_OPS = {"add": (0, 2), "sub": (1, 2), "mul": (2, 2), "div": (3, 2), "neg": (4, 1),
             "relu": (5, 1), "threshold_backward": (6, 2)}
# Elements from which one compiled pass beats NumPy's relu (its maximum checks for nan, 0.65
# ns an element against 0.1) and its backward (a comparison, a bool array, a product);
# below, the call's fixed cost eats the gain (measured: even at 4096 elements).
_CHAIN_MIN = 4096
CHAIN_DTYPES = _FLOATS
_EXACT_INT = 1 << 24   # Python ints below this are the same number in float32


def exact_scalar(value, dtype):
    """The float a scalar operand of a `dtype` array stands for in the compiled kernels, or
    None: a Python float, an int NumPy reads as the same number in float32, or a 0-d array
    of `dtype` itself (NumPy reads a Python number as the array's dtype)."""
    cls = value.__class__
    if cls is float or (cls is int and -_EXACT_INT < value < _EXACT_INT):
        return float(value)
    if cls is np.ndarray and value.ndim == 0 and value.dtype == dtype:
        return float(value)
    return None


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
    if b.__class__ is not np.ndarray and exact_scalar(b, a.dtype) is not None:
        return "scalar"
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


def run_chain(program, inputs, scalars, outputs, scratch):
    """csrc/fused.c's chain: `program` (int32 quads: opcode, destination, operands) over the
    registers inputs, scalars, outputs, scratch; fills `outputs`."""
    compiled.fused_chain(program, inputs, scalars, outputs, scratch)


def _one_op(name):
    """The program of one chain op reading registers 0 (and 1) and writing the one after."""
    code, operands = CHAIN_OPS[name]
    return struct.pack("4i", code, operands, 0, operands - 1)


_RELU, _THRESHOLD_BACKWARD = _one_op("relu"), _one_op("threshold_backward")


def _chain_takes(a):
    return (compiled is not None and type(a) is np.ndarray and a.size >= _CHAIN_MIN and
            a.dtype in _FLOATS and a.flags.c_contiguous)


def relu(a):
    """max(a, 0) with nan kept, as NumPy's maximum gives it."""
    if not _chain_takes(a):
        return array_module(a).maximum(a, 0)
    out = np.empty_like(a)
    compiled.fused_chain(_RELU, (a,), (), (out,), 0)
    return out


def threshold_backward(g, output):
    """relu's gradient, PyTorch's select: 0 where output <= 0, else g (a nan output passes g
    on; the zeros are +0 whatever g holds)."""
    if not (_chain_takes(g) and type(output) is np.ndarray and output.dtype == g.dtype and
            output.shape == g.shape and output.flags.c_contiguous):
        return array_module(g).where(output <= 0, g.dtype.type(0), g)
    out = np.empty_like(g)
    compiled.fused_chain(_THRESHOLD_BACKWARD, (g, output), (), (out,), 0)
    return out
