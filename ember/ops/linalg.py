"""Products built on matmul: addmm & co, outer, inner, vdot, tensordot, kron, cross,
multi_dot, vecdot (einsum is in einsum.py; the primitives the linalg VJPs share are in
linalg_primitives.py).

Decompositions live in linalg_decomp.py and linalg_spectral.py, solves in linalg_solve.py,
norms in linalg_norms.py.
"""
import warnings

from .. import _dtype as dt
from .._scalars import type_name
from .._tensor import Tensor, write_out
from ..backends import array_module
from ._dims import size_at, wrap_dim
from ._promote import broadcast_error, result_dtype
from .matmul import addmm_fused, bmm, dot, mm, mv
from .registry import check_elements, check_tensor, defop, dispatch, export
from .complex import conj


# ---------------------------------------------------------------------- products
def _scaled(x, s):
    return x if s == 1 else x * s


def _expand_for(input, shape):
    try:
        return input.expand(shape)
    except RuntimeError:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1]}) must match the "
                           f"existing size ({input._data.shape[-1]}) at non-singleton "
                           f"dimension {len(shape) - 1}.  Target sizes: "
                           f"{list(shape)}.  Tensor sizes: {list(input._data.shape)}"
                           ) from None


def _add_scaled(input, prod, beta, alpha, name):
    shape = prod._data.shape
    if input._data.shape != shape:
        input = _expand_for(input, shape)
    prod = _scaled(prod, alpha)
    if beta == 0:
        # NOTE: beta=0 ignores input entirely (nan and inf in it do not propagate).
        return prod + input * 0 if input._requires_grad else prod
    return _scaled(input, beta) + prod


# the C++ type names torch's messages print for a dtype (caffe2::TypeMeta's names)
_CPP_TYPES = {dt.bool: "bool", dt.uint8: "unsigned char", dt.int8: "signed char",
              dt.int16: "short int", dt.int32: "int", dt.int64: "long int",
              dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16", dt.float32: "float",
              dt.float64: "double", dt.complex64: "c10::complex<float>",
              dt.complex128: "c10::complex<double>"}


@export(inplace=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    # torch's CPU addmm compares the dtypes (input's with mat2's, then mat1's) before any shape
    for name, t in (("self", input), ("mat1", mat1)):
        if isinstance(t, Tensor) and isinstance(mat2, Tensor) and t.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{dt.type_name(t.dtype)} and {dt.type_name(mat2.dtype)}")
    if (beta == 1 and alpha == 1 and out is None and isinstance(input, Tensor)
            and _fusable(input, mat1, mat2)):
        return addmm_fused(input, mat1, mat2)
    r = _add_scaled(input, mm(mat1, mat2), beta, alpha, "addmm")
    return r if out is None else write_out(r, out)


def _fusable(input, mat1, mat2):
    """Plain addmm on matrices that multiply, of one dtype and device, with `input`
    broadcasting to the product (everything else takes the composite path and its errors)."""
    a, b, c = mat1._data.shape, mat2._data.shape, input._data.shape
    if len(a) != 2 or len(b) != 2 or a[1] != b[0] or len(c) > 2:
        return False
    if not (mat1.dtype is mat2.dtype is input.dtype and mat1._device == mat2._device ==
            input._device):
        return False
    out = (a[0], b[1])
    return all(s in (1, o) for s, o in zip(c[::-1], out[::-1]))


@export(inplace=True)
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    prod = mv(mat, vec)   # (its shape and dtype checks come first)
    if isinstance(input, Tensor) and input.dtype is not mat.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got " +
                           ", ".join(dt.type_name(t.dtype) for t in (input, mat)) + ", and " +
                           dt.type_name(vec.dtype))
    r = _add_scaled(input, prod, beta, alpha, "addmv")
    return r if out is None else write_out(r, out)


