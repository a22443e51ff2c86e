"""The table: registry op name -> the function that writes it as ONNX nodes.

A symbolic function takes the GraphBuilder `g` and the traced call, reads the call's inputs
(`call.inputs`: Values and Python scalars) and params, and returns the ONNX names of the
call's outputs, in order (a shorter list when the later outputs, such as max_pool's indices,
have no ONNX counterpart). This file holds the pointwise and reduction ops;
symbolic_shape.py the views, joins and splits, symbolic_index.py indexing and indexed writes,
symbolic_nn.py convolution, pooling, normalisation and the recurrent layers.
"""
import numpy as np

from .._tracing import Value
from .errors import OnnxExporterError

TABLE = {}


def symbolic(*names):
    def register(fn):
        for name in names:
            TABLE[name] = fn
        return fn
    return register


def operands(g, *xs, dtype=None):
    """The inputs as ONNX names, each cast to `dtype` (default: the result's dtype) where it
    differs: ember promotes (int + float, int / int) where ONNX requires equal types."""
    dtype = g.out_dtype() if dtype is None else dtype
    names = []
    for x in xs:
        name = g.input(x, dtype)
        if isinstance(x, Value) and x.tensor._data.dtype != dtype:
            name = g.cast(name, dtype)
        names.append(name)
    return names


def common_dtype(*xs):
    """The dtype two operands of a comparison meet in."""
    tensors = [x.tensor._data for x in xs if isinstance(x, Value)]
    scalars = [x for x in xs if not isinstance(x, Value)]
    dtype = np.result_type(*tensors)
    if any(isinstance(s, float) for s in scalars) and dtype.kind in "biu":
        dtype = np.dtype(np.float32)
    return dtype


# ---------------------------------------------------------------------- pointwise
_UNARY = {"neg": "Neg", "relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp",
          "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "erf": "Erf", "sin": "Sin", "cos": "Cos",
          "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh",
          "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
          "floor": "Floor", "ceil": "Ceil", "round": "Round", "sign": "Sign",
          "reciprocal": "Reciprocal", "logical_not": "Not",
          "clone": "Identity"}


def _unary(op_type):
    def translate(g, call):
        x, = operands(g, call.inputs[0])
        return [g.op(op_type, x)]
    return translate


for _name, _type in _UNARY.items():
    TABLE[_name] = _unary(_type)


@symbolic("bitwise_not")
def _bitwise_not(g, call):
    x = g.input(call.inputs[0])
    return [g.op("Not" if g.out_dtype() == np.bool_ else "BitwiseNot", x)]


@symbolic("rsqrt")
def _rsqrt(g, call):
    x, = operands(g, call.inputs[0])
    return [g.op("Reciprocal", g.op("Sqrt", x))]


@symbolic("expm1")
def _expm1(g, call):
    x, one = operands(g, call.inputs[0], 1)
    return [g.op("Sub", g.op("Exp", x), one)]


@symbolic("log1p")
def _log1p(g, call):
    x, one = operands(g, call.inputs[0], 1)
    return [g.op("Log", g.op("Add", x, one))]


@symbolic("exp2", "log2", "log10", "erfc", "trunc", "frac", "isnan", "isinf", "isfinite",
          "signbit", "sgn", "logit")
def _composite_unary(g, call):
    """Unary functions ONNX has no node for, written in its nodes."""
    x = call.inputs[0]
    dtype = g.out_dtype() if g.out_dtype().kind in "fc" else g.np_dtype(x)
    name, = operands(g, x, dtype=dtype)
    c = lambda v: g.input(v, dtype)  # noqa: E731
    op = call.name
    if op == "exp2":
        return [g.op("Pow", c(2.0), name)]
    if op in ("log2", "log10"):
        return [g.op("Div", g.op("Log", name), c(np.log(2.0 if op == "log2" else 10.0)))]
    if op == "erfc":
        return [g.op("Sub", c(1.0), g.op("Erf", name))]
    if op in ("trunc", "frac"):
        if dtype.kind != "f":
            return [name if op == "trunc" else g.op("Sub", name, name)]
        whole = g.op("Mul", g.op("Sign", name), g.op("Floor", g.op("Abs", name)))
        return [whole if op == "trunc" else g.op("Sub", name, whole)]
    if op in ("isnan", "isinf", "isfinite", "signbit"):
        fd = dtype if dtype.kind == "f" else np.dtype(np.float32)
        f = name if dtype.kind == "f" else g.cast(name, fd)
        if op in ("isnan", "isinf"):
            return [g.op("IsNaN" if op == "isnan" else "IsInf", f)]
        if op == "isfinite":
            return [g.op("Not", g.op("Or", g.op("IsInf", f), g.op("IsNaN", f)))]
        zero = g.input(0.0, fd)
        # (-0.0 has its sign bit set: 1/x tells it from +0.0)
        return [g.op("Less", g.op("Where", g.op("Equal", f, zero), g.op("Reciprocal", f), f),
                     zero)]
    if op == "sgn":
        return [g.op("Sign", name)]
    eps = call.params.get("eps")
    if eps is not None:
        name = g.op("Max", g.op("Min", name, c(1 - eps)), c(eps))
    return [g.op("Log", g.op("Div", name, g.op("Sub", c(1.0), name)))]


