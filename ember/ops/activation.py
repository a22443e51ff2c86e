"""Activation functions that are one op each: relu (its backward PyTorch's
threshold_backward, a select that passes nan through) and GELU, exact and tanh (one op where
the composition cost five recorded ops and a second erf pass). Their kernels are
backends/elementwise.py's and backends/activations.py's. The other activations of
nn.functional are compositions of ops (nn/_functional/activation.py).
"""
import math

from .. import _dtype as dt
from ..backends import activations, elementwise
from ..backends.special import quiet
from ._elementwise import check_tensor, not_implemented, unary
from .registry import defop, dispatch, export
from .select import NO_COMPLEX


# ---------------------------------------------------------------------- relu
@defop("relu", save=(), save_output=True)
def _relu(a):
    return elementwise.relu(a)


@_relu.defvjp
def _relu_vjp(ctx, g):
    # NOTE: one fused op (PyTorch's threshold_backward), not a comparison plus a where: relu
    # sits in every MLP and its backward is on the per-op overhead path. Like PyTorch's, it
    # passes the gradient on where the output is nan.
    return dispatch(_relu_grad, (g,), {"output": ctx.output_array()}, g.dtype)


@defop("threshold_backward", node="ThresholdBackwardBackward0", save=())
def _relu_grad(g, output):
    return elementwise.threshold_backward(g, output)


@_relu_grad.defvjp
def _relu_grad_vjp(ctx, gg):
    return dispatch(_relu_grad, (gg,), ctx.params, gg.dtype)


@export(inplace=True)
def relu(input):
    check_tensor("relu", input)
    d = input.dtype
    if d is dt.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if d.category == dt.COMPLEX:
        raise NotImplementedError(NO_COMPLEX)
    return unary(_relu, input, d)


# ---------------------------------------------------------------------- GELU
# x * Phi(x) (approximate="none") or 0.5 x (1 + tanh(k (x + c x^3))) ("tanh"), as one op
# (PyTorch's GeluBackward0): the composite form cost five recorded ops, five buffers and a
# second erf pass in backward. The kernels are backends/activations.py's.
_K = math.sqrt(2 / math.pi)
_C = 0.044715
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@defop("gelu", node="GeluBackward0", save=(0,))
@quiet
def _gelu(x, approximate, stash):
    y, saved = activations.gelu(x, approximate)
    stash.append(saved)
    return y


@_gelu.defvjp
def _gelu_vjp(ctx, g):
    p = ctx.params
    return dispatch(_gelu_backward, (g, ctx.inputs[0]),
                    {"approximate": p["approximate"], "cached": p["stash"][0]})


@defop("gelu_backward", node="GeluBackwardBackward0", save=(0, 1))
@quiet
def _gelu_backward(g, x, approximate, cached=None):
    """g * gelu'(x); `cached` is what the forward kept (recomputed when None)."""
    return activations.gelu_backward(g, x, approximate, cached)


@_gelu_backward.defvjp
def _gelu_backward_vjp(ctx, gg):
    """(d/dg, d/dx) of g * gelu'(x), in ember ops (differentiable again)."""
    g, x = ctx.inputs
    x2 = x * x
    if ctx.params["approximate"] == "none":
        pdf = (-0.5 * x2).exp() * _INV_SQRT_2PI
        first = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf()) + x * pdf
        second = pdf * (2 - x2)
    else:
        du = _K * (1 + 3 * _C * x2)                   # u' for u = k (x + c x^3)
        t = (_K * (x + _C * x2 * x)).tanh()
        sech2 = 1 - t * t
        first = 0.5 * (1 + t) + 0.5 * x * sech2 * du
        second = sech2 * (du - x * t * du * du + 3 * _K * _C * x2)
    return (gg * first if ctx.edges[0] is not None else None,
            gg * g * second if ctx.edges[1] is not None else None)


def gelu(input, approximate="none"):
    """F.gelu as one op."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input.dtype.category != dt.FLOATING:
        raise not_implemented("GeluKernelImpl", input.dtype)
    return dispatch(_gelu, (input,), {"approximate": approximate, "stash": []})
