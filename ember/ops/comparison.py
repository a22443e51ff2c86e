"""Comparisons, logical and bitwise ops, floating-point classification (isnan, isinf, ...),
closeness tests and set membership (isin), with the Python operators that map onto them
(`==`, `<`, `&`, `~`, ...).

Results are bool (never differentiable). Comparisons run in the promoted dtype, so a Python
0.1 compared with a float16 tensor is rounded to float16 first and integer scalars wrap into
an unsigned tensor's range (uint8 == -56 matches 200), as in PyTorch.
"""
import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._arguments import invalid_combination
from ._elementwise import binary_not_implemented
from ._elementwise import (EMPTY, LOW, NUMBER_TYPES, binary, check_tensor, defpointwise,
                           exact_operands, not_implemented, not_tensor, public, result_of)
from ._promote import (broadcast_error, compute_dtype, operand_array, result_type_of,
                       shape_of, tensor_operands)
from .registry import METHODS, defop, dispatch, export


def _bool_result(op, a, b, arrays, out):
    try:
        r = dispatch(op, (a, b), EMPTY, dt.bool, arrays)
    except ValueError:
        raise broadcast_error(shape_of(a), shape_of(b)) from None
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- comparisons
def _comparison(name, ufunc, aliases=(), ordered=True):
    @defop(name, save=())
    def op(a, b):
        return getattr(array_module(a, b), ufunc)(a, b)

    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor):
            check_tensor(name, input)
        promoted = result_of(input, other)
        if ordered and promoted.category == dt.COMPLEX:   # (complex numbers have no order)
            raise binary_not_implemented(f"{name}_cpu", promoted, input, other)
        if promoted in LOW:
            arrays = exact_operands((input, other), promoted)
        else:
            arrays = (operand_array(input, promoted), operand_array(other, promoted))
        return _bool_result(op, input, other, arrays, out)
    return public(fn, name, inplace=True, aliases=aliases)


eq = _comparison("eq", "equal", ordered=False)
ne = _comparison("ne", "not_equal", aliases=("not_equal",), ordered=False)
lt = _comparison("lt", "less", aliases=("less",))
le = _comparison("le", "less_equal", aliases=("less_equal",))
gt = _comparison("gt", "greater", aliases=("greater",))
ge = _comparison("ge", "greater_equal", aliases=("greater_equal",))


def _operator(fn):
    """`t == x`: elementwise for tensors and numbers; NotImplemented otherwise, so Python
    falls back to identity (`t == None` is False, as in PyTorch)."""
    def operator(self, other):
        if isinstance(other, (Tensor, *NUMBER_TYPES)):
            return fn(self, other)
        if type(other) is np.ndarray:   # elementwise against the array, as PyTorch
            return fn(*tensor_operands(self, other))
        return NotImplemented
    return operator


# ---------------------------------------------------------------------- closeness, equality
@export
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_tensor("isclose", input)
    if not isinstance(other, Tensor):
        raise not_tensor("isclose", other, "other", 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{dt.type_name(input.dtype)} did not match "
                           f"{dt.type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return binary(_isclose, input, other, dt.bool, input.dtype,
                  {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})


@defpointwise("isclose", save=())
def _isclose(a, b, rtol, atol, equal_nan):
    xp = array_module(a, b)
    close = a == b
    if a.dtype.kind in "biu":
        a, b = a.astype(xp.float64), b.astype(xp.float64)
    # NOTE: infinities are close only when equal (|inf - inf| is nan, never <= tolerance).
    diff = xp.abs(a - b)
    close |= xp.isfinite(diff) & (diff <= atol + rtol * xp.abs(b))
    if equal_nan:
        close |= xp.isnan(a) & xp.isnan(b)
    return close


@export
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@export
def equal(input, other):
    """True when both have the same shape and equal elements (nan is never equal)."""
    check_tensor("equal", input)
    check_tensor("equal", other, "other", 2)
    if input._data.shape != other._data.shape:
        return False
    return bool((input == other)._data.all())


