"""Binary pointwise math: remainder, fmod, pow/float_power/square, atan2, hypot, logaddexp,
xlogy, copysign and heaviside, with the Python operators `**` and `%` (selection ops such as
maximum, clamp and where live in ops/select.py).

Type promotion is PyTorch's (ops/_promote.py); ops that PyTorch differentiates differently
for a Python-scalar operand are separate registry entries with PyTorch's node names
(PowBackward0 for a scalar exponent, PowBackward1 for a tensor one, PowBackward2 for a scalar
base).
"""
import math

from .. import _dtype as dt
from .._creation import zeros_like
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._elementwise import binary_not_implemented
from ._elementwise import (EMPTY, binary, check_tensor, defpointwise,
                           float_result, not_implemented, not_tensor, public, result_of, unary)
from ._promote import compute_dtype, operand_array, tensor_operands
from .arithmetic import check_integer_division
from .inplace import apply_inplace
from .registry import METHODS, defop, dispatch, export
from .select import where


def _zeros(g):
    return zeros_like(g)


# ---------------------------------------------------------------------- remainder, fmod
def _remainder_kernel(a, b):
    xp = array_module(a, b)
    check_integer_division(xp, a, b)
    return xp.remainder(a, b)


def _fmod_kernel(a, b):
    xp = array_module(a, b)
    check_integer_division(xp, a, b)
    return xp.fmod(a, b)


_remainder = defpointwise("remainder", node="RemainderBackward1")(_remainder_kernel)
_remainder_s = defpointwise("remainder_scalar", node="RemainderBackward0", save=())(
    _remainder_kernel)
_remainder_rs = defpointwise("remainder_scalar_self", node="NotImplemented", save=())(
    _remainder_kernel)
_fmod = defpointwise("fmod", node="FmodBackward1")(_fmod_kernel)
_fmod_s = defpointwise("fmod_scalar", node="FmodBackward0", save=())(_fmod_kernel)


def _rounded_quotient_vjp(rounding_mode):
    """The VJP of a - b * div(a, b, rounding_mode): remainder's ("floor") or fmod's
    ("trunc"); the quotient is piecewise constant."""
    def vjp(ctx, g):
        a, b = ctx.inputs
        gb = None
        if ctx.edges[1] is not None:
            gb = -g * a.div(b, rounding_mode=rounding_mode)
        return g, gb
    return vjp


_remainder.defvjp(_rounded_quotient_vjp("floor"))
_fmod.defvjp(_rounded_quotient_vjp("trunc"))


def _first_grad(ctx, g):
    return g, None


_remainder_s.defvjp(_first_grad)
_fmod_s.defvjp(_first_grad)


@_remainder_rs.defvjp
def _remainder_rs_vjp(ctx, g):
    raise RuntimeError("derivative for aten::remainder is not implemented")


def _integer_op(op, kernel, input, other, out, scalar_self=None):
    result = result_of(input, other)
    if result is dt.bool or result.category == dt.COMPLEX:
        raise binary_not_implemented(kernel, result, input, other)
    if isinstance(other, Tensor):
        chosen = op[0] if isinstance(input, Tensor) else scalar_self
    else:
        chosen = op[1]
    return binary(chosen, input, other, result, out=out)


