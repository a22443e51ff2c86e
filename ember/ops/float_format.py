"""The floating-point format: frexp splits a value into mantissa and exponent, ldexp joins
them, nextafter steps to the neighbouring representable value."""
import math

import numpy as np

from .. import _dtype as dt
from .._creation import zeros_like
from .._tensor import write_out
from ..backends import array_module
from . import pointwise, return_types
from ._elementwise import (EMPTY, binary_not_implemented, check_tensor, defpointwise,
                           result_of)
from ._promote import broadcast_error, compute_dtype, operand_array
from .inplace import apply_inplace
from .registry import defop, dispatch, export

_LN2 = math.log(2.0)


@defop("frexp", num_outputs=2, save=(), save_output=True)
def _frexp(a, d):
    xp = array_module(a)
    mantissa, exponent = xp.frexp(a)
    return mantissa.astype(d), exponent.astype(xp.int32)


@_frexp.defvjp
def _frexp_vjp(ctx, g, g_exponent):
    return g / ctx.outputs[1].exp2()


@export(inplace=False)
def frexp(input, *, out=None):
    check_tensor("frexp", input)
    d = input.dtype
    if d.category != dt.FLOATING:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    a = operand_array(input, compute_dtype(d))   # exact: every float16 value is a float32 one
    r = return_types.frexp(dispatch(_frexp, (input,), {"d": d.np}, d, (a,)))
    return r if out is None else return_types.frexp(map(write_out, r, out))


@defpointwise("ldexp")
def _ldexp(a, n):
    xp = array_module(a)
    if n.dtype.kind == "c":
        return a * xp.exp2(n.astype(a.dtype))
    if n.dtype.kind not in "iub" or a.dtype.kind == "c":
        return a * xp.exp2(n.astype(a.real.dtype))
    # An integral exponent scales exactly (1e-30 * 2**200 stays finite in float32).
    return xp.ldexp(a, xp.clip(n.astype(xp.int64), -2 ** 31, 2 ** 31 - 1).astype(xp.int32))


@_ldexp.defvjp
def _ldexp_vjp(ctx, g):
    x, n = ctx.inputs
    # NOTE: PyTorch's formula, pow(2, other): for an integral exponent that is integer math,
    # so 2**-3 is 0 and the gradient with it; matching PyTorch means keeping that.
    scale = pointwise.pow(2, n)
    grad_n = g * x * scale * _LN2 if ctx.edges[1] is not None else None
    return g * scale, grad_n


def _float_binary(op, input, other, result, arrays, out):
    try:
        with np.errstate(over="ignore"):   # rounding float32 to float16 may give inf
            r = dispatch(op, (input, other), EMPTY, result, arrays)
    except ValueError:
        raise broadcast_error(input._data.shape, other._data.shape) from None
    return r if out is None else write_out(r, out)


@export
def ldexp(input, other, *, out=None):
    check_tensor("ldexp", input)
    check_tensor("ldexp", other, "other", 2)
    result = result_of(input, other)
    if result.category < dt.FLOATING:
        result = dt.get_default_dtype()
    compute = compute_dtype(result)
    n = other._data if other.dtype.category < dt.FLOATING else operand_array(other, compute)
    return _float_binary(_ldexp, input, other, result, (operand_array(input, compute), n), out)


def _ldexp_(self, other):
    if self.dtype.category < dt.FLOATING:
        raise RuntimeError("ldexp can't be cast to the desired output type "
                           f"{dt.type_name(self.dtype)}")
    return apply_inplace(self, ldexp, (other,), {})


export(_ldexp_, name="ldexp_", function=False)


@defpointwise("nextafter")
def _nextafter(a, b):
    return array_module(a).nextafter(a, b)


@_nextafter.defvjp
def _nextafter_vjp(ctx, g):
    return g, (zeros_like(g) if ctx.edges[1] is not None else None)


@export(inplace=True)
def nextafter(input, other, *, out=None):
    check_tensor("nextafter", input)
    check_tensor("nextafter", other, "other", 2)
    result = result_of(input, other)
    if result.category != dt.FLOATING:
        raise binary_not_implemented("nextafter_cpu", result, input, other)
    # NOTE: the next float16/bfloat16 value must be found in that type, not in float32.
    arrays = (operand_array(input, result), operand_array(other, result))
    return _float_binary(_nextafter, input, other, result, arrays, out)
