"""Distances and similarities: pairwise_distance, cosine_similarity, pdist, cdist."""
from ... import _dtype as dt
from ..._scalars import as_double
from ...ops.distance import cdist as _ops_cdist, pdist as _ops_pdist
from ...ops.grids import broadcast_tensors
from ...ops.linalg_norms import vector_norm
from ...ops.registry import name_node

__all__ = ["pairwise_distance", "cosine_similarity", "pdist"]


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim (eps keeps the norm's gradient finite)."""
    nd = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if nd == 0:
        out = vector_norm(diff.reshape(1), p, dim=0, keepdim=keepdim)
    else:
        out = vector_norm(diff, p, dim=-1, keepdim=keepdim)
    return name_node(out, "NormBackward1")   # (PyTorch's composite ends in norm(p, dim))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Sum of the products of the unit vectors; each norm is floored at eps."""
    common = dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{dt.type_name(common)}")
    eps = as_double(eps)
    if eps < 0:
        raise RuntimeError(f"eps must be non-negative, got: {eps:g}")
    # NOTE: only integral operands are cast (the norm refuses them); a float16 operand keeps
    # its dtype for its own norm, as in PyTorch. PyTorch broadcasts first, so a size-1 `dim`
    # counts once per broadcast copy.
    x1, x2 = (x if x.dtype.is_floating_point else x.to(common) for x in (x1, x2))
    x1, x2 = broadcast_tensors(x1, x2)
    n1 = vector_norm(x1, 2, dim=dim, keepdim=True).clamp_min(eps)
    n2 = vector_norm(x2, 2, dim=dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input, p=2):
    return _ops_pdist(input, p)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    return _ops_cdist(x1, x2, p, compute_mode)
