"""Op-table entries for ops/unary.py (floating functions: integer inputs give float32)."""
import numpy as np
import scipy.special as sp

from . import OpInfo, unary_samples

# Integer and bool inputs exercise the "int -> default float" rule; float16/bfloat16 the
# compute-in-float32 path.
FLOAT_FN_DTYPES = ("bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64")
POS_DTYPES = ("uint8", "int64", "float16", "bfloat16", "float32", "float64")


def _fn(name):
    return lambda m, x, **k: getattr(m, name)(x, **k)


def _float_ref(ref):
    """NumPy computes bool/int8 inputs in float16; PyTorch in the default float32."""
    def run(x, **kwargs):
        if x.dtype.kind in "biu":
            x = x.astype(np.float32)
        return ref(x, **kwargs)
    return run


def _unary(name, ref, low=-3.0, high=3.0, dtypes=FLOAT_FN_DTYPES, **kw):
    return OpInfo(name, _fn(name), _float_ref(ref), unary_samples(low, high), dtypes=dtypes,
                  inplace=name + "_", **kw)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _sinc(x):
    return np.sinc(x)


OPS = [
    _unary("exp", np.exp),
    _unary("exp2", np.exp2),
    _unary("expm1", np.expm1),
    _unary("log", np.log, 0.2, 3.0, POS_DTYPES),
    _unary("log2", np.log2, 0.2, 3.0, POS_DTYPES),
    _unary("log10", np.log10, 0.2, 3.0, POS_DTYPES),
    _unary("log1p", np.log1p, -0.8, 3.0),
    _unary("sqrt", np.sqrt, 0.2, 3.0, POS_DTYPES),
    _unary("rsqrt", lambda x: 1 / np.sqrt(x), 0.2, 3.0, POS_DTYPES),
    _unary("reciprocal", np.reciprocal, 0.5, 3.0, ("float16", "float32", "float64")),
    _unary("sin", np.sin),
    _unary("cos", np.cos),
    _unary("tan", np.tan, -1.2, 1.2),
    _unary("asin", np.arcsin, -0.9, 0.9),
    _unary("acos", np.arccos, -0.9, 0.9),
    _unary("atan", np.arctan),
    _unary("sinh", np.sinh),
    _unary("cosh", np.cosh),
    _unary("tanh", np.tanh),
    _unary("asinh", np.arcsinh),
    _unary("acosh", np.arccosh, 1.2, 4.0, POS_DTYPES),
    _unary("atanh", np.arctanh, -0.9, 0.9),
    _unary("sigmoid", _sigmoid, -8.0, 8.0),
    OpInfo("logit", _fn("logit"), _logit, unary_samples(0.05, 0.95),
           dtypes=("float32", "float64"), inplace="logit_"),
    OpInfo("logit_eps", lambda m, x: m.logit(x, eps=0.2), lambda x: _logit(x, 0.2),
           unary_samples(0.05, 0.95), dtypes=("float32", "float64")),
    _unary("erf", sp.erf),
    _unary("erfc", sp.erfc),
    _unary("erfinv", sp.erfinv, -0.9, 0.9, ("float32", "float64")),
    _unary("lgamma", sp.gammaln, 0.3, 4.0, POS_DTYPES),
    _unary("digamma", sp.psi, 0.3, 4.0, POS_DTYPES, grad_rtol=2e-3),
    OpInfo("polygamma", lambda m, x, **k: m.polygamma(2, x),
           lambda x: sp.polygamma(2, x).astype(np.result_type(x, np.float32)),
           unary_samples(0.5, 4.0), dtypes=("int64", "float32", "float64"), rtol=1e-5,
           grad_rtol=2e-3),
    OpInfo("polygamma_method", lambda m, x: x.polygamma(1), lambda x: sp.polygamma(1, x),
           unary_samples(0.5, 4.0), dtypes=("float32", "float64"), inplace=None,
           f64_rtol=1e-9),  # torch's trigamma series is good to ~4e-10 relative
    _unary("sinc", _sinc),
    _unary("deg2rad", np.deg2rad),
    _unary("rad2deg", np.rad2deg),
]
