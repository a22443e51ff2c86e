"""Activation functions, composed from ember ops (differentiable for free); GELU is one fused
op (ops/nn_ops.py), softmax and log_softmax are ops of their own (ops/softmax_ops.py).

A composite's result carries PyTorch's node name for the whole function (SiluBackward0,
LeakyReluBackward0, ...; registry.name_node renames its last op), so `grad_fn` reads as in
PyTorch; the in-place forms keep their copy's node."""
import functools
import inspect
import warnings

import numpy as np

from ... import _dtype as dt
from ... import _scalars
from ..._creation import empty, empty_like, full_like, ones_like, zeros_like
from ..._dtype import COMPLEX, FLOATING, type_name
from ..._signatures import Parser, checked
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...ops._elementwise import not_implemented
from ...ops.activation import gelu as _ops_gelu, relu as _ops_relu
from ...ops.registry import check_tensor, name_node
from ...ops.rounding import abs as _abs
from ...ops.select import clamp, where
from ...ops.splitting import chunk
from ...ops.unary import exp, expm1, log1p, sigmoid as _ops_sigmoid, tanh as _ops_tanh
from ._util import builtin_parser

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh", "hardtanh",
           "hardtanh_", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "tanhshrink",
           "threshold", "threshold_", "softplus", "softsign", "logsigmoid", "glu", "softmax",
           "softmin", "log_softmax", "prelu", "rrelu", "rrelu_", "gumbel_softmax"]


# torch.clamp behind its parser, where the caller's input reaches it unchecked (F.hardtanh;
# logsigmoid from the losses): a non-tensor is clamp's TypeError, listing its overloads
_checked_clamp = checked(clamp, builtin_parser("clamp"), method=False)


def _inplace(input, result):
    """Write `result` into `input` for the inplace=True forms."""
    return input.copy_(result)


def _source(input, inplace):
    """What an inplace=True form computes from.
    NOTE: the composed graph saves its input for backward; writing the result back into that
    same tensor would fail backward's version check, so a graph input is copied first."""
    return input.clone() if inplace and input.requires_grad else input


def _floating_kernel(kernel, complex_ok=False, first=None):
    """PyTorch's CPU kernel `kernel` has loops for floating dtypes only: an integer, bool (or
    complex) input is its NotImplementedError ("elu_cpu" not implemented for 'Long'), where
    the composition in ember ops would compute. What PyTorch checks before the kernel comes
    first, as there: an in-place call on a leaf that requires grad, then `first` (called with
    the function's arguments: the checks of argument values)."""
    def decorate(fn):
        names = list(inspect.signature(fn).parameters)
        at = names.index("inplace") - 1 if "inplace" in names else None

        @functools.wraps(fn)
        def checked(input, *args, **kwargs):
            if isinstance(input, Tensor):
                if at is not None and input._requires_grad and input.is_leaf and \
                        kwargs.get("inplace", len(args) > at and args[at]) is True and \
                        is_grad_enabled():
                    raise RuntimeError("a leaf Variable that requires grad is being used in "
                                       "an in-place operation.")
                if first is not None:
                    first(input, *args, **kwargs)
                category = input.dtype.category
                if category < FLOATING or category == COMPLEX and not complex_ok:
                    raise not_implemented(kernel, input.dtype)
            return fn(input, *args, **kwargs)
        return checked
    return decorate


# the C type PyTorch's kernels read a Scalar argument into, named in its conversion error
_C_TYPES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "int64_t", "int32": "int", "int16": "int16_t",
            "int8": "int8_t", "uint8": "uint8_t", "bool": "bool"}


def _real(value, dtype=None):
    """A Scalar argument read into a real type (the input's, or double): a complex number
    converts to its real part, and only without an imaginary part."""
    if not isinstance(value, (complex, np.complexfloating)) or \
            dtype is not None and dtype.is_complex:
        return value
    if value.imag:
        name = "double" if dtype is None else _C_TYPES[str(dtype).split(".")[-1]]
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value.real


def relu(input, inplace=False):
    return relu_(input) if inplace else _ops_relu(input)


def relu_(input):
    check_tensor("relu_", input)   # (torch.relu_'s check, then the method)
    return input.relu_()


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _opmath(dtype):
    """The type torch's activation kernels read their Scalars in: double for float64, float
    for the others (half included)."""
    return dtype if dtype is dt.float64 else dt.float32


def _python_wrapper(*params):
    """`fn(input, *values, inplace)` as torch's F.<name>: its Python code tests `inplace` (a
    tensor's truth raises) and hands the other arguments to the builtin or its in-place form,
    whose parser (`params`: its parameters after input) takes any Number for a Scalar (torch's
    stubs say float)."""
    def decorate(fn):
        sig = inspect.signature(fn)
        text = ", ".join(("Tensor input",) + params)
        parsers = {False: Parser(fn.__name__, (text,)),
                   True: Parser(fn.__name__ + "_", (text,))}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            *values, inplace = bound.args
            parsers[bool(inplace)].check(tuple(values), {})
            return fn(*values, inplace)
        wrapper.__ember_parser__ = parsers[False]
        return wrapper
    return decorate


