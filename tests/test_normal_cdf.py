"""The float32 normal CDF behind GELU (ember/backends/normal_cdf.py) against scipy in
float64: relative error in units in the last place over the whole range, tails included."""
import numpy as np
import pytest
import scipy.special

from ember.backends.normal_cdf import normal_cdf_and_gauss


def _ulps(value, exact):
    tiny = np.finfo(np.float32).tiny
    return np.abs(value - exact) / np.spacing(np.maximum(exact, tiny).astype(np.float32))


def test_float32_cdf_and_gauss_within_a_few_ulps():
    x = np.concatenate([np.linspace(-13, 13, 400001), np.linspace(-1e-3, 1e-3, 2001),
                        np.geomspace(1e-30, 1, 200), -np.geomspace(1e-30, 1, 200)])
    x = x.astype(np.float32)
    cdf, gauss = normal_cdf_and_gauss(x)
    assert cdf.dtype == gauss.dtype == np.float32
    exact = x.astype(np.float64)
    assert _ulps(cdf, scipy.special.ndtr(exact)).max() <= 8
    assert _ulps(gauss, np.exp(-0.5 * exact * exact)).max() <= 4


def test_float32_special_values():
    x = np.array([0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 40.0, -40.0], np.float32)
    cdf, gauss = normal_cdf_and_gauss(x)
    np.testing.assert_array_equal(cdf, [0.5, 1, 0, np.nan, 1, 0, 1, 0])
    np.testing.assert_array_equal(gauss, [1, 0, 0, np.nan, 0, 0, 0, 0])


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_other_dtypes_use_scipy(dtype):
    x = np.linspace(-9, 9, 1001).astype(dtype)
    cdf, gauss = normal_cdf_and_gauss(x)
    np.testing.assert_array_equal(cdf, scipy.special.ndtr(x))
    np.testing.assert_array_equal(gauss, np.exp(-0.5 * (x * x)))
