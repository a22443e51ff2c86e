"""Variance and order statistics: var, std, var_mean, std_mean, median, nanmedian, mode,
kthvalue, quantile, nanquantile; covariance and correlation: cov, corrcoef (histograms are in
histograms.py).

Order statistics pick an element, so their gradient goes to the index they picked (ties
broken as a stable sort breaks them); quantile is composed of sort and a lerp of gathered
values, so it differentiates for free.
"""
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._creation import tensor, zeros_like
from .._scalars import as_double, type_name
from .._tensor import Tensor, write_out
from ..backends import array_module, numpy_backend
from . import return_types
from ._elementwise import not_implemented
from ._promote import compute_dtype
from ._reduce_ops import const, gather_dim, nan_count, stable_argsort
from .minmax import evenly, scatter_selected
from .reduction import dims_of, one_dim, expand_reduced, numel_of
from ._grad_support import real_grad_only
from .registry import check_tensor, defop, dispatch, export
from .complex import complex_from_parts
from .sorting import sort


def _quiet():
    return np.errstate(all="ignore")


# ---------------------------------------------------------------------- var / std
def _var_args(name, input, dim, unbiased, correction):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type_name(input)}), but expected one of:\n"
                        f" * (Tensor input, tuple of ints dim = None, *, Number correction = "
                        "None, bool keepdim = False)")
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        "(Tensor, unbiased=bool, correction=int), but expected one of:\n"
                        f" * (Tensor input, tuple of ints dim = None, *, Number correction = "
                        "None, bool keepdim = False)")
    if input.dtype.category < dt.FLOATING:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    correction = as_double(correction)
    return dims_of(dim, input._data.ndim), correction


def _variance(a, dims, correction, keepdim):
    xp = array_module(a)
    orig = _dtype_of(a)
    low = compute_dtype(orig)
    if low is not orig:
        a = a.astype(low.np)
    with _quiet():
        mu = xp.mean(a, axis=dims, keepdims=True)
        d = a - mu
        ss = xp.sum((d * d.conj()).real if d.dtype.kind == "c" else d * d, axis=dims,
                    keepdims=keepdim)
        n = numel_of(a.shape, dims)
        v = ss / max(n - correction, 0)
    mu = mu if keepdim else mu.reshape(v.shape)
    return v.astype(orig.to_real().np, copy=False), mu.astype(orig.np, copy=False)


def _dtype_of(a):
    return dt.from_numpy_dtype(a.dtype)


def _var_grad(ctx, g, x):
    """d var / dx applied to g: 2 (x - mean) g / (N - correction)."""
    p = ctx.params
    dims, keepdim = p["dims"], p["keepdim"]
    shape = x._data.shape
    n = numel_of(shape, dims)
    centered = x - x.mean(dims, keepdim=True) if dims else x * 0
    return expand_reduced(g, shape, dims, keepdim) * centered * (
        2.0 / max(n - p["correction"], 0) if n - p["correction"] > 0 else math.inf)


def _std_scale(g, std):
    """g / (2 std), zero where std is zero (PyTorch's subgradient)."""
    zero = const(std, (std._data == 0).astype(std.dtype.np))
    return g * (1 - zero) / (2 * (std + zero))


@defop("var", save=(0,))
def _var(a, dims, correction, keepdim):
    return _variance(a, dims, correction, keepdim)[0]


@_var.defvjp
def _var_vjp(ctx, g):
    return _var_grad(ctx, g, ctx.inputs[0])


@defop("std", save=(0,), save_output=True)
def _std(a, dims, correction, keepdim):
    return array_module(a).sqrt(_variance(a, dims, correction, keepdim)[0])


@_std.defvjp
def _std_vjp(ctx, g):
    return _var_grad(ctx, _std_scale(g, ctx.output), ctx.inputs[0])


@defop("var_mean", save=(0,), num_outputs=2)
def _var_mean(a, dims, correction, keepdim):
    return _variance(a, dims, correction, keepdim)