# ---------------------------------------------------------------------- classification
def _classify(name, kernel, complex_error=None, complex_kind=RuntimeError):
    @defop(name, save=())
    def op(a):
        return kernel(array_module(a), a)

    def fn(input):
        check_tensor(name, input)
        if input.layout is not Tensor.layout:   # (sparse: the values' test, or a refusal)
            from ..sparse.pointwise import sparse_pointwise  # (cycle: ember.sparse imports ops)
            return sparse_pointwise(name, input)
        if complex_error is not None and input.dtype.category == dt.COMPLEX:
            raise complex_kind(complex_error)
        return dispatch(op, (input,), EMPTY, dt.bool)
    return public(fn, name)


def _false_for_ints(test):
    def kernel(xp, a):
        if a.dtype.kind in "biu":
            return xp.zeros(a.shape, dtype=bool)
        return test(xp, a)
    return kernel


def _isfinite(xp, a):
    if a.dtype.kind in "biu":
        return xp.ones(a.shape, dtype=bool)
    return xp.isfinite(a)


isnan = _classify("isnan", _false_for_ints(lambda xp, a: xp.isnan(a)))
isinf = _classify("isinf", _false_for_ints(lambda xp, a: xp.isinf(a)))
isfinite = _classify("isfinite", _isfinite)
isposinf = _classify("isposinf", _false_for_ints(lambda xp, a: a == xp.inf),
                     "isposinf does not support complex inputs.")
isneginf = _classify("isneginf", _false_for_ints(lambda xp, a: a == -xp.inf),
                     "isneginf does not support complex inputs.")
isreal = _classify("isreal", lambda xp, a: (a.imag == 0) if a.dtype.kind == "c"
                   else xp.ones(a.shape, dtype=bool))
signbit = _classify("signbit", lambda xp, a: xp.signbit(a) if a.dtype.kind != "b"
                    else xp.zeros(a.shape, dtype=bool),
                    "signbit is not implemented for complex tensors.", NotImplementedError)


# ---------------------------------------------------------------------- logical
def _logical(name, ufunc):
    @defop(name, save=())
    def op(a, b):
        return getattr(array_module(a, b), ufunc)(a, b)

    def fn(input, other, *, out=None):
        check_tensor(name, input)
        if not isinstance(other, Tensor):
            raise not_tensor(name, other, "other", 2)
        return _bool_result(op, input, other, (_truth(input), _truth(other)), out)
    return public(fn, name, inplace=True)


def _truth(t):
    a = t._data
    return a != 0 if a.dtype.kind not in "b" else a


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")


@defop("logical_not", save=())
def _logical_not(a):
    return a == 0


@export(inplace=True)
def logical_not(input, *, out=None):
    check_tensor("logical_not", input)
    r = dispatch(_logical_not, (input,), EMPTY, dt.bool)
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- bitwise
def _bitwise(name, kernel_name, kernel, allow_bool=True):
    op = defop(name, save=())(kernel)

    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            check_tensor(name, input)
        result = result_of(input, other)
        if result.category >= dt.FLOATING or (result is dt.bool and not allow_bool):
            raise binary_not_implemented(kernel_name, result, input, other)
        return binary(op, input, other, result, result, out=out)
    return public(fn, name, inplace=True)


def _shift_valid(xp, a, b):
    bits = a.dtype.itemsize * 8 if hasattr(a, "dtype") else 64
    b = xp.asarray(b)
    return (b >= 0) & (b < bits), bits


def _left_shift(a, b):
    xp = array_module(a, b)
    valid, _ = _shift_valid(xp, xp.asarray(a), b)
    # NOTE: shifting by the width or more (or by a negative amount) is 0 in PyTorch, not the
    # C undefined behaviour NumPy inherits.
    r = xp.left_shift(a, xp.where(valid, b, 0).astype(xp.asarray(b).dtype))
    return xp.where(valid, r, 0).astype(r.dtype)


def _right_shift(a, b):
    xp = array_module(a, b)
    a_arr = xp.asarray(a)
    valid, bits = _shift_valid(xp, a_arr, b)
    # Out-of-range shifts fill with the sign bit (0 for unsigned types).
    fill = bits - 1 if a_arr.dtype.kind == "i" else 0
    r = xp.right_shift(a, xp.where(valid, b, fill).astype(xp.asarray(b).dtype))
    if a_arr.dtype.kind != "i":
        r = xp.where(valid, r, 0).astype(r.dtype)
    return r


