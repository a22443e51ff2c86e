"""Matrix products: matmul (batched, broadcast, 1-D cases), mm, bmm, mv, dot; their kernels
are backends/matmul.py's."""
from .. import _dtype as dt
from .._tensor import Tensor, write_out
from ..backends import matmul as products
from ._promote import broadcast_error, compute_dtype
from .registry import METHODS, check_tensor, defop, dispatch, export


def _check_dtypes(name, a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_long_name(a.dtype)} != {_long_name(b.dtype)}")


def _long_name(d):
    return {dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half",
            dt.bfloat16: "c10::BFloat16", dt.int64: "long int", dt.int32: "int",
            dt.int16: "short int", dt.int8: "signed char", dt.uint8: "unsigned char",
            dt.bool: "bool", dt.complex64: "c10::complex<float>",
            dt.complex128: "c10::complex<double>"}[d]


def _dims(shape):
    return "x".join(map(str, shape))


@defop("matmul", node="MmBackward0")
def _matmul(a, b, acc):
    if acc is not None:
        return products.matmul(a.astype(acc), b.astype(acc))
    return products.matmul(a, b)


@_matmul.defvjp
def _matmul_vjp(ctx, g):
    a, b = ctx.inputs
    if a.ndim == 1 and b.ndim == 1:  # a dot product: g is 0-dim
        return (g * b if ctx.edges[0] else None), (g * a if ctx.edges[1] else None)
    ga = gb = None
    a1 = a if a.ndim > 1 else a.unsqueeze(0)
    b1 = b if b.ndim > 1 else b.unsqueeze(-1)
    g1 = g
    if a.ndim == 1:
        g1 = g1.unsqueeze(-2)
    if b.ndim == 1:
        g1 = g1.unsqueeze(-1)
    if ctx.edges[0] is not None:
        ga = matmul(g1, b1.mT)
        if a.ndim == 1:
            ga = ga.squeeze(-2)
    if ctx.edges[1] is not None:
        gb = _mat2_grad(a1, g1, b1)
        if b.ndim == 1:
            gb = gb.squeeze(-1)
    return ga, gb


def _mat2_grad(a, g, b):
    """a^T @ g, the gradient of the second factor, laid out like it: when b is a transposed
    view (`x @ W.t()` in nn.Linear) the product is computed transposed, so that W's gradient
    after TBackward's transpose is contiguous and AccumulateGrad keeps it without a copy (as
    PyTorch's mm_mat2_backward does)."""
    data = b._data
    if data.ndim == 2 and g.ndim == 2 and data.flags.f_contiguous and \
            not data.flags.c_contiguous:
        return matmul(g.mT, a).mT
    return matmul(a.mT, g)


def _product(a, b, name, out=None):
    """a @ b after the checks every product makes (written into `out` when given)."""
    check_tensor(name, a)
    check_tensor(name, b, "other" if name == "matmul" else "mat2", 2)
    _check_dtypes(name, a, b)
    compute = compute_dtype(a.dtype)
    acc = compute.np if compute is not a.dtype else None
    r = dispatch(_matmul, (a, b), {"acc": acc}, a.dtype)
    return r if out is None else write_out(r, out)


# PyTorch's errors for mm's and bmm's operands, in the order it checks: the rank of each
# operand, then the sizes the product joins.
_OPERAND_ERRORS = {
    "mm": ("self must be a matrix", "mat2 must be a matrix",
           "mat1 and mat2 shapes cannot be multiplied ({a} and {b})"),
    "bmm": ("batch1 must be a 3D tensor", "batch2 must be a 3D tensor",
            "Expected size for first two dimensions of batch2 tensor to be: [{a0}, {a2}] but "
            "got: [{b0}, {b1}]."),
}


def _operand_error(name, rank, sa, sb):
    """The error for mm's or bmm's operand shapes `sa`, `sb` once they failed its check (the
    fast path tests them in one condition and comes here only to say why)."""
    first, second, sizes = _OPERAND_ERRORS[name]
    if len(sa) != rank:
        return RuntimeError(first)
    if len(sb) != rank:
        return RuntimeError(second)
    return RuntimeError(sizes.format(a=_dims(sa), b=_dims(sb), a0=sa[0], a2=sa[-1], b0=sb[0],
                                     b1=sb[1]))


_strided = Tensor.layout


