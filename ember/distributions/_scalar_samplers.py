"""PyTorch's scalar CPU samplers for gamma, Poisson and binomial variates, replayed on ember's
generator so that seeded draws are PyTorch's numbers.

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
- binomial: counting geometric waiting times (inversion) below count * p = 10, Hoermann's
  BTRS (1993) from 10 up, on min(p, 1 - p). For float32 tensors the count, p and the values
  PyTorch keeps in scalar_t are float32 arithmetic (and its log1p the C library's log1pf).
"""
import math

import numpy as np

from ..backends.cpu_kernels import libm

__all__ = ["ScalarStream", "gamma_draws", "poisson_draws", "binomial_draws"]

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


# log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2] for k = 0..9, the tail of
# Stirling's series that BTRS uses (larger k by its first three terms)
_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_tail(k):
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


class _Binomial:
    """One binomial sampler per dtype: `S` is PyTorch's scalar_t (np.float32 or float)."""

    def __init__(self, single):
        self.single = single
        self.S = _F32 if single else float

    def _log1p(self, x):
        if self.single:
            return float(libm("log1p", np.array([x], np.float32))[0])
        return math.log1p(x)

    def _sqrt(self, x):
        return float(np.sqrt(_F32(x))) if self.single else math.sqrt(x)

    def inversion(self, count, prob, stream):
        S = self.S
        geom_sum, successes = 0.0, S(0)
        logprob = self._log1p(-prob)
        while True:
            geom_sum += math.ceil(math.log(stream.uniform()) / logprob)
            if geom_sum > count:
                return successes
            successes = S(successes + S(1))

    def btrs(self, count, prob, stream):
        S = self.S
        stddev = self._sqrt(S(S(count * prob) * S(S(1) - prob)))
        b = 1.15 + 2.53 * stddev
        a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
        c = float(S(count * prob)) + 0.5
        v_r = 0.92 - 4.2 / b
        r = float(S(prob / S(S(1) - prob)))
        alpha = (2.83 + 5.1 / b) * stddev
        m = float(math.floor(float(S(S(count + S(1)) * prob))))
        n = float(count)
        while True:
            U = stream.uniform() - 0.5
            V = stream.uniform()
            us = 0.5 - abs(U)
            k = S(math.floor((2 * a / us + b) * U + c))
            if k < 0 or k > count:
                continue
            if us >= 0.07 and V <= v_r:
                return k
            V = math.log(V * alpha / (a / (us * us) + b))
            kf = float(k)
            n_minus_k_plus_1 = float(S(S(count - k) + S(1)))
            upper = ((m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
                     + float(S(count + S(1))) * math.log((n - m + 1) / n_minus_k_plus_1)
                     + (kf + 0.5) * math.log(r * n_minus_k_plus_1 / float(S(k + S(1))))
                     + _stirling_tail(m) + _stirling_tail(n - m)
                     - _stirling_tail(kf) - _stirling_tail(float(S(count - k))))
            if V <= upper:
                return k

    def __call__(self, count, prob, stream):
        S = self.S
        count, prob = S(count), S(prob)
        if count <= 0.0 or prob <= 0.0:
            return S(0)
        if prob >= 1.0:
            return count
        if prob <= 0.5:
            if S(count * prob) >= 10.0:
                return self.btrs(count, prob, stream)
            return self.inversion(count, prob, stream)
        if prob > 0.5:
            # the failures are binomial in 1 - p
            q = S(1.0 - float(prob))
            if S(count * q) >= 10.0:
                return S(count - self.btrs(count, q, stream))
            return S(count - self.inversion(count, q, stream))
        return S(math.nan)


def binomial_draws(count, prob, generator, single):
    """Binomial(count, prob) draws (float64 values) for flat float64 arrays of equal size,
    `single` when the tensors are float32."""
    sampler = _Binomial(single)
    stream = ScalarStream(generator, 3 * count.size + 16)
    try:
        return np.array([float(sampler(n, p, stream)) for n, p in zip(count, prob)],
                        dtype=np.float64)
    finally:
        stream.close()
