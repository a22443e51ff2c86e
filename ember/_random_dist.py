"""The NumPy reference of ember's random kernels: exact fused multiply-add emulation and
PyTorch's Box-Muller variants, written so they reproduce PyTorch 2.13's CPU results bit for bit.
The compiled kernels (backends/csrc/random.c) do the same work faster; these run where that
build is missing or EMBER_KERNELS=numpy, and they are what the compiled ones are tested
against.

NOTE: PyTorch's CPU kernels are compiled per CPU capability. Its AVX2 and AVX512 builds
contract `a * b + c` into one fused multiply-add (one rounding) in the serial samplers
(`uniform_(a, b)`, the small `normal_`), the DEFAULT x86 build cannot; `affine` follows the
capability. The 16-element Box-Muller blocks of `normal_` call std::fma in every build, and
the C library's log/cos/sin, never NumPy's (see backends/cpu_kernels.libm). float32 blocks in
the AVX2 build run a Cephes-style polynomial log/sincos on 8 lanes (`box_muller_avx2`), with
the compiler's contractions, which we replay operation by operation.
"""
import numpy as np

from .backends.cpu import fuses_multiply_add
from .backends.cpu_kernels import libm

_F32 = np.float32
_F64 = np.float64
_MID32 = np.uint64(0x10000000)      # a float32 rounding midpoint, seen in a float64's mantissa
_LOW29 = np.uint64(0x1FFFFFFF)


# ---------------------------------------------------------------------- exact fma
def fma32(a, b, c):
    """float32 fma(a, b, c) with one rounding. The float64 product is exact (24 + 24 bits);
    the float64 sum may round, and rounding again to float32 is wrong only when that sum lands
    on a float32 midpoint: those few elements are nudged toward the exact value first."""
    p = np.multiply(a, b, dtype=_F64)
    s = p + c
    hazard = (s.view(np.uint64) & _LOW29) == _MID32
    if hazard.any():
        bb = s - p
        err = (p - (s - bb)) + (np.asarray(c, _F64) - bb)   # s + err == p + c exactly
        fix = hazard & (err != 0)
        s[fix] = np.nextafter(s[fix], np.where(err[fix] > 0, np.inf, -np.inf))
    return s.astype(_F32)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_prod(a, b):
    p = a * b
    t = 134217729.0 * a            # Veltkamp split: 2**27 + 1
    ah = t - (t - a)
    al = a - ah
    t = 134217729.0 * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma64(a, b, c):
    """float64 fma(a, b, c) with one rounding (Boldo and Melquiond's emulation: exact
    product and sums, then a round-to-odd addition before the final rounding)."""
    a = np.asarray(a, _F64)
    uh, ul = _two_prod(a, np.asarray(b, _F64))
    th, tl = _two_sum(np.asarray(c, _F64), ul)
    vh, vl = _two_sum(uh, th)
    z, zl = _two_sum(tl, vl)
    odd = (zl != 0) & ((z.view(np.int64) & 1) == 0)
    if odd.any():
        z = np.where(odd, np.nextafter(z, np.where(zl > 0, np.inf, -np.inf)), z)
    return vh + z


def fma(x, scale, shift, dtype):
    """`x * scale + shift` with one rounding, in float32 or float64."""
    return fma32(x, _F32(scale), _F32(shift)) if dtype is _F32 else fma64(x, scale, shift)


def affine(x, scale, shift, dtype):
    """`x * scale + shift` rounded as PyTorch's CPU build for this capability rounds it."""
    if scale == 1 and shift == 0:
        return x
    if not fuses_multiply_add():
        return x * dtype(scale) + dtype(shift)
    return fma(x, scale, shift, dtype)


