"""Core view ops: view, reshape, ravel, expand (and sum_to_size, its reverse), permute,
transpose, squeeze, unsqueeze, flatten, movedim (views of a part are in indexing_views.py).

Views share memory and the version counter with their base (`defop(view=True)`), as NumPy
views share memory.
"""
import math
import operator
import warnings

import numpy as np

from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Tensor, unbroadcast
from ..backends import array_module
from ._dims import distinct_dims, size_list, wrap_dim
from .conversion import view_as_dtype
from .registry import METHODS, check_tensor, defop, dispatch, export


def shape_arg(shape, fname="view", arg="size"):
    """view(2, 3), view((2, 3)) and view([2, 3]) all mean (2, 3); anything but ints is
    PyTorch's TypeError, naming `fname`'s argument `arg`."""
    packed = len(shape) == 1 and isinstance(shape[0], (tuple, list))
    if packed:
        shape = shape[0]
    try:
        return tuple(s if type(s) is int else operator.index(s) for s in shape)
    except TypeError:
        raise _not_ints(shape, packed, fname, arg) from None


def _not_ints(shape, packed, fname, arg):
    i, bad = next((i, s) for i, s in enumerate(shape)
                  if type(s) is not int and not hasattr(s, "__index__"))
    # (PyTorch's parser reads the sizes as unpacked ints once the first one is an int)
    if i > 0:
        return TypeError(f"{fname}(): argument '{arg}' failed to unpack the object at pos "
                         f"{i + 1} with error \"type must be tuple of ints,but got "
                         f"{type_name(bad)}\"")
    if packed:
        return TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, "
                         f"but found element of type {type_name(bad)} at pos 0")
    if len(shape) == 1:
        return TypeError(f"{fname}(): argument '{arg}' (position 1) must be tuple of ints, "
                         f"not {type_name(bad)}")
    return TypeError(f"{fname}() takes 1 positional argument but {len(shape)} were given")


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
    try:
        if isinstance(a, np.ndarray):
            return a.reshape(shape, copy=False)
        # NOTE: copy=False: CuPy's plain reshape copies silently when strides forbid a view
        return a.view().reshape(shape, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) "
            "instead.") from None


@_view.defvjp
def _view_vjp(ctx, g):
    return g.reshape(ctx.in_meta[0][0])


@export(function=False)
def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        return view_as_dtype(self, shape[0])
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list)) and \
            not hasattr(shape[0], "__index__"):
        raise TypeError(f"view() received an invalid combination of arguments - got "
                        f"({type_name(shape[0])}), but expected one of:\n * (torch.dtype dtype)\n"
                        " * (tuple of ints size)")
    shape = infer_shape(shape_arg(shape), self._data.size)
    return dispatch(_view, (self,), {"shape": shape})


@export
def reshape(input, *shape):
    if input.__class__ is not Tensor:
        check_tensor("reshape", input)
    shape = infer_shape(shape_arg(shape, "reshape", "shape"), input._data.size)
    if input._data.flags.c_contiguous or _reshape_is_view(input._data, shape):
        return dispatch(_view, (input,), {"shape": shape})
    return dispatch(_view.renamed("UnsafeViewBackward0"), (clone(input),), {"shape": shape})


def _reshape_is_view(a, shape):
    try:
        a.reshape(shape, copy=False)   # the method: NumPy's and CuPy's both take copy=False
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
    if input.__class__ is not Tensor:
        check_tensor("clone", input)
    return dispatch(_clone, (input,))


@export(function=False)
def contiguous(self, memory_format=None):
    if self._data.flags.c_contiguous:
        return self
    return clone(self)


@export
def ravel(input):
    check_tensor("ravel", input)
    # NOTE: PyTorch's ravel is contiguous().view(-1): a view when contiguous, else a copy
    # (CloneBackward0 then ViewBackward0), never reshape's UnsafeViewBackward0.
    return view(contiguous(input), -1)


@defop("expand", save=(), view=True)
def _expand(a, shape):
    return array_module(a).broadcast_to(a, shape)


@_expand.defvjp
def _expand_vjp(ctx, g):
    return unbroadcast(g, ctx.in_meta[0][0])


