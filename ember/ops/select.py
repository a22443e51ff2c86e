"""Elementwise selection: maximum/minimum/fmax/fmin, clamp/clip/clamp_min/clamp_max, where
and lerp (relu is ops/activation.py's).

Subgradients follow PyTorch: maximum and minimum split ties 0.5/0.5, fmax/fmin give ties to
their first input, clamp passes the gradient on its boundaries (min <= x <= max). Scalar and
tensor bounds are separate registry entries with PyTorch's node names (ClampBackward1 for
scalars, ClampBackward0 for tensors).
"""
import operator

from .. import _dtype as dt
from .._scalars import as_double
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._elementwise import (CPP_NAMES, EMPTY, after_loop_checks, binary, check_tensor, defpointwise,
                           not_implemented, not_tensor, public, result_of)
from ._promote import broadcast_error, compute_dtype, operand_array, result_type_of
from .registry import PUBLIC, defop, dispatch, export


# ---------------------------------------------------------------------- maximum, minimum
def _extremum(op, name, input, other, out):
    check_tensor(name, input)
    if not isinstance(other, Tensor):
        raise not_tensor(name, other, "other", 2)
    result = result_of(input, other)
    if result.category == dt.COMPLEX:
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return binary(op, input, other, result, result, out=out)


def _array_function(name):
    """The forward that is the array module's two-operand function `name`."""
    def forward(a, b):
        return getattr(array_module(a, b), name)(a, b)
    return forward


_maximum, _minimum, _fmax, _fmin = (defop(name)(_array_function(name))
                                    for name in ("maximum", "minimum", "fmax", "fmin"))


def _tie_split(g, a, b, loses):
    """g where this side won, g/2 on ties (PyTorch's subgradient), 0 where it lost."""
    return where(loses, 0.0, where(a == b, g / 2, g))


def _extremum_vjp(first_loses):
    """maximum's (first_loses is <) or minimum's (>) VJP: the ties split."""
    def vjp(ctx, g):
        a, b = ctx.inputs
        return (_tie_split(g, a, b, first_loses(a, b)) if ctx.edges[0] is not None else None,
                _tie_split(g, a, b, first_loses(b, a)) if ctx.edges[1] is not None else None)
    return vjp


_maximum.defvjp(_extremum_vjp(operator.lt))
_minimum.defvjp(_extremum_vjp(operator.gt))


def _fextremum_vjp(first_wins):
    def vjp(ctx, g):
        a, b = ctx.inputs
        wins = first_wins(a, b) | b.isnan()
        return (where(wins, g, 0.0) if ctx.edges[0] is not None else None,
                where(wins, 0.0, g) if ctx.edges[1] is not None else None)
    return vjp


_fmax.defvjp(_fextremum_vjp(lambda a, b: a >= b))
_fmin.defvjp(_fextremum_vjp(lambda a, b: a <= b))


def _extremum_fn(op, name):
    """The public function `name` of op maximum, minimum, fmax or fmin."""
    def extremum(input, other, *, out=None):
        return _extremum(op, name, input, other, out)
    extremum.__name__ = extremum.__qualname__ = name
    return export(extremum)


maximum = _extremum_fn(_maximum, "maximum")
minimum = _extremum_fn(_minimum, "minimum")
fmax = _extremum_fn(_fmax, "fmax")
fmin = _extremum_fn(_fmin, "fmin")


# ---------------------------------------------------------------------- where, lerp
@defop("where", save=(0,))
def _where(c, x, y):
    return array_module(c, x, y).where(c, x, y)


@_where.defvjp
def _where_vjp(ctx, g):
    c = ctx.inputs[0]
    return (None,
            where(c, g, 0.0) if ctx.edges[1] is not None else None,
            where(c, 0.0, g) if ctx.edges[2] is not None else None)


@export(method=False)
def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return PUBLIC["nonzero"](condition, as_tuple=True)
    check_tensor("where", condition, "condition", 1)
    if condition.dtype is not dt.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {dt.type_name(condition.dtype)}")
    result = result_type_of((input, other))
    arrays = (condition._data, operand_array(input, result), operand_array(other, result))
    try:
        r = dispatch(_where, (condition, input, other), EMPTY, result, arrays)
    except ValueError:
        shapes = [tuple(x.shape) for x in (condition, input, other) if isinstance(x, Tensor)]
        raise broadcast_error(shapes[0], shapes[-1]) from None
    return r if out is None else write_out(r, out)


