"""Binary arithmetic: add, sub, mul, div and the Python operators that map onto them.

Each op is a registry entry (forward on arrays, VJP in ember ops) plus a public function that
prepares operands with PyTorch's promotion. Broadcast gradients are summed back centrally by
the engine (`unbroadcast`), never here.
"""
import math
from functools import partial

import numpy as np

from .. import _dtype as dt
from .._creation import tensor
from .._data import check_fill
from .._scalars import is_number, number, type_name
from .._tensor import FAST_TYPES, Tensor, write_out
from ..backends import array_module, elementwise
from ._elementwise import binary_not_implemented
from ._promote import (broadcast_error, compute_dtype, operand_array, result_dtype,
                       result_type_of, shape_of, tensor_operands)
from .registry import METHODS, check_tensor, compiled_operator, defop, dispatch, export


def binary(op, a, b, params=None, out=None, dtype=None):
    """Run a binary pointwise op with PyTorch's type promotion and broadcast errors."""
    arrays = None
    if dtype is None and a.__class__ in FAST_TYPES:
        # NOTE: hot path: same-dtype tensors, or a tensor and a Python float (or an int with
        # a float tensor) need no promotion and no cast; everything else takes the general
        # path below.
        d = a.dtype
        if d.fast:
            if b.__class__ in FAST_TYPES:
                if b.dtype is d:
                    arrays, dtype = (a._data, b._data), d
            elif (b.__class__ is float or b.__class__ is int) and d.category == dt.FLOATING:
                arrays, dtype = (a._data, b), d
    if arrays is None:
        a, b = tensor_operands(a, b)
        if not isinstance(a, Tensor):
            if not isinstance(b, Tensor):
                a = _wrapped_number(op, a, b)
            elif not is_number(a):
                raise _not_tensor(op, "input", 1, a)
        elif not isinstance(b, Tensor) and not is_number(b):
            raise _not_tensor(op, "other", 2, b)
        dtype = result_dtype(a, b) if dtype is None else dtype
        compute = compute_dtype(dtype)
        arrays = (operand_array(a, compute), operand_array(b, compute))
    try:
        r = dispatch(op, (a, b), params or _NO_PARAMS, dtype, arrays)
    except ValueError:
        raise broadcast_error(shape_of(a), shape_of(b)) from None
    return r if out is None else write_out(r, out)


_NO_PARAMS = {}


def _not_tensor(op, arg, position, value):
    name = "div" if op.name.startswith("div") else op.name
    return TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                     f"{type_name(value)}")


def _wrapped_number(op, a, b):
    """`add(1.0, 2)`: PyTorch's parser turns a number given for the tensor operand of add,
    sub, mul and div (and their aliases, floor_divide, true_divide) into a 0-d tensor, so
    two numbers give a 0-d tensor of the dtype the numbers have together (int64, the
    default float or complex dtype, or bool)."""
    if not is_number(a):
        raise _not_tensor(op, "input", 1, a)
    if not is_number(b):
        raise _not_tensor(op, "other", 2, b)
    return tensor(number(a), dtype=result_type_of((a, b)))


# ---------------------------------------------------------------------- add / sub
@defop("add", save=())
def _add(a, b, alpha=1):
    return elementwise.binary("add", a, b) if alpha == 1 else a + alpha * b


@_add.defvjp
def _add_vjp(ctx, g):
    alpha = ctx.params.get("alpha", 1)
    return g, (g if alpha == 1 else g * alpha)


def _alpha_params(input, other, alpha):
    """{"alpha": alpha}, or None for the default; PyTorch's checks of alpha's type against
    the result dtype."""
    if alpha.__class__ is int and alpha == 1:
        return None
    # (PyTorch's parser reads a 0-d tensor given for the Number alpha through item())
    alpha = alpha.item() if isinstance(alpha, Tensor) else number(alpha)
    d = result_dtype(input, other)
    if isinstance(alpha, bool) and d is not dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and d.category < dt.FLOATING:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, complex) and d.category < dt.COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    if alpha == 1:
        return None
    return {"alpha": check_fill(alpha, d, 2)}   # (PyTorch's checked Scalar conversion)


@export(inplace=True)
def add(input, other, *, alpha=1, out=None):
    try:
        if alpha.__class__ is int and alpha == 1:   # (the default, without a call: hot path)
            return binary(_add, input, other, None, out)
        return binary(_add, input, other, _alpha_params(input, other, alpha), out)
    except NotImplementedError:   # (a sparse operand refuses dense kernels: ember/sparse)
        return _sparse_binary("add", input, other, out, alpha=alpha)


