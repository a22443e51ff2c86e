"""The `_data` of a sparse tensor: the dense shape and dtype, and no elements.

A sparse tensor is an ember Tensor (isinstance works, the autograd engine reads its shape and
dtype from `_data` as for any tensor), but its numbers live in its indices and values. Every
dense op ember has not taught about sparse layouts reads `_data` as an array; this stand-in
refuses each such read (NumPy conversion, ufuncs, array functions, methods, indexing) with a
NotImplementedError in PyTorch's words, so no dense kernel ever computes on a placeholder.
"""

__all__ = ["NoElements"]


class _Flags:
    __slots__ = ()
    c_contiguous = f_contiguous = contiguous = writeable = owndata = False


_FLAGS = _Flags()


def unsupported(what, backend):
    return NotImplementedError(
        f"Could not run '{what}' with arguments from the '{backend}' backend: ember does not "
        "support this operation on sparse tensors; convert with .to_dense() first")


class NoElements:
    """Shape and dtype of a dense array without its elements (see the module docstring)."""

    __slots__ = ("shape", "dtype", "backend")

    def __init__(self, shape, np_dtype, backend):
        self.shape = tuple(shape)
        self.dtype = np_dtype
        self.backend = backend   # PyTorch's dispatch key name: 'SparseCPU', 'SparseCsrCPU'

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return 0

    @property
    def strides(self):
        return (0,) * len(self.shape)   # (what PyTorch's stride() reports for sparse tensors)

    flags = _FLAGS
    base = None

    def __array__(self, *args, **kwargs):
        raise unsupported("__array__", self.backend)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise unsupported(ufunc.__name__, self.backend)

    def __array_function__(self, func, types, args, kwargs):
        raise unsupported(func.__name__, self.backend)

    def __getattr__(self, name):
        if name.startswith("__"):   # (protocol probes such as hasattr(a, "__cuda_array_
            raise AttributeError(name)   # interface__") must get their usual answer)
        raise unsupported(name, self.backend)

    def _refuse(self, *args, **kwargs):
        raise unsupported("an elementwise operator", self.backend)

    __getitem__ = __setitem__ = __iter__ = __len__ = __bool__ = __float__ = __int__ = _refuse
    __add__ = __radd__ = __iadd__ = __sub__ = __rsub__ = __isub__ = _refuse
    __mul__ = __rmul__ = __imul__ = __truediv__ = __rtruediv__ = __itruediv__ = _refuse
    __matmul__ = __rmatmul__ = __neg__ = __pow__ = __rpow__ = __abs__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __eq__ = __ne__ = _refuse   # NOTE: so `data == x` never turns into a Python bool silently
    __hash__ = None
