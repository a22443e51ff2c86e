"""Python data -> host arrays, with PyTorch's rules: dtype inference over nested sequences,
ragged-sequence errors, and the overflow checks of `tensor(...)` and `full(...)`."""
import builtins
import math

import numpy as np

from . import _dtype as dt
from ._scalars import number
from ._tensor import Tensor

STRIDE_ERROR = (
    "At least one stride in the given numpy array is negative, and tensors with negative "
    "strides are not currently supported. (You can probably work around this by making a "
    "copy of your array  with array.copy().) ")

_NUMBERS = frozenset((builtins.bool, builtins.int, builtins.float, builtins.complex))
_F32_MAX = float(np.finfo(np.float32).max)
# The largest finite value of each narrow float type a fill checks against. NOTE: bfloat16's
# is float32's with 7 mantissa bits, (2 - 2**-7) * 2**127, written out so that ml_dtypes
# (slow to import) is not needed here.
_FLOAT_MAX = {dt.float32: _F32_MAX, dt.complex64: _F32_MAX,
              dt.float16: float(np.finfo(np.float16).max),
              dt.bfloat16: (2 - 2 ** -7) * 2.0 ** 127}


def positive_strides(a):
    return all(s >= 0 for s in a.strides)


def _python_dtype(kinds):
    """The dtype of a set of Python number types (PyTorch: bool < int64 < default float <
    default complex)."""
    if builtins.complex in kinds:
        return dt.default_complex()
    if builtins.float in kinds:
        return dt.get_default_dtype()
    if builtins.int in kinds:
        return dt.int64
    if builtins.bool in kinds:
        return dt.bool
    return None


def _is_sequence(x):
    if type(x) is list or type(x) is tuple or isinstance(x, np.ndarray):
        return True
    if isinstance(x, (str, bytes, dict, Tensor)):
        return False
    cls = type(x)
    return hasattr(cls, "__getitem__") and hasattr(cls, "__len__")


def _sizes(data):
    """The shape implied by following the first element down (PyTorch's compute_sizes)."""
    sizes = []
    seq = data
    while _is_sequence(seq):
        if isinstance(seq, np.ndarray):
            sizes.extend(seq.shape)
            if seq.ndim == 0:
                raise TypeError("len() of unsized object")
            break
        n = len(seq)
        sizes.append(n)
        if n == 0:
            break
        seq = seq[0]
        if isinstance(seq, str):  # a string is a sequence of strings, without end
            raise ValueError("too many dimensions 'str'")
    return sizes


class _Scan:
    """What a walk over nested data found: Python number types, other leaves' dtypes, and
    whether tensors or misplaced sequences occur."""

    __slots__ = ("kinds", "dtypes", "odd", "target")

    def __init__(self, target=None):
        self.kinds = set()
        self.dtypes = []
        self.odd = []  # tensors and misplaced sequences, in order (the first one decides)
        self.target = target   # the dtype asked for, if any


def unconvertible(value, target):
    """PyTorch's error for a leaf that is no number: with no dtype asked for, inference
    fails; with one, the conversion to it does (as Python's int() or float() of it)."""
    # (PyTorch's dtype is a C type named torch.dtype)
    name = "torch.dtype" if isinstance(value, dt.dtype) else type(value).__name__
    if target is None:
        return RuntimeError(f"Could not infer dtype of {name}")
    if target.category <= dt.INTEGER:
        return TypeError(f"'{name}' object cannot be interpreted as an integer")
    return TypeError(f"must be real number, not {name}")


def _scan(seq, dim, sizes, found):
    n = sizes[dim]
    if len(seq) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(seq)})")
    if dim + 1 == len(sizes):
        kinds = set(map(type, seq))
        if kinds <= _NUMBERS:
            found.kinds |= kinds
        else:
            for x in seq:
                _leaf(x, found)
        return
    for x in seq:
        if type(x) is list or type(x) is tuple:
            _scan(x, dim + 1, sizes, found)
        elif isinstance(x, np.ndarray):
            _ndarray_node(x, dim + 1, sizes, found)
        elif _is_sequence(x):
            _scan(x, dim + 1, sizes, found)
        else:
            raise TypeError("not a sequence")


def _ndarray_node(a, dim, sizes, found):
    expected = tuple(sizes[dim:])
    if a.shape != expected:
        for d, (want, got) in enumerate(zip(expected, a.shape + (0,) * len(expected))):
            if want != got:
                raise ValueError(f"expected sequence of length {want} at dim {dim + d} "
                                 f"(got {got})")
    found.dtypes.append(dt.from_numpy_dtype(a.dtype))


