"""Zero-preserving pointwise ops of sparse COO tensors (f(0) == 0: abs, sqrt, tanh, relu, ...):
PyTorch applies them to the coalesced values and keeps the coordinates. Each is written as
coalesce -> values -> the dense op -> a sparse tensor again, so its gradient comes from the
dense op's own VJP through `values`' (ValuesBackward0)."""
from .. import _constants
from .._dtype import FLOATING
from .._tensor import Tensor, _wrap
from ..ops.registry import defop, name_node
from ._graph import record
from ._no_elements import unsupported
from .coo import SparseCooTensor, coalesce, make_coo

__all__ = ["values_of", "install_pointwise_methods"]


@defop("values", node="ValuesBackward0", save=())
def _values(x):
    raise AssertionError("sparse ops record their node through sparse._graph.record")


@_values.defvjp
def _values_vjp(ctx, g):
    p = ctx.params
    return make_coo(p["indices"], g, p["size"], False, values_grad=True)   # (as PyTorch)


def values_of(x):
    """The values of a coalesced sparse tensor, differentiable with respect to it."""
    v = x._sparse_values
    out = _wrap(v._data, v.dtype, v._device)   # (a fresh tensor to carry the node)
    return record(_values, (x,), out, {"indices": x._sparse_indices, "size": tuple(x.shape)})


def _pointwise(name):
    def method(self, *args, **kwargs):
        c = coalesce(self)
        result = getattr(values_of(c), name)(*args, **kwargs)
        out = make_coo(c._sparse_indices, result, self.shape, True, values_grad=True)
        if out.grad_fn is not None and result.grad_fn is not None:
            name_node(out, result.grad_fn.name())   # (PyTorch's node: TanhBackward0, ...)
        return out
    method.__name__ = name
    return method


# (the ones whose value at zero is zero, so the entries left out stay zero)
ZERO_PRESERVING = ("abs", "sqrt", "sin", "tan", "tanh", "relu", "sign", "sgn", "asin", "atan",
                   "sinh", "asinh", "atanh", "expm1", "log1p", "ceil", "floor", "round",
                   "trunc", "frac", "erf", "erfinv", "square", "isnan", "isinf", "signbit",
                   "deg2rad", "rad2deg", "nan_to_num")


def sparse_pointwise(name, x, *args):
    """A dense op's function form given a sparse tensor: the zero-preserving ones act on the
    values; the others are PyTorch's missing-kernel error."""
    if name in ZERO_PRESERVING and x.layout is _constants.sparse_coo:
        return _pointwise(name)(x, *args)
    if name == "isreal" or name == "isfinite" and x.dtype.category < FLOATING:
        # (PyTorch builds these from a dense ones_like, which refuses sparse layouts)
        raise RuntimeError("memory format option is only supported by strided tensors")
    raise unsupported(f"aten::{name}", x._data.backend)


def _pow(self, exponent):
    if isinstance(exponent, Tensor) or not exponent > 0:
        raise NotImplementedError("ember supports pow of sparse tensors with a positive "
                                  "scalar exponent only (zero must stay zero)")
    return _pointwise("pow")(self, exponent)


def install_pointwise_methods():
    for name in ZERO_PRESERVING:
        setattr(SparseCooTensor, name, _pointwise(name))
    SparseCooTensor.pow = SparseCooTensor.__pow__ = _pow
