"""Dimension arguments: wrapping negative dims, dim tuples, PyTorch's range errors."""
import operator


def wrap_dim(dim, ndim):
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not isinstance(dim, int):
        dim = operator.index(dim)   # (a float or a string is a TypeError, as in PyTorch)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], "
                         f"but got {dim})")
    return dim + ndim if dim < 0 else dim


def int_tuple(v):
    """An `int or tuple of ints` argument as a tuple of ints (None stays None): a lone int,
    NumPy integer or one-element integer tensor is a tuple of one, as to PyTorch's parser."""
    if v is None:
        return None
    return tuple(operator.index(n) for n in (v if isinstance(v, (list, tuple)) else (v,)))


def size_at(shape, dim):
    """shape[dim] with the errors of PyTorch's Tensor.size(dim), which kernels call before
    their own rank checks (a 0-d tensor has no dimension at all, not even -1 or 0)."""
    if not shape:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return shape[wrap_dim(dim, len(shape))]


def reduce_dims(dim, ndim):
    """A sorted tuple of non-negative dims from None (all), an int, or a sequence."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        dims = distinct_dims(dim, ndim)
        if not dims:
            return tuple(range(ndim))
        return tuple(sorted(dims))
    return (wrap_dim(dim, ndim),)


def distinct_dims(dims, ndim):
    """`dims` wrapped, PyTorch's error when two name the same dim. NOTE: a 0-d tensor's
    dims wrap as a 1-d tensor's here (0 and -1 are the same dim), as in PyTorch's dim
    bitsets; the result's entries are then 0."""
    wrapped = tuple(wrap_dim(d, ndim) % max(ndim, 1) for d in dims)
    if len(set(wrapped)) != len(wrapped):
        repeated = next(d for d in wrapped if wrapped.count(d) > 1)
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return wrapped


def kept_shape(shape, dims):
    """`shape` with each reduced dim set to 1 (the keepdim=True shape)."""
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def size_list(shape):
    """A shape as PyTorch's messages print it: [2, 3]."""
    return "[" + ", ".join(map(str, shape)) + "]"
