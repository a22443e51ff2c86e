"""How sparse ops join the autograd graph.

A sparse op's operands are sparse tensors, not arrays, so it cannot go through
`registry.dispatch` (which wraps one array as the result). Each sparse op still is one registry
entry (`defop`, PyTorch's node name, a VJP written in ember ops); its public function computes
the result itself and then calls `record`, which makes the same graph node dispatch makes.
"""
from .._dtype import FLOATING
from .._tensor import Tensor
from ..autograd.grad_mode import state
from ..ops.registry import _record

__all__ = ["record", "needs_grad", "values_at", "for_input"]

_EMPTY = {}


def needs_grad(*inputs):
    return state.enabled and any(isinstance(x, Tensor) and x._requires_grad for x in inputs)


def record(op, inputs, result, params=_EMPTY):
    """Attach `op`'s node to `result` when an input requires grad (as dispatch would)."""
    if result.dtype.category >= FLOATING and needs_grad(*inputs):
        _record(op, inputs, params, (result,), result._device)
    return result


# Dense ops whose VJPs take a sparse gradient as PyTorch's do (transposes of it).
_TAKE_SPARSE = frozenset(("TBackward0", "TransposeBackward0", "TransposeBackward1",
                          "PermuteBackward0"))


def for_input(ctx, i, grad):
    """A sparse gradient bound for a node's dense input `i`: kept sparse where it lands in a
    leaf's .grad (PyTorch's layout), reaches another sparse op or a transpose, else dense,
    because a dense op's VJP reads arrays (PyTorch's own fail there, e.g. slicing's)."""
    edge = ctx.edges[i]
    if edge is None or grad is None or grad.layout is Tensor.layout:
        return grad
    node = edge[0]
    forward = getattr(getattr(node, "op", None), "forward", None)
    if type(node).__name__ in _TAKE_SPARSE or type(node).__name__ == "AccumulateGrad" or \
            getattr(forward, "__module__", "").startswith("ember.sparse"):
        return grad
    return grad.to_dense()


def values_at(grad, indices):
    """The entries of `grad` (dense or sparse) at the coordinates `indices` (sparse_dim x nnz):
    a (nnz, *dense_shape) tensor, differentiable in ember ops. A sparse gradient built on these
    very indices gives its values without a detour through a dense array."""
    if grad.layout is not Tensor.layout:
        if grad._sparse_indices is indices:
            return grad._sparse_values
        grad = grad.to_dense()
    return grad[tuple(indices)]
