"""The small primitives the linalg VJPs share: torch.return_types-style named tuples, constants
and identities like a tensor, the conjugate transpose, triangle masks, diagonals and their
adjoint diag_embed, block embedding and extraction, and |x|**q with sign(x)*|x|**q. Each
differentiable primitive's VJP is its adjoint, so the linalg gradients differentiate again."""
from .._tensor import _wrap
from ..backends import array_module
from . import return_types
from ._dims import wrap_dim
from .registry import defop, dispatch
from .complex import conj


# ---------------------------------------------------------------------- named tuples
def return_type(name, fields):
    """A structseq like torch.return_types.<name>, also reachable as ember.return_types.<name>."""
    cls = return_types._make(name, fields)
    setattr(return_types, name, cls)
    return cls


# ---------------------------------------------------------------------- shared helpers
def const(like, array):
    """`array` as a Tensor of `like`'s dtype and device, outside the graph."""
    return _wrap(array.astype(like.dtype.np, copy=False), like.dtype, like._device)


def eye_like(x, n):
    xp = array_module(x._data)
    return const(x, xp.eye(n, dtype=x.dtype.np))


def mh(x):
    """The conjugate transpose of the last two dims (the transpose for real dtypes)."""
    return conj(x.mT)


def tri_mask(x, n, m, k=0, upper=False):
    xp = array_module(x._data)
    mask = xp.tri(n, m, k - 1 if upper else k, dtype=x.dtype.np)
    return const(x, 1 - mask if upper else mask)


def tril(x, k=0):
    n, m = x._data.shape[-2:]
    return x * tri_mask(x, n, m, k)


def triu(x, k=0):
    n, m = x._data.shape[-2:]
    return x * tri_mask(x, n, m, k, upper=True)


# --- diagonals: diagonal(x, offset, d1, d2) and its adjoint diag_embed, each the other's VJP
@defop("linalg_diagonal", node="DiagonalBackward0", save=())
def _diagonal(a, offset, dim1, dim2):
    return array_module(a).diagonal(a, offset, dim1, dim2).copy()


@_diagonal.defvjp
def _diagonal_vjp(ctx, g):
    p = ctx.params
    return diag_embed(g, p["offset"], p["dim1"], p["dim2"], ctx.in_meta[0][0])


@defop("linalg_diag_embed", node="DiagEmbedBackward0", save=())
def _diag_embed(v, offset, dim1, dim2, shape):
    xp = array_module(v)
    n = len(shape)
    rest = [i for i in range(n) if i not in (dim1, dim2)]
    inner = tuple(shape[i] for i in rest) + (shape[dim1], shape[dim2])
    out = xp.zeros(inner, dtype=v.dtype)
    k = v.shape[-1]
    idx = xp.arange(k)
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., rows, cols] = v
    return xp.moveaxis(out, (n - 2, n - 1), (dim1, dim2))


@_diag_embed.defvjp
def _diag_embed_vjp(ctx, g):
    p = ctx.params
    return diagonal(g, p["offset"], p["dim1"], p["dim2"])


def diagonal(x, offset=0, dim1=-2, dim2=-1):
    n = x._data.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dispatch(_diagonal, (x,), {"offset": offset, "dim1": d1, "dim2": d2})


def diag_embed(v, offset, dim1, dim2, shape):
    return dispatch(_diag_embed, (v,), {"offset": offset, "dim1": dim1, "dim2": dim2,
                                       "shape": tuple(shape)})


def diag_matrix(v):
    """A batch of diagonal matrices from a batch of vectors (last dim)."""
    k = v._data.shape[-1]
    shape = v._data.shape[:-1] + (k, k)
    return diag_embed(v, 0, len(shape) - 2, len(shape) - 1, shape)


# --- blocks: embed(x, shape, starts) places x in zeros; extract is its adjoint
@defop("linalg_embed", node="SliceBackward0", save=())
def _embed(a, shape, starts):
    xp = array_module(a)
    out = xp.zeros(shape, dtype=a.dtype)
    out[tuple(slice(s, s + n) for s, n in zip(starts, a.shape))] = a
    return out


@_embed.defvjp
def _embed_vjp(ctx, g):
    return extract(g, ctx.params["starts"], ctx.in_meta[0][0])


@defop("linalg_extract", node="SliceBackward0", save=())
def _extract(a, starts, sizes):
    return a[tuple(slice(s, s + n) for s, n in zip(starts, sizes))].copy()


@_extract.defvjp
def _extract_vjp(ctx, g):
    return embed(g, ctx.in_meta[0][0], ctx.params["starts"])


def embed(x, shape, starts):
    starts = (0,) * (len(shape) - len(starts)) + tuple(starts)
    return dispatch(_embed, (x,), {"shape": tuple(shape), "starts": starts})


def extract(x, starts, sizes):
    """x[..., s0:s0+n0, s1:s1+n1] for the trailing dims named by starts/sizes."""
    lead = x._data.shape[:len(x._data.shape) - len(sizes)]
    starts = (0,) * len(lead) + tuple(starts)
    sizes = tuple(lead) + tuple(sizes)
    return dispatch(_extract, (x,), {"starts": starts, "sizes": sizes})


# --- |x|**q and sign(x)*|x|**q, each differentiating into the other (0 where x == 0, q < 0)
@defop("linalg_abs_pow", node="PowBackward0", save=(0,))
def _abs_pow(a, q):
    xp = array_module(a)
    r = xp.abs(a)
    if q < 0:
        with_zero = r == 0
        return xp.where(with_zero, 0, xp.power(xp.where(with_zero, 1, r), q)).astype(r.dtype)
    return r if q == 1 else xp.power(r, q)


@_abs_pow.defvjp
def _abs_pow_vjp(ctx, g):
    x = ctx.inputs[0]
    q = ctx.params["q"]
    return g * (q * sgn_pow(x, q - 1)) if q != 0 else g * 0


@defop("linalg_sgn_pow", node="PowBackward0", save=(0,))
def _sgn_pow(a, q):
    xp = array_module(a)
    r = xp.abs(a)
    safe = xp.where(r == 0, 1, r)
    s = a / safe
    return s * xp.where(r == 0, 0, xp.power(safe, q)) if q < 0 else s * xp.power(r, q)


@_sgn_pow.defvjp
def _sgn_pow_vjp(ctx, g):
    x = ctx.inputs[0]
    q = ctx.params["q"]
    return g * (q * abs_pow(x, q - 1)) if q != 0 else g * 0


def abs_pow(x, q):
    return dispatch(_abs_pow, (x,), {"q": q}, x.dtype.to_real())


def sgn_pow(x, q):
    return dispatch(_sgn_pow, (x,), {"q": q})