@export(inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    if all(isinstance(t, Tensor) for t in (input, vec1, vec2)):
        # (PyTorch's kernel computes in the three operands' common dtype, input expanded to
        # the product's shape first: a 0-d input promotes as a full tensor)
        d = dt.promote_types(dt.promote_types(input.dtype, vec1.dtype), vec2.dtype)
        vec1, vec2 = vec1.to(d), vec2.to(d)
    r = _add_scaled(input, outer(vec1, vec2), beta, alpha, "addr")
    return r if out is None else write_out(r, out)


def _expand_to_product(name, input, batch1, batch2, dims):
    """`input` expanded to the product's shape read off the batches' sizes, before their rank
    is checked: PyTorch's order, so a batch of the wrong rank is an IndexError from size()."""
    for position, (x, arg) in enumerate(((input, "input"), (batch1, "batch1"),
                                         (batch2, "batch2")), 1):
        check_tensor(name, x, arg, position)
    shape = tuple(size_at(x._data.shape, d) for x, d in dims)
    return input if input._data.shape == shape else _expand_for(input, shape)


@export(inplace=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    input = _expand_to_product("baddbmm", input, batch1, batch2,
                               ((batch1, 0), (batch1, 1), (batch2, 2)))
    prod = bmm(batch1, batch2)   # (its shape checks come first)
    if input.dtype is not batch1.dtype:   # (batch1 against batch2: bmm's own check)
        raise RuntimeError("Input dtypes must be the same, got: " + ", ".join(
            f"{name} {_CPP_TYPES[t.dtype]}" for name, t in
            (("input", input), ("batch1:", batch1), ("batch2:", batch2))))
    r = _add_scaled(input, prod, beta, alpha, "baddbmm")
    return r if out is None else write_out(r, out)


@export(inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    input = _expand_to_product("addbmm", input, batch1, batch2, ((batch1, 1), (batch2, 2)))
    prod = bmm(batch1, batch2)   # (its shape and dtype checks come first)
    if input.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{dt.type_name(input.dtype)} and {dt.type_name(batch2.dtype)}")
    r = _add_scaled(input, prod.sum(0), beta, alpha, "addbmm")
    return r if out is None else write_out(r, out)


@export(aliases=("ger",))
def outer(input, vec2, *, out=None):
    for x, what in ((input, "self"), (vec2, "vec2")):
        if x._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {what}, but got "
                               f"{x._data.ndim}-D")
    r = input.unsqueeze(-1) * vec2
    return r if out is None else write_out(r, out)


@export
def vdot(input, other, *, out=None):
    if input._data.ndim != 1 or other._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{other._data.ndim}D tensors")
    return dot(conj(input), other, out=out)


@export
def inner(input, other, *, out=None):
    if input._data.ndim == 0 or other._data.ndim == 0:
        r = input * other
    else:
        if input.dtype is not other.dtype:
            raise RuntimeError("both inputs should have same dtype")
        if input._data.shape[-1] != other._data.shape[-1]:
            raise RuntimeError(
                f"inner() the last dimension must match on both input tensors but got "
                f"shapes {list(input._data.shape)} and {list(other._data.shape)}")
        r = tensordot(input, other, ([-1], [-1]))
    return r if out is None else write_out(r, out)


@export
def tensordot(a, b, dims=2, out=None):
    # NOTE: PyTorch's Python code reads dims first (its unpacking and asserts are the
    # errors), then its builtin's parser checks a, b and the two dim lists
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] "
                           f"or list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        da, db = dims
    elif isinstance(dims, Tensor) and dims.numel() > 1:
        if dims.shape[0] != 2:
            raise AssertionError(f"dims tensor must have size 2 in first dimension, got "
                                 f"{dims.shape[0]}")
        da, db = dims[0].tolist(), dims[1].tolist()
    else:
        n = int(dims.item()) if isinstance(dims, Tensor) else dims
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if not isinstance(dims, Tensor) and n > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(-n, 0)), list(range(n))
    check_tensor("tensordot", a)
    check_tensor("tensordot", b, "other", 2)
    na, nb = a._data.ndim, b._data.ndim
    for name, ds, position in (("dims_self", da, 3), ("dims_other", db, 4)):
        if not isinstance(ds, (list, tuple)) or not all(
                isinstance(d, int) and not isinstance(d, bool) for d in ds):
            raise TypeError(f"tensordot(): argument '{name}' (position {position}) must be "
                            f"tuple of ints, not {type_name(ds)}")
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    da = [wrap_dim(d, na) for d in da]
    db = [wrap_dim(d, nb) for d in db]
    for x, y in zip(da, db):
        sx, sy = a._data.shape[x], b._data.shape[y]
        # a contracted dimension of size 1 broadcasts: the other side is summed over it
        if sy == 1 and sx != 1:
            a = a.sum(x, keepdim=True, dtype=a.dtype)
        elif sx == 1 and sy != 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
        elif sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sx} in dim {x} and second has size {sy} in dim {y}")
    sa, sb = a._data.shape, b._data.shape
    fa = [d for d in range(na) if d not in da]
    fb = [d for d in range(nb) if d not in db]
    k = 1
    for d in da:
        k *= sa[d]
    am = a.permute(fa + da).reshape(-1, k)
    bm = b.permute(db + fb).reshape(k, -1)
    r = mm(am, bm).reshape([sa[d] for d in fa] + [sb[d] for d in fb])
    return r if out is None else write_out(r, out)


