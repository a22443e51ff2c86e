"""Core reductions: sum, nansum, mean, nanmean, prod, logsumexp, all, any, count_nonzero, norm.

Max/min live in minmax.py, variance and order statistics in statistics.py, scans in
cumulative.py. float16/bfloat16 accumulate in float32 and round once, as PyTorch's kernels do.
"""
import math

import numpy as np

from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module, reduction
from ._dims import kept_shape, reduce_dims, wrap_dim  # noqa: F401
from ._promote import compute_dtype
from ._grad_support import recorded_dtype
from ._reduce_ops import const, exp_
from .registry import defop, dispatch, export


def expand_reduced(g, input_shape, dims, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims of the input."""
    if not keepdim and g._data.shape != kept_shape(input_shape, dims):
        g = g.reshape(kept_shape(input_shape, dims))
    return g.expand(input_shape)


def keep(a, input_shape, dims, keepdim):
    """A reduced array reshaped to the keepdim shape (for broadcasting against the input)."""
    return a if keepdim else a.reshape(kept_shape(input_shape, dims))


def mask_of(t, array, dtype=None):
    """A constant tensor from a boolean array, in t's dtype (masks multiply gradients)."""
    return const(t, array.astype((dtype or t.dtype).np))


def dims_of(dim, ndim):
    """reduce_dims, with a 0-dim input's dim 0 / -1 meaning no axis at all."""
    dims = reduce_dims(dim, ndim)
    return dims if ndim else ()


def one_dim(dim, ndim):
    """A single wrapped dim; a 0-dim input's dim 0 / -1 means position 0 of its 1-element
    view."""
    d = wrap_dim(dim, ndim)
    return d if ndim else 0


def numel_of(shape, dims):
    return math.prod(shape[d] for d in dims)


def sum_dtype(input, dtype):
    """Integer and bool sums accumulate in int64, as PyTorch's."""
    if dtype is not None:
        return dtype
    return dt.int64 if input.dtype.category < dt.FLOATING else input.dtype


def _check_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")


def _finish(r, out):
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- sum / nansum
@defop("sum", save=())
def _sum(a, dims, keepdim, acc):
    return reduction.sum(a, dims, keepdim, acc)


@_sum.defvjp
def _sum_vjp(ctx, g):
    shape = ctx.in_meta[0][0]
    return expand_reduced(g, shape, ctx.params["dims"], ctx.params["keepdim"])


@export
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_input("sum", input)
    dims = dims_of(dim, input._data.ndim)
    result = recorded_dtype(input, sum_dtype(input, dtype))
    acc = compute_dtype(result).np
    op = _sum if dim is None else _SUM_DIM
    r = dispatch(op, (input,), {"dims": dims, "keepdim": keepdim, "acc": acc}, result)
    return _finish(r, out)


_SUM_DIM = _sum.renamed("SumBackward1")


def _array_reduction(name):
    """The forward that is the array module's reduction `name` (nansum, prod)."""
    def forward(a, dims, keepdim, acc):
        return getattr(array_module(a), name)(a, axis=dims, keepdims=keepdim, dtype=acc)
    return forward


_nansum = defop("nansum", save=(0,))(_array_reduction("nansum"))


@_nansum.defvjp
def _nansum_vjp(ctx, g):
    x = ctx.inputs[0]
    p = ctx.params
    xp = array_module(x._data)
    return expand_reduced(g, x._data.shape, p["dims"], p["keepdim"]) * \
        mask_of(g, ~xp.isnan(x._data))


@export
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_input("nansum", input)
    if input.dtype.category < dt.FLOATING and (dtype is None or dtype.category < dt.FLOATING):
        return sum(input, dim, keepdim, dtype=dtype, out=out)
    dims = dims_of(dim, input._data.ndim)
    if input.dtype.is_complex:   # (after the dims, as torch checks them)
        raise RuntimeError("nansum on CPU does not support complex inputs")
    result = recorded_dtype(input, sum_dtype(input, dtype))
    acc = compute_dtype(result).np
    r = dispatch(_nansum, (input,), {"dims": dims, "keepdim": keepdim, "acc": acc}, result)
    return _finish(r, out)


# ---------------------------------------------------------------------- mean / nanmean
@defop("mean", save=())
def _mean(a, dims, keepdim, acc):
    xp = array_module(a)
    if a.size == 0 or numel_of(a.shape, dims) == 0:
        with _quiet(xp):  # PyTorch's mean of nothing is nan, silently
            return xp.sum(a, axis=dims, keepdims=keepdim, dtype=acc) / xp.asarray(0, acc)
    return reduction.mean(a, dims, keepdim, acc)


def _quiet(xp):
    return np.errstate(all="ignore")


@_mean.defvjp
def _mean_vjp(ctx, g):
    shape = ctx.in_meta[0][0]
    dims = ctx.params["dims"]
    return expand_reduced(g / numel_of(shape, dims), shape, dims, ctx.params["keepdim"])


@export
def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_input("mean", input)
    result = dtype or input.dtype
    if result.category < dt.FLOATING:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dt.type_name(result)}")
    dims = dims_of(dim, input._data.ndim)
    op = _mean if dim is None else _mean.renamed("MeanBackward1")
    r = dispatch(op, (input,), {"dims": dims, "keepdim": keepdim,
                                "acc": compute_dtype(result).np}, result)
    return _finish(r, out)