@symbolic("round_decimals")
def _round_decimals(g, call):
    x, = operands(g, call.inputs[0])
    scale = g.input(10.0 ** abs(call.params["decimals"]))
    if call.params["decimals"] < 0:
        return [g.op("Mul", g.op("Round", g.op("Div", x, scale)), scale)]
    return [g.op("Div", g.op("Round", g.op("Mul", x, scale)), scale)]


@symbolic("_to_device", "_pin_memory")
def _identity(g, call):
    return [g.op("Identity", g.input(call.inputs[0]))]


_BINARY = {"mul": "Mul", "div": "Div", "maximum": "Max", "minimum": "Min",
           "fmax": "Max", "fmin": "Min", "pow_tensor": "Pow", "pow_scalar_base": "Pow"}


def _binary(op_type):
    def translate(g, call):
        a, b = operands(g, *call.inputs[:2])
        return [g.op(op_type, a, b)]
    return translate


for _name, _type in _BINARY.items():
    TABLE[_name] = _binary(_type)


@symbolic("pow")
def _pow_scalar(g, call):
    x, exponent = operands(g, call.inputs[0], call.params["exponent"])
    return [g.op("Pow", x, exponent)]


@symbolic("add", "sub")
def _add_sub(g, call):
    a, b = call.inputs[:2]
    alpha = call.inputs[2] if len(call.inputs) > 2 else call.params.get("alpha", 1)
    a, b = operands(g, a, b)
    if alpha != 1:
        b = g.op("Mul", b, g.input(alpha))
    return [g.op("Add" if call.name == "add" else "Sub", a, b)]


@symbolic("lerp", "lerp_scalar")
def _lerp(g, call):
    """PyTorch's two-sided form: a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w)."""
    a, b, w = operands(g, *call.inputs[:3])
    d = g.op("Sub", b, a)
    small = g.op("Less", g.op("Abs", w), g.input(0.5))
    return [g.op("Where", small, g.op("Add", a, g.op("Mul", w, d)),
                 g.op("Sub", b, g.op("Mul", d, g.op("Sub", g.input(1.0), w))))]


@symbolic("addcmul", "addcdiv")
def _addc(g, call):
    a, t1, t2 = operands(g, *call.inputs[:3])
    term = g.op("Mul" if call.name == "addcmul" else "Div", t1, t2)
    value = call.params.get("value", 1)
    if value != 1:
        term = g.op("Mul", term, g.input(value))
    return [g.op("Add", a, term)]


@symbolic("hypot")
def _hypot(g, call):
    a, b = operands(g, *call.inputs[:2])
    return [g.op("Sqrt", g.op("Add", g.op("Mul", a, a), g.op("Mul", b, b)))]


@symbolic("bitwise_and", "bitwise_or", "bitwise_xor")
def _bitwise(g, call):
    a, b = operands(g, *call.inputs[:2])
    kind = call.name.split("_")[1]
    if g.out_dtype() == np.bool_:
        return [g.op(kind.capitalize(), a, b)]
    return [g.op("Bitwise" + kind.capitalize(), a, b)]


_COMPARE = {"eq": ("Equal", False), "ne": ("Equal", True), "lt": ("Less", False),
            "le": ("LessOrEqual", False), "gt": ("Greater", False),
            "ge": ("GreaterOrEqual", False), "logical_and": ("And", False),
            "logical_or": ("Or", False), "logical_xor": ("Xor", False)}


def _compare(op_type, negate):
    def translate(g, call):
        a, b = call.inputs[:2]
        dtype = np.dtype(np.bool_) if op_type in ("And", "Or", "Xor") else common_dtype(a, b)
        a, b = operands(g, a, b, dtype=dtype)
        out = g.op(op_type, a, b)
        return [g.op("Not", out) if negate else out]
    return translate


