"""`ember.Generator`: PyTorch's CPU random stream, bit for bit.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the low 32 bits of
the seed by the standard initialisation. NumPy's MT19937 bit generator runs the same engine
in C, so we load it with the seeded key; the compiled kernels draw its words through NumPy's
bit generator interface, the NumPy path draws whole arrays of words. How each distribution
turns words into values (which bits, which formula, in which order, rounded as PyTorch's
kernel for this CPU capability rounds) follows PyTorch's CPU kernels, so a sequence of mixed
calls consumes the stream as PyTorch does.
"""
import os
import time

import numpy as np

from . import _dtype as dt
from . import _random_dist as rd
from ._device import as_device
from ._tensor import Tensor, _wrap
from .backends import cpu_kernels
from .backends.cpu import fuses_multiply_add, get_cpu_capability

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state"]

DEFAULT_SEED = 67280421310721          # PyTorch's seed before any manual_seed
STATE_SIZE = 5056                      # sizeof(CPUGeneratorImplState)
_N = 624


def _seeded_state(seed):
    return {"bit_generator": "MT19937", "state": {"key": _seeded_key(seed), "pos": _N}}


def _seeded_key(seed):
    """mt19937's init_genrand key for the low 32 bits of `seed`."""
    key = np.empty(_N, np.uint32)
    x = seed & 0xFFFFFFFF
    for i in range(_N):
        key[i] = x
        x = (1812433253 * (x ^ (x >> 30)) + i + 1) & 0xFFFFFFFF
    return key


