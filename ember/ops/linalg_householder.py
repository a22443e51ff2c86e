"""Householder reflectors: torch.geqrf (LAPACK's packed QR), linalg.householder_product (alias
torch.orgqr) and torch.ormqr. geqrf's forward is LAPACK's (ops/_lapack.py), so its reflectors
and tau are PyTorch's. The products are composites of ember ops, one reflector at a time
(Q <- (I - tau v v^H) Q), so they differentiate, twice, with no VJP of their own.
"""
from .. import _dtype as dt
from .._tensor import write_out
from ..backends import array_module
from . import _lapack
from .linalg_primitives import const, embed, extract, mh, return_type, tril
from .matmul import matmul
from .registry import check_tensor, defop, dispatch, export, name_node

GeqrfResult = return_type("geqrf", ("a", "tau"))
GeqrfOut = return_type("geqrf_out", ("a", "tau"))


def _check_lapack_dtype(kernel, x):
    if x.dtype.category < dt.FLOATING or x.dtype in (dt.float16, dt.bfloat16):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.type_name(x.dtype)}'")


# ---------------------------------------------------------------------- geqrf
@defop("geqrf", node="GeqrfBackward0", save=(), num_outputs=2)
def _geqrf(a):
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    src = _lapack.host(a)
    packed = src.copy()
    tau = _lapack.host(array_module(a).zeros(batch + (min(m, n),), a.dtype))
    if a.size:
        geqrf = _lapack.routine("geqrf", src.dtype)
        for idx in _lapack.batch_indices(batch):
            packed[idx], tau[idx], _, _ = geqrf(src[idx])
    return _lapack.back(a, packed), _lapack.back(a, tau)


@_geqrf.defvjp
def _geqrf_vjp(ctx, ga, gtau):
    # PyTorch does not differentiate geqrf either (linalg.qr is the differentiable QR)
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@export
def geqrf(input, *, out=None):
    check_tensor("geqrf", input)
    if input._data.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf_cpu", input)
    a, tau = dispatch(_geqrf, (input,))
    if out is not None:
        return GeqrfOut((write_out(a, out[0]), write_out(tau, out[1])))
    return GeqrfResult((a, tau))


# ---------------------------------------------------------------------- the products
def _reflectors_times(A, tau, Q):
    """H_1 H_2 ... H_k Q with H_i = I - tau_i v_i v_i^H, v_i the i-th column of A below the
    diagonal with a unit on it (LAPACK's storage of geqrf's reflectors)."""
    m = A._data.shape[-2]
    k = tau._data.shape[-1]
    xp = array_module(A._data)
    V = tril(A, -1) + const(A, xp.eye(*A._data.shape[-2:]))
    for i in reversed(range(k)):
        v = extract(V, (0, i), (m, 1))
        t = tau[..., i:i + 1].unsqueeze(-1)
        Q = Q - matmul(v * t, matmul(mh(v), Q))
    return Q


def _check_batch(name, input, tau):
    if tau._data.ndim != input._data.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._data.ndim} and input.ndim is equal "
                           f"to {input._data.ndim}")
    if tau._data.shape[:-1] != input._data.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau._data.shape[:-1])}")


def householder_product(A, tau, *, out=None):
    check_tensor("linalg_householder_product", A)
    check_tensor("linalg_householder_product", tau, "tau", 2)
    name = "torch.linalg.householder_product"
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A._data.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau._data.ndim and n < tau._data.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    _check_batch(name, A, tau)
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {dt.type_name(tau.dtype)} does not match input "
                           f"dtype {dt.type_name(A.dtype)}")
    _check_lapack_dtype("orgqr_cpu", A)
    xp = array_module(A._data)
    Q = _reflectors_times(A, tau, const(A, xp.eye(m, n)))
    Q = name_node(Q, "LinalgHouseholderProductBackward0")
    if out is not None:
        return write_out(Q, out)
    return Q


@export
def orgqr(input, tau):
    return householder_product(input, tau)


@export
def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    check_tensor("ormqr", input)
    check_tensor("ormqr", tau, "input2", 2)
    check_tensor("ormqr", other, "input3", 3)
    name = "torch.ormqr"
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other._data.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    m, n = input._data.shape[-2:]
    side = -2 if left else -1
    if other._data.shape[side] != m:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    k = tau._data.shape[-1] if tau._data.ndim else 0
    if k != min(other._data.shape[side], n):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    _check_batch(name, input, tau)
    if other._data.ndim != input._data.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other._data.ndim} and "
                           f"input.ndim is equal to {input._data.ndim}")
    if other._data.shape[:-2] != input._data.shape[:-2]:
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(other._data.shape[:-2])}")
    for x, what in ((tau, "tau"), (other, "other")):
        if x.dtype is not input.dtype:
            raise RuntimeError(f"{name}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{dt.type_name(input.dtype)} and {what} has "
                               f"dtype {dt.type_name(x.dtype)}")
    _check_lapack_dtype("ormqr_cpu", input)
    # The full m x m Q: the k reflectors padded with zero columns, applied to the identity
    xp = array_module(input._data)
    square = input._data.shape[:-2] + (m, m)
    reflectors = embed(extract(input, (0, 0), (m, k)), square, (0, 0))
    Q = _reflectors_times(reflectors, tau, const(input, xp.eye(m)))
    if transpose:
        Q = mh(Q)
    r = matmul(Q, other) if left else matmul(other, Q)
    r = name_node(r, "OrmqrBackward0")
    if out is not None:
        if out.dtype is not input.dtype:
            raise RuntimeError(f"{name}: Expected input and result to have the same dtype, but "
                               f"input has dtype{dt.type_name(input.dtype)} and result has "
                               f"dtype {dt.type_name(out.dtype)}")
        return write_out(r, out)
    return r
