"""Symbolic functions of the math ops ONNX has no single node for, written in its nodes
(see symbolic_table.py), and of the paired reductions (aminmax, var_mean, std_mean)."""
import math

import numpy as np

from ._builder import tensor_type
from .symbolic_table import TABLE, operands, symbolic


def _c(g, value):
    return g.input(value, g.out_dtype())


@symbolic("atan2")
def _atan2(g, call):
    """atan(a / b) moved to the right quadrant by the signs of a and b."""
    a, b = operands(g, *call.inputs[:2])
    base = g.op("Atan", g.op("Div", a, b))
    b_neg = g.op("Less", b, _c(g, 0.0))
    a_neg = g.op("Less", a, _c(g, 0.0))
    turned = g.op("Where", a_neg, g.op("Sub", base, _c(g, math.pi)),
                  g.op("Add", base, _c(g, math.pi)))
    on_axis = g.op("Where", g.op("Greater", a, _c(g, 0.0)), _c(g, math.pi / 2),
                   g.op("Where", a_neg, _c(g, -math.pi / 2), _c(g, 0.0)))
    zero_b = g.op("Equal", b, _c(g, 0.0))
    return [g.op("Where", zero_b, on_axis, g.op("Where", b_neg, turned, base))]


@symbolic("logaddexp", "logaddexp2")
def _logaddexp(g, call):
    """max + log(1 + exp(-|a - b|)), in base 2 for logaddexp2 (stable for large inputs)."""
    a, b = operands(g, *call.inputs[:2])
    top = g.op("Max", a, b)
    gap = g.op("Neg", g.op("Abs", g.op("Sub", a, b)))
    if call.name == "logaddexp":
        return [g.op("Add", top, g.op("Log", g.op("Add", _c(g, 1.0), g.op("Exp", gap))))]
    ln2 = _c(g, math.log(2.0))
    tail = g.op("Log", g.op("Add", _c(g, 1.0), g.op("Exp", g.op("Mul", gap, ln2))))
    return [g.op("Add", top, g.op("Div", tail, ln2))]


@symbolic("div_trunc")
def _div_trunc(g, call):
    a, b = operands(g, *call.inputs[:2])
    q = g.op("Div", a, b)   # (integer Div rounds toward zero already)
    if g.out_dtype().kind != "f":
        return [q]
    return [g.op("Mul", g.op("Sign", q), g.op("Floor", g.op("Abs", q)))]


@symbolic("deg2rad", "rad2deg")
def _angle_units(g, call):
    x, = operands(g, call.inputs[0])
    factor = math.pi / 180 if call.name == "deg2rad" else 180 / math.pi
    return [g.op("Mul", x, _c(g, factor))]


@symbolic("copysign")
def _copysign(g, call):
    a, b = operands(g, *call.inputs[:2])
    # (b's sign bit, -0.0 included: 1/b tells -0.0 from +0.0)
    sign_b = g.op("Where", g.op("Equal", b, _c(g, 0.0)), g.op("Reciprocal", b), b)
    negative = g.op("Less", sign_b, _c(g, 0.0))
    size = g.op("Abs", a)
    return [g.op("Where", negative, g.op("Neg", size), size)]


@symbolic("heaviside")
def _heaviside(g, call):
    x, v = operands(g, *call.inputs[:2])
    step = g.op("Cast", g.op("Greater", x, _c(g, 0)), to=_onnx_type(g))
    return [g.op("Where", g.op("Equal", x, _c(g, 0)), v, step)]


def _onnx_type(g):
    return tensor_type(g.onnx, g.out_dtype())


@symbolic("nan_to_num")
def _nan_to_num(g, call):
    x, = operands(g, call.inputs[0])
    p = call.params
    if g.out_dtype().kind != "f":
        return [g.op("Identity", x)]
    info = np.finfo(g.out_dtype())
    nan = 0.0 if p.get("nan") is None else p["nan"]
    pos = float(info.max) if p.get("posinf") is None else p["posinf"]
    neg = float(info.min) if p.get("neginf") is None else p["neginf"]
    out = g.op("Where", g.op("IsNaN", x), _c(g, nan), x)
    out = g.op("Where", g.op("IsInf", x, detect_negative=0), _c(g, pos), out)
    return [g.op("Where", g.op("IsInf", x, detect_negative=1, detect_positive=0),
                 _c(g, neg), out)]


