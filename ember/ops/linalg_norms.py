"""Norms, ranks, powers and least squares (torch.linalg), the norm-based torch.dist and
torch.renorm, and the torch-level aliases of the linear-algebra functions (torch.det,
torch.inverse, torch.svd, ...)."""
import math

from .. import _dtype as dt
from .._scalars import number
from .._tensor import Tensor, _wrap, write_out
from ..backends import array_module
from ._arguments import number_arg
from ._dims import reduce_dims, wrap_dim
from ._elementwise import LOW, result_of
from . import linalg_decomp as dec
from . import linalg_spectral as spec
from .linalg_checks import check_lapack_dtype, square_check
from .linalg_primitives import abs_pow, const, eye_like, return_type, sgn_pow
from .linalg_solve import cholesky_solve, triangular_solve
from .matmul import matmul
from .reduction import expand_reduced
from .registry import check_tensor, defop, dispatch, export
from .select import where

_INF = math.inf


# ---------------------------------------------------------------------- vector_norm
@defop("linalg_vector_norm", node="LinalgVectorNormBackward0", save_output=True)
def _vector_norm(a, ord, dims, keepdim, acc):
    xp = array_module(a)
    r = xp.abs(a)
    if acc is not None:
        r = r.astype(acc)
    if ord == _INF:
        return xp.max(r, axis=dims, keepdims=keepdim)
    if ord == -_INF:
        return xp.min(r, axis=dims, keepdims=keepdim)
    if ord == 0:
        return xp.sum(r != 0, axis=dims, keepdims=keepdim).astype(r.dtype)
    if ord == 1:
        return xp.sum(r, axis=dims, keepdims=keepdim)
    if ord == 2:
        return xp.sqrt(xp.sum(r * r, axis=dims, keepdims=keepdim))
    return xp.power(xp.sum(xp.power(r, ord), axis=dims, keepdims=keepdim), 1.0 / ord)


@_vector_norm.defvjp
def _vector_norm_vjp(ctx, g):
    x = ctx.inputs[0]
    p = ctx.params
    ord, dims, keepdim = p["ord"], p["dims"], p["keepdim"]
    shape = ctx.in_meta[0][0]
    if ord == 0:
        return x * 0
    norm = expand_reduced(ctx.output, shape, dims, keepdim)
    g = expand_reduced(g, shape, dims, keepdim)
    if ord in (_INF, -_INF):
        # the gradient is shared evenly between the entries that attain the extremum
        xp = array_module(x._data)
        hit = xp.abs(x._data) == norm._data
        count = xp.sum(hit, axis=dims, keepdims=True)
        mag = xp.abs(x._data)
        sign = x._data / xp.where(mag == 0, 1, mag)  # sgn(0) = 0, as PyTorch
        return g * const(norm, xp.where(hit, sign / count, 0))
    # d||x||_p = sgn(x) |x|^(p-1) / ||x||^(p-1); zero where the norm is zero
    return g * sgn_pow(x, ord - 1) * abs_pow(norm, 1 - ord)


def _norm_input(name, x, dtype):
    """`x` in the dtype= a norm computes in, after PyTorch's checks of the pair."""
    if x.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {dt.type_name(x.dtype)}")
    if dtype is None:
        return x
    complex_input = x.dtype.category == dt.COMPLEX
    if dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{dt.type_name(dtype)}")
    if complex_input != (dtype.category == dt.COMPLEX):
        raise RuntimeError(f"{name}: dtype should be {'complex' if complex_input else 'real'} "
                           f"for {'complex' if complex_input else 'real'} inputs, but got "
                           f"{dt.type_name(dtype)}")
    if dt.promote_types(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"{name}: the dtype of the input ({dt.type_name(x.dtype)}) should be "
                           f"convertible without narrowing to the specified dtype "
                           f"({dt.type_name(dtype)})")
    return x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    x = _norm_input("linalg.vector_norm", x, dtype)
    ord = number(ord)
    if isinstance(ord, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of "
                           "norm.")
    ord = float(ord)
    if isinstance(dim, int):
        dim = (dim,)
    dims = reduce_dims(dim, x._data.ndim)
    if not x._data.ndim:
        dims = ()   # (a 0-d tensor's dim 0 or -1, once checked, names no axis of the array)
    if ord < 0 or ord == _INF:
        shape = x._data.shape
        for d in dims:
            if shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {_ord_text(ord)} norm on an "
                    f"empty tensor because the operation does not have an identity")
    result = x.dtype.to_real()
    acc = dt.float32.np if result in (dt.float16, dt.bfloat16) else None
    r = dispatch(_vector_norm, (x,), {"ord": ord, "dims": dims, "keepdim": keepdim,
                                      "acc": acc}, result)
    return r if out is None else write_out(r, out)