@defop("std_mean", save=(0,), save_output=True, num_outputs=2)
def _std_mean(a, dims, correction, keepdim):
    v, mu = _variance(a, dims, correction, keepdim)
    return array_module(a).sqrt(v), mu


def _mean_part(ctx, gm):
    p = ctx.params
    shape = ctx.in_meta[0][0]
    return expand_reduced(gm / numel_of(shape, p["dims"]), shape, p["dims"], p["keepdim"])


@_var_mean.defvjp
def _var_mean_vjp(ctx, gv, gm):
    return _var_grad(ctx, gv, ctx.inputs[0]) + _mean_part(ctx, gm)


@_std_mean.defvjp
def _std_mean_vjp(ctx, gs, gm):
    gv = _std_scale(gs, ctx.outputs[0])
    return _var_grad(ctx, gv, ctx.inputs[0]) + _mean_part(ctx, gm)


def _variance_fn(name, op):
    def reduce(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        dims, correction = _var_args(name, input, dim, unbiased, correction)
        result = input.dtype.to_real()
        r = dispatch(op, (input,), {"dims": dims, "correction": correction,
                                    "keepdim": keepdim}, result)
        if op.num_outputs == 2:
            return r
        return r if out is None else write_out(r, out)
    reduce.__name__ = name
    return reduce


var = export(_variance_fn("var", _var))
std = export(_variance_fn("std", _std))
var_mean = export(_variance_fn("var_mean", _var_mean), method=False)
std_mean = export(_variance_fn("std_mean", _std_mean), method=False)


# ---------------------------------------------------------------------- order statistics
def _order_pick(a, dim, keepdim, how, k=0):
    """(values, indices) of the element of sorted rank chosen by `how` along dim."""
    xp = array_module(a)
    a1 = a.reshape(1) if a.ndim == 0 else a
    order = stable_argsort(xp, a1, dim)
    n = a1.shape[dim]
    nans = nan_count(xp, a1, dim)
    if how == "median":  # the lower median; a NaN anywhere makes the result NaN
        pos = xp.where(nans > 0, n - nans, (n - 1) // 2)
    elif how == "nanmedian":
        pos = xp.maximum((n - nans - 1) // 2, 0)
    elif how == "kthvalue":
        pos = xp.full(nans.shape, k - 1)
    else:
        pos = _mode_position(xp, xp.take_along_axis(a1, order, axis=dim), dim)
    index = xp.take_along_axis(order, pos.astype(xp.int64), axis=dim)
    values = xp.take_along_axis(a1, index, axis=dim)
    if a.ndim == 0:
        return values.reshape(()), index.reshape(())
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index


def _mode_position(xp, s, dim):
    """Sorted position of the mode along dim: the end of the longest run of equal values
    (the smallest such value on ties), i.e. its last occurrence in input order."""
    s = xp.moveaxis(s, dim, -1)
    n = s.shape[-1]
    starts = xp.ones(s.shape, dtype=bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    ar = xp.arange(n)
    run_start = numpy_backend.accumulate("maximum", xp.where(starts, ar, 0), -1)
    pos = xp.argmax(ar - run_start, axis=-1)[..., None]
    return xp.moveaxis(pos, -1, dim)


def _picker(name, node):
    op = defop(name, node=node, save=(), save_output=True, num_outputs=2)(
        lambda a, dim, keepdim, how, k=0: _order_pick(a, dim, keepdim, how, k))
    op.defvjp(lambda ctx, g, _: scatter_selected(ctx, g, ctx.outputs[1]._data))
    return op


_PICKERS = {name: _picker(name, node) for name, node in (
    ("median", "MedianBackward1"), ("nanmedian", "NanmedianBackward1"),
    ("kthvalue", "KthvalueBackward0"), ("mode", "ModeBackward0"))}


def _pick_dim(name, input, dim, keepdim, out, k=0):
    n = input._data.ndim
    d = one_dim(dim, n)
    if n and input._data.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    if name.endswith("median"):
        _check_pick_dtype(name, input, "median_out")
    elif input._data.size and n:   # (mode and kthvalue of a 0-d or empty input: no kernel)
        _check_pick_dtype(name, input, name + "_cpu")
    values, indices = dispatch(_PICKERS[name], (input,), {"dim": d, "keepdim": keepdim,
                                                          "how": name, "k": k}, input.dtype)
    if out is not None:
        values, indices = write_out(values, out[0]), write_out(indices, out[1])
    return getattr(return_types, name)((values, indices))


def _check_pick_dtype(name, input, kernel):
    """PyTorch's median and kthvalue kernels have no bool or complex loop, mode's no complex
    one."""
    d = input.dtype
    if d.category == dt.COMPLEX or (d is dt.bool and name != "mode"):
        raise not_implemented(kernel, d)


def _median_all_forward(a, how):
    xp = array_module(a)
    if a.size == 0:
        # NaN, or what a C cast of NaN gives for an integer type (True; x86's "integer
        # indefinite" for 32 and 64 bits, 0 once narrowed further), as PyTorch returns
        nan = xp.nan if a.dtype.kind in "fcb" else \
            xp.iinfo(a.dtype).min if a.dtype.itemsize >= 4 else 0
        return xp.asarray(nan, dtype=a.dtype)
    return _order_pick(a.reshape(-1), 0, False, how)[0]


_median_all = defop("median_all", node="MedianBackward0", save=(0,), save_output=True)(
    _median_all_forward)
_nanmedian_all = defop("nanmedian_all", node="NanmedianBackward0", save=(0,),
                       save_output=True)(_median_all_forward)


def _median_all_vjp(ctx, g):
    x = ctx.inputs[0]
    dims = tuple(range(x._data.ndim))
    return expand_reduced(g, x._data.shape, dims, False) * evenly(x, ctx.output, dims, False,
                                                                  True)


_median_all.defvjp(_median_all_vjp)
_nanmedian_all.defvjp(_median_all_vjp)


def _median_fn(name, all_op):
    def reduce(input, dim=None, keepdim=False, *, out=None):
        check_tensor(name, input)
        if dim is None:
            if input._data.size:
                _check_pick_dtype(name, input, "median_cpu")
            r = real_grad_only(name, dispatch(all_op, (input,), {"how": name}, input.dtype),
                               input)
            return r if out is None else write_out(r, out)
        return _pick_dim(name, input, dim, keepdim, out)
    reduce.__name__ = name
    return reduce


median = export(_median_fn("median", _median_all))
nanmedian = export(_median_fn("nanmedian", _nanmedian_all))


@export
def mode(input, dim=-1, keepdim=False, *, out=None):
    check_tensor("mode", input)
    return _pick_dim("mode", input, dim, keepdim, out)


@export
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    n = input._data.ndim
    d = one_dim(dim, n)
    size = input._data.shape[d] if n else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _pick_dim("kthvalue", input, dim, keepdim, out, k)


# ---------------------------------------------------------------------- quantile
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, out, ignore_nan):
    """quantile and nanquantile: q's values of `input` along `dim` (all of it when None)."""
    _check_quantile_input(name, input, interpolation)
    xp = array_module(input._data)
    qs = _quantile_levels(name, input, q, xp)
    s, d = _sorted_rows(input, dim)
    rank = _quantile_ranks(xp, s, qs, ignore_nan)
    r = _movedim(_interpolate(xp, s, rank, interpolation), -1, 0)     # (Q, ...)
    r = _quantile_result_shape(r, input, dim, d, keepdim)
    if not isinstance(q, Tensor):
        r = r.squeeze(0)
    return r if out is None else write_out(r, out)


def _check_quantile_input(name, input, interpolation):
    """PyTorch's errors for the input's dtype and size and for the interpolation's name."""
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input._data.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")


def _quantile_levels(name, input, q, xp):
    """q (a number or a 0-d/1-D tensor) as a 1-D array of levels in [0, 1]."""
    if not isinstance(q, Tensor):
        qs = xp.asarray([q], dtype=input.dtype.np)
    else:
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs = q._data.reshape(-1)
    if ((qs < 0) | (qs > 1)).any():
        bad = float(qs[(qs < 0) | (qs > 1)][0])
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {bad:g}")
    return qs


def _sorted_rows(input, dim):
    """(s, d): `input` as a (..., n) view sorted along its last axis (NaNs last), and the
    wrapped dim (0 when None: the flattened input)."""
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = one_dim(dim, input._data.ndim)
        x = input.reshape(1) if input._data.ndim == 0 else input
        x = _movedim(x, d, -1)
    return sort(x, -1).values, d


def _quantile_ranks(xp, s, qs, ignore_nan):
    """The fractional position of each level in each sorted row: (..., Q). A row holding a
    NaN ranks at its last element (a NaN) unless NaNs are ignored."""
    n = s._data.shape[-1]
    nans = nan_count(xp, s._data, s._data.ndim - 1)
    valid = (n - nans) if ignore_nan else xp.where(nans > 0, n, n)
    rank = qs * (valid - 1).astype(qs.dtype)                    # (..., Q)
    if not ignore_nan:
        rank = xp.where(nans > 0, n - 1, rank)
    return xp.maximum(rank, 0)


def _interpolate(xp, s, rank, interpolation):
    """The values of the sorted rows `s` at the fractional ranks, as `interpolation` says."""
    lo, hi = xp.floor(rank).astype(xp.int64), xp.ceil(rank).astype(xp.int64)
    last = s._data.ndim - 1
    if interpolation == "lower":
        return gather_dim(s, lo, last)
    if interpolation == "higher":
        return gather_dim(s, hi, last)
    if interpolation == "nearest":
        return gather_dim(s, xp.round(rank).astype(xp.int64), last)
    a, b = gather_dim(s, lo, last), gather_dim(s, hi, last)
    w = 0.5 if interpolation == "midpoint" else const(s, (rank - lo).astype(s._data.dtype))
    return a + (b - a) * w


def _quantile_result_shape(r, input, dim, d, keepdim):
    """The (Q, ...) result with the reduced dims kept as 1 or dropped, as keepdim says."""
    if keepdim:
        if dim is None:
            r = r.reshape((r.shape[0],) + (1,) * input._data.ndim)
        elif input._data.ndim:
            r = r.unsqueeze(d + 1)
    elif dim is not None and input._data.ndim == 0:
        r = r.reshape(r.shape[0])
    return r


def _movedim(t, src, dst):
    n = t._data.ndim
    order = list(range(n))
    order.insert(dst % n, order.pop(src % n))
    return t.permute(order) if order != list(range(n)) else t


@export
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, False)


@export
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, True)


# ---------------------------------------------------------------------- cov, corrcoef
def _check_weights(name, w, n, integral):
    if not isinstance(w, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(w).__name__}")
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w._data.ndim} dimensions")
    if w.dtype.category != (dt.INTEGER if integral else dt.FLOATING):
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{dt.type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not w.min().item() >= 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


@export
def cov(input, *, correction=1, fweights=None, aweights=None):
    check_tensor("cov", input)
    correction = int(correction)   # (the parser took a Python or NumPy integer)
    if input._data.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    if input.dtype is dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input._data.ndim < 2 else input
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    w_sum = tensor(n, device=x.device) if w is None else w.sum()
    if w is not None and not w_sum.item() != 0:
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = zeros_like(norm_factor)
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return (c / norm_factor).squeeze()


@export
def corrcoef(input):
    check_tensor("corrcoef", input)
    if input._data.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input._data.ndim} dimensions")
    c = cov(input)
    if c._data.ndim == 0:
        return c / c   # nan for a covariance of nan, inf or 0; else 1
    d = c.diagonal()
    stddev = (d.real if d.dtype.category == dt.COMPLEX else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    # Rounding can leave values just outside [-1, 1]: clipped, as NumPy and PyTorch do.
    if c.dtype.category == dt.COMPLEX:
        return complex_from_parts(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)
