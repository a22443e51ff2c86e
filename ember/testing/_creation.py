"""make_tensor: PyTorch's algorithm step for step (the same random calls in the same order),
so with ember's PyTorch-compatible generator a seeded call gives PyTorch's values."""
import collections.abc
import functools
import math
import warnings

import ember

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")
_COMPLEX = ("complex64", "complex128")


def _uniform_random_(t, low, high):
    # (a range wider than the dtype's largest value would overflow inside uniform_)
    if high - low >= ember.finfo(t.dtype).max:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(dtype, low, high, lowest, highest, default_low, default_high):
    """The user's limits checked and clamped as PyTorch does (ceil'ed for integers)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    integral = dtype is ember.bool or dtype.name in _INTEGRAL
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and "
                         f"high={high!r}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                         f"{high}), but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if integral else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values drawn uniformly from [low, high) (defaults: bool [0, 2),
    uint8 [0, 10), signed integers [-9, 10), floating and complex [-9, 9))."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    integral = dtype is ember.bool or dtype.name in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and functools.reduce(lambda x, y: x * y, shape, 1) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is ember.bool:
        low, high = _low_high(dtype, low, high, 0, 2, 0, 2)
        result = ember.randint(low, high, shape, device=device, dtype=dtype)
    elif integral:
        info = ember.iinfo(dtype)
        low, high = _low_high(dtype, low, high, info.min,
                              info.max + (1 if dtype is not ember.int64 else 0), -9, 10)
        result = ember.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype.name in _FLOATING or dtype.name in _COMPLEX:
        info = ember.finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9)
        result = ember.empty(shape, device=device, dtype=dtype)
        _uniform_random_(ember.view_as_real(result) if dtype.is_complex else result, low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else ember.finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
