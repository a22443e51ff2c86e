"""Tensor methods about a tensor's memory and geometry: set_, as_strided_, as_strided_scatter,
the deprecated non-inplace resize/resize_as, dim_order, the legacy `new`, module_load, chalf,
and apply_/map_/map2_ (a Python callable over the elements)."""
import functools
import operator
import warnings

import numpy as np

from .. import _dtype as dt
from .._constants import channels_last, channels_last_3d, contiguous_format, memory_format
from .._creation import _C_NAMES, legacy_new
from .._inplace import bump_version
from .._signatures.signature import describe_call
from .._tensor import Tensor, _contiguous_strides
from ..autograd.grad_mode import no_grad, state
from ..storage import TypedStorage, UntypedStorage
from .conversion import cast
from .registry import METHODS, PUBLIC, check_tensor, defop, dispatch, export
from .strided import check_geometry, strided_view
from .views import shape_arg


def _check_inplace_leaf(self):
    if state.enabled and self._requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if self._base is not None and self._base._requires_grad and \
                self._base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                               "in an in-place operation.")


# ---------------------------------------------------------------------- set_
_SET_NAMES = ("source", "storage_offset", "size", "stride")
_SET_OVERLOADS = (
    "()", "(Storage source)",
    "(Storage source, int storage_offset, tuple of ints size, tuple of ints stride = ())",
    "(Tensor source)",
    "(Tensor source, int storage_offset, tuple of ints size, tuple of ints stride = ())")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_ints(v):
    return isinstance(v, (list, tuple)) and all(_is_int(e) for e in v)


def _set_arguments(args, kwargs):
    """set_'s arguments by name after PyTorch's parser has matched them against its
    overloads (an empty dict for set_()), or its TypeError."""
    bound = dict(zip(_SET_NAMES, args))
    fits = len(args) <= 4 and all(k in _SET_NAMES and k not in bound for k in kwargs)
    bound.update(kwargs)
    if fits and bound:
        geometry = bound.keys() - {"source"}
        fits = isinstance(bound.get("source"), (Tensor, UntypedStorage, TypedStorage)) and (
            not geometry or (_is_int(bound.get("storage_offset")) and
                             _is_ints(bound.get("size")) and
                             _is_ints(bound.get("stride", ()))))
    if not fits:
        raise TypeError("set_() received an invalid combination of arguments - got "
                        f"{describe_call(args, kwargs)}, but expected one of:\n" +
                        "".join(f" * {o}\n" for o in _SET_OVERLOADS))
    return bound


def set_(self, *args, **kwargs):
    """set_(), set_(source) or set_(source, storage_offset, size, stride=()): make `self`
    look at another memory: a tensor's (its geometry, or the one given), an UntypedStorage's
    (read as self's dtype, with the given geometry) or nothing."""
    bound = _set_arguments(args, kwargs)
    _check_inplace_leaf(self)
    source = bound.get("source")
    storage_offset, size, stride = (bound.get("storage_offset", 0), bound.get("size"),
                                    bound.get("stride") or None)
    if isinstance(source, Tensor):
        if size is not None:   # (its memory, read as self's dtype, as from a Storage)
            source = source.untyped_storage()
        elif source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_C_NAMES[source.dtype]} to a "
                               f"tensor of type {_C_NAMES[self.dtype]}")
        else:
            self._data = source._data
            bump_version(self)
            return self
    if source is None:
        self._data = self._data.reshape(-1)[:0].copy()
    else:
        raw = source if isinstance(source, UntypedStorage) else source.untyped()
        item = self.dtype.itemsize
        flat = raw._bytes[:raw.nbytes() - raw.nbytes() % item].view(self.dtype.np)
        size = (flat.size - storage_offset,) if size is None else shape_arg((size,))
        stride = _contiguous_strides(size) if stride is None else shape_arg((stride,))
        check_geometry(size, stride, storage_offset, item, flat.size)
        self._data = strided_view(flat, size, stride, storage_offset)
    bump_version(self)
    return self


# ---------------------------------------------------------------------- as_strided_
def as_strided_(self, size, stride, storage_offset=None):
    _check_inplace_leaf(self)
    result = PUBLIC["as_strided"](self, size, stride, storage_offset)
    self._data = result._data
    if result.grad_fn is not None:   # (a non-leaf: its history continues through the view)
        self.grad_fn = result.grad_fn
        self._output_nr = result._output_nr
    return self


# ---------------------------------------------------------------------- as_strided_scatter
@defop("as_strided_scatter", save=())
def _as_strided_scatter(a, src, size, stride, offset):
    out = a.copy()   # (C-contiguous: the geometry reads the input as a fresh dense storage)
    strided_view(out.reshape(-1), size, stride, offset)[...] = src
    return out


@_as_strided_scatter.defvjp
def _as_strided_scatter_vjp(ctx, g):
    p = ctx.params
    g = g.contiguous()
    ga = gs = None
    if ctx.edges[0] is not None:
        ga = dispatch(_as_strided_scatter, (g, 0), p)
    if ctx.edges[1] is not None:
        gs = PUBLIC["as_strided"](g, p["size"], p["stride"], p["offset"]).clone()
    return ga, gs


@export
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    check_tensor("as_strided_scatter", input)
    check_tensor("as_strided_scatter", src, "src", 2)
    size, stride = shape_arg((size,)), shape_arg((stride,))
    offset = 0 if storage_offset is None else storage_offset
    check_geometry(size, stride, offset, input._data.itemsize, input._data.size)
    if tuple(src._data.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(size)}")
    return dispatch(_as_strided_scatter, (input, cast(src, input.dtype)),
                    {"size": size, "stride": stride, "offset": offset}, input.dtype)


