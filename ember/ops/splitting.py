"""Splitting into views: split, split_with_sizes, chunk, unbind, tensor_split and
hsplit/vsplit/dsplit. Every piece is a view of the input sharing its version counter, as
PyTorch's are; one op with n outputs records a single node (SplitBackward0, UnbindBackward0).
"""
import builtins
import operator
from itertools import pairwise

from .. import _dtype as dt
from .._signatures import Parser
from .._signatures.table_torch import FUNCTIONS
from .._tensor import Tensor
from ._dims import wrap_dim
from .registry import Op, check_tensor, dispatch, export
from .shape import _cat, _stack
from .indexing_views import narrow


# ---------------------------------------------------------------------- split family
_MULTI = {}


def _split_forward(a, dim, bounds):
    lead = (slice(None),) * dim
    return tuple(a[lead + (slice(lo, hi), ...)] for lo, hi in bounds)


def _unbind_forward(a, dim, count):
    lead = (slice(None),) * dim
    return tuple(a[lead + (i, ...)] for i in range(count))


def _split_vjp(ctx, *grads):
    return dispatch(_cat, grads, {"dim": ctx.params["dim"]})


def _unbind_vjp(ctx, *grads):
    return dispatch(_stack, grads, {"dim": ctx.params["dim"]})


_KINDS = {"split": ("SplitBackward0", _split_forward, _split_vjp),
          "split_with_sizes": ("SplitWithSizesBackward0", _split_forward, _split_vjp),
          "unbind": ("UnbindBackward0", _unbind_forward, _unbind_vjp)}


def _multi_view(kind, n):
    """The Op for a view op with `n` outputs (the registry's ops have a fixed count)."""
    op = _MULTI.get((kind, n))
    if op is None:
        node, forward, vjp = _KINDS[kind]
        if n == 1:
            def single(a, **params):
                return forward(a, **params)[0]
            op = Op(kind, single, node, (), False, 1, view=True)
            op.defvjp(lambda ctx, g: vjp(ctx, g))
        else:
            op = Op(kind, forward, node, (), False, n)
            op.defvjp(vjp)
        _MULTI[(kind, n)] = op
    return op


def _views(input, kind, n, params):
    if n == 0:
        return ()
    out = dispatch(_multi_view(kind, n), (input,), params)
    if n == 1:
        return (out,)
    base = input if input._base is None else input._base
    for t in out:
        t._vc = input._vc
        t._base = base
    if out[0].grad_fn is not None:
        out[0].grad_fn.view_version = input._vc.v
    return out


def _bounds(sizes):
    bounds, start = [], 0
    for s in sizes:
        bounds.append((start, start + s))
        start += s
    return tuple(bounds)


# torch.split and Tensor.split are Python: they hand an int to the builtin split, anything
# else to split_with_sizes, whose argument parser checks the call before the op runs.
_SPLIT = Parser("split", ("Tensor input, SymInt split_size, int dim = 0",
                          "Tensor input, tuple of SymInts split_size, int dim = 0"))
_SPLIT_WITH_SIZES = Parser("split_with_sizes", FUNCTIONS["split_with_sizes"])


@export
def split(tensor, split_size_or_sections, dim=0):
    if not isinstance(tensor, Tensor):   # (torch.split is Python: tensor.split(...))
        return tensor.split(split_size_or_sections, dim)
    if isinstance(split_size_or_sections, Tensor):
        # PyTorch's Python method: int() of a tensor size where it converts (a float one
        # truncates, inf overflows), else the tensor goes on to split_with_sizes
        try:
            split_size_or_sections = int(split_size_or_sections)
        except ValueError:
            pass
    if not isinstance(split_size_or_sections, int):
        _SPLIT_WITH_SIZES.check((tensor, split_size_or_sections, dim), {})
        return split_with_sizes(tensor, split_size_or_sections, dim)
    _SPLIT.check((tensor, split_size_or_sections, dim), {})
    return _split_by(tensor, split_size_or_sections, dim)


def _split_by(tensor, step, dim):
    """Pieces of `step` along `dim`, the last one shorter."""
    shape = tensor._data.shape
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shape))
    size = shape[d]
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {size}")
    n = max(1, -(-size // step)) if step else 1
    sizes = [step] * (n - 1) + [size - step * (n - 1)]
    return _views(tensor, "split", n, {"dim": d, "bounds": _bounds(sizes)})


@export
def split_with_sizes(input, split_sizes, dim=0):
    shape = input._data.shape
    if not shape:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, len(shape))
    sizes = [s.__index__() for s in split_sizes]
    if sum(sizes) != shape[d] or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {shape[d]} "
                           f"(input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    return _views(input, "split_with_sizes", len(sizes), {"dim": d,
                                                          "bounds": _bounds(sizes)})


@export
def chunk(input, chunks, dim=0):
    chunks = operator.index(chunks)   # (the builtin's int: a 0-d integer tensor too)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if not input._data.ndim:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d]
    if size == 0:  # PyTorch: `chunks` empty pieces
        return split_with_sizes(input, [0] * chunks, d)
    return _split_by(input, -(-size // chunks), d)


@export
def unbind(input, dim=0):
    check_tensor("unbind", input)
    shape = input._data.shape
    if not shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, len(shape))
    return _views(input, "unbind", shape[d], {"dim": d, "count": shape[d]})


@export
def tensor_split(input, indices_or_sections, dim=0):
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    spec = indices_or_sections
    if isinstance(spec, Tensor):   # (checked before the dim, as torch does)
        if spec.dtype is not dt.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {dt.type_name(spec.dtype)}")
        if spec._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec._data.ndim} dims")
        spec = spec.item() if spec._data.ndim == 0 else spec.tolist()
    d = wrap_dim(dim, n)
    size = input._data.shape[d]
    if isinstance(spec, (list, tuple)):
        edges = [0] + [min(max(builtins.int(i) + (size if i < 0 else 0), 0), size)
                       for i in spec] + [size]
        pieces = [(lo, max(hi, lo)) for lo, hi in pairwise(edges)]
    else:
        sections = spec.__index__()
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        pieces = _bounds(sizes)
    return tuple(narrow(input, d, lo, hi - lo) for lo, hi in pieces)


def _split_dims(name, input, sections, dim, need):
    if isinstance(sections, Tensor):
        # PyTorch's parser reads a 0-d integer tensor as `int sections`, any other
        # one-element integer or bool tensor as the one index of `indices`
        one = builtins.int(sections.item())
        integral = sections._data.ndim == 0 and sections.dtype.category == dt.INTEGER
        sections = one if integral else [one]
    if input._data.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {input._data.ndim} dimensions!")
    if not isinstance(sections, (list, tuple)) and (
            sections == 0 or input._data.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input._data.shape[dim]} is not divisible "
                           f"by the split_size {sections}!")
    return tensor_split(input, sections, dim)


@export
def hsplit(input, sections):
    return _split_dims("hsplit", input, sections, 1 if input._data.ndim > 1 else 0, 1)


@export
def vsplit(input, sections):
    return _split_dims("vsplit", input, sections, 0, 2)


@export
def dsplit(input, sections):
    return _split_dims("dsplit", input, sections, 2, 3)