@export
def kron(input, other, *, out=None):
    check_tensor("kron", input)
    check_tensor("kron", other, "other", 2)
    n = max(input._data.ndim, other._data.ndim)
    sa = (1,) * (n - input._data.ndim) + input._data.shape
    sb = (1,) * (n - other._data.ndim) + other._data.shape
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    r = (a * b).reshape([x * y for x, y in zip(sa, sb)])
    return r if out is None else write_out(r, out)


# --- cross product along a dim of size 3
@defop("linalg_cross", node="LinalgCrossBackward0")
def _cross(a, b, dim):
    xp = array_module(a, b)
    return xp.cross(a, b, axisa=dim, axisb=dim, axisc=dim)


@_cross.defvjp
def _cross_vjp(ctx, g):
    a, b = ctx.inputs
    dim = ctx.params["dim"]
    ga = _cross_call(b, g, dim) if ctx.edges[0] is not None else None
    gb = _cross_call(g, a, dim) if ctx.edges[1] is not None else None
    return ga, gb


def _cross_call(a, b, dim):
    """dim counts from the end (negative), so it names the same axis in every operand."""
    d = result_dtype(a, b)
    arrays = (a._data.astype(d.np, copy=False), b._data.astype(d.np, copy=False))
    return dispatch(_cross, (a, b), {"dim": dim}, d, arrays)


def linalg_cross(input, other, *, dim=-1, out=None):
    n = max(input._data.ndim, other._data.ndim)
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, n)
    sa, sb = input._data.shape, other._data.shape
    if sa[d] != 3 or sb[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[d]} and {sb[d]}")
    if input.dtype is not other.dtype:   # (PyTorch's kernel does not promote)
        raise RuntimeError(f"expected scalar type {dt.type_name(input.dtype)} but found "
                           f"{dt.type_name(other.dtype)}")
    if input.dtype is dt.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    try:
        r = _cross_call(input, other, d - n)
    except ValueError:
        raise broadcast_error(sa, sb) from None
    return r if out is None else write_out(r, out)


@export
def cross(input, other, dim=None, *, out=None):
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use "
                      "torch.linalg.cross.", UserWarning, stacklevel=2)
        shape = [max(x, y) for x, y in zip(input._data.shape, other._data.shape)]
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim, out=out)


# --- chains of products
def multi_dot(tensors, *, out=None):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        nd = t._data.ndim
        if (i in (0, n - 1) and nd not in (1, 2)) or (0 < i < n - 1 and nd != 2):
            where = "first" if i == 0 else "last" if i == n - 1 else f"{i}"
            what = "1D or 2D" if i in (0, n - 1) else "2D"
            raise RuntimeError(f"multi_dot(): the {where} tensor must be {what} but got "
                               f"{nd}D" if i in (0, n - 1) else
                               f"multi_dot(): tensor {i} must be 2D but got {nd}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_short(tensors[0].dtype)} and tensor {i} "
                               f"{_short(t.dtype)}")
    first, last = tensors[0], tensors[-1]
    mats = list(tensors)
    if first._data.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last._data.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i]._data.shape[1] != mats[i + 1]._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i]._data.shape)} and "
                               f"{list(tensors[i + 1]._data.shape)} cannot be multiplied")
    r = _chain(mats)
    if first._data.ndim == 1:
        r = r.squeeze(0)
    if last._data.ndim == 1:
        r = r.squeeze(-1)
    return r if out is None else write_out(r, out)


def _chain(mats):
    # Three matrices: pick the cheaper association; longer chains multiply left to right.
    if len(mats) == 3:
        (a, b), c = mats[0]._data.shape, mats[2]._data.shape[1]
        d = mats[1]._data.shape[1]
        if a * b * d + a * d * c > b * d * c + a * b * c:
            return mm(mats[0], mm(mats[1], mats[2]))
    r = mats[0]
    for m in mats[1:]:
        r = mm(r, m)
    return r


def _short(d):
    return {dt.float32: "float", dt.float64: "double"}.get(d, dt.type_name(d).lower())


@export(method=False)
def chain_matmul(*matrices, out=None):
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                  "or more tensors rather than multiple parameters.", UserWarning,
                  stacklevel=2)
    check_elements(matrices)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:   # (unlike multi_dot, no vector at either end)
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone() if out is None else write_out(matrices[0], out)
    return multi_dot(matrices, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {dt.type_name(x.dtype)} and y of type "
                           f"{dt.type_name(y.dtype)} instead")
    if x.dtype.category < dt.FLOATING:
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {dt.type_name(x.dtype)}")
    r = (conj(x) * y).sum(dim)
    return r if out is None else write_out(r, out)