def _leaf(x, found):
    t = type(x)
    if t in _NUMBERS:
        found.kinds.add(t)
    elif isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
        found.dtypes.append(dt.from_numpy_dtype(x.dtype))
    elif isinstance(x, Tensor):
        found.dtypes.append(x.dtype)
        found.odd.append(x)
    elif isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    elif _is_sequence(x):
        found.odd.append(t.__name__)
    elif isinstance(x, builtins.int):  # int subclasses (IntEnum, ...)
        found.kinds.add(builtins.bool if isinstance(x, builtins.bool) else builtins.int)
    elif isinstance(x, builtins.float):
        found.kinds.add(builtins.float)
    else:
        raise unconvertible(x, found.target)


def _untensor(data):
    """Replace the (one-element) tensors nested in `data` by Python numbers."""
    if isinstance(data, Tensor):
        return data.item()
    if type(data) is list or type(data) is tuple:
        return [_untensor(x) for x in data]
    return data


def data_to_array(data, dtype):
    """A new host array holding `data` in `dtype` (inferred as PyTorch does when None)."""
    if isinstance(data, Tensor):
        target = dtype or data.dtype
        return _cast(data._host(), target), target
    if isinstance(data, np.ndarray):
        return _from_ndarray(data, dtype)
    t = type(data)
    if dtype is None:  # fast paths: a lone Python number
        if t is builtins.float:
            target = dt.get_default_dtype()
            if -65504.0 <= data <= 65504.0:  # fits every floating dtype: no overflow to mind
                return np.array(data, target.np), target
            return _checked_cast(np.array(data), target), target
        if t is builtins.int and -2 ** 63 <= data < 2 ** 63:
            return np.array(data, np.int64), dt.int64
        if t is builtins.bool:
            return np.array(data), dt.bool
    found = _Scan(dtype)
    if t in _NUMBERS or isinstance(data, np.generic):
        _leaf(data, found)
    elif isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    elif _is_sequence(data):
        sizes = _sizes(data)
        if sizes:
            _scan(data, 0, sizes, found)
    elif hasattr(data, "__array__"):
        return _from_ndarray(np.asarray(data), dtype)
    else:
        raise unconvertible(data, dtype)
    inferred = _python_dtype(found.kinds)
    for d in found.dtypes:
        inferred = d if inferred is None else dt.promote_types(inferred, d)
    target = dtype or inferred or dt.get_default_dtype()
    integral = target.category <= dt.INTEGER
    if found.odd:
        _check_odd_leaves(found.odd, integral)
        data = _untensor(data)
    a = np.array(data)
    kinds = found.kinds
    if builtins.int in kinds and a.dtype.kind not in "iub" and not (
            builtins.float in kinds or builtins.complex in kinds or found.dtypes):
        # NOTE: NumPy holds Python ints past int64's range as uint64, float64 or objects;
        # PyTorch accepts them only into floating dtypes.
        if integral:
            raise ValueError("Overflow when unpacking long long")
        a = a.astype(np.float64)
    return _checked_cast(a, target), target


def _check_odd_leaves(odd, integral):
    for x in odd:
        if isinstance(x, str):  # a sequence where a number belongs
            if integral:
                raise TypeError(f"'{x}' object cannot be interpreted as an integer")
            raise TypeError(f"must be real number, not {x}")
        if x._data.size != 1:
            if integral:
                raise TypeError("only integer tensors of a single element can be converted "
                                "to an index")
            raise ValueError("only one element tensors can be converted to Python scalars")


