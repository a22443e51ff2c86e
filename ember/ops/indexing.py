"""Tensor.__getitem__ / __setitem__ and the ops behind them: index and index_put (take, put
and nonzero are in take_put.py).

A key is split as PyTorch splits it: ints, slices and None apply first as one basic view
(sharing memory and the version counter); integer and bool tensors then index that view as
NumPy's advanced indexing does (a copy; where the indexed dims go follows NumPy's rule).
The key is parsed in index_keys.py.
"""
import builtins

import numpy as np

from .. import _dtype as dt
from .. import backends
from .._data import check_fill
from .._inplace import bump_version
from .._scalars import number, type_name
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import state
from ..backends import array_module, numpy_backend
from ..debug.checks import check_inplace_cast
from ..func import _state as _func
from .conversion import cast, move
from .index_keys import FULL, MASK_DTYPES, advanced_error, parse_key
from .indexing_views import BASIC_VIEW_OPS
from .inplace import apply_inplace
from .registry import METHODS, defop, dispatch, export
from .views import expand


# ---------------------------------------------------------------------- advanced indexing
def _in_bounds(key):
    """`key` with every integer index at 0: in bounds (of a non-empty dim), and the same
    result shape."""
    return tuple(k * 0 if getattr(k, "dtype", None) is not None and k.dtype.kind in "iu"
                 else k for k in key)


@defop("index", node="IndexBackward0", save=())
def _index(a, key):
    try:
        return a[key]
    except IndexError:
        # (PyTorch checks the bounds in its kernel, which an empty result never runs)
        try:
            empty = a[_in_bounds(key)]
        except IndexError:
            empty = None
        if empty is not None and empty.size == 0:
            return empty
        raise advanced_error(a.shape, key) from None


@_index.defvjp
def _index_vjp(ctx, g):
    return dispatch(_index_backward, (g,), {"shape": ctx.in_meta[0][0],
                                            "key": ctx.params["key"]})


@defop("index_backward", node="IndexPutBackward0", save=())
def _index_backward(g, shape, key):
    """Zeros of `shape` with `g` added at `key` (repeated indices accumulate)."""
    out = array_module(g).zeros(shape, dtype=g.dtype)
    numpy_backend.scatter_add(out, key, g)
    return out


@_index_backward.defvjp
def _index_backward_vjp(ctx, g):
    return dispatch(_index, (g,), {"key": ctx.params["key"]})


def _put_forward(a, v, basic, adv, accumulate):
    out = a.copy()
    _put_in_place(out[basic], adv, v, accumulate)
    return out


def _put_vjp(ctx, g):
    p = ctx.params
    ga = gv = None
    if ctx.edges[0] is not None:
        ga = g if p["accumulate"] else dispatch(ctx.op, (g, 0), p)
    if ctx.edges[1] is not None:
        gv = dispatch(BASIC_VIEW_OPS["alias"], (g,), {"key": p["basic"]})
        if p["adv"] is not None:
            gv = dispatch(_index, (gv,), {"key": p["adv"]})
    return ga, gv


_copy_slices = defop("copy_slices", node="CopySlices", save=())(_put_forward)
_index_put = defop("index_put", node="IndexPutBackward0", save=())(_put_forward)
_copy_slices.defvjp(_put_vjp)
_index_put.defvjp(_put_vjp)


def index(input, key):
    return dispatch(_index, (input,), {"key": key})


# ---------------------------------------------------------------------- __getitem__
def getitem(self, key):
    if type(key) is int and self._data.ndim:
        size = self._data.shape[0]
        if not -size <= key < size:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {size}")
        return dispatch(BASIC_VIEW_OPS["select"], (self,), {"key": (key, ...)})
    basic, kind, adv = parse_key(self, key)
    out = self if kind is None else dispatch(BASIC_VIEW_OPS[kind], (self,), {"key": basic})
    if adv is not None:
        out = dispatch(_index, (out,), {"key": adv})
    return out


# ---------------------------------------------------------------------- __setitem__
def scalar_for(dtype, value):
    """A Python scalar checked for `dtype` as PyTorch's single-element store checks it (no
    silent overflow; uint8 takes -255..255, wrapping; float16 rounds to inf)."""
    return check_fill(value, dtype, 1)


def _value_array(self, value):
    if _guard.enabled and self.dtype.category == dt.INTEGER:
        check_inplace_cast(self, value if isinstance(value, Tensor) else None, value)
    if isinstance(value, Tensor):
        a = value._data
        if value._device != self._device:
            a = backends.to_device(self._device, value._host())
        if value.dtype is not self.dtype:
            a = a.astype(self.dtype.np)
        return a
    # NOTE: PyTorch stores Python numbers and the NumPy scalars that are Python numbers
    # underneath (integers, float64, complex128); np.float32, np.bool_ and the like raise.
    if isinstance(value, (int, float, complex, np.integer)):
        return scalar_for(self.dtype, number(value))
    raise TypeError(f"can't assign a {type_name(value)} to a "
                    f"{'torch.' + dt.type_name(self.dtype)}Tensor")


def _strip_leading_ones(value, ndim):
    """PyTorch drops a value's leading size-1 dims that the destination lacks."""
    shape = value.shape
    k = 0
    while len(shape) - k > ndim and shape[k] == 1:
        k += 1
    return k


