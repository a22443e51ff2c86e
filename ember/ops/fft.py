"""Discrete Fourier transforms: PyTorch's three primitives (complex-to-complex, real-to-complex,
complex-to-real; grad_fn FftC2CBackward0, FftR2CBackward0, FftC2RBackward0) and every
function of torch.fft built on them as PyTorch builds them (padding/trimming by `n=`/`s=`,
conj for the inverse and Hermitian forms), so gradients and node names follow PyTorch's.

Normalization is a per-primitive scale mode over the dims it transforms (none, 1/sqrt(n),
1/n), independent of direction, as in PyTorch's kernels: the adjoint of a transform is the
opposite-direction transform with the same mode, which is what the VJPs use.
"""
import numpy as np

from .. import _dtype as dt
from .._inplace import write_out
from .._tensor import _wrap
from ..backends import array_module
from ._dims import int_tuple, wrap_dim
from ._elementwise import check_tensor
from .nn_resample import constant_pad_nd
from .registry import defop, dispatch

NONE, BY_ROOT_N, BY_N = 0, 1, 2
# scipy.fft's `norm` giving each scale mode for a forward / an inverse transform.
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")
_scipy_fft = None


def _fft_module(a):
    """scipy.fft for NumPy arrays (it keeps single precision, NumPy's pocketfft does not);
    the array module's own fft (cupy.fft) otherwise. Imported on first use."""
    global _scipy_fft
    xp = array_module(a)
    if xp is not np:
        return xp.fft
    if _scipy_fft is None:
        import scipy.fft  # (deferred: loads scipy.fft on first use)
        _scipy_fft = scipy.fft
    return _scipy_fft


def _transform(a, fname, dim, norm, forward, **kwargs):
    """`a` through the fft module's function `fname` over `dim`, scaled by mode `norm` as a
    transform in direction `forward`."""
    scaling = _FORWARD_NORM if forward else _INVERSE_NORM
    return getattr(_fft_module(a), fname)(a, axes=dim, norm=scaling[norm], **kwargs)


# ---------------------------------------------------------------------- the three primitives
@defop("fft_c2c", node="FftC2CBackward0", save=(), conj_ready=True)
def _c2c(a, dim, norm, forward):
    if not dim:
        return a.copy()
    return _transform(a, "fftn" if forward else "ifftn", dim, norm, forward)


@_c2c.defvjp
def _c2c_vjp(ctx, g):
    p = ctx.params
    return fft_c2c(g, p["dim"], p["norm"], not p["forward"])


@defop("fft_r2c", node="FftR2CBackward0", save=(), conj_ready=True)
def _r2c(a, dim, norm, onesided):
    return _transform(a, "rfftn" if onesided else "fftn", dim, norm, True)


@_r2c.defvjp
def _r2c_vjp(ctx, g):
    # The one-sided transform is the full one with the upper half of its rows dropped: its
    # adjoint puts zeros back there, runs the inverse c2c and keeps the real part.
    p = ctx.params
    last = p["dim"][-1]
    full = ctx.in_meta[0][0][last]
    if p["onesided"] and g.shape[last] < full:
        pad = [0] * (2 * g.dim())
        pad[2 * (g.dim() - 1 - last) + 1] = full - g.shape[last]
        g = constant_pad_nd(g, pad)
    return fft_c2c(g, p["dim"], p["norm"], False).real


@defop("fft_c2r", node="FftC2RBackward0", save=(), conj_ready=True)
def _c2r(a, dim, norm, last_dim_size):
    s = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    return _transform(a, "irfftn", dim, norm, False, s=s)


