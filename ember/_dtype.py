"""dtype objects and PyTorch's type promotion.

NOTE: promotion follows PyTorch, not NumPy. Categories rank bool < integer < floating <
complex; dimensioned tensors outrank 0-dim tensors, which outrank Python scalars, and a
lower-priority operand only matters when its category is higher.
"""
import builtins

import numpy as np

from . import _names

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "half", "float", "double", "short",
    "int", "long", "cfloat", "cdouble", "chalf", "result_type", "promote_types", "can_cast",
    "get_default_dtype", "set_default_dtype", "finfo", "iinfo",
]

# The categories, in promotion order: a dtype's `category` is one of them, so comparisons read
# `d.category >= FLOATING` (floating or complex).
BOOL, INTEGER, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; `ember.float32` and friends are its only instances."""

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "abbr", "_rank", "fast",
                 "__weakref__")

    def __init__(self, name, np_dtype, category, rank, abbr, itemsize=None):
        self.name = name
        if np_dtype is not None:
            self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self.category = category
        self.is_signed = name not in ("bool", "uint8")
        self.abbr = abbr
        self._rank = rank
        # NOTE: "fast" dtypes compute natively in NumPy (no float32 detour as float16 and
        # bfloat16 need, no Python-int wrapping as the integer types need).
        self.fast = name in ("float32", "float64", "complex64", "complex128")

    @property
    def is_floating_point(self):
        return self.category == FLOATING

    @property
    def is_complex(self):
        return self.category == COMPLEX

    def to_complex(self):
        if self.category < FLOATING:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_NAMES[self]}")
        # NOTE: PyTorch maps float16 to complex32, which ember lacks: complex64 stands in.
        return complex128 if self in (float64, complex128) else complex64

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def __repr__(self):
        return _names.MODULE + "." + self.name   # (torch.float32 under `ember run`)

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool = dtype("bool", np.bool_, BOOL, 0, "b8")
uint8 = dtype("uint8", np.uint8, INTEGER, 1, "u8")
int8 = dtype("int8", np.int8, INTEGER, 2, "i8")
int16 = dtype("int16", np.int16, INTEGER, 3, "i16")
int32 = dtype("int32", np.int32, INTEGER, 4, "i32")
int64 = dtype("int64", np.int64, INTEGER, 5, "i64")
float16 = dtype("float16", np.float16, FLOATING, 6, "f16")
# NOTE: bfloat16's NumPy type comes from ml_dtypes, whose extension module takes 0.7 s to
# import in some releases (0.7.0), more than the rest of `import ember`; so it is imported
# when `bfloat16.np` is first read (_LazyNumpyType.__getattr__), not here. Every other attribute of
# the dtype object is plain data.
class _LazyNumpyType(dtype):
    """A dtype whose NumPy type is imported on first read. NOTE: a subclass of its own, since
    a __getattr__ on dtype itself would take Python's fast attribute path away from every
    dtype (4-10% on each small op)."""
    __slots__ = ()

    def __getattr__(self, attr):
        # Reached only when a slot is unset: the NumPy type, resolved on first use.
        if attr == "np":
            return _load_bfloat16()
        raise AttributeError(f"'ember.dtype' object has no attribute '{attr}'")


bfloat16 = _LazyNumpyType("bfloat16", None, FLOATING, 7, "bf16", itemsize=2)
float32 = dtype("float32", np.float32, FLOATING, 8, "f32")
float64 = dtype("float64", np.float64, FLOATING, 9, "f64")
complex64 = dtype("complex64", np.complex64, COMPLEX, 10, "c64")
complex128 = dtype("complex128", np.complex128, COMPLEX, 11, "c128")

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, complex64

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES if d is not bfloat16}


def _load_bfloat16():
    """Import ml_dtypes and give bfloat16 its NumPy type (once)."""
    import ml_dtypes  # (deferred: ml_dtypes takes about 0.5 s to import)
    bfloat16.np = np.dtype(ml_dtypes.bfloat16)
    _BY_NP[bfloat16.np] = bfloat16
    return bfloat16.np


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for those PyTorch has no tensor type for."""
    found = _BY_NP.get(np_dtype)
    if found is None:
        np_dtype = np.dtype(np_dtype)
        if np_dtype.name == "bfloat16" and bfloat16 not in _BY_NP.values():
            _load_bfloat16()  # an ml_dtypes array seen before any ember bfloat16 tensor
        found = _BY_NP.get(np_dtype)
    if found is None:
        name = np.dtype(np_dtype).type.__name__
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{name}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint8, and bool.")
    return found


# The promotion lattice for two tensors of equal priority: PyTorch's table, built from rules.
def _promote_pair(a, b):
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo is float64:
            return complex128
        return hi
    if a.category == INTEGER:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            # NOTE: uint8 with a signed type needs the next wider signed type to hold both.
            return int16 if other in (int8, int16) else other
        return a if a._rank > b._rank else b
    if a.category == FLOATING:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    return a if a._rank > b._rank else b


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1, type2):
    """The smallest dtype both `type1` and `type2` can be cast to (PyTorch's table)."""
    try:
        return _PROMOTE[(type1, type2)]
    except (KeyError, TypeError):
        _check_dtype_arg("promote_types", "type1", 1, type1)
        _check_dtype_arg("promote_types", "type2", 2, type2)
        raise