def _put_error(self, basic, adv, value, exc, strip=True):
    """PyTorch's error for a put NumPy refused.

    NOTE: PyTorch compares the value's shape with the indexing result's before it checks
    the indices' bounds, NumPy the other way round: the result's shape is read with every
    integer index at 0 (in bounds, same shape). Assignment strips the value's leading ones
    (x[i] = ones(1, 3)); index_put does not (`strip`)."""
    target = self._data[basic]
    if adv is None:
        v = value if isinstance(value, Tensor) else _wrap(value, self.dtype, self._device)
        expand(v.detach(), target.shape)
        return RuntimeError("could not broadcast value")
    try:
        shape = target[_in_bounds(adv)].shape
    except IndexError:
        return advanced_error(target.shape, adv)
    vshape = tuple(value.shape) if isinstance(value, (Tensor, np.ndarray)) else ()
    while strip and len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    if _expands(vshape, shape) and isinstance(exc, IndexError):
        return advanced_error(target.shape, adv)
    return _shape_mismatch(vshape, shape)


def _expands(vshape, shape):
    return len(vshape) <= len(shape) and all(
        v in (1, s) for v, s in zip(reversed(vshape), reversed(shape)))


def _shape_mismatch(vshape, shape):
    return RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                        f"broadcast to indexing result of shape {list(shape)}")


def setitem(self, key, value):
    for k in (key if type(key) is tuple else (key,)):
        if (k.dtype is dt.uint8) if isinstance(k, Tensor) else \
                (isinstance(k, np.ndarray) and k.dtype == np.uint8):
            # (PyTorch's deprecated uint8 masks still index, but no longer assign)
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
    basic, _, adv = parse_key(self, key)
    if state.enabled and (self._requires_grad or (isinstance(value, Tensor) and
                                                  value._requires_grad)) or _func.depth:
        # (under vmap too: a batched tensor's storage is its physical batch)
        if self._requires_grad and self.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        apply_inplace(self, _setitem_out_of_place, (basic, adv, value), {})
        return
    v = _value_array(self, value)
    target = self._data[basic]
    try:
        if adv is None:
            if isinstance(v, np.ndarray) or hasattr(v, "shape"):
                k = _strip_leading_ones(v, target.ndim)
                if k:
                    v = v.reshape(v.shape[k:])
            target[...] = v
        else:
            target[adv] = v
    except (ValueError, IndexError) as exc:
        raise _put_error(self, basic, adv, value, exc) from None
    bump_version(self)


def _setitem_out_of_place(source, basic, adv, value):
    if isinstance(value, Tensor):
        if value._device != source._device:
            value = move(value, source._device)
        value = cast(value, source.dtype)
        k = _strip_leading_ones(value._data, source._data[basic].ndim if adv is None else 0)
        if k:
            value = value.reshape(value._data.shape[k:])
    else:
        value = scalar_for(source.dtype, value)
    # PyTorch records IndexPutBackward0 only when no basic index came first.
    plain = adv is not None and all(k is Ellipsis or k == FULL for k in basic)
    op = _index_put if plain else _copy_slices
    try:
        return dispatch(op, (source, value), {"basic": basic, "adv": adv,
                                              "accumulate": False})
    except (ValueError, IndexError) as exc:
        raise _put_error(source, basic, adv, value, exc) from None


# ---------------------------------------------------------------------- index_put
def _indices_key(self, indices, name):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    key = []
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        key.append(t)
    if sum(t._data.ndim if t.dtype in MASK_DTYPES else 1 for t in key) > self._data.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self._data.ndim} "
                         f"(got {len(key)})")
    basic, _, adv = parse_key(self, tuple(key))
    return basic, adv


def _check_values(self, values, name):
    if not isinstance(values, Tensor):
        raise TypeError(f"{name}(): argument 'values' (position 2) must be Tensor, not "
                        f"{type_name(values)}")
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dt.type_name(self.dtype)} for the destination and "
                           f"{dt.type_name(values.dtype)} for the source.")


def _no_indices_error(self, values):
    """torch 2.13's kernel fails an internal assert on an empty tuple of indices, once the
    values' shape has passed its broadcast check."""
    if not _expands(values._data.shape, self._data.shape):
        return _shape_mismatch(values._data.shape, self._data.shape)
    return RuntimeError('ntensor >= 3 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src'
                        '/ATen/native/cpu/IndexKernelUtils.h":8, please report a bug to '
                        'PyTorch. ')


@export
def index_put(input, indices, values, accumulate=False):
    # (torch reads the indices, their dtypes and count, before it compares the dtypes)
    basic, adv = _indices_key(input, indices, "index_put")
    _check_values(input, values, "index_put")
    if not indices:
        raise _no_indices_error(input, values)
    params = {"basic": basic, "adv": adv, "accumulate": builtins.bool(accumulate)}
    op = _index_put if adv is not None else _copy_slices
    try:
        return dispatch(op, (input, values), params)
    except (ValueError, IndexError) as exc:
        raise _put_error(input, basic, adv, values, exc, strip=False) from None


def index_put_(self, indices, values, accumulate=False):
    basic, adv = _indices_key(self, indices, "index_put_")
    _check_values(self, values, "index_put_")
    if not indices:
        raise _no_indices_error(self, values)
    if state.enabled and (self._requires_grad or values._requires_grad):
        return apply_inplace(self, index_put, (indices, values, accumulate), {})
    try:
        _put_in_place(self._data[basic], adv, values._data, accumulate)
    except (ValueError, IndexError) as exc:
        raise _put_error(self, basic, adv, values, exc, strip=False) from None
    bump_version(self)
    return self


def _put_in_place(target, adv, v, accumulate):
    """Write (or add) `v` at `target[adv]`; `target` is a view of the destination through the
    key's basic part (a basic key ends in Ellipsis: a view, even 0-d)."""
    if adv is None:
        if accumulate:
            target += v
        else:
            target[...] = v
    elif accumulate:
        numpy_backend.scatter_add(target, adv, v)
    else:
        target[adv] = v


METHODS["index_put_"] = index_put_


METHODS.update({"__getitem__": getitem, "__setitem__": setitem})


from ..debug.state import state as _guard  # noqa: E402
