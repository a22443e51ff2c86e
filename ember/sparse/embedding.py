"""embedding(sparse=True): the row gather whose weight gradient is a sparse COO tensor, one
row of the output gradient per looked-up index (uncoalesced, as PyTorch's)."""
from .. import _dtype as dt
from ..backends import array_module
from ..ops.registry import defop, dispatch
from ._graph import for_input
from .coo import make_coo

__all__ = ["embedding_sparse"]


@defop("embedding_sparse", node="EmbeddingBackward0", save=(1,))
def _embedding_sparse(weight, indices, padding_idx=-1, scale_grad_by_freq=False):
    return array_module(weight).take(weight, indices, axis=0)


@_embedding_sparse.defvjp
def _embedding_sparse_vjp(ctx, g):
    if ctx.params["scale_grad_by_freq"]:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    rows, dim = ctx.in_meta[0][0]
    flat = ctx.inputs[1].reshape(-1).to(dt.int64)
    g2 = g.reshape(-1, dim)
    padding_idx = ctx.params["padding_idx"]
    if padding_idx >= 0:   # (PyTorch leaves the padding row's entries out altogether)
        keep = (flat != padding_idx).nonzero().reshape(-1)
        flat, g2 = flat.index_select(0, keep), g2.index_select(0, keep)
    grad = make_coo(flat.unsqueeze(0), g2, (rows, dim), False, values_grad=True)
    return for_input(ctx, 0, grad), None


def embedding_sparse(input, weight, padding_idx, scale_grad_by_freq):
    params = {"padding_idx": padding_idx, "scale_grad_by_freq": scale_grad_by_freq}
    return dispatch(_embedding_sparse, (weight, input), params, weight.dtype,
                    (weight._data, input._data))