@export(function=False)
def expand(self, *sizes):
    sizes = shape_arg(sizes, "expand")
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand(torch.{dt.type_name(self.dtype)}Tensor{{[{', '.join(map(str, shape))}]}}, "
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
            elif s < 0:   # (a size-1 dim: PyTorch's count of the result's elements refuses it)
                raise RuntimeError("numel: integer multiplication overflow")
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


def sum_to_size(self, *size):
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = shape_arg(size)
    shape = self._data.shape
    extra = len(shape) - len(size)
    if extra < 0 or any(s != t and s != 1 for s, t in zip(size, shape[extra:])):
        raise RuntimeError(f"size {{{size_list(size)}}} is not expandable to size "
                           f"{{{size_list(shape)}}}.")
    if size == shape:
        return self
    return unbroadcast(self, size)


METHODS["sum_to_size"] = sum_to_size


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
    if input.__class__ is not Tensor:
        check_tensor("permute", input)
    dims = shape_arg(dims, "permute", "dims")
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input "
                           f"does not match the length of the desired ordering of dimensions "
                           f"i.e. input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = []
    for d in dims:   # (PyTorch wraps and compares them one by one: a repeat before a range)
        d = wrap_dim(d, n)
        if d in wrapped:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        wrapped.append(d)
    return dispatch(_permute, (input,), {"dims": tuple(wrapped)})


@defop("transpose", save=(), view=True)
def _transpose(a, dim0, dim1):
    if a.ndim == 0:   # PyTorch takes dims 0 / -1 of a 0-d tensor; NumPy has no axis there
        return a.view()
    return a.swapaxes(dim0, dim1)   # (the method: NumPy's function adds a wrapper's call)


@_transpose.defvjp
def _transpose_vjp(ctx, g):
    return g.transpose(ctx.params["dim0"], ctx.params["dim1"])


@export(aliases=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    n = input._data.ndim
    return dispatch(_transpose, (input,), {"dim0": wrap_dim(dim0, n), "dim1": wrap_dim(dim1, n)})


@export
def t(input):
    if input.__class__ is not Tensor:
        check_tensor("t", input)
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    if n < 2:
        return input
    return dispatch(_transpose.renamed("TBackward0"), (input,), {"dim0": 0, "dim1": 1})


def _T(self):
    n = self._data.ndim
    return self if n < 2 else permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self, what="mT"):
    if self._data.ndim == 0:   # PyTorch 2.13 still accepts it (deprecated): the identity
        warnings.warn(f"Tensor.{what} is deprecated on 0-D tensors. This function is the "
                      "identity in these cases.", UserWarning, stacklevel=3)
        return self
    if self._data.ndim < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of "
                           f"matrices. Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


@export
def adjoint(input):
    check_tensor("adjoint", input)
    if input._data.ndim == 0:   # PyTorch 2.13 still accepts it (deprecated): x.conj()
        return input.conj()
    return _mT(input, "adjoint()").conj()


def _H(self):
    return _T(self).conj() if self.is_complex() else _T(self)


def _mH(self):
    return _mT(self, "mH").conj() if self.is_complex() else _mT(self, "mH")


def _alias_ops(names, forward, vjp):
    """Several registry entries sharing one view forward and VJP, differing only in the
    grad_fn name PyTorch shows (SqueezeBackward0/1/2 for its three overloads)."""
    ops = []
    for name, node in names:
        op = defop(name, node=node, save=(), view=True)(forward)
        op.defvjp(vjp)
        ops.append(op)
    return ops


def _squeeze_forward(a, dims):
    return array_module(a).squeeze(a, axis=dims)


def _unsqueeze_forward(a, dim):
    return array_module(a).expand_dims(a, dim)


def _restore_shape_vjp(ctx, g):
    return g.reshape(ctx.in_meta[0][0])


_squeeze_all, _squeeze_dim, _squeeze_dims = _alias_ops(
    (("squeeze", "SqueezeBackward0"), ("squeeze_dim", "SqueezeBackward1"),
     ("squeeze_dims", "SqueezeBackward2")), _squeeze_forward, _restore_shape_vjp)
(_unsqueeze,) = _alias_ops((("unsqueeze", "UnsqueezeBackward0"),), _unsqueeze_forward,
                           _restore_shape_vjp)


@export
def unsqueeze(input, dim):
    return dispatch(_unsqueeze, (input,), {"dim": wrap_dim(dim, input._data.ndim + 1)})


@export
def squeeze(input, dim=None):
    if input.__class__ is not Tensor:
        check_tensor("squeeze", input)
    shape = input._data.shape
    if dim is None:
        op, ds = _squeeze_all, range(len(shape))
    elif isinstance(dim, (tuple, list)):
        op, ds = _squeeze_dims, distinct_dims(dim, len(shape))
    else:
        op, ds = _squeeze_dim, (wrap_dim(dim, len(shape)),)
    dims = tuple(sorted({d for d in ds if len(shape) and shape[d] == 1}))
    return dispatch(op, (input,), {"dims": dims})


@export
def flatten(input, start_dim=0, end_dim=-1):
    if input.__class__ is not Tensor:
        check_tensor("flatten", input)
    shape = input._data.shape
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if not shape:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    new = shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:]
    return reshape(input, new)


@export(method=False)
def unflatten(input, dim, sizes):
    if not isinstance(sizes, (list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in sizes):
        raise TypeError(f"unflatten(): argument 'sizes' (position 2) must be tuple of ints, "
                        f"not {type_name(sizes)}")
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))   # (PyTorch wraps the dim first)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = tuple(sizes)
    if -1 in sizes:
        sizes = infer_shape(sizes, shape[d])
    elif math.prod(sizes) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({shape[d]}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def _unflatten_method(self, dim, sizes):
    """Tensor.unflatten, a Python method in PyTorch: it tests `sizes` before anything else."""
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    return unflatten(self, dim, sizes)


_unflatten_method.__name__ = "unflatten"
METHODS["unflatten"] = _unflatten_method


def _install_properties():
    Tensor.T = property(_T)
    Tensor.mT = property(_mT)
    Tensor.H = property(_H)
    Tensor.mH = property(_mH)


_install_properties()


# ---------------------------------------------------------------------- movedim
@export(aliases=("moveaxis",))
def movedim(input, source, destination):
    n = input._data.ndim
    src = list(source) if isinstance(source, (tuple, list)) else [source]
    dst = list(destination) if isinstance(destination, (tuple, list)) else [destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} "
                           "dims)")
    src = [wrap_dim(d, n) for d in src]
    dst = [wrap_dim(d, n) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    order = [d for d in range(n) if d not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(order)
    perm = tuple(p if p is not None else next(rest) for p in perm)
    return dispatch(_permute, (input,), {"dims": perm})