def _where_method(self, condition, other):
    return where(condition, self, other)


public(_where_method, "where", function=False)


def _lerp_kernel(a, b, w):
    xp = array_module(a, b, w)
    # PyTorch's two-sided form: exact at both ends (lerp(a, b, 1) == b).
    d = b - a
    return xp.where(xp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


_lerp_s = defpointwise("lerp_scalar", node="LerpBackward0", save=())(_lerp_kernel)
_lerp_t = defpointwise("lerp", node="LerpBackward1")(_lerp_kernel)


@_lerp_s.defvjp
def _lerp_s_vjp(ctx, g):
    w = ctx.inputs[2]
    return (g * (1 - w) if ctx.edges[0] is not None else None,
            g * w if ctx.edges[1] is not None else None, None)


@_lerp_t.defvjp
def _lerp_t_vjp(ctx, g):
    a, b, w = ctx.inputs
    return (g * (1 - w) if ctx.edges[0] is not None else None,
            g * w if ctx.edges[1] is not None else None,
            g * (b - a) if ctx.edges[2] is not None else None)


@export(inplace=True)
def lerp(input, end, weight, *, out=None):
    check_tensor("lerp", input)
    check_tensor("lerp", end, "end", 2)
    d = input.dtype
    if end.dtype is not d:
        raise RuntimeError(f"expected dtype {CPP_NAMES[d]} for `end` but got dtype "
                           f"{CPP_NAMES[end.dtype]}")
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight and weight.dtype is not d and weight._data.ndim:
        raise RuntimeError(f"expected dtype {CPP_NAMES[d]} for `weight` but got dtype "
                           f"{CPP_NAMES[weight.dtype]}")
    if d.category < dt.FLOATING:
        raise not_implemented("lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar",
                              d)
    if not tensor_weight and d.category != dt.COMPLEX:
        weight = as_double(weight)   # (the real kernel reads a Number weight as a double)
    elif tensor_weight and weight.dtype is not d:   # (a 0-d weight takes part in promotion)
        d = result_type_of((input, end, weight))
    compute = compute_dtype(d)
    arrays = tuple(operand_array(x, compute) for x in (input, end, weight))
    op = _lerp_t if tensor_weight else _lerp_s
    try:
        r = dispatch(op, (input, end, weight), EMPTY, d, arrays)
    except ValueError:
        raise broadcast_error(input._data.shape, end._data.shape) from None
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- clamp, relu
def _clamp_kernel(a, lo, hi):
    xp = array_module(a)
    if lo is not None:
        a = xp.maximum(a, lo)
    if hi is not None:
        a = xp.minimum(a, hi)
    return a


def _clamp_scalar_vjp(ctx, g):
    x = ctx.inputs[0]
    lo, hi = ctx.inputs[1], ctx.inputs[2]
    keep = None
    if lo is not None:
        keep = x >= lo
    if hi is not None:
        keep = (x <= hi) if keep is None else keep & (x <= hi)
    return where(keep, g, 0.0), None, None


def _clamp_tensor_vjp(ctx, g):
    x, lo, hi = ctx.inputs
    e = ctx.edges
    if lo is not None and hi is not None:
        return (where((x >= lo) & (x <= hi), g, 0.0) if e[0] is not None else None,
                where((x < lo) & (lo < hi), g, 0.0) if e[1] is not None else None,
                where((x > hi) | (hi < lo), g, 0.0) if e[2] is not None else None)
    if lo is not None:
        return (where(x >= lo, g, 0.0) if e[0] is not None else None,
                where(x < lo, g, 0.0) if e[1] is not None else None, None)
    return (where(x <= hi, g, 0.0) if e[0] is not None else None, None,
            where(x > hi, g, 0.0) if e[2] is not None else None)


_CLAMP_OPS = {}
for _name, _scalar_node, _tensor_node in (("clamp", "ClampBackward1", "ClampBackward0"),
                                          ("clamp_min", "ClampMinBackward0",
                                           "ClampMinBackward1"),
                                          ("clamp_max", "ClampMaxBackward0",
                                           "ClampMaxBackward1")):
    _s = defop(_name + "_scalar", node=_scalar_node, save=(0,))(_clamp_kernel)
    _s.defvjp(_clamp_scalar_vjp)
    _t = defop(_name, node=_tensor_node)(_clamp_kernel)
    _t.defvjp(_clamp_tensor_vjp)
    _CLAMP_OPS[_name] = (_s, _t)


# Python bound types that leave the result dtype alone, by the input's category.
_SAME_DTYPE_BOUNDS = {dt.BOOL: (type(None),), dt.INTEGER: (type(None), int),
                      dt.FLOATING: (type(None), int, float),
                      dt.COMPLEX: (type(None), int, float, complex)}


NO_COMPLEX = "clamp is not supported for complex types"   # (clamp's and relu's refusal)


def _real_bound(name, bound):
    """A Number bound of a floating input as PyTorch reads it: clamp_min and clamp_max
    refuse a Python complex (NumPy's complex128 is one) outright, clamp converts it to
    double."""
    if isinstance(bound, complex) and name != "clamp":
        raise NotImplementedError(NO_COMPLEX)
    return as_double(bound)


def _complex_refused(input, min, max):
    """clamp's refusal of complex values, after the broadcast and in-place output checks (its
    loop is built before the check, in PyTorch)."""
    return after_loop_checks(NotImplementedError(NO_COMPLEX),
                             result_type_of((input, min, max)), input, min, max)


def _clamp(name, input, min, max, out):
    check_tensor(name, input)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.dtype.category == dt.COMPLEX and name == "clamp":
        # (clamp checks its input before it builds its loop; clamp_min and clamp_max after)
        raise NotImplementedError(NO_COMPLEX)
    lo_tensor, hi_tensor = isinstance(min, Tensor), isinstance(max, Tensor)
    if lo_tensor != hi_tensor and min is not None and max is not None:
        # a Tensor and a Number: PyTorch's Scalar overload, whose parser reads a 0-d tensor
        # that does not require grad as its number
        bound = min if lo_tensor else max
        if bound._data.ndim or bound.requires_grad:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"(Tensor, {', '.join(type(b).__name__ for b in (min, max))})")
        min, max = (bound.item(), max) if lo_tensor else (min, bound.item())
        lo_tensor = hi_tensor = False
    scalar_op, tensor_op = _CLAMP_OPS[name]
    d = input.dtype
    if type(min) in _SAME_DTYPE_BOUNDS[d.category] and \
            type(max) in _SAME_DTYPE_BOUNDS[d.category]:
        result = d  # the common case: bounds that cannot change the dtype
    elif d.category == dt.FLOATING and not (lo_tensor or hi_tensor):
        # PyTorch: Number bounds never promote a floating input; each is read as a double
        result, min, max = d, _real_bound(name, min), _real_bound(name, max)
    else:
        result = result_type_of((input, min, max))
    if result.category == dt.COMPLEX:
        # clamp's loop, and the loops of clamp_min and clamp_max with a tensor bound, check
        # their shapes and the in-place cast first; a complex Number bound of clamp_min and
        # clamp_max is refused at once
        if name == "clamp" or lo_tensor or hi_tensor:
            raise _complex_refused(input, min, max)
        raise NotImplementedError(NO_COMPLEX)
    if result is dt.bool and not ((min is None) != (max is None) and (lo_tensor or hi_tensor)):
        # (PyTorch's bool kernels: only clamp with one tensor bound)
        kernel = "clamp" if min is not None and max is not None else \
            "clamp_min" if min is not None else "clamp_max"
        raise not_implemented(kernel + ("_cpu" if lo_tensor or hi_tensor else "_scalar_cpu"),
                              result)
    compute = compute_dtype(result)
    arrays = (operand_array(input, compute),
              None if min is None else operand_array(min, compute),
              None if max is None else operand_array(max, compute))
    op = tensor_op if lo_tensor or hi_tensor else scalar_op
    try:
        r = dispatch(op, (input, min, max), EMPTY, result, arrays)
    except ValueError:
        other = min if min is not None else max
        raise broadcast_error(input._data.shape, tuple(other.shape)) from None
    return r if out is None else write_out(r, out)


@export(inplace=True, aliases=("clip",))
def clamp(input, min=None, max=None, *, out=None):
    return _clamp("clamp", input, min, max, out)


@export(inplace=True)
def clamp_min(input, min, *, out=None):
    return _clamp("clamp_min", input, min, None, out)


@export(inplace=True)
def clamp_max(input, max, *, out=None):
    return _clamp("clamp_max", input, None, max, out)
