"""Tensor methods beyond the core table: ravel, fill_diagonal_, is_nonzero, sum_to_size,
const_data_ptr, new_empty_strided, as_strided and the *_scatter family, resize_, igamma/igammac,
mvlgamma, apply_/map_."""
import math

import numpy as np

from .. import _dtype as dt
from .._data import check_fill
from .._tensor import Tensor, _contiguous_strides, unbroadcast
from ..autograd.grad_mode import state
from ..backends import array_module
from ..backends.special import special_module
from .registry import METHODS, PUBLIC, apply_inplace, check_tensor, defop, dispatch, export
from .views import contiguous, shape_arg, view


# ---------------------------------------------------------------------- ravel
@export
def ravel(input):
    check_tensor("ravel", input)
    # NOTE: PyTorch's ravel is contiguous().view(-1): a view when contiguous, else a copy
    # (CloneBackward0 then ViewBackward0), never reshape's UnsafeViewBackward0.
    return view(contiguous(input), -1)


# ---------------------------------------------------------------------- fill_diagonal_
def _diagonal_positions(shape, wrap):
    """C-order flat positions fill_diagonal_ writes (PyTorch's rules: the main diagonal of
    a tall matrix restarts every width + 1 rows with `wrap`; >2-D needs equal sizes)."""
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(s != shape[0] for s in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    numel = math.prod(shape)
    n = min(shape)
    step = sum(math.prod(shape[i + 1:]) for i in range(len(shape)))
    if wrap and len(shape) == 2 and shape[0] > shape[1] + 1:
        n = -(-numel // step)
    return np.arange(n, dtype=np.int64) * step


@defop("fill_diagonal", node="CopySlices", save=())
def _fill_diagonal(a, pos, value):
    out = array_module(a).ascontiguousarray(a).copy()
    out.reshape(-1)[pos] = value
    return out


@_fill_diagonal.defvjp
def _fill_diagonal_vjp(ctx, g):
    # the filled positions no longer depend on the input
    return dispatch(_fill_diagonal, (g,), {"pos": ctx.params["pos"], "value": 0})


def fill_diagonal_(self, fill_value, wrap=False):
    shape = self._data.shape
    pos = _diagonal_positions(shape, wrap)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    value = check_fill(fill_value, self.dtype, len(pos))
    if state.enabled and self._requires_grad:
        if self.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
        xp_pos = array_module(self._data).asarray(pos)
        return apply_inplace(self, lambda s: dispatch(
            _fill_diagonal, (s,), {"pos": xp_pos, "value": value}), (), {})
    if len(pos):
        self._data[np.unravel_index(pos, shape)] = value
    self._vc.v += 1
    return self


METHODS["fill_diagonal_"] = fill_diagonal_


# ---------------------------------------------------------------------- small tensor queries
def is_nonzero(self):
    n = self._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self._data.reshape(-1)[0])


def _size_list(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def sum_to_size(self, *size):
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = shape_arg(size)
    shape = self._data.shape
    extra = len(shape) - len(size)
    if extra < 0 or any(s != t and s != 1 for s, t in zip(size, shape[extra:])):
        raise RuntimeError(f"size {{{_size_list(size)}}} is not expandable to size "
                           f"{{{_size_list(shape)}}}.")
    if size == shape:
        return self
    return unbroadcast(self, size)


def const_data_ptr(self):
    return self.data_ptr()


METHODS.update({"is_nonzero": is_nonzero, "sum_to_size": sum_to_size,
                "const_data_ptr": const_data_ptr})


# ---------------------------------------------------------------------- strided memory
def _storage(t):
    """`t`'s whole storage as a flat array of t's dtype, and t's offset into it."""
    a = base = t._data
    while getattr(base, "base", None) is not None and (
            hasattr(base.base, "ctypes") or not isinstance(a, np.ndarray)):
        base = base.base
    if base.flags.c_contiguous:
        flat = base.reshape(-1)
    elif base.flags.f_contiguous:
        flat = base.T.reshape(-1)
    else:   # (an owner is dense; this is a guard, not a case PyTorch knows)
        raise RuntimeError("as_strided: the tensor's storage is not dense")
    if flat.dtype != a.dtype:
        flat = flat.view(np.uint8 if isinstance(flat, np.ndarray) else "u1")
        flat = flat[:flat.size - flat.size % a.itemsize].view(a.dtype)
    return flat, t.storage_offset()


def _strided(flat, size, stride, offset):
    item = flat.itemsize
    strides = [s * item for s in stride]
    if isinstance(flat, np.ndarray):
        # NOTE: not stride_tricks.as_strided: its result's base is a wrapper object, which
        # would end the base chain storage_offset() and later views walk.
        return np.ndarray(size, flat.dtype, buffer=flat, offset=offset * item, strides=strides)
    return array_module(flat).lib.stride_tricks.as_strided(flat[offset:], size, strides)


def _span(size, stride):
    """Elements from the first to the last one a (size, stride) layout touches."""
    return 1 + sum((n - 1) * s for n, s in zip(size, stride))


def _check_geometry(size, stride, offset, itemsize, storage_items):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_size_list(size)} "
                           f"and strides={_size_list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {_size_list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + _span(size, stride)
    if need > storage_items:
        raise RuntimeError(f"setStorage: sizes {_size_list(size)}, strides {_size_list(stride)}"
                           f", storage offset {offset}, and itemsize {itemsize} requiring a "
                           f"storage size of {need * itemsize} are out of bounds for storage "
                           f"of size {storage_items * itemsize}")


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    for name, v in (("size", size), ("stride", stride)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"new_empty_strided(): argument '{name}' (position "
                            f"{1 if name == 'size' else 2}) must be tuple of ints, not "
                            f"{type(v).__name__}")
    size, stride = shape_arg((size,)), shape_arg((stride,))
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    buffer = self.new_empty((0 if 0 in size else _span(size, stride),), dtype=dtype,
                            device=device)
    out = buffer   # (its dtype and device; the array becomes the strided one)
    out._data = _strided(buffer._data, size, stride, 0)
    if requires_grad:
        out.requires_grad_()
    return out


METHODS["new_empty_strided"] = new_empty_strided


@defop("as_strided_view", node="AsStridedBackward0", save=(), view=True)
def _as_strided(a, flat, size, stride, offset, idx):
    return _strided(flat, size, stride, offset)


@_as_strided.defvjp
def _as_strided_vjp(ctx, g):
    # NOTE: `idx` holds each output element's C-order position in the input, or the input's
    # numel for memory the input does not cover: that extra slot is cut off (PyTorch drops
    # those gradients too); overlapping outputs add up in the scatter.
    from .view_inplace import _scatter
    shape = ctx.in_meta[0][0]
    n = math.prod(shape)
    full = dispatch(_scatter, (g,), {"idx": ctx.params["idx"], "shape": (n + 1,)})
    return full[:n].reshape(shape)


def _input_positions(t, flat, base, size, stride, offset):
    xp = array_module(flat)
    n = t._data.size
    lin = xp.full(flat.size, n, dtype=xp.int64)
    item = t._data.itemsize
    mine = _strided(lin, t._data.shape, [s // item for s in t._data.strides], base)
    mine[...] = xp.arange(n, dtype=xp.int64).reshape(t._data.shape)
    return _strided(lin, size, stride, offset).copy()


@export
def as_strided(input, size, stride, storage_offset=None):
    size, stride = shape_arg((size,)), shape_arg((stride,))
    flat, base = _storage(input)
    offset = base if storage_offset is None else storage_offset
    _check_geometry(size, stride, offset, input._data.itemsize, flat.size)
    idx = None
    if state.enabled and input._requires_grad:
        idx = _input_positions(input, flat, base, size, stride, offset)
    return dispatch(_as_strided, (input,), {"flat": flat, "size": size, "stride": stride,
                                            "offset": offset, "idx": idx})


# ---------------------------------------------------------------------- *_scatter
def _region(a, index, diag):
    """The part of `a` (array or Tensor) a *_scatter writes: basic indexing or a diagonal."""
    if diag is None:
        return a[index]
    if isinstance(a, Tensor):
        from .views import diagonal
        return diagonal(a, *diag)
    from ..backends import numpy_backend
    return numpy_backend.diagonal_view(a, *diag)


def _scatter_forward(a, src, index=None, diag=None):
    out = a.copy()
    _region(out, index, diag)[...] = src
    return out


def _scatter_vjp(ctx, g):
    p = ctx.params
    ga = dispatch(ctx.op, (g, 0), p) if ctx.edges[0] is not None else None
    gs = None
    if ctx.edges[1] is not None:
        from .conversion import cast
        gs = cast(_region(g, p["index"], p["diag"]), ctx.in_meta[1][1])
    return ga, gs


_SCATTERS = {}
for _name, _node in (("select_scatter", "SelectScatterBackward0"),
                     ("slice_scatter", "SliceScatterBackward0"),
                     ("diagonal_scatter", "DiagonalScatterBackward0")):
    _SCATTERS[_name] = defop(_name, node=_node, save=())(_scatter_forward)
    _SCATTERS[_name].defvjp(_scatter_vjp)


def _scattered(name, input, src, index=None, diag=None):
    expect = _region(input._data, index, diag).shape
    if tuple(src._data.shape) != expect:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_size_list(src._data.shape)}, slice size = {_size_list(expect)}")
    return dispatch(_SCATTERS[name], (input, src), {"index": index, "diag": diag},
                    input.dtype)


@export
def select_scatter(input, src, dim, index):
    from ._dims import wrap_dim
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    if not -shape[d] <= index < shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{_size_list(shape)} at dimension {dim}")
    return _scattered("select_scatter", input, src, (slice(None),) * d + (index,))


@export
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    from ._dims import wrap_dim
    d = wrap_dim(dim, input._data.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _scattered("slice_scatter", input, src, (slice(None),) * d + (slice(start, end, step),))


@export
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    from .views import _diagonal_dims
    d1, d2 = _diagonal_dims(input._data.ndim, offset, dim1, dim2)
    return _scattered("diagonal_scatter", input, src, None, (offset, d1, d2))


# ---------------------------------------------------------------------- igamma, igammac
def _igamma_forward(a, x, upper):
    out = getattr(special_module(a, x), "gammaincc" if upper else "gammainc")(a, x)
    return out.astype(a.dtype)


def _igamma_vjp(ctx, g):
    name = "igammac" if ctx.params["upper"] else "igamma"
    if ctx.edges[0] is not None:
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    exp, lgamma, log = PUBLIC["exp"], PUBLIC["lgamma"], PUBLIC["log"]
    a, x = ctx.inputs
    # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a); Q = 1 - P
    d = exp((a - 1) * log(x) - x - lgamma(a))
    gx = g * (-d if ctx.params["upper"] else d)
    return None, gx   # (inputs come broadcast already; expand undoes it)


_IGAMMA = {}
for _name, _node in (("igamma", "IgammaBackward0"), ("igammac", "IgammacBackward0")):
    _IGAMMA[_name] = defop(_name, node=_node, save=(0, 1))(_igamma_forward)
    _IGAMMA[_name].defvjp(_igamma_vjp)


def _igamma_call(name, input, other):
    from .._dtype import result_type
    from .conversion import cast
    for pos, (arg, v) in enumerate((("input", input), ("other", other))):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos + 1}) must be Tensor, "
                            f"not {type(v).__name__}")
    d = result_type(input, other)
    if d.category != 2:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{dt.type_name(d)}\'')
    a, x = PUBLIC["broadcast_tensors"](cast(input, d), cast(other, d))
    return dispatch(_IGAMMA[name], (a, x), {"upper": name == "igammac"}, d)