@_c2r.defvjp
def _c2r_vjp(ctx, g):
    # The inverse reads each stored frequency k in 1 .. n - (n//2 + 1) twice (as itself and,
    # conjugated, as n - k): its gradient is the one-sided r2c of g with those bins doubled.
    p = ctx.params
    dim = p["dim"]
    gi = fft_r2c(g, dim, p["norm"], True)
    last = dim[-1]
    n, half = g.shape[last], gi.shape[last]
    if n - half > 0:
        xp = array_module(gi._data)
        weight = xp.ones(half, dtype=g.dtype.np)
        weight[1:n - half + 1] = 2
        shape = [1] * gi.dim()
        shape[last] = half
        gi = gi * _wrap(weight.reshape(shape), g.dtype, g._device)
    return gi


def fft_c2c(x, dim, norm, forward):
    return dispatch(_c2c, (x,), {"dim": tuple(dim), "norm": norm, "forward": forward},
                    x.dtype)


def fft_r2c(x, dim, norm, onesided):
    return dispatch(_r2c, (x,), {"dim": tuple(dim), "norm": norm, "onesided": onesided},
                    x.dtype.to_complex())


def fft_c2r(x, dim, norm, last_dim_size):
    return dispatch(_c2r, (x,), {"dim": tuple(dim), "norm": norm,
                                 "last_dim_size": last_dim_size}, x.dtype.to_real())


# ---------------------------------------------------------------------- argument handling
def norm_mode(norm, forward):
    """PyTorch's norm string as a scale mode for a transform in direction `forward`."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def promote(x, require_complex=False):
    """The input cast to the dtype the transforms compute in (integers -> default float)."""
    d = x.dtype
    if d.category == dt.COMPLEX:
        return x
    target = d if d.category == dt.FLOATING else dt.get_default_dtype()
    if target not in (dt.float32, dt.float64):
        raise RuntimeError(f"Unsupported dtype {dt.type_name(target)}")
    if require_complex:
        target = target.to_complex()
    return x if target is d else x.to(target)


def resize(x, dims, sizes):
    """x zero-padded or trimmed (from index 0) so that x.size(dims[i]) == sizes[i]."""
    pad = [0] * (2 * x.dim())
    padded = False
    for d, s in zip(dims, sizes):
        if s == -1:
            continue
        if x.shape[d] > s:
            x = x.narrow(d, 0, s)
        elif x.shape[d] < s:
            pad[2 * (x.dim() - 1 - d) + 1] = s - x.shape[d]
            padded = True
    if not padded:
        return x
    return constant_pad_nd(x, pad)


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def one_dim(x, dim):
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, x.dim())


def shape_and_dims(x, s, dim):
    """PyTorch's canonical (shape, dims) of an n-dimensional transform."""
    ndim = x.dim()
    dims = None
    s, dim = int_tuple(s), int_tuple(dim)
    if dim is not None:
        if ndim == 0 and dim:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        if dims is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(x.shape[d] if n == -1 else int(n) for n, d in zip(s, dims))
    elif dims is None:
        dims = tuple(range(ndim))
        shape = tuple(x.shape)
    else:
        shape = tuple(x.shape[d] for d in dims)
    for n in shape:
        _points(n)
    return shape, dims