# ---------------------------------------------------------------------- resize, resize_as
def _resized(self, sizes, name):
    """PyTorch's autograd Resize: the element count is the Python product of `sizes` as
    given (so a tensor or float size fails or passes as it does there), then a view."""
    warnings.warn(f"non-inplace {name} is deprecated", UserWarning, stacklevel=3)
    n = self._data.size
    numel = functools.reduce(operator.mul, sizes, 1)
    if n != numel:
        def text(shape):
            return "x".join(map(str, shape))
        raise RuntimeError(f"requested resize to {text(sizes)} ({numel} elements in total), "
                           f"but the given tensor has a size of {text(self._data.shape)} ({n} "
                           "elements). autograd's resize can only change the shape of a given "
                           "tensor, while preserving the number of elements. ")
    # NOTE: PyTorch's grad_fn here is an autograd.Function (ResizeBackward); a reshape of
    # the contiguous tensor gives the same values and gradient (ViewBackward0).
    return self.contiguous().view(*sizes)


def resize(self, *sizes):
    return _resized(self, sizes, "resize")


def resize_as(self, tensor):
    return _resized(self, tuple(tensor.shape), "resize_as")


# ---------------------------------------------------------------------- dim_order
def _dense_in(shape, strides, order):
    """Whether (shape, strides) is dense with dims nested as `order` (outermost first); size-1
    dims may have any stride."""
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory. With `ambiguity_check` True, PyTorch's
    error when the order is not unique (a size-1 dim, or neighbouring dims with equal
    strides); with a list of memory formats, the error only when the tensor is not also
    contiguous in exactly one of them. (Where PyTorch's own sort finds equal strides it may
    order tied dims differently from this stable sort; both orders describe the memory.)"""
    if not isinstance(ambiguity_check, bool) and (not isinstance(ambiguity_check, list) or any(
            not isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                        "formats.")
    shape, strides = self._data.shape, self.stride()
    n = len(shape)
    layouts = {contiguous_format: tuple(range(n))}
    if n in (4, 5):
        layouts[channels_last if n == 4 else channels_last_3d] = (0,) + tuple(range(2, n)) + (1,)
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    if ambiguity_check is not False:
        repeated = any(s == t for s, t in zip(strides, strides[1:]))
        if (repeated or 1 in shape) and sum(
                f in layouts and _dense_in(shape, strides, layouts[f]) for f in formats) != 1:
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    if n < 2:
        return tuple(range(n))
    dense = _dense_in(shape, strides, layouts[contiguous_format])
    last = n == 4 and _dense_in(shape, strides, layouts[channels_last])
    if dense and not last:
        return tuple(range(n))
    if last and not dense:
        return (0, 2, 3, 1)
    return tuple(sorted(range(n), key=lambda d: -strides[d]))


# ---------------------------------------------------------------------- new, module_load
def new(self, *args, device=None):
    """The legacy constructor with `self`'s dtype: new(2, 3), new([1, 2]), new(tensor)."""
    return legacy_new(Tensor, self.dtype, args, self._device if device is None else device,
                      typed=True)


def module_load(self, other, assign=False):
    """What `Module.load_state_dict` writes for this parameter or buffer: `other` itself
    with assign=True, else `self` with `other`'s values copied in (detached)."""
    if assign:
        return other.detach()
    with no_grad():
        return self.copy_(other).detach()


def chalf(self, memory_format=None):
    """complex32 is not an ember dtype: complex64 stands in (see ARCHITECTURE.md)."""
    return self.to(dt.complex64)


METHODS.update({"set_": set_, "as_strided_": as_strided_, "resize": resize,
                "resize_as": resize_as, "dim_order": dim_order, "new": new,
                "module_load": module_load, "chalf": chalf})


# ---------------------------------------------------------------------- apply_ / map_ / map2_
def check_no_grad(name, *tensors):
    """PyTorch's refusal to run a Python callable over tensors that require grad."""
    if any(t._requires_grad for t in tensors):
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _python_map(self, name, fn, *others):
    """Write fn(element, *other elements) into self, element by element (CPU only)."""
    check_no_grad(name, self, *others)
    if self._device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")
    a = self._data
    columns = [a.reshape(-1).tolist()] + \
        [np.broadcast_to(o._data, a.shape).reshape(-1).tolist() for o in others]
    values = [fn(*args) for args in zip(*columns)]
    a[...] = np.asarray(values).astype(a.dtype, copy=False).reshape(a.shape)
    bump_version(self)
    return self


def apply_(self, callable):
    return _python_map(self, "apply_", callable)


def map_(self, tensor, callable):
    if tensor.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    tensor.expand(self._data.shape)   # (PyTorch's message when it does not broadcast)
    return _python_map(self, "map_", callable, tensor)


def map2_(self, x, y, callable):
    # (PyTorch's order: requires_grad anywhere, the dtypes of x and y, then broadcasting)
    check_no_grad("map2_", self, x, y)
    for arg, t in (("x", x), ("y", y)):
        if t.dtype is not self.dtype:
            raise TypeError(f"map2_: expected {self.type()} for argument '{arg}' (got "
                            f"{t.type()})")
    for t in (x, y):
        t.expand(self._data.shape)   # (PyTorch's message when it does not broadcast)
    return _python_map(self, "map2_", callable, x, y)


METHODS.update({"apply_": apply_, "map_": map_, "map2_": map2_})
