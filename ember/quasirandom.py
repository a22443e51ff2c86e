"""ember.quasirandom.SobolEngine (torch.quasirandom.SobolEngine): Sobol' low-discrepancy
sequences, the same numbers as PyTorch's.

PyTorch's engine (aten/src/ATen/native/SobolEngineOps.cpp) takes its direction numbers from
Joe and Kuo's new-joe-kuo-6.21201 table, walks the sequence in Gray-code order (one XOR of a
direction number per point) and, when scrambled, applies random lower-triangular binary
matrices (Owen's linear matrix scrambling) and a random digital shift drawn from a
Generator. Here the table comes from SciPy (its qmc.Sobol ships the same table), the walk is
a cumulative XOR in NumPy, and the random bits are drawn with ember.randint, whose stream is
PyTorch's, so seeded scrambled engines agree with PyTorch's too.
"""
import os

import numpy as np

import ember

from ._dtype import type_name

__all__ = ["SobolEngine"]

_table = None


def _direction_table():
    """(poly, vinit) of the Joe-Kuo table, loaded once from SciPy's copy."""
    global _table
    if _table is None:
        import scipy.stats   # (deferred: scipy.stats costs about 0.9 s to import)
        path = os.path.join(os.path.dirname(scipy.stats.__file__),
                            "_sobol_direction_numbers.npz")
        with np.load(path) as data:
            _table = (data["poly"].astype(np.int64), data["vinit"].astype(np.int64))
    return _table


def _initial_state(dimension, maxbit):
    """PyTorch's _sobol_engine_initialize_state_: the direction numbers v[d, j], scaled by
    2^(maxbit-1-j). Dimensions with the same polynomial degree are filled together."""
    poly, vinit = _direction_table()
    v = np.zeros((dimension, maxbit), np.int64)
    v[0, :] = 1
    p = poly[:dimension]
    degree = np.array([int(x).bit_length() - 1 for x in p])
    for m in set(degree[1:].tolist()):
        rows = np.nonzero(degree == m)[0]
        rows = rows[rows > 0]
        v[rows, :m] = vinit[rows, :m]
        pr = p[rows]
        for j in range(m, maxbit):
            newv = v[rows, j - m].copy()
            for k in range(m):
                use = ((pr >> (m - 1 - k)) & 1).astype(bool)
                newv ^= np.where(use, v[rows, j - k - 1] << (k + 1), 0)
            v[rows, j] = newv
    return v * (np.int64(1) << np.arange(maxbit - 1, -1, -1, dtype=np.int64))


def _rightmost_zero(n):
    """The index of the lowest zero bit of each n (which direction number the next point
    XORs in)."""
    n = np.asarray(n, np.int64)
    return np.bitwise_count((~n & (n + 1)) - 1).astype(np.int64)


def _walk(quasi, n, state, num_generated):
    """The next n points after `quasi` (int64, one per dimension) and the new quasi."""
    if n <= 0:
        return np.empty((0, quasi.size), np.int64), quasi.copy()
    index = _rightmost_zero(np.arange(num_generated, num_generated + n, dtype=np.int64))
    steps = state[:, index].T                      # (n, dimension)
    points = np.bitwise_xor.accumulate(steps, axis=0) ^ quasi
    return points, points[-1].copy()


def _scrambled_state(state, ltm, maxbit):
    """PyTorch's _sobol_engine_scramble_: each direction number multiplied (over GF(2)) by
    its dimension's lower-triangular matrix with a unit diagonal."""
    ltm = ltm.copy()
    idx = np.arange(maxbit)
    ltm[:, idx, idx] = 1
    pow2 = np.int64(1) << np.arange(maxbit - 1, -1, -1, dtype=np.int64)
    rows = (ltm * pow2).sum(-1)                     # (dimension, p): the matrix rows as ints
    parity = np.bitwise_count(rows[:, :, None] & state[:, None, :]) & 1   # (d, p, j)
    return (parity.astype(np.int64) << (maxbit - 1 - idx)[None, :, None]).sum(1)


class SobolEngine:
    """Draws points of a (scrambled) Sobol' sequence in [0, 1)^dimension."""

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension, self.MAXBIT)
        if not scramble:
            shift = np.zeros(dimension, np.int64)
        else:
            shift, state = self._scramble(state)
        self.sobolstate = ember.from_numpy(state)
        self.shift = ember.from_numpy(shift)
        self.quasi = self.shift.clone()
        # NOTE: PyTorch computes the first point in the default dtype (an int64 tensor's true
        # division) and casts it to the requested dtype later, so a float64 draw's first
        # point carries float32 rounding.
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self, state):
        g = None
        if self.seed is not None:
            g = ember.Generator()
            g.manual_seed(self.seed)
        shift_ints = ember.randint(2, (self.dimension, self.MAXBIT), generator=g).numpy()
        shift = shift_ints @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        ltm = ember.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT),
                            generator=g).numpy()
        return shift, _scrambled_state(state, np.tril(ltm), self.MAXBIT)

    def _draw(self, n, num_generated, dtype):
        if dtype not in (ember.float32, ember.float64):
            raise NotImplementedError(f"\"_sobol_engine_draw\" not implemented for "
                                      f"'{type_name(dtype)}'")
        points, quasi = _walk(self.quasi.numpy(), n, self.sobolstate.numpy(), num_generated)
        self.quasi = ember.from_numpy(quasi)
        # (int64 -> dtype, then times 2^-30: exact scaling, one rounding as in PyTorch)
        return ember.from_numpy((points.astype(dtype.np) * dtype.np.type(2.0 ** -self.MAXBIT))
                                .astype(dtype.np))

    def draw(self, n=1, out=None, dtype=None):
        """The next `n` points, shape (n, dimension)."""
        if dtype is None:
            dtype = ember.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                result = self._draw(n - 1, self.num_generated, dtype)
                result = ember.cat((self._first_point.to(dtype), result), dim=-2)
        else:
            result = self._draw(n, self.num_generated - 1, dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points (the total drawn must stay a power of 2)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously "
                             f"generated, then: n={self.num_generated}+2**{m}={total_n}. If "
                             "you still want to do this, please use 'SobolEngine.draw()' "
                             "instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip `n` points (as drawing them would)."""
        start = self.num_generated if self.num_generated == 0 else self.num_generated - 1
        steps = n - 1 if self.num_generated == 0 else n
        if steps > 0:
            _, quasi = _walk(self.quasi.numpy(), steps, self.sobolstate.numpy(), start)
            self.quasi = ember.from_numpy(quasi)
        self.num_generated += n
        return self

    def __repr__(self):
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt.append("scramble=True")
        if self.seed is not None:
            fmt.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(fmt)})"
