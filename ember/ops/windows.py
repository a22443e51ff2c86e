"""Window functions for spectral analysis: hann, hamming, blackman, bartlett and kaiser
windows, periodic or symmetric, in any floating dtype."""
import builtins
import math

import numpy as np

from .. import _dtype as dt
from .._creation import _C_NAMES, _finish, _type_name
from .._device import placement
from ._arguments import int_arg
from ._elementwise import not_implemented
from .registry import export


# ---------------------------------------------------------------------- window functions
# NOTE: PyTorch builds each window with a chain of tensor ops in the requested dtype
# (arange, mul_, cos_, ...), each rounding its result, and each Python scalar operand, to
# that dtype (float16/bfloat16 ops compute in float32 between the roundings). The same chain
# is replayed here, so the values are PyTorch's in every floating dtype (within an ulp of
# float32 where NumPy's cosine and PyTorch's vectorised one differ).
def _window_options(dtype, device):
    return (f"TensorOptions(dtype={_C_NAMES[dtype]}, device={device}, layout=Strided "
            "(default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))")


def _window(name, window_length, periodic, dtype, device, requires_grad, values):
    """`values(k, r)`: the window of length len(k) from k = arange(len(k)) in the compute
    dtype, `r` rounding an intermediate or a scalar to the requested dtype."""
    n = int_arg(name, window_length, "window_length", 1)
    if not isinstance(periodic, builtins.bool):
        raise TypeError(f"{name}(): argument 'periodic' (position 2) must be bool, not "
                        f"{_type_name(periodic)}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    device = placement(device)
    if dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_window_options(dtype, device)}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if n <= 1:
        return _finish(np.ones(n, dtype.np), dtype, device, requires_grad)
    if dtype.category == dt.COMPLEX:
        raise not_implemented("arange_cpu", dtype)
    if dtype in (dt.float16, dt.bfloat16):
        def r(x):
            return np.asarray(x, np.float32).astype(dtype.np).astype(np.float32)
        compute = np.float32
    else:
        def r(x):
            return x  # (NumPy rounds Python scalars to the array's dtype itself)
        compute = dtype.np
    k = np.arange(n + 1 if periodic else n, dtype=compute)
    w = values(k, r)[:n]
    return _finish(w.astype(dtype.np), dtype, device, requires_grad)


def _cosine_window(alpha, beta):
    """alpha - beta cos(2 pi k / (N - 1)) (Hann: alpha = beta = 0.5)."""
    def values(k, r):
        w = r(np.cos(r(k * r(2 * math.pi / (len(k) - 1)))))
        return r(r(w * r(-beta)) + r(alpha))
    return values


@export(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(0.5, 0.5))


@export(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(alpha, beta))


def _blackman_values(k, r):
    w = r(k * r(math.pi / (len(k) - 1)))
    a = r(r(np.cos(r(w * r(4)))) * r(0.08))
    b = r(r(np.cos(r(w * r(2)))) * r(0.5))
    return r(r(a - b) + r(0.42))


@export(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman_values)


def _bartlett_values(k, r):
    w = r(k * r(2.0 / (len(k) - 1)))
    half = ((len(k) - 1) >> 1) + 1
    w[half:] = r(2 - w[half:])  # (PyTorch's mul_(-1).add_(2): the negation is exact)
    return w


@export(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett_values)


def _kaiser_values(beta):
    """I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2: one fused kernel in
    PyTorch, computing in float32 for float32 and below. The argument is computed so here;
    NumPy's I0 is float64 only (PyTorch's float32 I0 differs by an ulp or two)."""
    def values(k, r):
        a = k.dtype.type((len(k) - 1) / 2.0)
        x = beta * np.sqrt(np.abs(1 - ((k - a) / a) ** 2))
        return np.i0(x.astype(np.float64)) / np.i0(beta)
    return values


@export(method=False)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   _kaiser_values(beta))
