"""torch's legacy names for sparse products: dsmm (a sparse or dense matrix times a dense
one, dense result: mm), hsmm (hybrid sparse result: hspmm) and saddmm (sparse
beta * input + alpha * sparse @ dense: sspaddmm)."""

from .ops.registry import PUBLIC
from .sparse.products import hspmm, sspaddmm

__all__ = ["dsmm", "hsmm", "saddmm"]


def dsmm(input, mat2):
    return PUBLIC["mm"](input, mat2)


def hsmm(input, mat2):
    return hspmm(input, mat2)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if out is not None:   # (a sparse result: nothing in ember writes one into a given tensor)
        raise NotImplementedError("ember does not support out= for saddmm")
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)