# ---------------------------------------------------------------------- AVX2 Box-Muller
_LOG_P = tuple(_F32(v) for v in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_MIN_NORM = np.array(0x00800000, np.int32).view(_F32)
_HALF_BITS = np.int32(0x3F000000)
_SQRTHF = _F32(0.707106781186547524)
_LOG_Q1 = _F32(-2.12194440e-4)
_LOG_Q2 = _F32(0.693359375)
_FOPI = _F32(1.27323954473516)
_DP = (_F32(-0.78515625), _F32(-2.4187564849853515625e-4), _F32(-3.77489497744594108e-8))
_COS_P = (_F32(2.443315711809948E-005), _F32(-1.388731625493765E-003),
          _F32(4.166664568298827E-002))
_SIN_P = (_F32(-1.9515295891E-4), _F32(8.3321608736E-3), _F32(-1.6666654611E-1))
_ONE = _F32(1)
_TWO_PI = _F32(2.0 * np.pi)


def _log_avx2(x):
    """Natural log of float32 x in (0, 1], as PyTorch's AVX2 kernel computes it."""
    bits = np.maximum(x, _MIN_NORM).view(np.int32)
    e = ((bits >> 23) - 126).astype(_F32)
    x = ((bits & np.int32(~0x7F800000)) | _HALF_BITS).view(_F32)
    small = x < _SQRTHF
    x = x - _ONE + np.where(small, x, _F32(0))
    e -= small
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = fma32(y, x, p)
    y *= x
    y = fma32(y, z, e * _LOG_Q1)                 # the compiler fuses this product, not e*q1
    y -= z * _F32(0.5)                           # exact product: fused or not is the same
    return fma32(e, _LOG_Q2, x + y)


def _sincos_avx2(x):
    """(sin, cos) of float32 x >= 0 as PyTorch's AVX2 kernel computes them."""
    y = x * _FOPI
    j = (y.astype(np.int32) + 1) & np.int32(~1)
    y = j.astype(_F32)
    sign_sin = (j & 4) << 29
    sign_cos = (~(j - 2) & 4) << 29
    poly = (j & 2) == 0
    for dp in _DP:
        x = fma32(y, dp, x)
    z = x * x
    c = fma32(z, _COS_P[0], _COS_P[1])
    c = fma32(c, z, _COS_P[2])
    c *= z
    c = fma32(c, z, -(z * _F32(0.5))) + _ONE
    s = fma32(z, _SIN_P[0], _SIN_P[1])
    s = fma32(s, z, _SIN_P[2])
    s *= z
    s = fma32(s, x, x)
    sin = np.where(poly, s, c).view(np.int32) ^ sign_sin
    cos = np.where(poly, c, s).view(np.int32) ^ sign_cos
    return sin.view(_F32), cos.view(_F32)


def box_muller_avx2(u, mean, std):
    """In place: float32 uniforms u (length a multiple of 16) become normals, pairing the
    first 8 of every 16 with the last 8 (PyTorch's normal_fill_16_AVX2)."""
    blocks = u.reshape(-1, 2, 8)
    step = 1 << 14                                   # blocks per pass: stays in cache
    for start in range(0, blocks.shape[0], step):
        b = blocks[start:start + step]
        radius = np.sqrt(_F32(-2) * _log_avx2(_ONE - b[:, 0]))
        sin, cos = _sincos_avx2(_TWO_PI * b[:, 1])
        n1, n2 = radius * cos, radius * sin
        b[:, 0] = fma32(n1, _F32(std), _F32(mean))
        b[:, 1] = fma32(n2, _F32(std), _F32(mean))
    return u


def box_muller_blocks(u, mean, std):
    """In place: PyTorch's scalar NormalFill16 on float32 or float64 uniforms u (length a
    multiple of 16): the C library's log/cos/sin, then one fma per value."""
    dtype = u.dtype.type
    blocks = u.reshape(-1, 2, 8)
    radius = np.sqrt(dtype(-2) * libm("log", dtype(1) - blocks[:, 0]))
    # NOTE: 2.0f * c10::pi<double> * u2 is a double product, rounded once to the dtype.
    theta = (6.283185307179586 * blocks[:, 1].astype(_F64)).astype(dtype)
    n1 = radius * libm("cos", theta.copy())
    n2 = radius * libm("sin", theta)
    blocks[:, 0] = fma(n1, std, mean, dtype)
    blocks[:, 1] = fma(n2, std, mean, dtype)
    return u


def box_muller_pairs(u1, u2):
    """PyTorch's scalar normal_distribution<double>: (r cos, r sin) from float64 uniforms."""
    r = np.sqrt(-2.0 * libm("log1p", -u2))
    theta = (2.0 * np.pi) * u1
    return r * libm("cos", theta.copy()), r * libm("sin", theta)
