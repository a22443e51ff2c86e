"""PyTorch's scalar CPU samplers for gamma and Poisson variates, replayed on ember's generator
so that seeded draws are PyTorch's numbers.

PyTorch draws these one element at a time, in the tensor's memory order, from its scalar
streams: float64 uniforms (53 bits of a 64-bit word) and Box-Muller float64 normals (the
second value of each pair cached for the next normal). Each element takes a variable number
of draws, so the samplers are Python loops over one `_ScalarStream`, with the C library's
transcendental functions (Python's `math`), as PyTorch's C++ calls them.

- gamma: Marsaglia and Tsang (2000), with concentrations below 1 boosted by one and the draw
  scaled by U^(1/alpha). For float32 tensors the concentration and its boost are float32
  arithmetic, the rest float64 (PyTorch's scalar_t and accscalar_t).
- Poisson: multiplication of uniforms below rate 10, Hoermann's transformed rejection (PTRS,
  1993) from 10 up.
"""
import math

import numpy as np

__all__ = ["ScalarStream", "gamma_draws", "poisson_draws"]

_F32 = np.float32
_THIRD_F32 = float(_F32(1.0) / _F32(3.0))     # PyTorch writes 1.0f / 3.0f
_SQUEEZE_F32 = float(_F32(0.0331))              # and 0.0331f


class ScalarStream:
    """Float64 uniforms and normals in PyTorch's scalar order, read ahead in blocks from a
    copy of the generator; `close()` then moves the generator itself past exactly the words
    used and leaves it the cached normal, as if it had been drawn from one value at a
    time."""

    def __init__(self, generator, expected):
        self._generator = generator
        self._reader = generator.clone_state()
        self._block_size = max(64, int(expected))
        self._block = self._reader.uniform_double(self._block_size)
        self._next = 0
        self._used = 0
        self._cached_normal = generator._normal_double

    def uniform(self):
        if self._next == self._block.size:
            self._block = self._reader.uniform_double(self._block_size)
            self._next = 0
        u = float(self._block[self._next])
        self._next += 1
        self._used += 1
        return u

    def normal(self):
        """Box-Muller on two uniforms: r cos(theta) now, r sin(theta) cached for the next."""
        if self._cached_normal is not None:
            z, self._cached_normal = self._cached_normal, None
            return z
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = (2.0 * math.pi) * u1
        self._cached_normal = r * math.sin(theta)
        return r * math.cos(theta)

    def close(self):
        # NOTE: the generator's own state is advanced by drawing (and dropping) the same
        # words, so every later draw continues PyTorch's stream
        if self._used:
            self._generator.uniform_double(self._used)
        self._generator._normal_double = self._cached_normal


def _gamma_one(alpha, stream, single):
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - stream.uniform(), inv)
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    d = float(_F32(alpha) - _F32(_THIRD_F32)) if single else alpha - _THIRD_F32
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = stream.normal()
        y = 1.0 + c * x
        while y <= 0:
            x = stream.normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - stream.uniform()
        xx = x * x
        if u < 1.0 - _SQUEEZE_F32 * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def gamma_draws(alpha, generator, single):
    """Gamma(alpha, 1) draws (float64 values) for a flat float64 array of concentrations,
    `single` when the tensor is float32 (PyTorch's scalar_t arithmetic)."""
    stream = ScalarStream(generator, 3 * alpha.size + 16)
    try:
        return np.array([_gamma_one(float(a), stream, single) for a in alpha],
                        dtype=np.float64)
    finally:
        stream.close()


def _poisson_one(lam, stream):
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            U = stream.uniform() - 0.5
            V = stream.uniform()
            us = 0.5 - abs(U)
            k = math.floor((2 * a / us + b) * U + lam + 0.43)
            if us >= 0.07 and V <= vr:
                return k
            if k < 0 or (us < 0.013 and V > us):
                continue
            if (math.log(V) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1)):
                return k
    if lam == 0:
        return 0
    # count uniforms until their running product drops below exp(-rate)
    enlam = math.exp(-lam)
    count, prod = 0, 1.0
    while True:
        prod *= stream.uniform()
        if prod <= enlam:
            return count
        count += 1


def poisson_draws(rate, generator):
    """Poisson(rate) draws (float64 values) for a flat float64 array of rates."""
    stream = ScalarStream(generator, 3 * rate.size + int(np.minimum(rate, 10).sum()) + 16)
    try:
        return np.array([_poisson_one(float(r), stream) for r in rate], dtype=np.float64)
    finally:
        stream.close()