@defop("nanmean", node="DivBackward0", save=(0,))
def _nanmean(a, dims, keepdim, acc):
    xp = array_module(a)
    valid = ~xp.isnan(a)
    total = xp.sum(xp.where(valid, a, 0), axis=dims, keepdims=keepdim, dtype=acc)
    with _quiet(xp):
        return total / xp.sum(valid, axis=dims, keepdims=keepdim).astype(acc)


@_nanmean.defvjp
def _nanmean_vjp(ctx, g):
    x = ctx.inputs[0]
    p = ctx.params
    xp = array_module(x._data)
    valid = ~xp.isnan(x._data)
    count = xp.sum(valid, axis=p["dims"], keepdims=True)
    with _quiet(xp):
        scale = mask_of(g, valid / count)
    return expand_reduced(g, x._data.shape, p["dims"], p["keepdim"]) * scale


@export
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_input("nanmean", input)
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {dt.type_name(input.dtype)}")
    if dtype is not None and dtype.category < dt.FLOATING:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: "
                           f"{dt.type_name(dtype)}")
    result = dtype or input.dtype
    dims = dims_of(dim, input._data.ndim)
    if input.dtype.is_complex:   # (torch's nanmean is a nansum)
        raise RuntimeError("nansum on CPU does not support complex inputs")
    r = dispatch(_nanmean, (input,), {"dims": dims, "keepdim": keepdim,
                                      "acc": compute_dtype(result).np}, result)
    return _finish(r, out)


# ---------------------------------------------------------------------- prod
_prod = defop("prod", save=(0,), save_output=True)(_array_reduction("prod"))


@_prod.defvjp
def _prod_vjp(ctx, g):
    # NOTE: out / x fails at zeros; there the gradient is the product of the other
    # elements, built from exclusive cumulative products (differentiable again).
    x = ctx.inputs[0]
    p = ctx.params
    dims, keepdim, shape = p["dims"], p["keepdim"], x._data.shape
    g = expand_reduced(g, shape, dims, keepdim)
    if not (x._data == 0).any():
        return g * expand_reduced(ctx.output, shape, dims, keepdim) / x
    from .cumulative import products_of_others  # (cycle: cumulative imports this module)
    if len(dims) == 1:
        return g * products_of_others(x, dims[0])
    if not dims:
        return g
    return g * products_of_others(x.reshape(-1), 0).reshape(shape)


def _prod_dims(input, dims):
    """prod over a tuple of dims, kept (PyTorch's public prod takes one dim)."""
    acc = compute_dtype(input.dtype).np
    return dispatch(_prod, (input,), {"dims": tuple(dims), "keepdim": True, "acc": acc},
                    input.dtype)


