"""torch's legacy names for sparse products: dsmm (a sparse or dense matrix times a dense
one, dense result: mm), hsmm (hybrid sparse result: hspmm) and saddmm (sparse
beta * input + alpha * sparse @ dense: sspaddmm)."""

__all__ = ["dsmm", "hsmm", "saddmm"]


def dsmm(input, mat2):
    from .ops.registry import PUBLIC
    return PUBLIC["mm"](input, mat2)


def hsmm(input, mat2):
    from .sparse.products import hspmm
    return hspmm(input, mat2)


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if out is not None:   # (a sparse result: nothing in ember writes one into a given tensor)
        raise NotImplementedError("ember does not support out= for saddmm")
    from .sparse.products import sspaddmm
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha)
