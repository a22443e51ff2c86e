"""torch's non-callable module attributes that programs read: layouts, memory formats,
quantization schemes, build flags, and the dtypes ember cannot make tensors of.

Layouts, memory formats and schemes are singletons compared by identity, printed as PyTorch
prints them (`torch.strided` under `ember run`, `ember.strided` otherwise). ember's tensors
are all strided and row-major: the other layouts exist for code that names them (checks like
`x.layout == torch.sparse_coo`), and memory-format arguments are accepted where PyTorch's are.

NOTE: dtypes ember cannot represent (uint16/32/64, the 1-7 bit ints, float8, complex32,
quantized) are still dtype objects with PyTorch's properties, because libraries name them in
module-level tables (safetensors' dtype map, fp8 recipes) that must import; making a tensor
of one raises a TypeError saying so (PyTorch's own support for most of them is partial).
"""
from . import _dtype as dt
from . import _names

__all__ = ["layout", "memory_format", "qscheme", "strided", "sparse_coo", "sparse_csr",
           "sparse_csc", "sparse_bsr", "sparse_bsc", "jagged", "contiguous_format",
           "channels_last", "channels_last_3d", "preserve_format", "legacy_contiguous_format",
           "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams", "has_lapack",
           "has_mkl", "has_openmp", "has_spectral", "TYPE_CHECKING", "USE_GLOBAL_DEPS",
           "USE_RTLD_GLOBAL_WITH_LIBTORCH", "PRIVATE_OPS"]


class _Named:
    """A named singleton printed with the framework prefix."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"{_names.MODULE}.{self.name}"

    def __reduce__(self):
        return self.name   # (pickled as the module attribute ember.<name>)


class layout(_Named):
    __slots__ = ()
    __module__ = "ember"


class memory_format(_Named):
    __slots__ = ()
    __module__ = "ember"


class qscheme(_Named):
    __slots__ = ()
    __module__ = "ember"


strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged = (
    layout(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                        "sparse_bsc", "jagged"))
contiguous_format, channels_last, channels_last_3d, preserve_format = (
    memory_format(n) for n in ("contiguous_format", "channels_last", "channels_last_3d",
                               "preserve_format"))
legacy_contiguous_format = contiguous_format   # (PyTorch's is the same object)
(per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
 per_channel_affine_float_qparams) = (
    qscheme(n) for n in ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
                         "per_channel_symmetric", "per_channel_affine_float_qparams"))

# Build flags, answered for ember: LAPACK comes from NumPy/SciPy, FFTs from scipy.fft, the
# compiled kernels use OpenMP; there is no MKL.
has_lapack, has_spectral, has_openmp, has_mkl = True, True, True, False
TYPE_CHECKING = False
USE_GLOBAL_DEPS, USE_RTLD_GLOBAL_WITH_LIBTORCH = True, False
PRIVATE_OPS = ("unique_dim",)


class _LimitedDtype(dt.dtype):
    """A PyTorch dtype ember has no tensors of: its properties are PyTorch's, and reading its
    NumPy type (which every tensor constructor does) raises a TypeError naming it."""

    __slots__ = ()

    def __getattr__(self, attr):
        if attr == "np":
            raise TypeError(f"ember cannot make tensors of dtype {self!r}: it has no "
                            "uint16/32/64, sub-byte, float8, complex32 or quantized tensors")
        raise AttributeError(f"'ember.dtype' object has no attribute '{attr}'")

    def __repr__(self):
        return f"{_names.MODULE}.{self.name}"


def _limited(name, category, itemsize, signed):
    d = _LimitedDtype(name, None, category, -1, name, itemsize=itemsize)
    d.is_signed = signed
    return d


_INT, _FLOAT, _COMPLEX = dt.INTEGER, dt.FLOATING, dt.COMPLEX
_BITS = dt.BOOL   # (the bits types are in bool's category: no arithmetic, no promotion)
LIMITED_DTYPES = {}
for _name, _cat, _size, _signed in (
        [("uint16", _INT, 2, False), ("uint32", _INT, 4, False), ("uint64", _INT, 8, False),
         ("complex32", _COMPLEX, 4, True), ("float8_e4m3fn", _FLOAT, 1, True),
         ("float8_e4m3fnuz", _FLOAT, 1, True), ("float8_e5m2", _FLOAT, 1, True),
         ("float8_e5m2fnuz", _FLOAT, 1, True), ("float8_e8m0fnu", _FLOAT, 1, False),
         ("float4_e2m1fn_x2", _FLOAT, 1, True), ("bits1x8", _BITS, 1, False),
         ("bits2x4", _BITS, 1, False), ("bits4x2", _BITS, 1, False), ("bits8", _BITS, 1, False),
         ("bits16", _BITS, 2, False), ("qint8", _INT, 1, True), ("quint8", _INT, 1, False),
         ("qint32", _INT, 4, True), ("quint4x2", _INT, 1, False),
         ("quint2x4", _INT, 1, False)]
        + [(f"uint{i}", _INT, 1, False) for i in range(1, 8)]
        + [(f"int{i}", _INT, 1, True) for i in range(1, 8)]):
    LIMITED_DTYPES[_name] = _limited(_name, _cat, _size, _signed)
LIMITED_DTYPES["bit"] = LIMITED_DTYPES["uint1"]   # (torch.bit is torch.uint1)
globals().update(LIMITED_DTYPES)
__all__ += sorted(LIMITED_DTYPES)
