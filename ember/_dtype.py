"""dtype objects and PyTorch's type promotion.

NOTE: promotion follows PyTorch, not NumPy. Categories rank bool < integer < floating <
complex; dimensioned tensors outrank 0-dim tensors, which outrank Python scalars, and a
lower-priority operand only matters when its category is higher.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "half", "float", "double", "short",
    "int", "long", "cfloat", "cdouble", "chalf", "result_type", "promote_types", "can_cast",
    "get_default_dtype", "set_default_dtype", "finfo", "iinfo",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; `ember.float32` and friends are its only instances."""

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_rank", "__weakref__")

    def __init__(self, name, np_dtype, category, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = name not in ("bool", "uint8")
        self._rank = rank

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_complex(self):
        return {float16: complex64, bfloat16: complex64, float32: complex64,
                float64: complex128}.get(self, self)

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool = dtype("bool", np.bool_, _BOOL, 0)
uint8 = dtype("uint8", np.uint8, _INT, 1)
int8 = dtype("int8", np.int8, _INT, 2)
int16 = dtype("int16", np.int16, _INT, 3)
int32 = dtype("int32", np.int32, _INT, 4)
int64 = dtype("int64", np.int64, _INT, 5)
float16 = dtype("float16", np.float16, _FLOAT, 6)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, 7)
float32 = dtype("float32", np.float32, _FLOAT, 8)
float64 = dtype("float64", np.float64, _FLOAT, 9)
complex64 = dtype("complex64", np.complex64, _COMPLEX, 10)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 11)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, complex64

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype; TypeError for those PyTorch has no tensor type for."""
    found = _BY_NP.get(np_dtype)
    if found is None:
        found = _BY_NP.get(np.dtype(np_dtype))
    if found is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint8, and bool.")
    return found


# The promotion lattice for two tensors of equal priority: PyTorch's table, built from rules.
def _promote_pair(a, b):
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo is float64:
            return complex128
        return hi
    if a.category == _INT:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            # NOTE: uint8 with a signed type needs the next wider signed type to hold both.
            return int16 if other in (int8, int16) else other
        return a if a._rank > b._rank else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    return a if a._rank > b._rank else b


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1, type2):
    """The smallest dtype both `type1` and `type2` can be cast to (PyTorch's table)."""
    return _PROMOTE[(type1, type2)]


_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def default_complex():
    return complex128 if _default_float is float64 else complex64


def scalar_dtype(value):
    """The dtype a Python scalar takes on its own (as `tensor(value)` would give)."""
    t = type(value)
    if t is builtins.bool or isinstance(value, (np.bool_,)):
        return bool
    if t is builtins.int or isinstance(value, np.integer):
        return int64
    if t is builtins.float or isinstance(value, np.floating):
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
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return _PROMOTE[(higher, lower)]
    return higher


def result_type_of(operands):
    """PyTorch's result type for a mix of tensors (by dim) and Python scalars."""
    from ._tensor import Tensor
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


class finfo:
    """Machine limits of a floating dtype (`ember.finfo(ember.float16).max`)."""

    def __init__(self, type=None):
        d = _default_float if type is None else type
        if d.category not in (_FLOAT, _COMPLEX):
            raise TypeError("finfo only accepts floating point or complex types")
        info = ml_dtypes.finfo(d.to_real().np)
        self.dtype = d.to_real().name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(info.resolution)

    def __repr__(self):
        return (f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, "
                f"max={_fmt(self.max)}, eps={_fmt(self.eps)}, "
                f"smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype."""

    def __init__(self, type):
        if type.category != _INT and type is not bool:
            raise TypeError("iinfo only accepts integer types")
        info = np.iinfo(type.np) if type is not bool else None
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.min = builtins.int(info.min) if info else 0
        self.max = builtins.int(info.max) if info else 1

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