@_python_wrapper("Number negative_slope = 0.01")
@_floating_kernel("leaky_relu_cpu")
def leaky_relu(input, negative_slope=0.01, inplace=False):
    negative_slope = _real(negative_slope, _opmath(input.dtype))
    x = _source(input, inplace)
    out = where(x > 0, x, x * negative_slope)
    return _inplace(input, out) if inplace else name_node(out, "LeakyReluBackward0")


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


@_python_wrapper("Number alpha = 1.0")
@_floating_kernel("elu_cpu")
def elu(input, alpha=1.0, inplace=False):
    alpha = _real(alpha, _opmath(input.dtype))
    x = _source(input, inplace)
    out = where(x > 0, x, alpha * expm1(clamp(x, max=0)))
    return _inplace(input, out) if inplace else name_node(out, "EluBackward0")


def elu_(input, alpha=1.0):
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_floating_kernel("elu_cpu")
def selu(input, inplace=False):
    out = _SELU_SCALE * elu(_source(input, inplace), _SELU_ALPHA)
    return _inplace(input, out) if inplace else name_node(out, "EluBackward0")


def selu_(input):
    return selu(input, True)


def _celu_alpha(input, alpha=1.0, inplace=False):
    if _real(alpha) == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


@_floating_kernel("elu_cpu", first=_celu_alpha)
def celu(input, alpha=1.0, inplace=False):
    x = _source(input, inplace)
    out = where(x > 0, x, alpha * expm1(clamp(x, max=0) / alpha))
    return _inplace(input, out) if inplace else name_node(out, "CeluBackward0")


def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


def gelu(input, approximate="none"):
    return _ops_gelu(input, approximate)


@_floating_kernel("silu_cpu", complex_ok=True)
def silu(input, inplace=False):
    if input.requires_grad and input.dtype.is_complex:
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    x = _source(input, inplace)
    out = x * _ops_sigmoid(x)
    return _inplace(input, out) if inplace else name_node(out, "SiluBackward0")


@_floating_kernel("mish_cpu")
def mish(input, inplace=False):
    x = _source(input, inplace)
    out = x * _ops_tanh(softplus(x))
    return _inplace(input, out) if inplace else name_node(out, "MishBackward0")


# NOTE: sigmoid, tanh, tanhshrink, softsign and the softmaxes call the input's methods, as
# PyTorch's do: a non-tensor input is an AttributeError there ('str' object has no attribute
# 'tanh'), and a wrongly typed dim is the method's TypeError.
def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val, max_val, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    # (PyTorch's builtin: no bounds check, crossed bounds clamp everything to max_val)
    return _hardtanh(input, min_val, max_val, True)


def _hardtanh(input, min_val, max_val, inplace):
    # (the builtin's Scalars: a 0-d tensor through item(), a complex as a double)
    min_val, max_val = (_real(v.item() if isinstance(v, Tensor) else v)
                        for v in (min_val, max_val))
    if isinstance(input, Tensor) and input.dtype.category < FLOATING:
        if input.dtype is dt.bool:
            raise RuntimeError("Bool inputs not supported for hardtanh")
        if input.dtype is dt.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        # PyTorch casts the bounds to an integral input's dtype (no promotion to float).
        min_val, max_val = int(min_val), int(max_val)
    out = _checked_clamp(_source(input, inplace), min_val, max_val)
    return _inplace(input, out) if inplace else name_node(out, "HardtanhBackward0")


@_python_wrapper()
@_floating_kernel("hardsigmoid_cpu")
def hardsigmoid(input, inplace=False):
    out = clamp(_source(input, inplace) / 6 + 0.5, 0, 1)
    return _inplace(input, out) if inplace else name_node(out, "HardsigmoidBackward0")


@_python_wrapper()
@_floating_kernel("hardswish_cpu")
def hardswish(input, inplace=False):
    x = _source(input, inplace)
    out = x * clamp(x + 3, 0, 6) / 6
    return _inplace(input, out) if inplace else name_node(out, "HardswishBackward0")


# NOTE: the comparisons below are written as PyTorch's kernels write them, so that a NaN
# (every comparison false) comes out as PyTorch's does: kept by threshold and hardshrink,
# NaN (x * 0) from softshrink.
@_floating_kernel("hardshrink_cpu")
def hardshrink(input, lambd=0.5):
    lambd = _real(lambd, input.dtype)
    inside = (input >= -lambd) & (input <= lambd)
    return name_node(where(inside, zeros_like(input), input),
                     "HardshrinkBackward0")