@export(inplace=True)
def remainder(input, other, *, out=None):
    input, other = tensor_operands(input, other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("remainder() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    return _integer_op((_remainder, _remainder_s), "remainder_cpu", input, other, out,
                       _remainder_rs)


@export(inplace=True)
def fmod(input, other, *, out=None):
    check_tensor("fmod", input)
    return _integer_op((_fmod, _fmod_s), "fmod_cpu", input, other, out)


# ---------------------------------------------------------------------- pow
def _power(xp, a, e):
    """a ** e; in integers a negative exponent gives 0 except for bases 1 and -1 (as
    PyTorch)."""
    if xp.result_type(a, e).kind not in "iu":
        return xp.power(a, e)
    neg = xp.asarray(e) < 0
    if not neg.any():
        return xp.power(a, e)
    r = xp.power(a, xp.where(neg, 0, e).astype(xp.result_type(a, e)))
    odd = (xp.asarray(e) % 2) != 0
    special = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
    return xp.where(neg, special, r).astype(r.dtype)


def _real_nonnegative(e):
    # (complex exponents have no order: PyTorch tests a real, non-negative exponent)
    return (e.imag == 0) & (e.real >= 0) if e.is_complex() else e >= 0


@defpointwise("pow_tensor", node="PowBackward1", save_output=True)
def _pow(a, e):
    return _power(array_module(a, e), a, e)


@_pow.defvjp
def _pow_vjp(ctx, g):
    x, e = ctx.inputs
    ga = ge = None
    if ctx.edges[0] is not None:
        ga = where(e == 0, 0.0, g * e * pow(x, e - 1))
    if ctx.edges[1] is not None:
        ge = g * where((x == 0) & _real_nonnegative(e), 0.0, ctx.output * x.log())
    return ga, ge


@defpointwise("pow", node="PowBackward0", save=(0,))
def _pow_scalar(a, exponent):
    return array_module(a).power(a, exponent)


@_pow_scalar.defvjp
def _pow_scalar_vjp(ctx, g):
    e = ctx.params["exponent"]
    x = ctx.inputs[0]
    if e == 0:
        return _zeros(g)
    return g * (pow(x, e - 1) * e)


@defpointwise("pow_scalar_base", node="PowBackward2", save=(1,), save_output=True)
def _pow_scalar_base(base, e):
    return _power(array_module(e), base, e)


@_pow_scalar_base.defvjp
def _pow_scalar_base_vjp(ctx, g):
    base, e = ctx.inputs
    if isinstance(base, complex):
        import cmath  # (deferred: `import ember` does not load cmath)
        log_base = cmath.log(base) if base != 0 else -math.inf
    else:
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
    d = ctx.output * log_base
    if base == 0:
        d = where(_real_nonnegative(e), 0.0, d)
    return None, g * d


def _pow_dtype(input, exponent):
    result = result_of(input, exponent)
    # (PyTorch has no bool kernel but a bool tensor to a bool scalar power: x ** True is x)
    if result is dt.bool and not (isinstance(input, Tensor) and type(exponent) is bool):
        raise not_implemented("pow", result)
    return result


@export(inplace=True)
def pow(input, exponent, *, out=None):
    input, exponent = tensor_operands(input, exponent)
    if isinstance(input, Tensor):
        result = _pow_dtype(input, exponent)
        if isinstance(exponent, Tensor):
            return binary(_pow, input, exponent, result, out=out)
        if result.category == dt.INTEGER and exponent < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if result.category == dt.INTEGER and type(exponent) is int:
            info = dt.iinfo(result)
            if not info.min <= exponent <= info.max:
                if result is dt.int64:
                    raise OverflowError("int too big to convert")
                ctype = "int" if result is dt.int32 else result.name + "_t"
                raise RuntimeError(f"value cannot be converted to type {ctype} without overflow")
        return unary(_pow_scalar, input, result, out, {"exponent": exponent})
    check_tensor("pow", exponent, "exponent", 2)
    result = _pow_dtype(input, exponent)
    compute = compute_dtype(result)
    r = dispatch(_pow_scalar_base, (input, exponent), EMPTY, result,
                 (operand_array(input, compute), operand_array(exponent, compute)))
    return r if out is None else write_out(r, out)


@export(inplace=True)
def square(input, *, out=None):
    return pow(input, 2, out=out)


@export(method=False)
def float_power(input, exponent, *, out=None):
    """pow computed in double (complex double when either side is complex)."""
    input, exponent = tensor_operands(input, exponent)
    if not isinstance(input, Tensor):
        check_tensor("float_power", exponent, "exponent", 2)
    complex_ = any((isinstance(x, Tensor) and x.dtype.category == dt.COMPLEX) or
                   isinstance(x, complex) for x in (input, exponent))
    target = dt.complex128 if complex_ else dt.float64
    input = input.to(target) if isinstance(input, Tensor) else input
    exponent = exponent.to(target) if isinstance(exponent, Tensor) else exponent
    return pow(input, exponent, out=out)


def _float_power_method(self, exponent):
    return float_power(self, exponent)


def _float_power_(self, exponent):
    target = _float_power_dtype(self, exponent)
    if self.dtype is not target:
        raise RuntimeError(f"the base given to float_power_ has dtype {dt.type_name(self.dtype)}"
                           f" but the operation's result requires dtype "
                           f"{dt.type_name(target)}")
    return apply_inplace(self, float_power, (exponent,), {})


def _float_power_dtype(input, exponent):
    complex_ = input.dtype.category == dt.COMPLEX or isinstance(exponent, complex) or (
        isinstance(exponent, Tensor) and exponent.dtype.category == dt.COMPLEX)
    return dt.complex128 if complex_ else dt.float64


public(_float_power_method, "float_power", function=False)
METHODS["float_power_"] = _float_power_


# ---------------------------------------------------------------------- atan2, hypot, ...
def _float_binary(op, name, input, other, out, kernel=None, complex_ok=False):
    """Binary floating function of two tensors (integers give the default float dtype);
    `kernel` names PyTorch's kernel where integer inputs have none."""
    check_tensor(name, input)
    if not isinstance(other, Tensor):
        raise not_tensor(name, other, "other", 2)
    result = result_of(input, other)
    if kernel is not None and result.category < dt.FLOATING or \
            result.category == dt.COMPLEX and not complex_ok:
        raise binary_not_implemented(kernel or name + "_cpu", result, input, other)
    return binary(op, input, other, float_result(result), out=out)


@defpointwise("atan2")
def _atan2(a, b):
    return array_module(a, b).arctan2(a, b)


@_atan2.defvjp
def _atan2_vjp(ctx, g):
    a, b = ctx.inputs
    d = a * a + b * b
    # NOTE: PyTorch's gradient at the origin is 0, not 0/0.
    scale = where(d == 0, 0.0, g / d)
    return (scale * b if ctx.edges[0] is not None else None,
            scale * -a if ctx.edges[1] is not None else None)


@export(inplace=True, aliases=("arctan2",))
def atan2(input, other, *, out=None):
    return _float_binary(_atan2, "atan2", input, other, out)


@defpointwise("hypot", save_output=True)
def _hypot(a, b):
    return array_module(a, b).hypot(a, b)


@_hypot.defvjp
def _hypot_vjp(ctx, g):
    a, b = ctx.inputs
    out = ctx.output
    return (g * a / out if ctx.edges[0] is not None else None,
            g * b / out if ctx.edges[1] is not None else None)


@export(inplace=True)
def hypot(input, other, *, out=None):
    return _float_binary(_hypot, "hypot", input, other, out, "hypot_cpu")


@defpointwise("logaddexp")
def _logaddexp(a, b):
    xp = array_module(a, b)
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        return xp.logaddexp(a, b)
    # NumPy has no complex logaddexp: the operand of larger real part factored out, as
    # PyTorch's kernel does; two real parts of -inf give the second operand
    a_big = a.real >= b.real
    big, small = xp.where(a_big, a, b), xp.where(a_big, b, a)
    both_zero = (a.real == -xp.inf) & (b.real == -xp.inf)
    return xp.where(both_zero, b, big + xp.log1p(xp.exp(small - big)))


@_logaddexp.defvjp
def _logaddexp_vjp(ctx, g):
    a, b = ctx.inputs
    return (g / ((b - a).exp() + 1) if ctx.edges[0] is not None else None,
            g / ((a - b).exp() + 1) if ctx.edges[1] is not None else None)


@defpointwise("logaddexp2", node="Logaddexp2Backward0")
def _logaddexp2(a, b):
    return array_module(a, b).logaddexp2(a, b)


@_logaddexp2.defvjp
def _logaddexp2_vjp(ctx, g):
    a, b = ctx.inputs
    return (g / ((b - a).exp2() + 1) if ctx.edges[0] is not None else None,
            g / ((a - b).exp2() + 1) if ctx.edges[1] is not None else None)


@export
def logaddexp(input, other, *, out=None):
    return _float_binary(_logaddexp, "logaddexp", input, other, out, "logaddexp_cpu",
                         complex_ok=True)


@export
def logaddexp2(input, other, *, out=None):
    return _float_binary(_logaddexp2, "logaddexp2", input, other, out, "logaddexp2_cpu")


def _xlogy_kernel(x, y):
    xp = array_module(x, y)
    # NOTE: x == 0 gives 0 even where log(y) is -inf, but nan in y still propagates.
    return xp.where((x == 0) & ~xp.isnan(y), 0, x * xp.log(y))


_xlogy = defpointwise("xlogy", node="XlogyBackward0")(_xlogy_kernel)
_xlogy_scalar_self = defpointwise("xlogy_scalar_self", node="XlogyBackward1")(_xlogy_kernel)
_xlogy_scalar_other = defpointwise("xlogy_scalar_other", node="XlogyBackward2",
                                   save=(0,))(_xlogy_kernel)


def x_log_vjp(function, shift):
    """The VJP of x * log(y + shift), `function` itself (xlogy: shift 0; xlog1py: 1)."""
    def vjp(ctx, g):
        x, y = ctx.inputs
        gx = gy = None
        if ctx.edges[0] is not None:
            # PyTorch: g*log(y + shift), except 0 where x == 0 and y + shift <= 0 (where the
            # log is not finite).
            gx = function(g, y)
            if isinstance(y, Tensor):
                gx = where((x == 0) & (y <= -shift), 0.0, gx)
            elif y <= -shift:
                gx = where(x == 0, 0.0, gx)
        if ctx.edges[1] is not None:
            gy = g * x / (y + shift if shift else y)
        return gx, gy
    return vjp


@export(inplace=True)
def xlogy(input, other, *, out=None):
    if isinstance(input, Tensor):
        op = _xlogy if isinstance(other, Tensor) else _xlogy_scalar_other
    else:
        check_tensor("xlogy", other, "other", 2)
        op = _xlogy_scalar_self
    result = result_of(input, other)
    if result.category == dt.COMPLEX:
        raise binary_not_implemented("xlogy_cpu", result, input, other)
    return binary(op, input, other, float_result(result), out=out)


for _op in (_xlogy, _xlogy_scalar_self, _xlogy_scalar_other):
    _op.defvjp(x_log_vjp(xlogy, 0))


@defpointwise("copysign", save_output=True)
def _copysign(a, b):
    return array_module(a, b).copysign(a, b)


@_copysign.defvjp
def _copysign_vjp(ctx, g):
    a = ctx.inputs[0]
    ga = gb = None
    if ctx.edges[0] is not None:
        ga = g * where(a == 0, 0.0, ctx.output / a)
    if ctx.edges[1] is not None:
        gb = _zeros(g)
    return ga, gb


@export(inplace=True)
def copysign(input, other, *, out=None):
    check_tensor("copysign", input)
    result = result_of(input, other)
    if result.category == dt.COMPLEX:
        raise binary_not_implemented("copysign_cpu", result, input, other)
    return binary(_copysign, input, other, float_result(result), out=out)


@defop("heaviside", node="NotImplemented", save=())
def _heaviside(a, v):
    xp = array_module(a, v)
    return xp.where(a == 0, v, a > 0).astype(xp.result_type(a, v))


@_heaviside.defvjp
def _heaviside_vjp(ctx, g):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


@export(inplace=True)
def heaviside(input, values, *, out=None):
    check_tensor("heaviside", input)
    if not isinstance(values, Tensor):
        raise not_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input.dtype.category == dt.COMPLEX:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return binary(_heaviside, input, values, input.dtype, input.dtype, out=out)


# ---------------------------------------------------------------------- Python operators
def _rpow(self, other):
    return pow(other, self)


def _rmod(self, other):
    return remainder(other, self)


def _inplace(name):
    def operator(self, other):
        return METHODS[name](self, other)
    return operator


METHODS.update({
    "__pow__": pow, "__rpow__": _rpow, "__ipow__": _inplace("pow_"),
    "__mod__": remainder, "__rmod__": _rmod, "__imod__": _inplace("remainder_"),
})
