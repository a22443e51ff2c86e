"""Scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

Their VJPs are reverse scans written with ember ops (a reverse cumsum is sum - cumsum + g),
so they differentiate again.
"""
from .. import _dtype as dt
from .._tensor import write_out
from ..backends import array_module
from ..backends.numpy_backend import accumulate
from . import return_types
from ._promote import compute_dtype
from ._reduce_ops import const, exp_, gather_dim, log_, scatter_dim
from ._grad_support import recorded_dtype
from .reduction import one_dim, sum_dtype
from ._elementwise import defpointwise
from .registry import defop, dispatch, export


def _scan_input(a):
    return a.reshape(1) if a.ndim == 0 else a


def _scan_output(r, a):
    return r.reshape(()) if a.ndim == 0 else r


def _dim(input, dim):
    return one_dim(dim, input._data.ndim)


def reverse_cumsum(g, dim):
    """sum_{k >= i} g_k along dim."""
    return g.sum(dim, keepdim=True) - g.cumsum(dim) + g


# ---------------------------------------------------------------------- cumsum / cumprod
@defop("cumsum", save=())
def _cumsum(a, dim, acc):
    xp = array_module(a)
    return _scan_output(xp.cumsum(_scan_input(a), axis=dim, dtype=acc), a)


@_cumsum.defvjp
def _cumsum_vjp(ctx, g):
    if g._data.ndim == 0:
        return g
    return reverse_cumsum(g, ctx.params["dim"])


def _scan(op, input, dim, dtype, out):
    d = _dim(input, dim)
    result = recorded_dtype(input, sum_dtype(input, dtype))
    r = dispatch(op, (input,), {"dim": d, "acc": compute_dtype(result).np}, result)
    return r if out is None else write_out(r, out)


@export(inplace=True)
def cumsum(input, dim, *, dtype=None, out=None):
    return _scan(_cumsum, input, dim, dtype, out)


@defop("cumprod", save=(0,), save_output=True)
def _cumprod(a, dim, acc):
    xp = array_module(a)
    return _scan_output(xp.cumprod(_scan_input(a), axis=dim, dtype=acc), a)


def _scan_vjp(grad):
    """The VJP of a scan of input x to output y along dim from `grad(g, x, y, dim)`; a 0-d
    scan is the identity, its gradient g itself."""
    def vjp(ctx, g):
        x = ctx.inputs[0]
        if x._data.ndim == 0:
            return g
        return grad(g, x, ctx.output, ctx.params["dim"])
    return vjp


@_cumprod.defvjp
@_scan_vjp
def _cumprod_vjp(g, x, y, dim):
    a = x._data
    xp = array_module(a)
    zero = a == 0
    if not zero.any():
        return reverse_cumsum(g * y, dim) / x
    # NOTE: dividing by x fails at zeros. Split each slice at its first zero z: before z
    # the quotient is exact over the terms k < z; at z the gradient is the sum over k >= z
    # of g_k times the product of x_j (j <= k, j != z); after z it is zero.
    pos = xp.arange(a.shape[dim]).reshape((-1,) + (1,) * (a.ndim - dim - 1))
    first = xp.where(xp.any(zero, axis=dim, keepdims=True),
                     xp.argmax(zero, axis=dim, keepdims=True), a.shape[dim])
    before = const(x, (pos < first).astype(a.dtype))
    at = const(x, (pos == first).astype(a.dtype))
    after_z = const(x, (pos >= first).astype(a.dtype))
    safe = x * before + (1 - before)
    early = reverse_cumsum(g * y * before, dim) / safe * before
    y_skip = (x * (1 - at) + at).cumprod(dim)
    at_z = (g * y_skip * after_z).sum(dim, keepdim=True) * at
    return early + at_z


@export(inplace=True)
def cumprod(input, dim, *, dtype=None, out=None):
    return _scan(_cumprod, input, dim, dtype, out)


def _exclusive_cumprod(x, dim):
    """prod_{j < i} x_j along dim (1 at i = 0)."""
    n = x._data.shape[dim]
    xp = array_module(x._data)
    shape = (-1,) + (1,) * (x._data.ndim - dim - 1)
    pos = xp.arange(n).reshape(shape)
    index = xp.ascontiguousarray(xp.broadcast_to(xp.maximum(pos - 1, 0), x._data.shape))
    first = const(x, xp.broadcast_to(pos == 0, x._data.shape).astype(x._data.dtype))
    return gather_dim(x.cumprod(dim), index, dim) * (1 - first) + first


def products_of_others(x, dim):
    """prod_{j != i} x_j along dim, exact with zeros (no division)."""
    return _exclusive_cumprod(x, dim) * _flip(_exclusive_cumprod(_flip(x, dim), dim), dim)