for _name, (_type, _negate) in _COMPARE.items():
    TABLE[_name] = _compare(_type, _negate)


@symbolic("clamp_scalar", "clamp_min_scalar", "clamp_max_scalar", "clamp", "clamp_min",
          "clamp_max")
def _clamp(g, call):
    x, lo, hi = call.inputs[:3]
    out, = operands(g, x)
    # Max then Min (not Clip): the bounds may be tensors, and lo > hi gives hi as in PyTorch.
    if lo is not None:
        out = g.op("Max", out, operands(g, lo)[0])
    if hi is not None:
        out = g.op("Min", out, operands(g, hi)[0])
    return [out]


@symbolic("where")
def _where(g, call):
    c, x, y = call.inputs
    cond, = operands(g, c, dtype=np.dtype(np.bool_))
    x, y = operands(g, x, y)
    return [g.op("Where", cond, x, y)]


@symbolic("_to_copy")
def _to_copy(g, call):
    return [g.cast(g.input(call.inputs[0]), g.out_dtype())]


@symbolic("copy_")
def _copy(g, call):
    """copy_(dst, src) gives src cast to dst's dtype and broadcast to dst's shape."""
    dst, src = call.inputs
    out, = operands(g, src)
    if tuple(src.tensor.shape) != tuple(dst.tensor.shape):
        out = g.op("Expand", out, g.op("Shape", g.input(dst)))
    return [out]


# ---------------------------------------------------------------------- reductions
_REDUCE = {"mean": "ReduceMean", "sum": "ReduceSum", "amax": "ReduceMax",
           "amin": "ReduceMin", "prod": "ReduceProd", "prod_dim": "ReduceProd",
           "max_all": "ReduceMax", "min_all": "ReduceMin", "logsumexp": "ReduceLogSumExp"}


def _reduce(op_type):
    def translate(g, call):
        x, = operands(g, call.inputs[0])
        dims = call.params.get("dims")
        keep = int(bool(call.params.get("keepdim", False)))
        if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0
                            and g.rank(call.inputs[0]) > 0):
            return [g.op(op_type, x, keepdims=keep)]
        dims = [dims] if isinstance(dims, int) else list(dims)
        return [g.op(op_type, x, g.ints(dims, "axes"), keepdims=keep)]
    return translate


for _name, _type in _REDUCE.items():
    TABLE[_name] = _reduce(_type)


@symbolic("max", "min")
def _max_min_dim(g, call):
    """(values, indices) along one dim."""
    x, = operands(g, call.inputs[0])
    dim, keep = call.params["dim"], int(bool(call.params["keepdim"]))
    reduce = "ReduceMax" if call.name == "max" else "ReduceMin"
    values = g.op(reduce, x, g.ints([dim], "axes"), keepdims=keep)
    # (select_last_index=0: the first extreme, as PyTorch's CPU kernel returns)
    indices = g.op("ArgMax" if call.name == "max" else "ArgMin", x, axis=dim, keepdims=keep)
    return [values, indices]


@symbolic("topk", "sort")
def _topk(g, call):
    x = call.inputs[0]
    dim = call.params["dim"] % max(g.rank(x), 1)
    k = call.params.get("k")
    if k is None:   # sort: all of the axis
        g.check_static(0, [dim] if g.rank(x) else [], "sorted axis")
        k = x.tensor.shape[dim] if g.rank(x) else 1
    values, indices = g.op("TopK", g.input(x), g.ints([k], "k"), axis=dim,
                           largest=int(bool(call.params["descending"])), sorted=1, outputs=2)
    return [values, indices]


@symbolic("cumsum")
def _cumsum(g, call):
    x, = operands(g, call.inputs[0])
    return [g.op("CumSum", x, g.const(np.asarray(call.params["dim"], np.int64), "axis"))]


@symbolic("var", "std")
def _var_std(g, call):
    """sum((x - mean)^2) / (n - correction), from ONNX reductions."""
    x = call.inputs[0]
    shape = tuple(x.tensor.shape)
    dims = call.params.get("dims")
    dims = tuple(range(len(shape))) if dims is None else tuple(d % len(shape) for d in dims)
    keep = int(bool(call.params.get("keepdim", False)))
    g.check_static(0, dims, "reduced axes")
    n = int(np.prod([shape[d] for d in dims]))
    divisor = max(n - call.params.get("correction", 1), 0)
    name, = operands(g, x)
    axes = g.ints(dims, "axes")
    centred = g.op("Sub", name, g.op("ReduceMean", name, axes, keepdims=1))
    total = g.op("ReduceSum", g.op("Mul", centred, centred), axes, keepdims=keep)
    var = g.op("Div", total, g.input(float(divisor)))
    return [g.op("Sqrt", var) if call.name.startswith("std") else var]