@symbolic("isposinf", "isneginf")
def _is_signed_inf(g, call):
    x = call.inputs[0]
    if g.np_dtype(x).kind != "f":   # (integers are never infinite)
        return [g.op("Expand", g.const(np.zeros(1, bool), "false"),
                     g.op("Shape", g.input(x)))]
    positive = call.name == "isposinf"
    return [g.op("IsInf", g.input(x), detect_positive=int(positive),
                 detect_negative=int(not positive))]


@symbolic("isclose")
def _isclose(g, call):
    """a == b, or |a - b| finite and within atol + rtol |b| (NaNs equal with equal_nan)."""
    a, b = call.inputs[:2]
    p = call.params
    dtype = np.result_type(*(x.tensor._data.dtype for x in (a, b) if hasattr(x, "tensor")))
    compute = dtype if dtype.kind == "f" else np.dtype(np.float64)
    a, b = operands(g, a, b, dtype=compute)
    c = lambda v: g.input(float(v), compute)  # noqa: E731
    diff = g.op("Abs", g.op("Sub", a, b))
    within = g.op("LessOrEqual", diff, g.op("Add", c(p["atol"]),
                                            g.op("Mul", c(p["rtol"]), g.op("Abs", b))))
    finite = g.op("Not", g.op("Or", g.op("IsInf", diff), g.op("IsNaN", diff)))
    close = g.op("Or", g.op("Equal", a, b), g.op("And", finite, within))
    if p.get("equal_nan"):
        close = g.op("Or", close, g.op("And", g.op("IsNaN", a), g.op("IsNaN", b)))
    return [close]


@symbolic("sinc")
def _sinc(g, call):
    x, = operands(g, call.inputs[0])
    px = g.op("Mul", x, _c(g, math.pi))
    return [g.op("Where", g.op("Equal", x, _c(g, 0.0)), _c(g, 1.0),
                 g.op("Div", g.op("Sin", px), px))]


@symbolic("xlogy", "xlogy_scalar_self", "xlogy_scalar_other")
def _xlogy(g, call):
    """x log(y), 0 where x == 0 (and NaN where y is NaN, as PyTorch's)."""
    x, y = operands(g, *call.inputs[:2])
    product = g.op("Mul", x, g.op("Log", y))
    zero = g.op("And", g.op("Equal", x, _c(g, 0.0)), g.op("Not", g.op("IsNaN", y)))
    return [g.op("Where", zero, _c(g, 0.0), product)]


@symbolic("nansum", "nanmean")
def _nan_reduce(g, call):
    """sum or mean of the non-NaN entries."""
    x, = operands(g, call.inputs[0])
    dims = call.params.get("dims")
    keep = int(bool(call.params.get("keepdim", False)))
    axes = [] if not dims else [g.ints([dims] if isinstance(dims, int) else dims, "axes")]
    if g.out_dtype().kind != "f":
        return [g.op("ReduceSum", x, *axes, keepdims=keep)]
    is_nan = g.op("IsNaN", x)
    total = g.op("ReduceSum", g.op("Where", is_nan, _c(g, 0.0), x), *axes, keepdims=keep)
    if call.name == "nansum":
        return [total]
    count = g.op("ReduceSum", g.op("Cast", g.op("Not", is_nan), to=_onnx_type(g)), *axes,
                 keepdims=keep)
    return [g.op("Div", total, count)]


@symbolic("aminmax")
def _aminmax(g, call):
    x, = operands(g, call.inputs[0])
    dims = call.params.get("dims")
    keep = int(bool(call.params.get("keepdim", False)))
    axes = [] if dims is None else [g.ints([dims] if isinstance(dims, int) else dims, "axes")]
    return [g.op("ReduceMin", x, *axes, keepdims=keep), g.op("ReduceMax", x, *axes,
                                                             keepdims=keep)]


@symbolic("var_mean", "std_mean")
def _spread_mean(g, call):
    """(var or std, mean): the var/std translation, then the mean."""
    spread, = TABLE["var" if call.name == "var_mean" else "std"](g, call)
    x, = operands(g, call.inputs[0])
    dims = call.params.get("dims")
    keep = int(bool(call.params.get("keepdim", False)))
    axes = [] if dims is None else [g.ints(dims, "axes")]
    return [spread, g.op("ReduceMean", x, *axes, keepdims=keep)]