# ---------------------------------------------------------------------- cummax / cummin
def _cum_extreme(a, dim, ufunc):
    xp = array_module(a)
    a1 = _scan_input(a)
    values = accumulate(ufunc, a1, dim)
    # the latest position holding the running extreme (PyTorch picks the last of ties and
    # the latest NaN once NaN has propagated)
    hit = a1 == values
    if a1.dtype.kind == "f" or a1.dtype.kind == "V":
        hit |= xp.isnan(a1)
    pos = xp.arange(a1.shape[dim]).reshape((-1,) + (1,) * (a1.ndim - dim - 1))
    index = accumulate("maximum", xp.where(hit, pos, 0), dim).astype(xp.int64)
    return _scan_output(values, a), _scan_output(index, a)


@defop("cummax", save=(), save_output=True, num_outputs=2)
def _cummax(a, dim):
    return _cum_extreme(a, dim, "maximum")


@defop("cummin", save=(), save_output=True, num_outputs=2)
def _cummin(a, dim):
    return _cum_extreme(a, dim, "minimum")


def _cum_extreme_vjp(ctx, g, _):
    index = ctx.outputs[1]._data
    if index.ndim == 0:
        return g
    return scatter_dim(g, index, ctx.params["dim"], ctx.in_meta[0][0])


_cummax.defvjp(_cum_extreme_vjp)
_cummin.defvjp(_cum_extreme_vjp)


def _cum_extreme_fn(name, op):
    def scan(input, dim, *, out=None):
        # NOTE: PyTorch's kernel returns an empty input before it wraps dim: any dim goes.
        empty = input._data.size == 0 and input._data.ndim and isinstance(dim, int)
        dim = 0 if empty else _dim(input, dim)
        if input.dtype.category == dt.COMPLEX and input._data.size and input._data.ndim:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{dt.type_name(input.dtype)}'")
        values, indices = dispatch(op, (input,), {"dim": dim}, input.dtype)
        if out is not None:
            values, indices = write_out(values, out[0]), write_out(indices, out[1])
        return getattr(return_types, name)((values, indices))
    scan.__name__ = name
    return scan


cummax = export(_cum_extreme_fn("cummax", _cummax))
cummin = export(_cum_extreme_fn("cummin", _cummin))


# ---------------------------------------------------------------------- logcumsumexp
@defpointwise("logcumsumexp", save=(0,), save_output=True)   # warnings off: -inf steps
def _logcumsumexp(a, dim):
    compute = compute_dtype(dt.from_numpy_dtype(a.dtype)).np
    if a.dtype.kind == "c":
        return _complex_logcumsumexp(a, dim)
    r = accumulate("logaddexp", _scan_input(a).astype(compute, copy=False), dim)
    return _scan_output(r, a)


def _complex_logcumsumexp(a, dim):
    # NOTE: NumPy's logaddexp has no complex loop. PyTorch's complex step is
    # big + log1p(exp(small - big)), `big` the operand with the larger real part (exp cannot
    # overflow), run along the dim one slice at a time.
    xp = array_module(a)
    if a.ndim == 0:
        return a.copy()
    r = xp.moveaxis(a, dim, 0).copy()
    for k in range(1, r.shape[0]):
        x, y = r[k - 1], r[k]
        first = x.real >= y.real
        big, small = xp.where(first, x, y), xp.where(first, y, x)
        step = big + xp.log1p(xp.exp(small - big))
        r[k] = xp.where(xp.isneginf(big.real), small, step)
    return xp.moveaxis(r, 0, dim)


def _flip(t, dim):
    n = t._data.shape[dim]
    xp = array_module(t._data)
    index = xp.arange(n - 1, -1, -1).reshape((-1,) + (1,) * (t._data.ndim - dim - 1))
    return gather_dim(t, xp.ascontiguousarray(xp.broadcast_to(index, t._data.shape)), dim)


def _reverse_logcumsumexp(z, dim):
    return _flip(logcumsumexp(_flip(z, dim), dim), dim)


@_logcumsumexp.defvjp
@_scan_vjp
def _logcumsumexp_vjp(g, x, y, dim):
    # grad_i = sum_{k >= i} g_k exp(x_i - y_k), summed in log space for stability, with the
    # positive and negative parts of g apart (log needs positive numbers).
    # NOTE: zeros of g stand as a huge negative finite log, not -inf: -inf - -inf would
    # make nan in the double backward.
    xp = array_module(g._data)
    tiny = -float(xp.finfo(g._data.dtype).max) / 16
    total = None
    for sign in (1, -1):
        part = g._data * sign > 0
        if not part.any():
            continue
        mask = const(g, part.astype(g._data.dtype))
        logg = log_(g * sign * mask + (1 - mask)) + const(g, xp.where(part, 0, tiny).astype(
            g._data.dtype))
        term = exp_(x + _reverse_logcumsumexp(logg - y, dim)) * sign
        total = term if total is None else total + term
    return total if total is not None else g * 0


@export
def logcumsumexp(input, dim, *, out=None):
    d = _dim(input, dim)   # (PyTorch wraps dim before it looks for a kernel)
    if input.dtype.category < dt.FLOATING:
        raise NotImplementedError("\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{dt.type_name(input.dtype)}'")
    r = dispatch(_logcumsumexp, (input,), {"dim": d}, input.dtype)
    return r if out is None else write_out(r, out)