@export(inplace=True)
def igamma(input, other):
    return _igamma_call("igamma", input, other)


@export(inplace=True)
def igammac(input, other):
    return _igamma_call("igammac", input, other)


# ---------------------------------------------------------------------- mvlgamma
@export(inplace=True)
def mvlgamma(input, p):
    lgamma = PUBLIC["lgamma"]
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype.category < 2:
        from .conversion import cast
        input = cast(input, dt.get_default_dtype())
    # NOTE: PyTorch 2.13 no longer checks the domain x > (p - 1) / 2 (nan/inf there too)
    # log Gamma_p(x) = p(p-1)/4 log(pi) + sum_j lgamma(x - j/2), j = 0..p-1
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


# ---------------------------------------------------------------------- resize_
def resize_(self, *sizes, memory_format=None):
    """PyTorch's resize_: the tensor becomes contiguous with the new size over its storage
    from its offset on; a larger size takes a new buffer holding the old elements first.
    (In PyTorch other views then follow the grown storage; here they keep the old one.)"""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = shape_arg(sizes)
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    n = math.prod(size)
    flat, offset = _storage(self)
    if offset + n <= flat.size:
        self._data = _strided(flat, size, _contiguous_strides(size), offset)
    else:
        xp = array_module(flat)
        grown = xp.zeros(n, dtype=flat.dtype)   # (PyTorch leaves the new elements unset)
        kept = flat[offset:offset + n]
        grown[:kept.size] = kept
        self._data = grown.reshape(size)
    self._vc.v += 1
    return self


def resize_as_(self, the_template, *, memory_format=None):
    return resize_(self, *the_template.shape)


METHODS.update({"resize_": resize_, "resize_as_": resize_as_})


# ---------------------------------------------------------------------- apply_ / map_
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
    self._vc.v += 1
    return self


def apply_(self, callable):
    return _python_map(self, "apply_", callable)


def map_(self, tensor, callable):
    if tensor.dtype is not self.dtype:
        raise TypeError(f"map_: expected {self.type()} for 'other' (got {tensor.type()})")
    tensor.expand(self._data.shape)   # (PyTorch's message when it does not broadcast)
    return _python_map(self, "map_", callable, tensor)


METHODS.update({"apply_": apply_, "map_": map_})


def untyped_storage(self):
    from ..storage import untyped_storage as of
    return of(self)


def storage(self):
    from ..storage import storage as of
    return of(self)


METHODS.update({"untyped_storage": untyped_storage, "storage": storage})
