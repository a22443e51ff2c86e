"""Core view ops: view, reshape, expand, permute, transpose, squeeze, unsqueeze, flatten.

Views share memory and the version counter with their base (`defop(view=True)`), as NumPy
views share memory.
"""
import math

import numpy as np

from .._tensor import Tensor, unbroadcast
from ..backends import array_module
from ._dims import wrap_dim
from .registry import defop, dispatch, export


def shape_arg(shape):
    """view(2, 3), view((2, 3)) and view([2, 3]) all mean (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(s if type(s) is int else s.__index__() for s in shape)


def infer_shape(shape, numel):
    """Resolve a single -1 and check the element count, with PyTorch's messages."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input "
                               f"of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                           f"size {numel}")
    return shape


@defop("view", save=(), view=True)
def _view(a, shape):
    if isinstance(a, np.ndarray):
        try:
            return np.reshape(a, shape, copy=False)
        except ValueError:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) "
                "instead.") from None
    return a.view().reshape(shape)


@_view.defvjp
def _view_vjp(ctx, g):
    return g.reshape(ctx.in_meta[0][0])


@export(function=False)
def view(self, *shape):
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)) and \
            not hasattr(shape[0], "__index__"):
        from .conversion import view_as_dtype
        return view_as_dtype(self, shape[0])
    shape = infer_shape(shape_arg(shape), self._data.size)
    return dispatch(_view, (self,), {"shape": shape})


@export
def reshape(input, *shape):
    shape = infer_shape(shape_arg(shape), input._data.size)
    if input._data.flags.c_contiguous or _reshape_is_view(input._data, shape):
        return dispatch(_view, (input,), {"shape": shape})
    return dispatch(_view, (clone(input),), {"shape": shape})


def _reshape_is_view(a, shape):
    try:
        np.reshape(a, shape, copy=False)
        return True
    except (ValueError, TypeError):
        return False


@export
def view_as(input, other):
    return view(input, other._data.shape)


@export
def reshape_as(input, other):
    return reshape(input, other._data.shape)


@defop("clone", save=())
def _clone(a):
    return a.copy()


@_clone.defvjp
def _clone_vjp(ctx, g):
    return g


@export
def clone(input, *, memory_format=None):
    return dispatch(_clone, (input,))


@export(function=False)
def contiguous(self, memory_format=None):
    if self._data.flags.c_contiguous:
        return self
    return clone(self)


@defop("expand", save=(), view=True)
def _expand(a, shape):
    return array_module(a).broadcast_to(a, shape)


@_expand.defvjp
def _expand_vjp(ctx, g):
    return unbroadcast(g, ctx.in_meta[0][0])


@export(function=False)
def expand(self, *sizes):
    sizes = shape_arg(sizes)
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.{type(self).__name__}{{[{', '.join(map(str, shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = list(sizes)
    for i, s in enumerate(sizes):
        if i >= lead:
            own = shape[i - lead]
            if s == -1:
                target[i] = own
            elif own != 1 and own != s:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size "
                    f"({own}) at non-singleton dimension {i}.  Target sizes: "
                    f"[{', '.join(map(str, sizes))}].  Tensor sizes: "
                    f"[{', '.join(map(str, shape))}]")
        elif s < 0:
            raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                               "leading, non-existing dimension 0")
    target = tuple(target)
    if target == shape:
        return dispatch(_view, (self,), {"shape": shape})
    return dispatch(_expand, (self,), {"shape": target})


@export(function=False)
def expand_as(self, other):
    return expand(self, other._data.shape)


@export
def broadcast_to(input, size):
    return expand(input, size)


@defop("permute", save=(), view=True)
def _permute(a, dims):
    return a.transpose(dims)


@_permute.defvjp
def _permute_vjp(ctx, g):
    dims = ctx.params["dims"]
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return g.permute(inverse)


@export
def permute(input, *dims):
    dims = shape_arg(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(_permute, (input,), {"dims": dims})


@defop("transpose", save=(), view=True)
def _transpose(a, dim0, dim1):
    return array_module(a).swapaxes(a, dim0, dim1)


@_transpose.defvjp
def _transpose_vjp(ctx, g):
    return g.transpose(ctx.params["dim0"], ctx.params["dim1"])


@export(aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    n = input._data.ndim
    return dispatch(_transpose, (input,), {"dim0": wrap_dim(dim0, n), "dim1": wrap_dim(dim1, n)})


@export
def t(input):
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return input if n < 2 else transpose(input, 0, 1)


def _T(self):
    n = self._data.ndim
    return self if n < 2 else permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


@export
def adjoint(input):
    return _mT(input).conj()


def _H(self):
    return _T(self).conj() if self.is_complex() else _T(self)


def _mH(self):
    return _mT(self).conj() if self.is_complex() else _mT(self)


@export
def unsqueeze(input, dim):
    n = input._data.ndim
    dim = wrap_dim(dim, n + 1)
    shape = input._data.shape
    return dispatch(_view, (input,), {"shape": shape[:dim] + (1,) + shape[dim:]})


@export
def squeeze(input, dim=None):
    shape = input._data.shape
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        ds = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {wrap_dim(d, len(shape)) for d in ds}
        dims = {d for d in dims if len(shape) and shape[d] == 1}
    new = tuple(s for i, s in enumerate(shape) if i not in dims)
    return dispatch(_view, (input,), {"shape": new})


@export
def flatten(input, start_dim=0, end_dim=-1):
    shape = input._data.shape
    if not shape:
        return reshape(input, (1,))
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    return reshape(input, new)


@export
def unflatten(input, dim, sizes):
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    sizes = tuple(sizes)
    if -1 in sizes:
        sizes = infer_shape(sizes, shape[d])
    elif math.prod(sizes) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[d]}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def _install_properties():
    Tensor.T = property(_T)
    Tensor.mT = property(_mT)
    Tensor.H = property(_H)
    Tensor.mH = property(_mH)


_install_properties()