@export
def matmul(input, other, *, out=None):
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        check_tensor("matmul", input)   # (one class test on the hot path)
        check_tensor("matmul", other, "other", 2)
        if input.layout is not _strided or other.layout is not _strided:   # (ember/sparse)
            return other.__rmatmul__(input) if input.layout is _strided else input.matmul(other)
    sa, sb = input._data.shape, other._data.shape
    if len(sa) == 0 or len(sb) == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    if len(sa) == 1 and len(sb) == 1:
        if sa != sb:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to "
                f"have the same number of elements, but got {sa[0]} and {sb[0]} elements "
                "respectively")
    elif sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        if len(sb) == 1:
            raise RuntimeError(f"size mismatch, got input ({sa[-2] if len(sa) > 1 else 1}), "
                               f"mat ({_dims(sa)}), vec ({sb[0]})")
        if len(sa) > 2 or len(sb) > 2:  # PyTorch checks the batch dims first
            ba, bb = sa[:-2], sb[:-2] if len(sb) > 1 else ()
            for x, y in zip(reversed(ba), reversed(bb)):
                if x != y and x != 1 and y != 1:
                    raise broadcast_error(ba, bb)
        rows = 1
        for s in sa[:-1]:
            rows *= s
        if len(sa) <= 2 or len(sb) == 2:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} "
                               f"and {_dims(sb[-2:])})")
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sb[0] if len(sb) > 2 else 1}, {sa[-1]}] but got: "
                           f"[{sb[0] if len(sb) > 2 else 1}, {sb[-2]}].")
    try:
        r = _product(input, other, "matmul")
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({sa[-3] if len(sa) > 2 else 1}) must "
                           f"match the size of tensor b ({sb[-3] if len(sb) > 2 else 1}) at "
                           "non-singleton dimension 0") from None
    return r if out is None else write_out(r, out)


@defop("addmm", node="AddmmBackward0", save=(1, 2))
def _addmm(bias, a, b, acc):
    """bias + a @ b in one output buffer (nn.Linear's forward: no second pass allocating the
    sum). `acc` is the float32 compute dtype of half-precision inputs, else None."""
    if acc is not None:
        return products.addmm(bias.astype(acc), a.astype(acc), b.astype(acc))
    return products.addmm(bias, a, b)


@_addmm.defvjp
def _addmm_vjp(ctx, g):
    _, a, b = ctx.inputs
    e = ctx.edges
    return (g if e[0] is not None else None,   # the engine sums it back to bias's shape
            matmul(g, b.mT) if e[1] is not None else None,
            _mat2_grad(a, g, b) if e[2] is not None else None)


def addmm_fused(bias, mat1, mat2):
    """bias + mat1 @ mat2 for validated 2-D matrices of one dtype, bias broadcasting to the
    product's shape (the caller checks)."""
    compute = compute_dtype(mat1.dtype)
    acc = compute.np if compute is not mat1.dtype else None
    return dispatch(_addmm, (bias, mat1, mat2), {"acc": acc}, mat1.dtype)


def _fixed_rank_product(name, rank):
    """mm (rank 2) or bmm (rank 3): the product of two operands of exactly that rank, whose
    batch sizes (bmm's first dim) agree."""
    def product(input, mat2, *, out=None):
        if input.__class__ is not Tensor or mat2.__class__ is not Tensor:
            check_tensor(name, input)   # (one class test on the hot path)
            check_tensor(name, mat2, "mat2", 2)
            if rank == 2 and (input.layout is not _strided or mat2.layout is not _strided):
                # (ember/sparse takes mm; a sparse bmm operand refuses at its data)
                return mat2.__rmatmul__(input) if input.layout is _strided else input.mm(mat2)
        sa, sb = input._data.shape, mat2._data.shape
        if len(sa) != rank or len(sb) != rank or sa[-1] != sb[-2] or \
                (rank == 3 and sa[0] != sb[0]):
            raise _operand_error(name, rank, sa, sb)
        return _product(input, mat2, name, out)
    product.__name__ = product.__qualname__ = name
    return export(product)


mm = _fixed_rank_product("mm", 2)
bmm = _fixed_rank_product("bmm", 3)


@export
def mv(input, vec, *, out=None):
    if input.__class__ is not Tensor or vec.__class__ is not Tensor:
        check_tensor("mv", input)   # (one class test on the hot path)
        check_tensor("mv", vec, "vec", 2)
        if input.layout is not _strided:   # (ember/sparse)
            return input.mv(vec)
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    return matmul(input, vec, out=out)


@export
def dot(input, tensor, *, out=None):
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{tensor._data.ndim}D tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{dt.type_name(input.dtype)} and {dt.type_name(tensor.dtype)}")
    return matmul(input, tensor, out=out)


def _matmul_operator(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented  # Python then raises its TypeError, as with PyTorch
    return matmul(self, other)


def _rmatmul(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _install():
    METHODS["__matmul__"] = _matmul_operator
    METHODS["__rmatmul__"] = _rmatmul


_install()
