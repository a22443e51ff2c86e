"""nll_loss as one op (PyTorch's NllLossBackward0, NllLoss2DBackward0 for inputs of 3 dims and
more), and its input gradient as an op of its own (NllLossBackwardBackward0), whose VJP in
ember ops makes double backward work. cross_entropy over class indices is log_softmax then
this op, as in PyTorch. The array work is backends/losses.py's.
"""
import math

from .._dtype import type_name
from ..autograd.grad_mode import state
from ..backends import losses as kernels
from ..backends.special import quiet
from ._elementwise import not_implemented
from .registry import defop, dispatch


@defop("nll_loss", node="NllLossBackward0", save=(0, 1, 2), num_outputs=2)
@quiet
def _nll_loss(x, target, weight, reduction, ignore_index, stash):
    """(loss, total_weight), as PyTorch's nll_loss_forward; total_weight also goes to `stash`
    (a list) for the backward. (x is saved for its shape, as PyTorch saves it: changing it in
    place before backward is an error there too.)"""
    loss, total_weight = kernels.nll_loss(x, target, weight, reduction, ignore_index)
    stash.append(total_weight)
    return loss, total_weight


@_nll_loss.defvjp
def _nll_loss_vjp(ctx, g, g_total_weight):
    x, target, weight = ctx.inputs
    p = ctx.params
    op = _nll_loss_backward if x.dim() < 3 else _nll_loss2d_backward
    gx = dispatch(op, (g, x, target, weight),
                  {"reduction": p["reduction"], "ignore_index": p["ignore_index"],
                   "total_weight": p["stash"][0]})
    return gx, None, None


@defop("nll_loss_backward", node="NllLossBackwardBackward0", save=(1, 2, 3))
@quiet
def _nll_loss_backward(g, x, target, weight, reduction, ignore_index, total_weight):
    return kernels.nll_loss_backward(g, x.shape, x.dtype, target, weight, reduction,
                                     ignore_index, total_weight)


@_nll_loss_backward.defvjp
def _nll_loss_backward_vjp(ctx, gg):
    """The gradient is linear in g: its VJP in g is nll_loss of gg; it does not depend on x
    (zeros, as PyTorch's)."""
    _, _, target, weight = ctx.inputs   # (g, x, target, weight): g and x are not read
    p = ctx.params
    dg = dx = None
    if ctx.edges[0] is not None:
        op = _nll_loss if gg.dim() < 3 else _nll_loss2d
        dg = dispatch(op, (gg, target, weight), {"reduction": p["reduction"],
                                                 "ignore_index": p["ignore_index"],
                                                 "stash": []})[0]
    if ctx.edges[1] is not None:
        dx = gg.new_zeros(gg.shape)
    return dg, dx, None, None


_nll_loss2d = _nll_loss.renamed("NllLoss2DBackward0")
_nll_loss2d_backward = _nll_loss_backward.renamed("NllLoss2DBackwardBackward0")


def nll_loss(input, target, weight, reduction, ignore_index):
    """F.nll_loss past its target checks: PyTorch's nll_loss_nd (inputs of 3 dims or 5 and
    more go through the 4-d op as (N, C, 1, L), the 'none' result viewed back)."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not input.dtype.is_floating_point:
        raise not_implemented("nll_loss2d_forward_out_frame" if input.dim() == 4 else
                              "nll_loss_out_frame", input.dtype)
    c = input.shape[0 if input.dim() == 1 else 1]
    if weight is not None:
        if weight.numel() != c:
            shape = ", ".join(map(str, weight.shape))
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: [{shape}]")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                               f"{type_name(weight.dtype)}")
        if weight.requires_grad and state.enabled:
            raise RuntimeError("The function 'nll_loss_forward' is not differentiable with "
                               "respect to argument 'weight'. This input cannot have "
                               "requires_grad True.")
    params = {"reduction": reduction, "ignore_index": ignore_index, "stash": []}
    if input.dim() < 3:
        return dispatch(_nll_loss, (input, target, weight), params)[0]
    if input.dim() == 4:
        return dispatch(_nll_loss2d, (input, target, weight), params)[0]
    n = input.shape[0]
    rest = math.prod(input.shape[2:])
    out = dispatch(_nll_loss2d, (input.reshape(n, c, 1, rest), target.reshape(n, 1, rest),
                                 weight), params)[0]
    return out.view((n,) + tuple(input.shape[2:])) if reduction == "none" else out