@export
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_input("prod", input)
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, *, torch.dtype dtype = None)\n"
                        " * (Tensor input, int dim, bool keepdim = False, *, "
                        "torch.dtype dtype = None, Tensor out = None)")
    n = input._data.ndim
    dims = tuple(range(n)) if dim is None else (wrap_dim(dim, n),)
    if dim is None:
        keepdim = False
    if n == 0:
        dims = ()
    result = recorded_dtype(input, sum_dtype(input, dtype))
    acc = compute_dtype(result).np
    op = _prod if dim is None else _prod_dim
    r = dispatch(op, (input,), {"dims": dims, "keepdim": keepdim, "acc": acc}, result)
    return _finish(r, out)


# PyTorch names the node of prod(dim) ProdBackward1: same forward and VJP, another name.
_prod_dim = defop("prod_dim", node="ProdBackward1", save=(0,), save_output=True)(_prod.forward)
_prod_dim.defvjp(_prod_vjp)


# ---------------------------------------------------------------------- logsumexp
@defop("logsumexp", save=(0,), save_output=True)
def _logsumexp(a, dims, keepdim):
    xp = array_module(a)
    if a.size == 0:
        with _quiet(xp):
            return xp.log(xp.sum(xp.exp(a), axis=dims, keepdims=keepdim))
    # NOTE: shift by the max so exp cannot overflow; an infinite max shifts by 0 instead
    # (inf - inf would be nan).
    m = xp.max(a, axis=dims, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    s = xp.log(xp.sum(xp.exp(a - m), axis=dims, keepdims=True)) + m
    return s if keepdim else s.reshape(tuple(n for i, n in enumerate(a.shape)
                                             if i not in dims))


@_logsumexp.defvjp
def _logsumexp_vjp(ctx, g):
    x = ctx.inputs[0]
    p = ctx.params
    shape = x._data.shape
    out = expand_reduced(ctx.output, shape, p["dims"], p["keepdim"])
    return expand_reduced(g, shape, p["dims"], p["keepdim"]) * exp_(x - out)


@export
def logsumexp(input, dim, keepdim=False, *, out=None):
    _check_input("logsumexp", input)
    if input.dtype.category < dt.FLOATING:
        input = input.to(dt.get_default_dtype())
    dims = dims_of(dim, input._data.ndim)
    compute = compute_dtype(input.dtype)
    arrays = None if compute is input.dtype else (input._data.astype(compute.np),)
    r = dispatch(_logsumexp, (input,), {"dims": dims, "keepdim": keepdim}, input.dtype,
                 arrays)
    return _finish(r, out)


# ---------------------------------------------------------------------- all / any
def _logical_reduction(name, fn):
    def reduce(input, dim=None, keepdim=False, *, out=None):
        _check_input(name, input)
        a = input._data
        # (an empty dim list reduces nothing here, unlike sum's, as in PyTorch)
        dims = () if isinstance(dim, (list, tuple)) and not dim else dims_of(dim, a.ndim)
        xp = array_module(a)
        r = getattr(xp, fn)(a, axis=dims, keepdims=keepdim)
        result = dt.uint8 if input.dtype is dt.uint8 else dt.bool
        r = _wrap(xp.asarray(r).astype(result.np), result, input._device)
        return _finish(r, out)
    reduce.__name__ = name
    return reduce


all = export(_logical_reduction("all", "all"))
any = export(_logical_reduction("any", "any"))


@export
def count_nonzero(input, dim=None):
    _check_input("count_nonzero", input)
    a = input._data
    dims = dims_of(dim, a.ndim)
    xp = array_module(a)
    r = xp.asarray(xp.count_nonzero(a, axis=dims)).astype(xp.int64)
    return _wrap(r, dt.int64, input._device)


# ---------------------------------------------------------------------- norm
@export
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: PyTorch's Python function, which hands every strided call to
    linalg.vector_norm (or matrix_norm for the other string orders); its argument checks and
    errors are theirs."""
    if not isinstance(input, Tensor):   # (its first look at input: input.layout)
        raise AttributeError(f"'{type_name(input)}' object has no attribute 'layout'")
    from .. import linalg  # (cycle: the checked torch.linalg functions sit above the ops)
    dims = [dim] if isinstance(dim, int) else dim
    extra = {} if out is None else {"out": out}
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return linalg.vector_norm(input, 2, dims, keepdim, dtype=dtype, **extra)
        dims = list(range(input.ndim)) if dims is None else dims
        return linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype, **extra)
    return linalg.vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype,
                              **extra)
