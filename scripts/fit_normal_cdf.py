"""Fit the polynomial behind ember's float32 normal CDF (ember/backends/normal_cdf.py).

erfc(a) = t * P(t) * exp(-a^2) with t = 1 / (1 + 0.47 a), a >= 0: P is smooth on t in
(0, 1], so a degree-9 polynomial reaches a relative error of about 2e-8 (below float32's
rounding) over a in [0, 10]. The fit is a relative-error least squares in a Chebyshev
basis, reweighted toward the worst points (Lawson's iteration, close to minimax).
Prints the coefficients, lowest degree first. Needs scipy (a reference erfc in float64).

    python scripts/fit_normal_cdf.py
"""
import numpy as np
import scipy.special

P_T, DEGREE = 0.47, 9


def fit():
    a = np.linspace(0, 10, 400001)
    t = 1 / (1 + P_T * a)
    target = scipy.special.erfc(a) * np.exp(a * a) / t
    tmin = t.min()
    basis = np.polynomial.chebyshev.chebvander((2 * t - (1 + tmin)) / (1 - tmin), DEGREE)
    weight = 1 / target
    for _ in range(30):
        root = np.sqrt(weight)
        c, *_ = np.linalg.lstsq(basis * root[:, None], target * root, rcond=None)
        err = np.abs(basis @ c / target - 1)
        weight = weight * (err + 1e-3 * err.max())
        weight /= weight.mean()
    print(f"max relative error (float64 evaluation): {err.max():.2e}")
    poly = np.polynomial.Chebyshev(c, domain=[tmin, 1]).convert(kind=np.polynomial.Polynomial)
    return poly.coef


if __name__ == "__main__":
    print(", ".join(f"{c:.9g}" for c in fit()))
