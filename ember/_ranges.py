"""Ranges: arange, range, linspace and logspace, with PyTorch's arithmetic (values computed
in double, or int64, and rounded once; linspace's two-sided formula)."""
import builtins
import math
import warnings

import numpy as np

from . import _dtype as dt
from ._creation import _finish_out, _is_int
from ._scalars import number, type_name as _type_name
from ._tensor import Tensor

__all__ = ["arange", "range", "linspace", "logspace"]


def _num(x):
    return x.item() if isinstance(x, Tensor) else number(x)


def _is_float(v):
    return isinstance(v, (builtins.float, np.floating))


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Values from start to end (exclusive) by step; int64 unless an argument is a float."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is None:
        floats = _is_float(start) or _is_float(end) or _is_float(step)
        dtype = dt.get_default_dtype() if floats else dt.int64
    if dtype is dt.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if dtype.category == dt.INTEGER and step != 0 and builtins.int(step) == 0:
        # NOTE: PyTorch casts the arguments to the integer dtype first (0.1 becomes 0).
        raise ValueError("step must be nonzero")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype.category == dt.INTEGER:
        start, end, step = builtins.int(start), end, builtins.int(step)
    n = builtins.max(0, math.ceil((end - start) / step))
    # Values are start + i * step in double (int64 for integers), rounded once, as PyTorch's.
    acc = np.float64 if dtype.category >= dt.FLOATING else np.int64
    values = np.asarray(start, acc) + np.arange(n, dtype=acc) * np.asarray(step, acc)
    return _finish_out(values.astype(dtype.np), dtype, device, requires_grad, out)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release "
                  "because its behavior is inconsistent with Python's range builtin. "
                  "Instead, use torch.arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    dtype = dtype or dt.get_default_dtype()
    n = builtins.max(0, builtins.int(math.floor((end - start) / step)) + 1)
    values = start + np.arange(n, dtype=np.float64) * step
    return _finish_out(values.astype(dtype.np), dtype, device, requires_grad, out)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`steps` evenly spaced values from start to end inclusive (PyTorch's two-sided
    formula: the first half counts up from start, the second down from end)."""
    if isinstance(steps, Tensor):
        steps = steps.__index__()
    if not _is_int(steps):
        raise TypeError("linspace() received an invalid combination of arguments - got "
                        f"({_type_name(start)}, {_type_name(end)}, {_type_name(steps)})")
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is None:
        cplx = isinstance(start, (builtins.complex, np.complexfloating)) or \
            isinstance(end, (builtins.complex, np.complexfloating))
        dtype = dt.default_complex() if cplx else dt.get_default_dtype()
    if dtype.category >= dt.FLOATING:
        compute = np.float32 if dtype in (dt.float16, dt.bfloat16) else dtype.np
    else:
        compute = np.float64
    if steps == 1:
        values = np.array([start], dtype=compute)
    else:
        i = np.arange(steps)
        half = steps // 2
        s, e = np.asarray(start, compute), np.asarray(end, compute)
        step = (e - s) / np.asarray(steps - 1, compute)
        if np.dtype(compute).kind == "f":
            # NOTE: PyTorch's kernel computes start + step * i with one rounding (a fused
            # multiply-add); two roundings differ in the last bit at about 1 point in 5.
            k = np.where(i < half, i, i - (steps - 1)).astype(compute)
            values = _fused_multiply_add(step, k, np.where(i < half, s, e))
        else:
            values = np.where(i < half, s + step * i.astype(compute),
                              e - step * (steps - 1 - i).astype(compute))
    if dtype.category == dt.INTEGER:
        values = np.trunc(values)
    return _finish_out(values.astype(dtype.np), dtype, device, requires_grad, out)


def _fused_multiply_add(a, b, c):
    """a * b + c rounded once (to within the rare double-rounding case): float32 through
    float64, where the product is exact; float64 by the error-free product and sum
    transformations (Dekker's split, Knuth's two-sum) added back before the last rounding."""
    if a.dtype != np.float64:
        wide = np.float64
        return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(a.dtype)
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    err_p = ((ah * bh - p) + ah * (b - bh) + (a - ah) * bh) + (a - ah) * (b - bh)
    total = p + c
    virtual = total - p
    err_s = (p - (total - virtual)) + (c - virtual)
    return total + (err_p + err_s)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    dtype = dtype or dt.get_default_dtype()
    exps = linspace(start, end, steps, dtype=dt.float64)._data
    with np.errstate(over="ignore"):
        values = np.power(np.float64(base), exps)
    if dtype.category == dt.INTEGER:
        values = np.trunc(values)
    return _finish_out(values.astype(dtype.np), dtype, device, requires_grad, out)
