"""The `*_copy` variants of view ops (permute_copy, view_copy, split_copy, ...): the view's
values in freshly allocated, contiguous memory that shares nothing with the input.

Each is the view op followed by a contiguous clone, so its gradient is the view's gradient
through CloneBackward0 (PyTorch names the node `PermuteBackward0_copy`; the values are the
same). `out=` copies into the given tensor(s) as PyTorch's out variants do."""
import operator

from .._constants import contiguous_format
from .._inplace import write_out
from ..autograd.grad_mode import no_grad
from .registry import PUBLIC, check_tensor, export

__all__ = ["alias_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
           "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy",
           "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy",
           "view_copy", "as_strided_copy", "view_as_real_copy", "view_as_complex_copy",
           "values_copy", "indices_copy", "crow_indices_copy", "col_indices_copy",
           "ccol_indices_copy", "row_indices_copy"]


def _fresh(view):
    return view.clone(memory_format=contiguous_format)


def _one(name, input, view, out):
    check_tensor(name, input)
    result = _fresh(view(input))
    return result if out is None else write_out(result, out)


def _many(name, input, views, out):
    check_tensor(name, input)
    results = tuple(_fresh(v) for v in views(input))
    if out is None:
        return results
    if len(out) != len(results):
        raise RuntimeError(f"{name}_out() expected an out= argument of size {len(results)}, "
                           f"got size {len(out)}")
    with no_grad():
        for piece, target in zip(results, out):
            write_out(piece, target)


def alias_copy(input, *, out=None):
    return _one("alias_copy", input, lambda x: x, out)


def detach_copy(input, *, out=None):
    return _one("detach_copy", input, lambda x: x.detach(), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    return _one("diagonal_copy", input, lambda x: x.diagonal(offset, dim1, dim2), out)


def expand_copy(input, size, *, implicit=False, out=None):
    return _one("expand_copy", input, lambda x: x.expand(tuple(size)), out)


def permute_copy(input, dims, *, out=None):
    return _one("permute_copy", input, lambda x: x.permute(tuple(dims)), out)


def select_copy(input, dim, index, *, out=None):
    return _one("select_copy", input, lambda x: x.select(dim, index), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    def view(x):
        d = dim + x.dim() if dim < 0 else dim
        if not 0 <= d < max(x.dim(), 1):
            x.size(dim)   # PyTorch's "Dimension out of range" error
        if step <= 0:
            raise RuntimeError("slice step must be positive")
        return x[(slice(None),) * d + (slice(start, end, step),)]
    return _one("slice_copy", input, view, out)


def split_copy(input, split_size, dim=0, *, out=None):
    size = operator.index(split_size)   # (the builtin's SymInt: an int by now)
    return _many("split_copy", input, lambda x: x.split(size, dim), out)


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    return _many("split_with_sizes_copy", input,
                 lambda x: x.split_with_sizes(split_sizes, dim), out)


def squeeze_copy(input, dim=None, *, out=None):
    return _one("squeeze_copy", input,
                lambda x: x.squeeze() if dim is None else x.squeeze(dim), out)


def t_copy(input, *, out=None):
    return _one("t_copy", input, lambda x: x.t(), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    return _one("transpose_copy", input, lambda x: x.transpose(dim0, dim1), out)


def unbind_copy(input, dim=0, *, out=None):
    return _many("unbind_copy", input, lambda x: x.unbind(dim), out)


def unfold_copy(input, dimension, size, step, *, out=None):
    return _one("unfold_copy", input, lambda x: x.unfold(dimension, size, step), out)


def unsqueeze_copy(input, dim, *, out=None):
    return _one("unsqueeze_copy", input, lambda x: x.unsqueeze(dim), out)


def view_copy(input, size, *, out=None):
    """`size` is a shape, or a dtype (the bytes reinterpreted, as `Tensor.view(dtype)`)."""
    return _one("view_copy", input, lambda x: x.view(size), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    return _one("as_strided_copy", input,
                lambda x: x.as_strided(size, stride, storage_offset), out)


def view_as_real_copy(input, *, out=None):
    return _one("view_as_real_copy", input, PUBLIC["view_as_real"], out)


def view_as_complex_copy(input, *, out=None):
    return _one("view_as_complex_copy", input, PUBLIC["view_as_complex"], out)


# Sparse tensors' component views (COO values/indices, compressed indices), copied.
def values_copy(input, *, out=None):
    return _one("values_copy", input, lambda x: x.values(), out)


def indices_copy(input, *, out=None):
    return _one("indices_copy", input, lambda x: x.indices(), out)


def crow_indices_copy(input, *, out=None):
    return _one("crow_indices_copy", input, lambda x: x.crow_indices(), out)


def col_indices_copy(input, *, out=None):
    return _one("col_indices_copy", input, lambda x: x.col_indices(), out)


def ccol_indices_copy(input, *, out=None):
    return _one("ccol_indices_copy", input, lambda x: x.ccol_indices(), out)


def row_indices_copy(input, *, out=None):
    return _one("row_indices_copy", input, lambda x: x.row_indices(), out)


for _name in __all__:
    export(globals()[_name], method=False)
