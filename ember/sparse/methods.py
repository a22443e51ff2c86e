"""The Tensor methods and operators of SparseCooTensor that route to ops.py.

They override the dense methods (bound onto Tensor from the op registry); Python calls a
subclass's reflected operator first, so `dense + sparse` and `dense @ sparse` land here too.
"""
from .._inplace import bump_version
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad, state
from . import ops, products, shape
from ._no_elements import unsupported
from .coo import SparseCooTensor, make_coo, zeros_coo

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
    if self.dim() == 2 and isinstance(other, Tensor) and other.dim() == 1 and \
            not other.is_sparse:   # (matrix @ vector)
        return _matmul(self, other.unsqueeze(1)).squeeze(1)
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


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return Tensor.type(self).replace("torch.", "torch.sparse.", 1)
    if isinstance(dtype, str):
        raise NotImplementedError("ember does not support type(str) on sparse tensors: pass "
                                  "a dtype")
    return self.to(dtype)


def _data(self):
    """A detached sparse tensor on the same indices and values (shares the version)."""
    t = make_coo(self._sparse_indices, self._sparse_values.detach(), self.shape,
                 self._coalesced)
    t._vc = self._vc
    return t


def _set_data(self, value):
    if not (isinstance(value, Tensor) and value.is_sparse):
        raise NotImplementedError("ember does not support assigning a dense .data to a "
                                  "sparse tensor")
    _rebind(self, value)


def _rebind(self, value):
    """Make `self` hold `value`'s entries (the in-place ops and .data's setter)."""
    self._data = value._data
    self._sparse_indices = value._sparse_indices
    self._sparse_values = value._sparse_values.detach()
    self._coalesced = value._coalesced
    self.dtype = value.dtype
    bump_version(self)


def _inplace(name, fn):
    def method(self, *args, **kwargs):
        if state.enabled and self._requires_grad:
            if self.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            raise NotImplementedError(f"ember does not support {name} on a sparse tensor "
                                      "that is part of the autograd graph")
        with no_grad():
            result = fn(self, *args, **kwargs)
        if result.dtype is not self.dtype:
            result = result.to(self.dtype)
        _rebind(self, result)
        return self
    method.__name__ = name
    return method


def _zero(self):
    return zeros_coo(self.shape, self.dtype, self._device, self.sparse_dim())


def _copy(self, src, non_blocking=False):
    if not (isinstance(src, Tensor) and src.is_sparse):
        raise NotImplementedError("ember does not support copying a dense tensor into a "
                                  "sparse one")
    if tuple(src.shape) != tuple(self.shape):
        raise RuntimeError(f"copy_(): sizes {list(src.shape)} and {list(self.shape)} differ")
    return src.to(self.dtype)


def _new_empty_sparse(self, size, *, dtype=None, device=None, requires_grad=False, **kwargs):
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else \
        tuple(size)
    out = zeros_coo(size, dtype or self.dtype, device or self._device)
    return out.requires_grad_(True) if requires_grad else out


def _new_filled(self, *args, **kwargs):
    raise unsupported("aten::fill_.Scalar", self._data.backend)


SPARSE_METHODS = {
    "type": _type, "data": property(_data, _set_data),
    "new_zeros": _new_empty_sparse, "new_empty": _new_empty_sparse,
    "new_ones": _new_filled, "new_full": _new_filled,
    "zero_": _inplace("zero_", _zero), "copy_": _inplace("copy_", _copy),
    "add_": _inplace("add_", lambda self, other, alpha=1: ops.add(self, other, alpha=alpha)),
    "sub_": _inplace("sub_", lambda self, other, alpha=1: ops.add(self, other, alpha=-alpha)),
    "mul_": _inplace("mul_", ops.mul), "div_": _inplace("div_", ops.div),
    "neg_": _inplace("neg_", ops.neg),
    "add": _add, "__add__": _add, "__radd__": _radd,
    "sub": _sub, "__sub__": _sub, "__rsub__": _rsub,
    "mul": _mul, "__mul__": _mul, "__rmul__": _mul,
    "div": ops.div, "__truediv__": ops.div,
    "neg": ops.neg, "__neg__": ops.neg,
    "mm": _matmul, "matmul": _matmul, "mv": _matmul, "__matmul__": _matmul, "__rmatmul__": _rmatmul,
    "smm": products.smm, "sspaddmm": products.sspaddmm, "hspmm": products.hspmm,
    "select": shape.select, "index_select": shape.index_select, "__getitem__": shape.getitem,
    "unsqueeze": shape.unsqueeze, "permute": lambda self, *dims: shape.permute(
        self, dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims),
    "sum": _sum, "transpose": _transpose, "t": _t, "sparse_mask": _sparse_mask,
}


# Methods every Tensor has in PyTorch though only sparse ones compute them (a dense self
# gets PyTorch's "can only be called on sparse tensors" error from the function itself).
SPARSE_ONLY_TENSOR_METHODS = {"smm": products.smm, "sspaddmm": products.sspaddmm}


def install_sparse_methods():
    for name, fn in SPARSE_METHODS.items():
        setattr(SparseCooTensor, name, fn)
    for name, fn in SPARSE_ONLY_TENSOR_METHODS.items():
        if name not in Tensor.__dict__:
            setattr(Tensor, name, fn)