def c2r_shape_and_dims(fname, x, s, dim):
    """shape_and_dims for the Hermitian-input transforms, with the output's last size."""
    shape, dims = shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    s = int_tuple(s)
    if s is None or s[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _points(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def _real_input(fname, x, kind="real"):
    if x.dtype.category == dt.COMPLEX:
        raise RuntimeError(f"{fname} expects a {kind} input tensor, but got "
                           f"{dt.type_name(x.dtype)}")


def _done(result, out):
    return result if out is None else write_out(result, out)


# ---------------------------------------------------------------------- one-dimensional
def _c2c_1d(input, n, dim, norm, forward):
    d = one_dim(input, dim)
    size = input.shape[d] if n is None else n
    _points(size)
    if n is not None:
        input = resize(input, (d,), (n,))
    return fft_c2c(input, (d,), norm_mode(norm, forward), forward)


def _r2c_1d(fname, input, n, dim, norm, forward, onesided):
    _real_input(fname, input)
    input = promote(input)
    d = one_dim(input, dim)
    size = input.shape[d] if n is None else n
    _points(size)
    if n is not None:
        input = resize(input, (d,), (n,))
    r = fft_r2c(input, (d,), norm_mode(norm, forward), onesided)
    return r if forward else r.conj()


def _c2r_1d(input, n, dim, norm, forward):
    input = promote(input, require_complex=True)
    d = one_dim(input, dim)
    size = 2 * (input.shape[d] - 1) if n is None else n
    _points(size)
    if n is not None:
        input = resize(input, (d,), (size // 2 + 1,))
    mode = norm_mode(norm, forward)
    if forward:
        input = input.conj()
    return fft_c2r(input, (d,), mode, size)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_fft", input)
    if input.dtype.category == dt.COMPLEX:
        return _done(_c2c_1d(input, n, dim, norm, True), out)
    return _done(_r2c_1d("fft", input, n, dim, norm, True, False), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_ifft", input)
    if input.dtype.category == dt.COMPLEX:
        return _done(_c2c_1d(input, n, dim, norm, False), out)
    return _done(_r2c_1d("ifft", input, n, dim, norm, False, False), out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_rfft", input)
    return _done(_r2c_1d("rfft", input, n, dim, norm, True, True), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_irfft", input)
    return _done(_c2r_1d(input, n, dim, norm, False), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_hfft", input)
    return _done(_c2r_1d(input, n, dim, norm, True), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    check_tensor("fft_ihfft", input)
    return _done(_r2c_1d("ihfft", input, n, dim, norm, False, True), out)


# ---------------------------------------------------------------------- n-dimensional
def _c2c_nd(input, s, dim, norm, forward):
    shape, dims = shape_and_dims(input, s, dim)
    x = resize(promote(input, require_complex=True), dims, shape)
    return fft_c2c(x, dims, norm_mode(norm, forward), forward)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_fftn", input)
    return _done(_c2c_nd(input, s, dim, norm, True), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_ifftn", input)
    return _done(_c2c_nd(input, s, dim, norm, False), out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_rfftn", input)
    _real_input("rfftn", input, "real-valued")
    shape, dims = shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = resize(promote(input), dims, shape)
    return _done(fft_r2c(x, dims, norm_mode(norm, True), True), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_irfftn", input)
    shape, dims, last = c2r_shape_and_dims("irfftn", input, s, dim)
    x = resize(promote(input, require_complex=True), dims, shape)
    return _done(fft_c2r(x, dims, norm_mode(norm, False), last), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_hfftn", input)
    shape, dims, last = c2r_shape_and_dims("hfftn", input, s, dim)
    x = resize(promote(input, require_complex=True), dims, shape)
    mode = norm_mode(norm, True)
    if len(dims) > 1:
        x = fft_c2c(x, dims[:-1], mode, True)
    return _done(fft_c2r(x.conj(), dims[-1:], mode, last), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    check_tensor("fft_ihfftn", input)
    shape, dims = shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = promote(input)
    if x.dtype.category == dt.COMPLEX:   # (the r2c kernel's own check, as PyTorch reaches it)
        raise RuntimeError("Only supports floating-point dtypes, but found: "
                           f"{dt.type_name(x.dtype)}")
    x = resize(x, dims, shape)
    mode = norm_mode(norm, False)
    r = fft_r2c(x, dims[-1:], mode, True)
    if len(dims) == 1:
        return _done(r.conj(), out)
    return _done(fft_c2c(r.conj_physical(), dims[:-1], mode, False), out)


def _two(fn):
    name = fn.__name__[:-1] + "2"

    def two_dim(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        check_tensor("fft_" + name, input)
        return fn(input, s=s, dim=dim, norm=norm, out=out)
    two_dim.__name__ = two_dim.__qualname__ = name
    return two_dim


fft2, ifft2, rfft2, irfft2, hfft2, ihfft2 = (_two(f) for f in (fftn, ifftn, rfftn, irfftn,
                                                                 hfftn, ihfftn))
