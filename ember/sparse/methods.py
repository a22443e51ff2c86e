"""The Tensor methods and operators of SparseCooTensor that route to ops.py.

They override the dense methods (bound onto Tensor from the op registry); Python calls a
subclass's reflected operator first, so `dense + sparse` and `dense @ sparse` land here too.
"""
from .._tensor import Tensor
from . import ops, products
from .coo import SparseCooTensor

__all__ = ["install_sparse_methods"]


def _add(self, other, *, alpha=1):
    return ops.add(self, other, alpha=alpha)


def _radd(self, other):
    if isinstance(other, Tensor):
        return ops.add(other, self)
    return ops.add(self, other)   # (a Python number: PyTorch's error)


def _sub(self, other, *, alpha=1):
    return ops.add(self, other, alpha=-alpha)


def _rsub(self, other):
    if isinstance(other, Tensor):
        return ops.add(other, self, alpha=-1)
    return ops.add(self, other)


def _mul(self, other):
    return ops.mul(self, other)


def _matmul(self, other):
    if self.dim() != 2 or other.dim() != 2:
        raise NotImplementedError("ember does not support matmul of sparse tensors other "
                                  "than 2-D @ 2-D")
    return products.mm_any(self, other, products._mm_dense_grad)


def _rmatmul(self, other):
    return _matmul_pair(other, self)


def _matmul_pair(a, b):
    if a.dim() != 2 or b.dim() != 2:
        raise NotImplementedError("ember does not support matmul of sparse tensors other "
                                  "than 2-D @ 2-D")
    return products.mm_any(a, b, products._mm_dense_grad)


def _sum(self, dim=None, keepdim=False, dtype=None):
    if keepdim:
        raise NotImplementedError("ember does not support keepdim=True for sums of sparse "
                                  "tensors")
    return ops.sum(self, dim, dtype)


def _transpose(self, dim0, dim1):
    return ops.transpose(self, dim0, dim1)


def _t(self):
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                           f"but got {self.sparse_dim()} sparse and {self.dense_dim()} dense "
                           "dimensions")
    return self if self.dim() < 2 else ops.transpose(self, 0, 1)


def _sparse_mask(self, mask):
    return ops.sparse_mask(self.to_dense(), mask)


SPARSE_METHODS = {
    "add": _add, "__add__": _add, "__radd__": _radd,
    "sub": _sub, "__sub__": _sub, "__rsub__": _rsub,
    "mul": _mul, "__mul__": _mul, "__rmul__": _mul,
    "div": ops.div, "__truediv__": ops.div,
    "neg": ops.neg, "__neg__": ops.neg,
    "mm": _matmul, "matmul": _matmul, "__matmul__": _matmul, "__rmatmul__": _rmatmul,
    "sum": _sum, "transpose": _transpose, "t": _t, "sparse_mask": _sparse_mask,
}


def install_sparse_methods():
    for name, fn in SPARSE_METHODS.items():
        setattr(SparseCooTensor, name, fn)
