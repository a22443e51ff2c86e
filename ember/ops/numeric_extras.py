"""Numeric functions beyond the core table: integer gcd/lcm, i0, frexp/ldexp, nextafter,
diff, isin, dist, renorm (cov, histogram, the trapezoid rules and the like are in
stats_extras.py).

Kernels with no composite form (gcd, lcm, i0/i1, frexp, ldexp, nextafter, isin) are registry
ops; the rest are composed of ember ops, in the order PyTorch's own composites use, so their
dtypes, values and gradients (double backward included) follow for free.
"""
import math

import numpy as np

from .. import _dtype as dt
from .._creation import zeros_like
from .._scalars import type_name
from .._tensor import Tensor, write_out
from ..backends import array_module
from ..backends.special import special_module
from . import pointwise, return_types
from ._dims import wrap_dim
from ._elementwise import binary_not_implemented
from ._elementwise import (EMPTY, LOW, NUMBER_TYPES, binary, check_tensor,
                           defpointwise, exact_operands, not_implemented, result_of)
from ._promote import broadcast_error, compute_dtype, operand_array, result_type_of
from .linalg_norms import vector_norm
from .registry import apply_inplace, defop, dispatch, export
from .select import where
from .shape import cat
from .unary import float_unary

_LN2 = math.log(2.0)


def _bad_call(name, args, signatures, keywords=EMPTY):
    """PyTorch's TypeError for arguments that match none of a function's overloads."""
    def kind(a):
        return "Tensor" if isinstance(a, Tensor) else type(a).__name__
    got = ", ".join([kind(a) for a in args] + [f"{k}={kind(v)}" for k, v in keywords.items()])
    lines = "".join(f" * ({s})\n" for s in signatures)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}")


def _check_int(name, arg, value):
    if type(value) is not int:
        raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(value).__name__}")


def _slices(t, dim):
    """t[..., :-1] and t[..., 1:] along `dim` (PyTorch's slice(dim, 0, -1) and slice(dim, 1))."""
    head = (slice(None),) * dim
    return t[head + (slice(None, -1),)], t[head + (slice(1, None),)]


# ---------------------------------------------------------------------- gcd, lcm
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
    if result.category != 1:
        raise binary_not_implemented(f"{name}_cpu", result, input, other)
    return binary(op, input, other, result, out=out)


@export(inplace=True)
def gcd(input, other, *, out=None):
    return _integer_binary(_gcd, "gcd", input, other, out)


@export(inplace=True)
def lcm(input, other, *, out=None):
    return _integer_binary(_lcm, "lcm", input, other, out)


# ---------------------------------------------------------------------- i0 (and i1 for its VJP)
@defpointwise("i0")
def _i0(a):
    return special_module(a).i0(a)


@defpointwise("special_i1", node="SpecialI1Backward0", save_output=True)
def _i1(a):
    return special_module(a).i1(a)


@_i0.defvjp
def _i0_vjp(ctx, g):
    return g * dispatch(_i1, (ctx.inputs[0],))


@_i1.defvjp
def _i1_vjp(ctx, g):
    # i1'(x) = i0(x) - i1(x) / x, whose limit at 0 is 0.5. NOTE: x is made safe before the
    # division, as PyTorch does: `where` differentiates both branches, and 0/0 would put a
    # NaN into the next derivative.
    x = ctx.inputs[0]
    eps = float(np.finfo(x.dtype.np).eps)
    not_tiny = x.abs() > eps
    safe = where(not_tiny, x, eps)
    return g * where(not_tiny, i0(safe) - ctx.output / safe, 0.5)


i0 = float_unary(_i0, "i0", "i0_vml_cpu")


# ---------------------------------------------------------------------- frexp, ldexp, nextafter
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
    if d.category != 2:
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
    if result.category < 2:
        result = dt.get_default_dtype()
    compute = compute_dtype(result)
    n = other._data if other.dtype.category < 2 else operand_array(other, compute)
    return _float_binary(_ldexp, input, other, result, (operand_array(input, compute), n), out)


def _ldexp_(self, other):
    if self.dtype.category < 2:
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
    if result.category != 2:
        raise not_implemented("nextafter_cpu", result)
    # NOTE: the next float16/bfloat16 value must be found in that type, not in float32.
    arrays = (operand_array(input, result), operand_array(other, result))
    return _float_binary(_nextafter, input, other, result, arrays, out)


# ---------------------------------------------------------------------- diff, isin
@export
def diff(input, n=1, dim=-1, prepend=None, append=None):
    check_tensor("diff", input)
    _check_int("diff", "n", n)
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = wrap_dim(dim, ndim)
    parts = [input]
    for arg, extra in (("prepend", prepend), ("append", append)):
        if extra is not None:
            if not isinstance(extra, Tensor):
                raise TypeError(f"diff(): argument '{arg}' must be Tensor, not "
                                f"{type_name(extra)}")
            if extra._data.ndim != ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension "
                                   "as input")
            parts.insert(0 if arg == "prepend" else len(parts), extra)
    x = cat(parts, dim) if len(parts) > 1 else input
    if n == 0:
        return x.clone()
    for _ in range(min(n, x._data.shape[dim])):
        left, right = _slices(x, dim)
        x = right.logical_xor(left) if x.dtype is dt.bool else right - left
    return x


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
        raise _bad_call("isin", operands, _ISIN_SIGNATURES)
    for x in operands:
        # (a Python complex is checked as PyTorch wraps it: a complex128 tensor)
        d = x.dtype if isinstance(x, Tensor) else \
            dt.complex128 if isinstance(x, complex) else dt.scalar_dtype(x)
        if d.category in (0, 3):
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


# ---------------------------------------------------------------------- dist, renorm
def _number(name, arg, value, position=None):
    """A Number argument (a 0-dim tensor counts, as in PyTorch), as a Python number."""
    if isinstance(value, Tensor):
        return value.item()
    if not isinstance(value, NUMBER_TYPES):
        where_ = f" (position {position})" if position else ""
        raise TypeError(f"{name}(): argument '{arg}'{where_} must be Number, not "
                        f"{type(value).__name__}")
    return value


@export
def dist(input, other, p=2):
    check_tensor("dist", input)
    check_tensor("dist", other, "other", 2)
    p = _number("dist", "p", p)
    result = result_of(input, other)
    if result.category < 2:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {dt.type_name(result)} instead.")
    return vector_norm(input - other, p)


@export(inplace=True)
def renorm(input, p, dim, maxnorm, *, out=None):
    check_tensor("renorm", input)
    p = _number("renorm", "p", p, 2)
    maxnorm = _number("renorm", "maxnorm", maxnorm, 4)
    if type(dim) is not int:
        raise TypeError(f"renorm(): argument 'dim' (position 3) must be int, not "
                        f"{type(dim).__name__}")
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    dim = wrap_dim(dim, ndim)
    others = [d for d in range(ndim) if d != dim]
    # NOTE: float16/bfloat16 norms are taken in float32; the scale factor is then rounded
    # to the input's dtype before the product, as PyTorch does.
    low = input.dtype in LOW
    norm = vector_norm(input, p, others, keepdim=True, dtype=dt.float32 if low else None)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)
    r = input * factor
    return r if out is None else write_out(r, out)


