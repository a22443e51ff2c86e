"""Op-table entries for ops/rounding.py (dtype-preserving unary ops)."""
import numpy as np

from . import OpInfo, Sample, make_array, unary_samples

INT_AND_FLOAT = ("uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                 "float64")


def _fn(name):
    return lambda m, x, **k: getattr(m, name)(x, **k)


def _sign(x):
    return x.copy() if x.dtype == bool else np.sign(x).astype(x.dtype)


# NOTE: make_array gives a NumPy scalar, not an array, for a 0-dim complex shape.
COMPLEX_SHAPES = [(0,), (5,), (3, 4), (2, 3, 4)]


def _nan_samples(rng, dtype):
    a = make_array(rng, (3, 4), dtype)
    a[0, 0], a[1, 1], a[2, 2] = np.nan, np.inf, -np.inf
    return [Sample((a,)), Sample((a,), {"nan": 1.5, "posinf": 7.0, "neginf": -7.0}),
            Sample((make_array(rng, (5,), dtype),))]


OPS = [
    OpInfo("abs", _fn("abs"), np.abs, unary_samples(), dtypes=INT_AND_FLOAT, inplace="abs_"),
    OpInfo("sign", _fn("sign"), _sign, unary_samples(), dtypes=("bool",) + INT_AND_FLOAT,
           inplace="sign_"),
    OpInfo("sgn", _fn("sgn"), _sign, unary_samples(), dtypes=("int64", "float32", "float64"),
           inplace="sgn_"),
    OpInfo("floor", _fn("floor"), np.floor, unary_samples(), dtypes=INT_AND_FLOAT,
           inplace="floor_"),
    OpInfo("ceil", _fn("ceil"), np.ceil, unary_samples(), dtypes=INT_AND_FLOAT,
           inplace="ceil_"),
    OpInfo("trunc", _fn("trunc"), np.trunc, unary_samples(), dtypes=INT_AND_FLOAT,
           inplace="trunc_"),
    OpInfo("fix", _fn("fix"), np.trunc, unary_samples(), dtypes=("float32",), inplace="fix_"),
    OpInfo("round", _fn("round"), np.rint, unary_samples(-6, 6), dtypes=INT_AND_FLOAT,
           inplace="round_"),
    OpInfo("round_decimals", lambda m, x: m.round(x, decimals=2),
           lambda x: np.rint(x * 100) / 100, unary_samples(), dtypes=("float32", "float64")),
    OpInfo("round_negative_decimals", lambda m, x: m.round(x, decimals=-1),
           lambda x: np.rint(x / 10) * 10, unary_samples(-60, 60), dtypes=("float64",)),
    OpInfo("frac", _fn("frac"), lambda x: x - np.trunc(x), unary_samples(),
           dtypes=("float16", "float32", "float64"), inplace="frac_"),
    OpInfo("positive", _fn("positive"), lambda x: x, unary_samples(), dtypes=INT_AND_FLOAT),
    # Finite differences cannot see through inf/nan: gradients are checked against torch in
    # test_pointwise.py.
    OpInfo("nan_to_num", _fn("nan_to_num"), np.nan_to_num, _nan_samples,
           dtypes=("float32", "float64"), inplace="nan_to_num_", grad=False),
    OpInfo("nan_to_num_low_precision", _fn("nan_to_num"), None, _nan_samples,
           dtypes=("float16", "bfloat16"), inplace="nan_to_num_", grad=False),
    OpInfo("abs_complex", _fn("abs"), np.abs, unary_samples(shapes=COMPLEX_SHAPES),
           dtypes=("complex64", "complex128"), grad=False),
]