def _check_dtype_arg(fn, name, pos, value):
    if not isinstance(value, dtype):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be ember.dtype, not "
                        f"{type(value).__name__}")


_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def default_complex():
    return complex128 if _default_float is float64 else complex64


def scalar_dtype(value):
    """The dtype a Python scalar takes on its own (as `tensor(value)` would give)."""
    t = type(value)
    if t is builtins.bool:
        return bool
    # NOTE: PyTorch reads a NumPy bool scalar as a float number (np.bool_(True) * int_tensor
    # is float32), unlike tensor(np.bool_(True)), which is bool.
    if t is builtins.int or isinstance(value, np.integer):
        return int64
    if t is builtins.float or isinstance(value, (np.floating, np.bool_)):
        return _default_float
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return default_complex()
    raise TypeError(f"unsupported scalar type {t.__name__}")


def _combine(higher, lower):
    # PyTorch's combine_categories: the higher-priority result wins unless the lower one
    # brings a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return higher.to_complex() if higher.category == FLOATING else lower
    if higher.category == FLOATING:
        return higher
    if higher is bool or lower.category == FLOATING:
        return _PROMOTE[(higher, lower)]
    return higher


def result_type_of(operands):
    """PyTorch's result type for a mix of tensors (by dim) and Python scalars."""
    from ._tensor import Tensor  # (cycle: _tensor imports this module)
    dim_t = zero_t = scalar_t = None
    for x in operands:
        if isinstance(x, Tensor):
            d = x.dtype
            if x._data.ndim:
                dim_t = d if dim_t is None else _PROMOTE[(dim_t, d)]
            else:
                zero_t = d if zero_t is None else _PROMOTE[(zero_t, d)]
        elif x is not None:
            d = scalar_dtype(x)
            scalar_t = d if scalar_t is None else _PROMOTE[(scalar_t, d)]
    return _combine(dim_t, _combine(zero_t, scalar_t))


def result_type(tensor1, tensor2):
    """`ember.result_type`: the dtype an arithmetic op on the two operands returns."""
    return result_type_of((tensor1, tensor2))


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow an in-place result of `from_` into `to`."""
    _check_dtype_arg("can_cast", "from_", 1, from_)
    _check_dtype_arg("can_cast", "to", 2, to)
    if from_.category > to.category:
        return False
    if to is bool and from_ is not bool:
        return False
    return True


def type_name(d):
    """PyTorch's ScalarType name (Float, Long, ...), as used in error messages."""
    return _SCALAR_NAMES[d]


_SCALAR_NAMES = {bool: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int",
                 int64: "Long", float16: "Half", bfloat16: "BFloat16", float32: "Float",
                 float64: "Double", complex64: "ComplexFloat", complex128: "ComplexDouble"}


def _fmt(v):
    return f"{v:.6g}"


_FINFO = {}


class finfo:
    """Machine limits of a floating (or complex: its real part's) dtype."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __new__(cls, type=None):
        d = _default_float if type is None else type
        if not isinstance(d, dtype):
            raise TypeError("finfo(): argument 'type' (position 1) must be ember.dtype, not "
                            f"{builtins.type(d).__name__}")
        if d.category < FLOATING:
            raise TypeError("ember.finfo() requires a floating point input type. Use "
                            "ember.iinfo to handle 'ember.finfo'")
        real = d.to_real()
        found = _FINFO.get(real)
        if found is None:
            # NOTE: only bfloat16 needs ml_dtypes' finfo (and its slow import).
            if real is bfloat16:
                import ml_dtypes  # (deferred: as in _load_bfloat16)
                info = ml_dtypes.finfo(real.np)
            else:
                info = np.finfo(real.np)
            found = object.__new__(cls)
            found.dtype = real.name
            found.bits = real.itemsize * 8
            found.eps = builtins.float(info.eps)
            found.max = builtins.float(info.max)
            found.min = builtins.float(info.min)
            found.tiny = found.smallest_normal = builtins.float(info.smallest_normal)
            found.resolution = 10.0 ** -info.precision  # exact decimal, as PyTorch
            _FINFO[real] = found
        return found

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, "
                f"max={_fmt(self.max)}, eps={_fmt(self.eps)}, "
                f"smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
                f"dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    """Machine limits of an integer dtype."""

    __slots__ = ("bits", "min", "max", "dtype")

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError("iinfo(): argument 'type' (position 1) must be ember.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if type.category != INTEGER:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo "
                            "to handle 'ember.iinfo'")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.min = builtins.int(info.min)
        self.max = builtins.int(info.max)

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        # NOTE: PyTorch formats the integer limits with %g too (int32 shows -2.14748e+09).
        return f"iinfo(min={_fmt(self.min)}, max={_fmt(self.max)}, dtype={self.dtype})"

    __str__ = __repr__