def _checked_cast(a, target):
    """Cast numbers given as Python data to `target`, raising where PyTorch does."""
    kind = a.dtype.kind
    if target is dt.bool:
        return a.astype(np.bool_)
    if target.category == dt.INTEGER:
        if kind == "c":
            raise TypeError("'complex' object cannot be interpreted as an integer")
        if kind == "O" or (kind == "u" and a.dtype.itemsize == 8):
            # NOTE: Python ints past int64's range only fit floating dtypes.
            raise ValueError("Overflow when unpacking long long")
        info = np.iinfo(target.np)
        if a.size:
            if kind == "f":
                ok = np.isfinite(a).all() and a.min() >= info.min and a.max() <= info.max
            else:
                # Integers may wrap into uint8 from down to -255, as PyTorch's checked casts
                # allow (two's complement), but never past the signed types' limits.
                lo = -builtins.int(info.max) if target is dt.uint8 else builtins.int(info.min)
                ok = builtins.int(a.min()) >= lo and builtins.int(a.max()) <= info.max
            if not ok:
                raise RuntimeError(f"value cannot be converted to type {target.name} without "
                                   "overflow")
        if kind in "iub":
            return a.astype(np.int64).astype(target.np)
        return a.astype(target.np)
    if target.category == dt.FLOATING and kind == "c":
        raise TypeError("must be real number, not complex")
    if a.dtype == target.np:
        return a
    if kind in "iub" or target.itemsize > a.dtype.itemsize:
        return a.astype(target.np)
    with np.errstate(over="ignore", invalid="ignore"):  # NOTE: out-of-range floats are inf
        return a.astype(target.np)


def _from_ndarray(a, dtype):
    if not positive_strides(a):
        raise ValueError(STRIDE_ERROR)
    src = dt.from_numpy_dtype(a.dtype)
    target = dtype or src
    return _cast(a, target), target


def _cast(array, dtype):
    """A copy of `array` in `dtype` (wrapping as C casts do, no checks)."""
    if array.dtype == dtype.np:
        return np.array(array, copy=True)
    if array.dtype.kind == "c" and dtype.category < dt.COMPLEX:
        array = array.real if dtype is not dt.bool else array != 0
    with np.errstate(all="ignore"):  # NOTE: -1 into uint8 wraps to 255, as in PyTorch
        if dtype.category == dt.INTEGER and array.dtype.kind in "iu":
            return array.astype(np.int64).astype(dtype.np)
        return array.astype(dtype.np)


# ---------------------------------------------------------------------- full()'s fill value
_FILL_NAMES = {dt.uint8: "uint8_t", dt.int8: "int8_t", dt.int16: "int16_t", dt.int32: "int",
               dt.int64: "int64_t", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16",
               dt.float32: "float", dt.float64: "double", dt.complex64: "c10::complex<float>",
               dt.complex128: "c10::complex<double>"}


_SINGLE_STORE_NAMES = {dt.float16: "double", dt.bfloat16: "double"}


def _fill_overflow(dtype):
    return RuntimeError(f"value cannot be converted to type {_FILL_NAMES[dtype]} without "
                        "overflow")


def check_fill(value, dtype, numel):
    """`value` converted for a fill of `numel` elements of `dtype`, raising PyTorch's
    overflow error where its checked conversion does (ints wrap into uint8 down to -255;
    floats truncate). PyTorch fills a single element by a plain store: float16 and
    bfloat16 then get inf instead of the range error, and a complex value's error names
    "double"."""
    value = number(value)
    if numel == 1 and dtype in _SINGLE_STORE_NAMES:
        if isinstance(value, builtins.complex):
            if value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type "
                                   f"{_SINGLE_STORE_NAMES[dtype]} without overflow")
            value = value.real
        return builtins.float(value)
    if dtype is dt.bool:
        return builtins.bool(value)
    cat = dtype.category
    if isinstance(value, builtins.complex):
        if cat == dt.COMPLEX:
            if dtype is dt.complex64 and (_over_f32(value.real) or _over_f32(value.imag)):
                raise _fill_overflow(dtype)
            return value
        if value.imag != 0:
            raise _fill_overflow(dtype)
        value = value.real
    if cat == dt.INTEGER:
        info = np.iinfo(dtype.np)
        if isinstance(value, builtins.float):
            if not math.isfinite(value) or not info.min <= value <= info.max:
                raise _fill_overflow(dtype)
            return builtins.int(value)
        value = builtins.int(value)
        lo = -builtins.int(info.max) if dtype is dt.uint8 else builtins.int(info.min)
        if not lo <= value <= info.max:
            raise _fill_overflow(dtype)
        return value % 256 if dtype is dt.uint8 else value
    limit = _FLOAT_MAX.get(dtype)
    if limit is not None and _over(value, limit):
        raise _fill_overflow(dtype)
    return builtins.float(value) if cat == dt.FLOATING else value


def _over(v, limit):
    """A finite value beyond the type's largest (PyTorch checks before rounding: a float16
    fill of 65520 overflows although it would round to inf anyway; 65504 is fine)."""
    v = builtins.float(v)
    return math.isfinite(v) and abs(v) > limit


def _over_f32(v):
    return _over(v, _F32_MAX)