@symbolic("norm", "linalg_vector_norm")
def _norm(g, call):
    x = call.inputs[0]
    p = call.params.get("p", call.params.get("ord", 2))
    dims = call.params.get("dims", call.params.get("dim"))
    keep = int(bool(call.params.get("keepdim", False)))
    name, = operands(g, x)
    axes = [] if dims is None else [g.ints([dims] if isinstance(dims, int) else dims, "axes")]
    if p == 2:
        return [g.op("ReduceL2", name, *axes, keepdims=keep)]
    if p == 1:
        return [g.op("ReduceL1", name, *axes, keepdims=keep)]
    if p in (float("inf"), float("-inf")):
        return [g.op("ReduceMax" if p > 0 else "ReduceMin", g.op("Abs", name), *axes,
                     keepdims=keep)]
    if not p:
        raise OnnxExporterError("ember.onnx: the 0-norm (a count of nonzeros) is not "
                                "supported")
    powered = g.op("Pow", g.op("Abs", name), g.input(float(p)))
    return [g.op("Pow", g.op("ReduceSum", powered, *axes, keepdims=keep), g.input(1 / p))]


@symbolic("softmax", "log_softmax")
def _softmax(g, call):
    x, = operands(g, call.inputs[0])
    return [g.op("Softmax" if call.name == "softmax" else "LogSoftmax", x,
                 axis=call.params["dim"])]


# ---------------------------------------------------------------------- matrix products
@symbolic("matmul")
def _matmul(g, call):
    a, b = operands(g, *call.inputs[:2])
    return [g.op("MatMul", a, b)]


@symbolic("addmm")
def _addmm(g, call):
    bias, a, b = call.inputs[:3]
    trans_b = None
    if isinstance(b, Value) and b.call is not None and b.call.name == "transpose" and \
            isinstance(b.call.inputs[0], Value):
        # nn.Linear's weight.t(): Gemm reads the weight itself (transB), as PyTorch writes
        # it; the Transpose left without a reader is pruned.
        b, trans_b = b.call.inputs[0], 1
    bias, a, b = operands(g, bias, a, b)
    return [g.op("Gemm", a, b, bias, transB=trans_b)]


@symbolic("einsum")
def _einsum(g, call):
    names = operands(g, *[v for v in call.inputs if isinstance(v, Value)])
    return [g.op("Einsum", *names, equation=call.params["equation"].replace(" ", ""))]


@symbolic("tril", "triu")
def _trilu(g, call):
    k = call.params.get("diagonal", 0)
    return [g.op("Trilu", g.input(call.inputs[0]), g.const(np.asarray(k, np.int64), "k"),
                 upper=int(call.name == "triu"))]


@symbolic("remainder", "remainder_scalar", "remainder_scalar_self", "fmod", "fmod_scalar")
def _remainder(g, call):
    """Python's % (the divisor's sign) for remainder, C's fmod for fmod. ONNX's Mod does
    both for integers; for floats it has only fmod, so remainder is a - floor(a / b) b."""
    a, b = operands(g, *call.inputs[:2])
    fmod = call.name.startswith("fmod")
    if g.out_dtype().kind != "f":
        return [g.op("Mod", a, b, fmod=int(fmod))]
    if fmod:
        return [g.op("Mod", a, b, fmod=1)]
    return [g.op("Sub", a, g.op("Mul", g.op("Floor", g.op("Div", a, b)), b))]


@symbolic("div_floor")
def _div_floor(g, call):
    """Floor division: Floor(a / b) for floats; for integers (a - a mod b) / b, exact, with
    ONNX's Mod taking the divisor's sign as Python's % does."""
    a, b = operands(g, *call.inputs[:2])
    if g.out_dtype().kind == "f":
        return [g.op("Floor", g.op("Div", a, b))]
    return [g.op("Div", g.op("Sub", a, g.op("Mod", a, b, fmod=0)), b)]


from . import (symbolic_index, symbolic_math, symbolic_moves,  # noqa: E402,F401  (they fill
               symbolic_nn, symbolic_shape)                   # TABLE too)
