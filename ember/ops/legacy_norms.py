"""Deprecated norm entry points torch keeps at top level for TorchScript compatibility:
norm_except_dim (weight_norm's helper), frobenius_norm, nuclear_norm, and the removed
matrix_rank (which only raises, as in PyTorch). Each is a composition of linalg norms."""
import warnings

from .._inplace import write_out
from ._dims import int_tuple
from .registry import check_tensor, export

__all__ = ["norm_except_dim", "frobenius_norm", "nuclear_norm", "matrix_rank", "native_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm over every dim but `dim`, kept as size-1 dims; dim=-1 is the norm of
    the whole tensor (weight_norm's convention). Composed as PyTorch composes it (views of
    the first or last dim, a transpose otherwise), so its errors are PyTorch's."""
    check_tensor("norm_except_dim", v)
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        n = v.size(0)
        return v.contiguous().view(n, -1).norm(pow, 1).view([n] + [1] * (v.dim() - 1))
    last = v.dim() - 1
    if dim == last:
        n = v.size(last)
        return v.contiguous().view(-1, n).norm(pow, 0).view([1] * last + [n])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _vector_norm(v, ord, dims, keepdim=True):
    from .. import linalg  # (cycle: the checked torch.linalg functions sit above the ops)
    return linalg.vector_norm(v, ord, dims, keepdim)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT "
                  "compatibility. It will be removed in a future PyTorch release. Please use "
                  "`linalg.vector_norm(A, 2., dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    check_tensor("frobenius_norm", input)
    dims = int_tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    result = _vector_norm(input, 2.0, dims, keepdim)
    return result if out is None else _write(result, out)


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """nuclear_norm(input, keepdim=False) or nuclear_norm(input, dim, keepdim=False)."""
    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. "
                  "It will be removed in a future PyTorch release. Please use "
                  "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", UserWarning,
                  stacklevel=2)
    check_tensor("nuclear_norm", input)
    if isinstance(dim, bool):   # the (input, keepdim) overload
        dim, keepdim = None, dim
    from .. import linalg  # (cycle: the checked torch.linalg functions sit above the ops)
    # (an int where PyTorch wants int[2] is read as (dim, dim), as its parser does)
    dims = (-2, -1) if dim is None else (dim, dim) if isinstance(dim, int) else tuple(dim)
    result = linalg.matrix_norm(input, "nuc", dims, keepdim)
    return result if out is None else _write(result, out)


def _write(result, out):
    return write_out(result, out)


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm of a sparse COO tensor's stored values (a full reduction only). As in
    PyTorch's CPU build, a dense input has no kernel."""
    check_tensor("native_norm", input)
    if not getattr(input, "is_sparse", False):
        raise NotImplementedError(
            "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build). (native_norm "
            "takes sparse tensors; use torch.linalg.vector_norm for dense ones.)")
    if dim is not None and sorted(d % input.dim() for d in dim) != list(range(input.dim())) \
            and len(dim):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' "
                           "must either be empty or contain all dimensions of the input")
    values = input.coalesce().values().detach()
    result = _vector_norm(values, 2 if p is None else p, None, False)
    return result if dtype is None else result.to(dtype)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError("This function was deprecated since version 1.9 and is now removed.\n"
                       "Please use the `torch.linalg.matrix_rank` function instead. The "
                       "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                       "'hermitian'.")


for _name in __all__:
    export(globals()[_name], method=False)
