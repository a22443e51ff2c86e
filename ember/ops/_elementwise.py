"""Machinery shared by the pointwise families (unary, rounding, pointwise, comparison):
operand checks in PyTorch's words, result/compute dtypes, and the runners that hand unary and
binary ops to the dispatch door.

NOTE: float16/bfloat16 results are computed in float32 and rounded once (as PyTorch's CPU
kernels do), so float16 exp(12) is inf, not a float16-accurate approximation.
"""
import builtins

import numpy as np

from .. import _dtype as dt
from .._creation import zeros_like
from .._tensor import Tensor, write_out
from ..backends.special import quiet
from ._promote import broadcast_error, compute_dtype, operand_array, result_dtype, shape_of
from .registry import check_tensor, defop, dispatch, export, not_tensor  # noqa: F401

EMPTY = {}
LOW = (dt.float16, dt.bfloat16)
NUMBER_TYPES = (builtins.int, builtins.float, builtins.bool, builtins.complex, np.generic)


def defpointwise(name, **kwargs):
    """defop for kernels that may make inf/nan: NumPy's warnings are off while they run."""
    def register(kernel):
        return defop(name, **kwargs)(quiet(kernel))
    return register


# ---------------------------------------------------------------------- errors
def not_implemented(kernel, dtype):
    """PyTorch's error for a kernel without a loop for `dtype` (NotImplementedError)."""
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dt.type_name(dtype)}'")


def binary_not_implemented(kernel, dtype, a, b):
    """not_implemented for a binary op, raised where PyTorch's TensorIterator raises it (see
    after_loop_checks)."""
    return after_loop_checks(not_implemented(kernel, dtype), dtype, a, b)


def after_loop_checks(error, dtype, *operands):
    """`error` (a pointwise op refusing `dtype`) in its place after TensorIterator's checks:
    PyTorch computes the operands' broadcast shape before it looks for a kernel, so shapes that
    do not broadcast are the error first. The error carries the loop's shape and dtype as
    `loop`: an in-place caller checks its output against them first (inplace.apply_inplace),
    as TensorIterator does."""
    shape = ()
    for x in operands:
        s = shape_of(x)
        if s != shape:
            try:
                shape = np.broadcast_shapes(shape, s)
            except ValueError:
                return broadcast_error(shape, s)
    error.loop = (shape, dtype)
    return error


# C++ type names PyTorch prints in some dtype-mismatch messages (lerp, ...).
CPP_NAMES = {dt.bool: "bool", dt.uint8: "unsigned char", dt.int8: "signed char",
             dt.int16: "short int", dt.int32: "int", dt.int64: "long int",
             dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16", dt.float32: "float",
             dt.float64: "double", dt.complex64: "c10::complex<float>",
             dt.complex128: "c10::complex<double>"}


# ---------------------------------------------------------------------- dtypes
def float_result(d):
    """Floating functions (exp, sin, ...) of integer or bool inputs give the default dtype."""
    return d if d.category >= dt.FLOATING else dt.get_default_dtype()


result_of = result_dtype  # promoted dtype of two operands, with fast paths


# ---------------------------------------------------------------------- runners
def unary(op, input, result, out=None, params=EMPTY):
    """Run a unary op whose result has dtype `result`; low precision computes in float32."""
    a = input._data
    if result.fast and out is None and a.dtype is result.np:
        return dispatch(op, (input,), params, result, (a,))   # the common case, no casts
    compute = compute_dtype(result)
    if a.dtype != compute.np and a.dtype.kind != "c":  # complex -> real (abs) reads complex
        a = a.astype(compute.np)
    if result in LOW:
        with np.errstate(over="ignore"):  # float32 -> float16 rounding to inf is intended
            r = dispatch(op, (input,), params, result, (a,))
    else:
        r = dispatch(op, (input,), params, result, (a,))
    return r if out is None else write_out(r, out)


def binary(op, a, b, result, compute=None, params=EMPTY, out=None):
    """Run a binary op on `a`, `b` (Tensors or scalars) cast to `compute`, giving `result`."""
    if compute is None:
        compute = compute_dtype(result)
    arrays = (operand_array(a, compute), operand_array(b, compute))
    try:
        if result in LOW:
            with np.errstate(over="ignore"):  # float32 -> float16 rounding to inf is intended
                r = dispatch(op, (a, b), params, result, arrays)
        else:
            r = dispatch(op, (a, b), params, result, arrays)
    except ValueError:
        raise broadcast_error(shape_of(a), shape_of(b)) from None
    return r if out is None else write_out(r, out)


def exact_operands(operands, dtype):
    """Operands as arrays of `dtype` for ops that must see values rounded to `dtype` (a
    Python 0.1 compared with a float16 tensor is rounded to float16 first, as in PyTorch);
    low-precision values are then widened exactly to float32, which every backend handles."""
    compute = compute_dtype(dtype)
    arrays = []
    for x in operands:
        if dtype not in LOW:
            arrays.append(operand_array(x, compute))
        elif isinstance(x, Tensor):
            a = x._data if x._data.dtype == dtype.np else x._data.astype(dtype.np)
            arrays.append(a.astype(np.float32))
        else:  # a Python scalar, rounded to `dtype` and kept a scalar (CuPy takes those)
            arrays.append(np.asarray(x).astype(dtype.np).astype(np.float32).item())
    return arrays


def zeros_vjp(ctx, g):
    """Piecewise-constant ops (floor, sign, ...): a zero gradient for every input."""
    return tuple(None if e is None else zeros_like(g) for e in ctx.edges)


def public(fn, name, **kwargs):
    """Name a generated function and export it."""
    fn.__name__ = fn.__qualname__ = name
    return export(fn, name=name, **kwargs)