def _sparse_binary(name, input, other, out, **kwargs):
    """add/sub/mul with a sparse operand, else the NotImplementedError being handled."""
    if not (getattr(input, "is_sparse", False) or getattr(other, "is_sparse", False)):
        raise   # noqa: PLE0704  (called from an except block: re-raises its exception)
    from ..sparse import ops as sparse_ops  # (cycle: ember.sparse imports ops)
    r = getattr(sparse_ops, name)(input, other, **kwargs)
    return r if out is None else write_out(r, out)


@defop("sub", save=())
def _sub(a, b, alpha=1):
    return elementwise.binary("sub", a, b) if alpha == 1 else a - alpha * b


@_sub.defvjp
def _sub_vjp(ctx, g):
    alpha = ctx.params.get("alpha", 1)
    return g, -g if alpha == 1 else g * (-alpha)


def _is_bool(x):
    # (np.bool_ is not here: PyTorch reads it as the float 1.0 or 0.0)
    return x.dtype is dt.bool if isinstance(x, Tensor) else isinstance(x, bool)


def _check_bool_sub(input, other):
    a, b = _is_bool(input), _is_bool(other)
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


@export(inplace=True, aliases=("subtract",))
def sub(input, other, *, alpha=1, out=None):
    _check_bool_sub(input, other)
    try:
        return binary(_sub, input, other, _alpha_params(input, other, alpha), out)
    except NotImplementedError:
        return _sparse_binary("add", input, other, out, alpha=-alpha)


@export(method=False)
def rsub(input, other, *, alpha=1):
    return sub(other, input, alpha=alpha)


@defop("neg", save=())
def _neg(a):
    return -a


@_neg.defvjp
def _neg_vjp(ctx, g):
    return -g


@export(inplace=True, aliases=("negative",))
def neg(input, *, out=None):
    check_tensor("neg", input)
    if input.dtype is dt.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    r = dispatch(_neg, (input,))
    return r if out is None else write_out(r, out)


def _pos(self):
    return self


# ---------------------------------------------------------------------- mul / div
# Their forwards are the backend's kernel itself, with the op's name bound (no Python layer
# between dispatch and the kernel).
_mul = defop("mul")(partial(elementwise.binary, "mul"))
_div = defop("div")(partial(elementwise.binary, "div"))


@_mul.defvjp
def _mul_vjp(ctx, g):
    a, b = ctx.inputs
    e = ctx.edges
    return (g * b if e[0] is not None else None), (g * a if e[1] is not None else None)


@export(inplace=True, aliases=("multiply",))
def mul(input, other, *, out=None):
    try:
        return binary(_mul, input, other, None, out)
    except NotImplementedError:
        return _sparse_binary("mul", input, other, out)


@_div.defvjp
def _div_vjp(ctx, g):
    a, b = ctx.inputs
    e = ctx.edges
    ga = g / b if e[0] is not None else None
    gb = -g * a / (b * b) if e[1] is not None else None
    return ga, gb


@defop("div_floor", node="DivBackward1", save=())
def _div_floor(a, b):
    xp = array_module(a, b)
    check_integer_division(xp, a, b)
    return xp.floor_divide(a, b)


@defop("div_trunc", node="DivBackward1", save=())
def _div_trunc(a, b):
    xp = array_module(a, b)
    if xp.result_type(a, b).kind not in "iu":
        return xp.trunc(a / b)
    check_integer_division(xp, a, b)
    q = xp.floor_divide(a, b)
    # NOTE: floor and trunc differ where the signs differ and the division is inexact.
    return q + ((xp.remainder(a, b) != 0) & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0)))


def check_integer_division(xp, a, b):
    """PyTorch's integer kernels raise on a zero divisor, when they run: an empty result
    runs none."""
    if xp.result_type(a, b).kind in "iu" and (xp.asarray(b) == 0).any() and \
            math.prod(np.broadcast_shapes(np.shape(a), np.shape(b))):
        raise RuntimeError("ZeroDivisionError")


def _zero_vjp(ctx, g):
    # Rounded division is piecewise constant: its gradient is zero almost everywhere.
    return tuple(None if e is None else g * 0 for e in ctx.edges)


_div_floor.defvjp(_zero_vjp)
_div_trunc.defvjp(_zero_vjp)


def _true_div_dtype(a, b):
    d = result_dtype(a, b)
    return dt.get_default_dtype() if d.category < dt.FLOATING else d


