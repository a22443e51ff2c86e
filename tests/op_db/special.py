"""Op-table entries for ember.special's own ops (ops/special.py, ops/special_polynomials.py):
scipy.special is the independent reference; real torch is compared by the generic tests.
The functions PyTorch does not differentiate (Bessel, Airy, the polynomials) have grad=False
here; tests/test_special.py checks that their results never require grad."""
import numpy as np
import scipy.special as sp

from . import OpInfo, Sample, binary_samples, make_array, unary_samples

FLOATING = ("int64", "float32", "float64")


def _fn(name):
    return lambda m, *args, **k: getattr(m.special, name)(*args, **k)


def _float_ref(ref):
    def run(*arrays):
        return ref(*[a.astype(np.float32) if a.dtype.kind in "biu" else a for a in arrays])
    return run


def _unary(name, ref, low, high, grad=True, **kw):
    return OpInfo(f"special.{name}", _fn(name), _float_ref(ref), unary_samples(low, high),
                  dtypes=FLOATING, grad=grad, gradgrad=grad, rtol=1e-5, **kw)


def _zeta_samples(rng, dtype):
    out = [Sample((make_array(rng, s, dtype, 1.5, 4.0), make_array(rng, t, dtype, 0.5, 3.0)),
                  grad=(1,)) for s, t in (((5,), (5,)), ((3, 4), (4,)), ((), (3,)))]
    out.append(Sample((3.0, make_array(rng, (4,), dtype, 0.5, 3.0)), grad=(1,)))
    return out


def _polynomial_samples(rng, dtype):
    x = make_array(rng, (4, 6), dtype, -1.2, 1.2)
    n = np.arange(-1, 11).reshape(2, 6).repeat(2, 0).astype(dtype)
    shifted = make_array(rng, (4, 6), dtype, -0.1, 1.1)
    return [Sample((x, n)), Sample((shifted, n)), Sample((x, 3)), Sample((x[:, :1], n[0]))]


def _polynomial(name, ref=None):
    def reference(x, n):
        n = np.broadcast_to(n, np.broadcast_shapes(np.shape(x), np.shape(n))).astype(int)
        return np.where(n < 0, 0.0, ref(n, x))   # (scipy extends to n < 0; torch gives 0)
    return OpInfo(f"special.{name}", _fn(name), None if ref is None else reference,
                  _polynomial_samples, dtypes=("float32", "float64"), grad=False,
                  gradgrad=False, rtol=1e-5, atol=1e-4)


def _xlog1py_ref(x, y):
    return np.where(x == 0, 0.0, x * np.log1p(y))


OPS = [
    _unary("erfcx", sp.erfcx, -2.0, 3.0),
    _unary("i0e", sp.i0e, -3.0, 3.0),
    _unary("i1", sp.i1, -3.0, 3.0),
    _unary("i1e", sp.i1e, -3.0, 3.0),
    _unary("ndtri", sp.ndtri, 0.05, 0.95, grad_rtol=2e-3),
    _unary("log_ndtr", sp.log_ndtr, -5.0, 5.0),
    _unary("entr", sp.entr, 0.1, 3.0),
    OpInfo("special.xlog1py", _fn("xlog1py"), _xlog1py_ref, binary_samples(-0.5, 3.0, scalar=2.0),
           dtypes=FLOATING, rtol=1e-5),
    OpInfo("special.zeta", _fn("zeta"), sp.zeta, _zeta_samples, dtypes=("float32", "float64"),
           rtol=1e-5, grad_rtol=2e-3),
    # NOTE: torch's airy_ai and Bessel kernels (Cephes-style rational fits) are accurate to
    # ~2e-5 and ~1e-6 absolute in float64, float32 quality; ember matches SciPy, so
    # against torch these need the looser float64 tolerance.
    _unary("airy_ai", lambda x: sp.airy(x)[0], -5.0, 5.0, grad=False, atol=1e-4,
           f64_rtol=1e-4, f64_atol=1e-5),
    _unary("bessel_j0", sp.j0, -8.0, 8.0, grad=False, f64_rtol=1e-5, f64_atol=1e-5),
    _unary("bessel_j1", sp.j1, -8.0, 8.0, grad=False, f64_rtol=1e-5, f64_atol=1e-5),
    _unary("bessel_y0", sp.y0, 0.1, 8.0, grad=False, f64_rtol=1e-5, f64_atol=1e-5),
    _unary("bessel_y1", sp.y1, 0.1, 8.0, grad=False, f64_rtol=1e-5, f64_atol=1e-5),
    _unary("modified_bessel_i0", sp.i0, -3.0, 3.0, grad=False),
    _unary("modified_bessel_i1", sp.i1, -3.0, 3.0, grad=False),
    _unary("modified_bessel_k0", sp.k0, 0.1, 5.0, grad=False),
    _unary("modified_bessel_k1", sp.k1, 0.1, 5.0, grad=False),
    _unary("scaled_modified_bessel_k0", sp.k0e, 0.1, 5.0, grad=False),
    _unary("scaled_modified_bessel_k1", sp.k1e, 0.1, 5.0, grad=False),
    _unary("spherical_bessel_j0", lambda x: sp.spherical_jn(0, x), -5.0, 5.0, grad=False),
    _polynomial("chebyshev_polynomial_t", sp.eval_chebyt),
    _polynomial("chebyshev_polynomial_u", sp.eval_chebyu),
    _polynomial("chebyshev_polynomial_v"),
    _polynomial("chebyshev_polynomial_w"),
    _polynomial("shifted_chebyshev_polynomial_t", sp.eval_sh_chebyt),
    _polynomial("shifted_chebyshev_polynomial_u", sp.eval_sh_chebyu),
    _polynomial("shifted_chebyshev_polynomial_v"),
    _polynomial("shifted_chebyshev_polynomial_w"),
    _polynomial("hermite_polynomial_h", sp.eval_hermite),
    _polynomial("hermite_polynomial_he", sp.eval_hermitenorm),
    _polynomial("laguerre_polynomial_l", sp.eval_laguerre),
    _polynomial("legendre_polynomial_p", sp.eval_legendre),
]