def _and(a, b):
    return array_module(a, b).bitwise_and(a, b)


def _or(a, b):
    return array_module(a, b).bitwise_or(a, b)


def _xor(a, b):
    return array_module(a, b).bitwise_xor(a, b)


bitwise_and = _bitwise("bitwise_and", "bitwise_and_cpu", _and)
bitwise_or = _bitwise("bitwise_or", "bitwise_or_cpu", _or)
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor_cpu", _xor)
bitwise_left_shift = _bitwise("bitwise_left_shift", "lshift_cpu", _left_shift, False)
bitwise_right_shift = _bitwise("bitwise_right_shift", "rshift_cpu", _right_shift, False)


@defop("bitwise_not", save=())
def _bitwise_not(a):
    return array_module(a).invert(a)


@export(inplace=True)
def bitwise_not(input, *, out=None):
    check_tensor("bitwise_not", input)
    if input.dtype.category >= dt.FLOATING:
        raise not_implemented("bitwise_not_cpu", input.dtype)
    r = dispatch(_bitwise_not, (input,), EMPTY, input.dtype)
    return r if out is None else write_out(r, out)


def _invert(self):
    if self.dtype.category >= dt.FLOATING:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


# ---------------------------------------------------------------------- isin
_ISIN_SIGNATURES = tuple(
    f"{a}, *, bool assume_unique = False, bool invert = False, Tensor out = None"
    for a in ("Tensor elements, Tensor test_elements", "Number element, Tensor test_elements",
              "Tensor elements, Number test_element"))


@defop("isin", save=())
def _isin(elements, test_elements, assume_unique, invert):
    xp = array_module(elements, test_elements)
    return xp.isin(elements, test_elements, assume_unique=assume_unique, invert=invert)


@export(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    operands = (elements, test_elements)
    kinds = [isinstance(x, Tensor) or isinstance(x, NUMBER_TYPES) for x in operands]
    if not all(kinds) or not any(isinstance(x, Tensor) for x in operands):
        raise invalid_combination("isin", operands, _ISIN_SIGNATURES)
    for x in operands:
        # (a Python complex is checked as PyTorch wraps it: a complex128 tensor)
        d = x.dtype if isinstance(x, Tensor) else \
            dt.complex128 if isinstance(x, complex) else dt.scalar_dtype(x)
        if d.category in (dt.BOOL, dt.COMPLEX):
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{dt.type_name(d)}")
        if type(x) is int and not -2 ** 63 <= x < 2 ** 63:
            raise OverflowError("int too big to convert")
    common = result_type_of(operands)
    xp = array_module(next(x for x in operands if isinstance(x, Tensor))._data)
    # Scalars become arrays of the common dtype (a Python 0.1 is float32 0.1 against a float32
    # tensor); float16/bfloat16 values are compared after an exact widening to float32.
    arrays = [xp.asarray(a, dtype=compute_dtype(common).np)
              for a in exact_operands(operands, common)]
    return dispatch(_isin, operands, {"assume_unique": bool(assume_unique),
                                      "invert": bool(invert)}, dt.bool, arrays)


# ---------------------------------------------------------------------- Python operators
def _reflect(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


def _inplace(name):
    def operator(self, other):
        return METHODS[name](self, other)
    return operator


METHODS.update({
    "__eq__": _operator(eq), "__ne__": _operator(ne), "__lt__": _operator(lt),
    "__le__": _operator(le), "__gt__": _operator(gt), "__ge__": _operator(ge),
    "__invert__": _invert,
    "__and__": bitwise_and, "__rand__": _reflect(bitwise_and),
    "__iand__": _inplace("bitwise_and_"),
    "__or__": bitwise_or, "__ror__": _reflect(bitwise_or), "__ior__": _inplace("bitwise_or_"),
    "__xor__": bitwise_xor, "__rxor__": _reflect(bitwise_xor),
    "__ixor__": _inplace("bitwise_xor_"),
    "__lshift__": bitwise_left_shift, "__rlshift__": _reflect(bitwise_left_shift),
    "__ilshift__": _inplace("bitwise_left_shift_"),
    "__rshift__": bitwise_right_shift, "__rrshift__": _reflect(bitwise_right_shift),
    "__irshift__": _inplace("bitwise_right_shift_"),
})
