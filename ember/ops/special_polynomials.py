"""torch.special's orthogonal polynomials P_n(x): Chebyshev (T, U, V, W and the shifted forms),
Hermite (physicists' H, probabilists' He), Laguerre and Legendre.

PyTorch evaluates them with the three-term recurrence, a closed trigonometric form for large
n inside [-1, 1], and exact values at the interval's ends; `n` is truncated to an integer
(negative n gives 0). These kernels follow the same branches element by element (the
recurrence runs up to the largest n once, vectorised). PyTorch does not differentiate them:
the results never require grad.
"""
from ..backends import array_module
from ._elementwise import defpointwise
from .special import special_binary


def _operands(x, n):
    """(xp, x and n broadcast as arrays of the compute dtype, n truncated to integers, n as
    that float dtype): either operand may be a Python number."""
    xp = array_module(x, n)
    dtype = x.dtype if hasattr(x, "dtype") else n.dtype
    x, n = xp.broadcast_arrays(xp.asarray(x, dtype), xp.asarray(n, dtype))
    n = n.astype(xp.int64)
    return xp, x, n, n.astype(dtype)


def _recurrence(xp, x, n, first, step):
    """P_n(x) from P_0 = 1, P_1 = first, P_k = step(k, P_{k-2}, P_{k-1})."""
    out = xp.where(n == 0, xp.ones_like(x), first)
    top = int(n.max()) if n.size else 0
    p, q = xp.ones_like(x), first
    for k in range(2, top + 1):
        p, q = q, step(k, p, q)
        out = xp.where(n == k, q, out)
    return out


def _sign(xp, n, value):
    """value where n is even, -value where n is odd."""
    return xp.where(n % 2 == 0, value, -value)


def _chebyshev(kind, x, n, xp, shifted):
    """The four Chebyshev kinds at y (y = 2x - 1 for the shifted ones), before edge cases."""
    y = x + x - 1 if shifted else x
    first = {"t": y, "u": y + y, "v": y + y - 1, "w": y + y + 1}[kind]
    return y, _recurrence(xp, y, n, first, lambda k, p, q: (y + y) * q - p)


def _chebyshev_kernel(kind, shifted, threshold):
    def kernel(x, n):
        xp, x, n, nf = _operands(x, n)
        y, out = _chebyshev(kind, x, n, xp, shifted)
        one = nf + 1
        two = nf + nf + 1
        theta = xp.arccos(y)
        if kind == "t":
            trig = xp.cos(nf * theta)
        elif kind == "u":
            s = xp.sin(theta)
            trig = xp.where(s != 0, xp.sin(one * theta) / s, one * xp.cos(one * theta) / y)
        elif kind == "v":
            trig = xp.where(xp.sin(theta / 2) != 1, xp.cos((nf + 0.5) * theta) /
                            xp.cos(theta / 2), _sign(xp, n, two))
        else:
            w_end = (_sign(xp, n, xp.ones_like(y)) if shifted else
                     xp.where(y > 0, two, _sign(xp, n, xp.ones_like(y))))
            trig = xp.where(xp.cos(theta / 2) != 1, xp.sin((nf + 0.5) * theta) /
                            xp.sin(theta / 2), w_end)
        out = xp.where((n > threshold) & (xp.abs(y) < 1), trig, out)
        out = _chebyshev_ends(kind, shifted, xp, x, n, out, one, two)
        return xp.where(n < 0, 0, out).astype(x.dtype)
    return kernel


def _chebyshev_ends(kind, shifted, xp, x, n, out, one, two):
    """Exact values at the interval's ends (x = +-1, or x = 1 and 0 when shifted)."""
    ones = xp.ones_like(x)
    if shifted:
        top, bottom = x == 1, x == 0
    else:
        top, bottom = x == 1, x == -1
    at_top = {"t": ones, "u": one, "v": ones, "w": two}[kind]
    at_bottom = {"t": _sign(xp, n, ones), "u": _sign(xp, n, one), "v": _sign(xp, n, two),
                 "w": _sign(xp, n, ones)}[kind]
    out = xp.where(bottom, at_bottom, out)
    return xp.where(top, at_top, out)


def _hermite_h(x, n):
    xp, x, n, _ = _operands(x, n)
    out = _recurrence(xp, x, n, x + x, lambda k, p, q: (x + x) * q - 2 * (k - 1) * p)
    return xp.where(n < 0, 0, out).astype(x.dtype)


def _hermite_he(x, n):
    xp, x, n, _ = _operands(x, n)
    out = _recurrence(xp, x, n, x, lambda k, p, q: x * q - (k - 1) * p)
    return xp.where(n < 0, 0, out).astype(x.dtype)


def _laguerre_l(x, n):
    xp, x, n, _ = _operands(x, n)
    out = _recurrence(xp, x, n, 1 - x,
                      lambda k, p, q: ((2 * (k - 1) + (1 - x)) * q - (k - 1) * p) / k)
    out = xp.where(x == 0, 1, out)
    return xp.where(n < 0, 0, out).astype(x.dtype)


def _legendre_p(x, n):
    xp, x, n, _ = _operands(x, n)
    out = _recurrence(xp, x, n, x, lambda k, p, q: ((2 * (k - 1) + 1) * x * q - (k - 1) * p) / k)
    out = xp.where(xp.abs(x) == 1, xp.where((x > 0) | (n % 2 == 0), 1, -1), out)
    return xp.where(n < 0, 0, out).astype(x.dtype)


KERNELS = {
    "chebyshev_polynomial_t": _chebyshev_kernel("t", False, 6),
    "chebyshev_polynomial_u": _chebyshev_kernel("u", False, 8),
    "chebyshev_polynomial_v": _chebyshev_kernel("v", False, 8),
    "chebyshev_polynomial_w": _chebyshev_kernel("w", False, 8),
    "shifted_chebyshev_polynomial_t": _chebyshev_kernel("t", True, 6),
    "shifted_chebyshev_polynomial_u": _chebyshev_kernel("u", True, 6),
    "shifted_chebyshev_polynomial_v": _chebyshev_kernel("v", True, 6),
    "shifted_chebyshev_polynomial_w": _chebyshev_kernel("w", True, 4),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre_l,
    "legendre_polynomial_p": _legendre_p,
}


def _polynomial(name, kernel):
    op = defpointwise("special_" + name)(kernel)

    def fn(input, n, *, out=None):
        return special_binary(op, "special_" + name, name + "_cpu", input, n, out, half=False,
                              differentiable=False, names=("x", "n"))
    fn.__name__ = fn.__qualname__ = name
    return fn


POLYNOMIALS = {name: _polynomial(name, kernel) for name, kernel in KERNELS.items()}