class Generator:
    """A CPU random number generator whose stream is PyTorch's.

    Public API as PyTorch's: `manual_seed`, `seed`, `initial_seed`, `get_state`,
    `set_state`, `device`. Internal API for ember's random ops (each call consumes the
    stream exactly as the named PyTorch primitive):

    - `random_uint32(n)`: n 32-bit words (`random()`), uint32 array.
    - `random_uint64(n)`: n 64-bit words (`random64()`: two words, first is high), uint64.
    - `uniform(n, dtype, low, span)`: `uniform_` on n elements: float64 takes 53 bits of a
      64-bit word, float32 24 bits of a 32-bit word (float16 and bfloat16 too: PyTorch 2.13
      draws them in float, then rounds).
    - `uniform_double(n)`: float64 uniforms (the `uniform_real_distribution<double>` used
      by bernoulli, exponential, multinomial, ...).
    - `normal_fill(n, dtype, mean, std)`: `normal_` on a contiguous tensor of n elements.
    - `normal_double(n)`: n standard normals from the scalar Box-Muller path (pairs of
      float64 uniforms), using and refilling the cached second value as PyTorch does.
    """

    __slots__ = ("_engines", "_seed", "_fresh", "_normal_double", "_normal_float", "device",
                 "__weakref__")

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._engines = None
        self.manual_seed(DEFAULT_SEED)

    def _engine(self):
        """NumPy's MT19937 and the two front ends over it, made on first use and loaded with
        the seed (importing numpy.random costs `import ember` 17 ms)."""
        if self._engines is None:
            bitgen = np.random.MT19937(0)
            # NOTE: the legacy RandomState draws masked integers (`word & mask`), which is
            # how we take the low bits of each word without an extra pass.
            self._engines = (bitgen, np.random.Generator(bitgen), np.random.RandomState(bitgen),
                             bitgen.capsule)
            bitgen.state = _seeded_state(self._seed)
        return self._engines

    @property
    def _bitgen(self):
        return self._engine()[0]

    @property
    def _ints(self):
        return self._engine()[1]

    @property
    def _legacy(self):
        return self._engine()[2]

    @property
    def _capsule(self):
        return self._engine()[3]

    def __repr__(self):
        return f"<ember.Generator object at {hex(id(self))}>"

    # ------------------------------------------------------------------ seeding and state
    def manual_seed(self, seed):
        seed = _seed_value(seed)
        self._seed = seed
        if self._engines is not None:   # (else _engine seeds it when first drawn from)
            self._engines[0].state = _seeded_state(seed)
        self._fresh = True
        self._normal_double = None
        self._normal_float = None
        return self

    def seed(self):
        """Seed from a non-deterministic source and return that seed."""
        s = int.from_bytes(os.urandom(8), "little") ^ time.time_ns()
        s &= 0xFFFFFFFFFFFFFFFF
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The state as a uint8 tensor laid out as PyTorch's 5056-byte CPU state."""
        st = self._bitgen.state["state"]
        pos = int(st["pos"])
        buf = np.zeros(STATE_SIZE, np.uint8)
        head = np.array([self._seed], np.uint64).view(np.uint8)
        buf[0:8] = head
        nxt = 0 if (self._fresh and pos == _N) else pos
        buf[8:16] = np.array([_N + 1 - pos, 1], np.int32).view(np.uint8)
        buf[16:24] = np.array([nxt], np.uint64).view(np.uint8)
        buf[24:24 + 8 * _N] = st["key"].astype(np.uint64).view(np.uint8)
        tail = 24 + 8 * _N
        if self._normal_double is not None:
            buf[tail + 8:tail + 16] = np.array([self._normal_double], np.float64).view(np.uint8)
            buf[tail + 24:tail + 28] = np.array([1], np.int32).view(np.uint8)
        if self._normal_float is not None:
            buf[tail + 32:tail + 36] = np.array([self._normal_float], np.float32).view(np.uint8)
            buf[tail + 36] = 1
        return _wrap(buf, dt.uint8)

    def set_state(self, new_state):
        if not isinstance(new_state, Tensor) or new_state.dtype is not dt.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        buf = np.ascontiguousarray(new_state._host()).reshape(-1)
        if buf.size != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but "
                               f"found the input RNG state size to be {buf.size}")
        seed = int(buf[0:8].view(np.uint64)[0])
        left = int(buf[8:12].view(np.int32)[0])
        key = buf[24:24 + 8 * _N].view(np.uint64).astype(np.uint32)
        tail = 24 + 8 * _N
        self._seed = seed
        pos = _N + 1 - left
        if not 1 <= pos <= _N:
            raise RuntimeError("The input RNG state is invalid: 'left' is out of range")
        self._bitgen.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._fresh = pos == _N and int(buf[16:24].view(np.uint64)[0]) == 0
        valid = int(buf[tail + 24:tail + 28].view(np.int32)[0])
        self._normal_double = float(buf[tail + 8:tail + 16].view(np.float64)[0]) \
            if valid else None
        self._normal_float = float(buf[tail + 32:tail + 36].view(np.float32)[0]) \
            if buf[tail + 36] else None
        return self

    def clone_state(self):
        g = Generator(self.device)
        g.set_state(self.get_state())
        return g

    # ------------------------------------------------------------------ raw draws
    def random_uint32(self, n):
        self._fresh = False
        return self._ints.integers(0, 0xFFFFFFFF, size=n, dtype=np.uint32, endpoint=True)

    def random_uint64(self, n):
        self._fresh = False
        return self._ints.integers(0, 0xFFFFFFFFFFFFFFFF, size=n, dtype=np.uint64,
                                   endpoint=True)

    # ------------------------------------------------------------------ uniforms
    def uniform_double(self, n):
        """n float64 uniforms in [0, 1): 53 bits of a 64-bit word each."""
        return self.uniform(n, np.float64)

    def bernoulli_scaled(self, out, keep, scale):
        """Dropout's mask in one pass: each element of the flat float32/float64 array `out`
        is `scale` where the uniform uniform_double would draw for it is below `keep`, else
        0 (bernoulli_(keep) then multiplying by `scale`: the same draws and bits)."""
        if cpu_kernels.compiled is None:
            out[...] = np.where(self.uniform_double(out.size) < keep, scale, 0)
            return out
        self._fresh = False
        cpu_kernels.compiled.bernoulli_scaled(self._capsule, out, keep, scale)
        return out

    def uniform(self, n, dtype, low=0.0, span=1.0, out=None):
        """`uniform_(low, low + span)` on n elements, as float64 values for `dtype` float64,
        else float32 values (PyTorch computes float16 and bfloat16 in float, then rounds):
        `low + u * span` rounded as PyTorch's build for this CPU rounds it. `out`: an array
        of n elements of that type to fill instead of a new one."""
        self._fresh = False
        wide = dtype == np.float64
        bits = 53 if wide else 24
        fused = fuses_multiply_add()
        if out is None:
            out = np.empty(n, np.float64 if wide else np.float32)
        if cpu_kernels.compiled is not None:
            cpu_kernels.compiled.uniform(self._capsule, out, bits, low, span, fused)
            return out
        cpu_kernels.note_fallback()
        k = self._legacy.randint(0, 1 << bits, size=n, dtype=np.uint64 if wide else np.uint32)
        out[...] = k.view(np.int64 if wide else np.int32)
        out *= out.dtype.type(2.0 ** -bits)
        out[...] = rd.affine(out, span, low, out.dtype.type)
        return out

    # ------------------------------------------------------------------ normals
    def normal_double(self, n):
        """n standard normals from the scalar Box-Muller path (pairs of float64 uniforms),
        using and refilling the cached second value as PyTorch does."""
        out = np.empty(n, np.float64)
        i = 0
        if n and self._normal_double is not None:
            out[0] = self._normal_double
            self._normal_double = None
            i = 1
        pairs = (n - i + 1) // 2
        if pairs:
            u = self.uniform_double(2 * pairs)
            c, s = rd.box_muller_pairs(u[0::2], u[1::2])
            both = np.empty(2 * pairs)
            both[0::2], both[1::2] = c, s
            out[i:] = both[:n - i]
            if (n - i) % 2:
                self._normal_double = float(s[-1])
        return out

    def normal_fill(self, n, dtype, mean=0.0, std=1.0, padded=False, out=None):
        """`normal_(mean, std)` on n contiguous elements of NumPy dtype; returns the values
        (float64 for the serial path, else `dtype`). Blocks of 16 uniforms become normals;
        a partial last block is redone on 16 fresh uniforms written over the last 16 places
        (`padded=False`, float32/float64), or on 16 fresh uniforms after the whole blocks
        (`padded=True`: PyTorch's float16/bfloat16 kernel, run here in float32). `out`: an
        array of n elements of `dtype` to fill (contiguous float32/float64, not padded)."""
        if n < 16:
            return rd.affine(self.normal_double(n), std, mean, np.float64)
        self._fresh = False
        wide = dtype == np.float64
        # NOTE: PyTorch builds its random kernels for DEFAULT and AVX2 only; at AVX512 its
        # dispatcher falls back to the AVX2 build, whose float32 blocks are 8-lane code.
        avx2 = not wide and get_cpu_capability() in ("AVX2", "AVX512")
        if cpu_kernels.compiled is not None:
            if out is None:
                out = np.empty(n, np.float64 if wide else np.float32)
            cpu_kernels.compiled.normal(self._capsule, out, mean, std, avx2, padded)
            return out
        rest = n % 16
        u = self.uniform(n - rest + 16 if padded and rest else n, dtype)
        tail = self.uniform(16, dtype) if rest and not padded else None
        transform = rd.box_muller_avx2 if avx2 else rd.box_muller_blocks
        transform(u[:u.size - u.size % 16], mean, std)
        if padded and rest:
            u[n - 16:n] = u[-16:]
            return u[:n]
        if tail is not None:
            transform(tail, mean, std)
            u[n - 16:] = tail
        return u


def _seed_value(seed):
    """PyTorch's seed argument: an int in [-2**63, 2**64); negatives wrap to uint64."""
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise TypeError(f"manual_seed expected a long, but got {type(seed).__name__}") \
            from None
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator and the CUDA ones; returns the default generator (as
    torch.manual_seed does)."""
    from .cuda._random import seed_all_lazily  # (cycle: cuda._random imports this module)
    seed_all_lazily(_seed_value(seed))
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)