def _ord_text(ord):
    return {_INF: "inf", -_INF: "-inf"}.get(ord, f"{ord:g}")


# ---------------------------------------------------------------------- dist, renorm
@export
def dist(input, other, p=2):
    check_tensor("dist", input)
    check_tensor("dist", other, "other", 2)
    p = number_arg("dist", "p", p)
    result = result_of(input, other)
    if result.category < dt.FLOATING:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {dt.type_name(result)} instead.")
    return vector_norm(input - other, p)


@export(inplace=True)
def renorm(input, p, dim, maxnorm, *, out=None):
    check_tensor("renorm", input)
    p = number_arg("renorm", "p", p, 2)
    maxnorm = number_arg("renorm", "maxnorm", maxnorm, 4)
    if type(dim) is not int:
        raise TypeError(f"renorm(): argument 'dim' (position 3) must be int, not "
                        f"{type(dim).__name__}")
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    dim = wrap_dim(dim, ndim)
    others = [d for d in range(ndim) if d != dim]
    # NOTE: float16/bfloat16 norms are taken in float32; the scale factor is then rounded
    # to the input's dtype before the product, as PyTorch does.
    low = input.dtype in LOW
    norm = vector_norm(input, p, others, keepdim=True, dtype=dt.float32 if low else None)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)
    r = input * factor
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- matrix_norm
_MATRIX_ORDS = ("fro", "nuc", _INF, -_INF, 1, -1, 2, -2)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    _norm_input("linalg.matrix_norm", A, None)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    A = _norm_input("linalg.matrix_norm", A, dtype)
    n = A._data.ndim
    d0, d1 = (wrap_dim(d, n) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord == "fro":
        r = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in (1, -1, _INF, -_INF):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = vector_norm(A, 1, inner, keepdim=True)
        r = vector_norm(sums, _INF if ord > 0 else -_INF, outer, keepdim=True)
        if not keepdim:
            r = r.squeeze((d0, d1))
    else:  # 'nuc', 2, -2: through the singular values of the (d0, d1) matrices
        rest = [i for i in range(n) if i not in (d0, d1)]
        S = dec.svdvals(A.permute(rest + [d0, d1]))
        r = S.sum(-1) if ord == "nuc" else vector_norm(S, _INF if ord == 2 else -_INF, -1)
        if keepdim:
            r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return r if out is None else write_out(r, out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """linalg.norm: a vector norm for 1-D dims, a matrix norm for 2-D dims or string ords."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                           f"{list(dim)}")
    if dim is not None and len(dim) == 1 and not isinstance(ord, str):
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    if dim is not None and len(dim) == 1:   # (a str ord is a matrix norm's)
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype,
                           out=out)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if A._data.ndim == 2 or isinstance(ord, str):
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
    if A._data.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                       f"1D or 2D. Got {A._data.ndim}D.")


# ---------------------------------------------------------------------- rank and power
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if A.dtype not in (dt.float32, dt.float64, dt.complex64, dt.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    a = A._data
    xp = array_module(a)
    if a.size == 0:   # (no singular values: rank 0, one per matrix, whatever the tolerances)
        r = _wrap(xp.zeros(a.shape[:-2], dtype=xp.int64), dt.int64, A._device)
        return r if out is None else write_out(r, out)
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else \
        xp.linalg.svd(a, compute_uv=False)
    # (tensor tolerances hold one value per matrix, broadcast against the batch)
    atol = atol._data if isinstance(atol, Tensor) else atol
    rtol = rtol._data if isinstance(rtol, Tensor) else rtol
    cut = spec._cutoff(xp, s, atol, rtol, a.shape)
    r = _wrap(xp.sum(s > cut, axis=-1).astype(xp.int64), dt.int64, A._device)
    return r if out is None else write_out(r, out)


def matrix_power(A, n, *, out=None):
    shape = square_check("linalg.matrix_power", A)
    if n == 0:
        xp = array_module(A._data)
        eye = xp.broadcast_to(xp.eye(shape[-1], dtype=A.dtype.np), shape)
        # NOTE: still a function of A (with zero gradient), as PyTorch's result is
        r = A * 0 + _wrap(eye, A.dtype, A._device) if A._requires_grad else \
            _wrap(eye.copy(), A.dtype, A._device)
    else:
        if n < 0:
            A = dec.inv(A)
            n = -n
        r, base = None, A
        while n:  # binary powering: log2(n) squarings
            if n & 1:
                r = base if r is None else matmul(r, base)
            n >>= 1
            if n:
                base = matmul(base, base)
        if r is A:
            r = A.clone()
    return r if out is None else write_out(r, out)


# ---------------------------------------------------------------------- lstsq
LstsqResult = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B._data.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype not in (dt.float32, dt.float64, dt.complex64, dt.complex128):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {dt.type_name(A.dtype)} and other's "
                           f"dtype {dt.type_name(B.dtype)}")
    driver = driver or "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vector = B._data.ndim == A._data.ndim - 1
    if vector:
        B = B.unsqueeze(-1)
    m, n = A._data.shape[-2:]
    if B._data.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2). "
                           f"Got {m} and {B._data.shape[-2]}")
    # NOTE: the minimum-norm solution through the pseudoinverse: what gelsy/gelsd/gelss
    # return, and gels on full-rank inputs; it differentiates through pinv's VJP.
    rtol = rcond if rcond is not None and rcond > 0 else None
    X = matmul(spec.pinv(A, rtol=rtol), B)
    xp = array_module(A._data)
    real = A.dtype.to_real()
    s = xp.linalg.svd(A._data, compute_uv=False)
    if driver == "gels":
        rank = _wrap(xp.zeros((0,), xp.int64), dt.int64, A._device)
    else:
        cut = spec._cutoff(xp, s, None, rtol, A._data.shape)
        rank = _wrap(xp.sum(s > cut, axis=-1).astype(xp.int64), dt.int64, A._device)
    full_rank = driver == "gels" or bool((rank._data == min(m, n)).all())
    if m > n and driver != "gelsy" and full_rank:
        r = matmul(A, X) - B
        residuals = abs_pow(r, 2).sum(-2)
    else:
        residuals = _wrap(xp.zeros((0,), real.np), real, A._device)
    if driver in ("gelsd", "gelss"):
        svals = _wrap(s.astype(real.np), real, A._device)
    else:
        svals = _wrap(xp.zeros((0,), real.np), real, A._device)
    return LstsqResult((X.squeeze(-1) if vector else X, residuals, rank, svals))


# ---------------------------------------------------------------------- torch.* aliases
def _method(name, fn, function=True):
    def checked(input, *args, **kwargs):
        check_tensor(name, input)   # (torch.det's message names 'input', linalg.det's 'A')
        return fn(input, *args, **kwargs)
    checked.__name__ = checked.__qualname__ = name
    export(checked, name=name, function=function)


def _legacy_qr(input, some=True, *, out=None):
    return dec.QRLegacy(dec.qr(input, "reduced" if some else "complete"))


def _legacy_slogdet(input):
    return dec.SlogdetLegacy(dec.slogdet(input))


def _legacy_cholesky(input, upper=False, *, out=None):
    if input._data.size == 0:   # (PyTorch's legacy cholesky returns before its checks)
        return input.clone()
    return dec.cholesky(input, upper=upper)


def _pinverse(input, rcond=1e-15):
    return spec.pinv(input, rtol=rcond)


def _cholesky_inverse(input, upper=False, *, out=None):
    shape = square_check("cholesky_inverse", input)
    check_lapack_dtype("cholesky_inverse_out_cpu", input)
    n = shape[-1]
    return cholesky_solve(eye_like(input, n), input, upper)


def _install():
    for name, fn in (("det", dec.det), ("logdet", dec.logdet), ("slogdet", _legacy_slogdet),
                     ("inverse", dec.inv), ("pinverse", _pinverse),
                     ("cholesky", _legacy_cholesky), ("qr", _legacy_qr),
                     ("svd", dec.svd_legacy), ("matrix_power", matrix_power),
                     ("matrix_exp", spec.matrix_exp), ("cholesky_solve", cholesky_solve),
                     ("cholesky_inverse", _cholesky_inverse),
                     ("triangular_solve", triangular_solve)):
        _method(name, fn)


_install()
