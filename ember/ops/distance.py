"""ember.cdist and ember.pdist, composed of ember ops (gradients for free; the norm's VJP
gives zero where a distance is zero, as PyTorch's)."""
import numpy as np

from .. import _dtype as dt
from .._creation import ones_like, tensor, zeros
from .._scalars import type_name
from .._signatures.signature import KINDS
from ._elementwise import not_implemented
from ._promote import broadcast_error
from .linalg_norms import vector_norm
from .registry import check_tensor, export, name_node
from .shape import cat

_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")


def _euclidean_mm(x1, x2):
    """|a-b|^2 = |a|^2 + |b|^2 - 2ab as one matmul; faster for many rows, less exact."""
    n1 = (x1 * x1).sum(-1, keepdim=True)
    n2 = (x2 * x2).sum(-1, keepdim=True)
    a = cat([x1 * -2, n1, ones_like(n1)], -1)
    b = cat([x2, ones_like(n2), n2], -1)
    return (a @ b.transpose(-1, -2)).clamp_min(0).sqrt()


@export(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    # PyTorch's order: its Python function resolves compute_mode, then the builtin's parser
    # checks the arguments' types, then the kernel their shapes and dtypes
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    check_tensor("cdist", x1, "x1", 1)
    check_tensor("cdist", x2, "x2", 2)
    if not KINDS["float"][0](p):
        raise TypeError(f"cdist(): argument 'p' (position 3) must be float, not "
                        f"{type_name(p)}")
    p = float(p)
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{dt.type_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    try:
        shape = np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])) + (r1, r2)
    except ValueError:
        raise broadcast_error(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])) from None
    if not np.prod(shape) or not x1.shape[-1]:
        # (PyTorch's kernel returns before it looks at x2's dtype: an empty result, or zeros
        # for no columns, in x1's)
        return zeros(shape, dtype=x1.dtype)
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {dt.type_name(x1.dtype)} but found "
                           f"{dt.type_name(x2.dtype)}")
    if p == 2 and x1.shape[-1] and (compute_mode == _MODES[1] or (
            compute_mode == _MODES[0] and (r1 > 25 or r2 > 25))):
        return name_node(_euclidean_mm(x1, x2), "CdistBackward0")
    if x1.dtype.itemsize == 2:   # (the direct kernel has no float16/bfloat16 loop)
        raise not_implemented("cdist", x1.dtype)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return name_node(vector_norm(diff, p, dim=-1), "CdistBackward0")


@export(method=False)
def pdist(input, p=2):
    check_tensor("pdist", input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = (tensor(a, device=input.device) for a in np.triu_indices(n, 1))
    diff = input.index_select(0, i) - input.index_select(0, j)
    return name_node(vector_norm(diff, p, dim=-1), "PdistBackward0")