@_floating_kernel("softshrink_check")
def softshrink(input, lambd=0.5):
    lambd = float(_real(lambd.item() if isinstance(lambd, Tensor) else lambd))
    top = float(dt.finfo(input.dtype).max)
    if not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{type_name(input.dtype)}, but found {lambd:g}")
    out = where(input > lambd, input - lambd,
                where(input < -lambd, input + lambd, input * 0))
    return name_node(out, "SoftshrinkBackward0")


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    if input.dtype is dt.bool:   # (PyTorch's kernel has no bool loop; ember's where would)
        raise not_implemented("threshold_cpu", input.dtype)
    threshold, value = _real(threshold, input.dtype), _real(value, input.dtype)
    out = where(input <= threshold, full_like(input, value), input)
    return _inplace(input, out) if inplace else name_node(out, "ThresholdBackward0")


def threshold_(input, threshold_value, value):
    return threshold(input, threshold_value, value, True)


@_floating_kernel("softplus_cpu")
def softplus(input, beta=1.0, threshold=20.0):
    # NOTE: above `threshold` (in units of beta*x) softplus is linear; below it log1p(exp)
    # is computed on clamped input so exp never overflows. The kernel reads its Scalars in
    # its compute type: double for float64, float for the others.
    beta, threshold = _real(beta, _opmath(input.dtype)), _real(threshold, _opmath(input.dtype))
    scaled = input * beta
    soft = log1p(exp(clamp(scaled, max=threshold))) / beta
    return name_node(where(scaled > threshold, input, soft), "SoftplusBackward0")


# NOTE: torch's stubs call beta and threshold floats, but its builtin takes Scalars (a complex
# reaches the kernel's conversion): the parser in front of softplus says so, and the table's
# float signature is not installed over it.
softplus = checked(softplus, Parser("softplus", ("Tensor input, Number beta = 1, Number "
                                                  "threshold = 20",)), method=False)


def softsign(input):
    return input / (input.abs() + 1)


@_floating_kernel("log_sigmoid_cpu")
def logsigmoid(input):
    # NOTE: log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): stable for large |x|.
    out = _checked_clamp(input, max=0) - log1p(exp(-_abs(input)))
    return name_node(out, "LogSigmoidBackward0")


def glu(input, dim=-1):
    """The halves of dim `dim`: a * sigmoid(b). PyTorch checks the halving (and a non-tensor
    input fails on its .dim()) before its kernel's dtype check."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if isinstance(dim, (bool, Tensor)) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"glu(): argument 'dim' (position 2) must be int, not "
                        f"{_scalars.type_name(dim)}")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % nd} is size "
                           f"{n}")
    return _glu_kernel(input, dim)


@_floating_kernel("glu_cpu")
def _glu_kernel(input, dim):
    a, b = chunk(input, 2, dim)
    return name_node(a * _ops_sigmoid(b), "GluBackward0")


def _implicit_dim(name, ndim, stacklevel):
    # (`stacklevel` is the caller's: a non-integer one is warn()'s TypeError, as in PyTorch)
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("softmin", input.dim(), _stacklevel)
    return softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


def prelu(input, weight):
    """PyTorch's checks in its order: one dtype for both (no promotion), one weight or one
    per channel (dim 1), a weight of at most 1 dim; then its kernel's floating dtypes."""
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{type_name(input.dtype)} and {type_name(weight.dtype)}")
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    return _prelu_kernel(input, weight)


@_floating_kernel("prelu_cpu")
def _prelu_kernel(input, weight):
    if input.dim() != weight.dim():   # (one weight per channel, broadcast over the rest)
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return name_node(where(input > 0, input, weight * input), "PreluKernelBackward0")


def _rrelu_bounds(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if _real(lower) > _real(upper):
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


@_python_wrapper("Number lower = 0.125", "Number upper = 0.3333333333333333",
                 "bool training = False")
@_floating_kernel("leaky_relu_cpu", first=_rrelu_bounds)
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if training:
        # NOTE: PyTorch draws one double-precision uniform per non-positive element, in order,
        # so the same seed gives the same slopes only if exactly those are drawn.
        negative = input.detach() <= 0
        draws = empty(int(negative.sum()), dtype=dt.float64).uniform_(lower, upper)
        slope = ones_like(input, requires_grad=False)
        slope[negative] = draws.to(input.dtype)
        out = _source(input, inplace) * slope
    else:
        out = leaky_relu(_source(input, inplace), (lower + upper) / 2)
    return _inplace(input, out) if inplace else name_node(out, "RreluWithNoiseBackward0")


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:   # (a tensor eps: PyTorch's comparison raises, as this one does)
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
