"""softmax and log_softmax as ops (PyTorch's SoftmaxBackward0 / LogSoftmaxBackward0), and
their input gradients as ops of their own (SoftmaxBackwardDataBackward0 / ...), whose VJPs in
ember ops make double backward work. The array work is backends/softmax.py's.

Each op saves its output, not its input: both gradients are functions of the output alone.
"""
from .._dtype import FLOATING
from .._tensor import Tensor
from ..backends import softmax as kernels
from ..backends.special import quiet
from ._dims import wrap_dim
from ._elementwise import not_implemented
from .registry import defop, dispatch


@defop("softmax", node="SoftmaxBackward0", save=(), save_output=True)
@quiet
def _softmax(x, dim):
    return kernels.softmax(x, dim)


@defop("log_softmax", node="LogSoftmaxBackward0", save=(), save_output=True)
@quiet
def _log_softmax(x, dim):
    return kernels.softmax(x, dim, log=True)


@_softmax.defvjp
def _softmax_vjp(ctx, g):
    return dispatch(_softmax_backward_data, (g, ctx.output), ctx.params)


@_log_softmax.defvjp
def _log_softmax_vjp(ctx, g):
    return dispatch(_log_softmax_backward_data, (g, ctx.output), ctx.params)


@defop("softmax_backward_data", node="SoftmaxBackwardDataBackward0", save=(0, 1))
@quiet
def _softmax_backward_data(g, y, dim):
    """y (g - sum(g y))"""
    return kernels.softmax_backward(g, y, dim)


@defop("log_softmax_backward_data", node="LogSoftmaxBackwardDataBackward0", save=(0, 1))
@quiet
def _log_softmax_backward_data(g, y, dim):
    """g - exp(y) sum(g)"""
    return kernels.softmax_backward(g, y, dim, log=True)


@_softmax_backward_data.defvjp
def _softmax_backward_data_vjp(ctx, gg):
    """The map g -> y (g - sum(g y)) is symmetric in g, so its VJP in g is itself; in y:
    gg (g - sum(g y)) - g sum(gg y) (PyTorch's softmax_double_backward)."""
    g, y = ctx.inputs
    dim = ctx.params["dim"]
    dg = dy = None
    if ctx.edges[0] is not None:
        dg = dispatch(_softmax_backward_data, (gg, y), ctx.params)
    if ctx.edges[1] is not None:
        dy = gg * (g - (g * y).sum(dim, keepdim=True)) - g * (gg * y).sum(dim, keepdim=True)
    return dg, dy


@_log_softmax_backward_data.defvjp
def _log_softmax_backward_data_vjp(ctx, gg):
    """d/dg of g - exp(y) sum(g): gg - sum(gg exp(y)); d/dy: -gg exp(y) sum(g)."""
    g, y = ctx.inputs
    dim = ctx.params["dim"]
    p = y.exp()
    dg = dy = None
    if ctx.edges[0] is not None:
        dg = gg - (gg * p).sum(dim, keepdim=True)
    if ctx.edges[1] is not None:
        dy = -gg * p * g.sum(dim, keepdim=True)
    return dg, dy


def _checked(name, input, dim):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dim = wrap_dim(dim, input.dim())
    if input.dtype.category != FLOATING and input.numel():   # (torch runs no kernel on nothing)
        last = input.dim() == 0 or dim == input.dim() - 1
        raise not_implemented(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl",
                              input.dtype)
    return dim


def softmax(input, dim):
    """softmax over `dim` as one op (float dtypes; float16/bfloat16 computed in float32)."""
    dim = _checked("softmax", input, dim)
    if not input.numel() and input.dtype.category != FLOATING:   # no kernel for it, nothing to do
        return input.clone()
    return dispatch(_softmax, (input,), {"dim": dim})


def log_softmax(input, dim):
    """log_softmax over `dim` as one op."""
    dim = _checked("log_softmax", input, dim)
    if not input.numel() and input.dtype.category != FLOATING:   # no kernel for it, nothing to do
        return input.clone()
    return dispatch(_log_softmax, (input,), {"dim": dim})