@export(inplace=True, aliases=("divide",))
def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        input, other = tensor_operands(input, other)
        return binary(_div, input, other, None, out, _true_div_dtype(input, other))
    if rounding_mode == "floor" or rounding_mode == "trunc":
        input, other = tensor_operands(input, other)
        if all(isinstance(x, Tensor) or is_number(x) for x in (input, other)):
            d = result_dtype(input, other)
            if d is dt.bool or d.category == dt.COMPLEX:   # (PyTorch has no kernel for these)
                raise binary_not_implemented(f"div_{rounding_mode}_cpu", d, input, other)
        op = _div_floor if rounding_mode == "floor" else _div_trunc
        return binary(op, input, other, None, out)
    raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


@export(inplace=True)
def true_divide(input, other, *, out=None):
    return div(input, other, out=out)


@export(inplace=True)
def floor_divide(input, other, *, out=None):
    return div(input, other, rounding_mode="floor", out=out)


# ---------------------------------------------------------------------- Python operators
def _reflect(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


# ---------------------------------------------------------------------- addcmul / addcdiv
# input + value * t1 * t2 (or / t2) as one op, in PyTorch's order ((value * t1) * t2, then
# the add).
@defop("addcmul")
def _addcmul(a, t1, t2, value):
    return a + (value * t1) * t2


@_addcmul.defvjp
def _addcmul_vjp(ctx, g):
    _, t1, t2 = ctx.inputs
    value, e = ctx.params["value"], ctx.edges
    return (g, g * t2 * value if e[1] is not None else None,
            g * t1 * value if e[2] is not None else None)


@defop("addcdiv")
def _addcdiv(a, t1, t2, value):
    return a + (value * t1) / t2


@_addcdiv.defvjp
def _addcdiv_vjp(ctx, g):
    _, t1, t2 = ctx.inputs
    value, e = ctx.params["value"], ctx.edges
    return (g, g * value / t2 if e[1] is not None else None,
            -g * value * t1 / (t2 * t2) if e[2] is not None else None)


def _addc(op, name, input, tensor1, tensor2, value, out):
    for k, (arg, x) in enumerate((("input", input), ("tensor1", tensor1),
                                  ("tensor2", tensor2))):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {k + 1}) must be Tensor, "
                            f"not {type(x).__name__}")
    d = result_type_of((input, tensor1, tensor2))
    if op is _addcdiv and tensor1.dtype.category < dt.FLOATING and \
            tensor2.dtype.category < dt.FLOATING:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
            ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
            "for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    if d is dt.bool:
        raise NotImplementedError(f"\"{name}_cpu_out\" not implemented for 'Bool'")
    value = check_fill(value, d, 2)   # (PyTorch's checked conversion to the result's type)
    compute = compute_dtype(d)
    arrays = tuple(operand_array(x, compute) for x in (input, tensor1, tensor2))
    try:
        r = dispatch(op, (input, tensor1, tensor2), {"value": value}, d, arrays)
    except ValueError:
        shape = input._data.shape
        for x in (tensor1, tensor2):  # PyTorch's message names the first pair that fails
            try:
                shape = np.broadcast_shapes(shape, x._data.shape)
            except ValueError:
                raise broadcast_error(shape, x._data.shape) from None
        raise
    return r if out is None else write_out(r, out)


@export(inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(_addcmul, "addcmul", input, tensor1, tensor2, value, out)


@export(inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(_addcdiv, "addcdiv", input, tensor1, tensor2, value, out)


def _inplace_operator(name):
    def operator(self, other):
        return METHODS[name](self, other)
    return operator


def _rsub(self, other):
    return sub(other, self)


def _binary_scalar_first(op):
    """`2 - t`: the scalar becomes the first operand of the binary op."""
    def reflected(self, other):
        return binary(op, other, self)
    return reflected


_OPERATORS = {
    "__neg__": neg, "__pos__": _pos,
    "__add__": add, "__radd__": _reflect(add), "__iadd__": _inplace_operator("add_"),
    "__sub__": sub, "__rsub__": _rsub, "__isub__": _inplace_operator("sub_"),
    "__mul__": mul, "__rmul__": _reflect(mul), "__imul__": _inplace_operator("mul_"),
    "__truediv__": div, "__rtruediv__": _reflect(div), "__itruediv__":
        _inplace_operator("div_"),
    "__floordiv__": floor_divide, "__rfloordiv__": _reflect(floor_divide),
    "__ifloordiv__": _inplace_operator("floor_divide_"),
}


# The operators with a compiled twin for the plain call (registry.compiled_operator).
_COMPILED = {"__add__": (_add, False), "__radd__": (_add, True), "__sub__": (_sub, False),
             "__mul__": (_mul, False), "__rmul__": (_mul, True), "__truediv__": (_div, False)}


def _install_operators():
    for name, fn in _OPERATORS.items():
        if name in _COMPILED:
            op, reflected = _COMPILED[name]
            fn = compiled_operator(op, fn, name, reflected)
        METHODS[name] = fn


_install_operators()
