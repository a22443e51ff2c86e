"""Op-table entries for ops/comparison.py (comparisons, logical, bitwise, classification)."""
import numpy as np

from . import ALL_NUMERIC, OpInfo, Sample, binary_samples, make_array, unary_samples

WITH_BOOL = ("bool",) + ALL_NUMERIC
INTEGRAL = ("bool", "uint8", "int8", "int16", "int32", "int64")


def _special_values(rng, dtype):
    a = make_array(rng, (3, 4), dtype)
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        a[0, 0], a[1, 1], a[2, 2], a[2, 3] = np.nan, np.inf, -np.inf, -0.0
    return [Sample((a,)), Sample((make_array(rng, (), dtype),)),
            Sample((make_array(rng, (0, 2), dtype),))]


def _shift_samples(rng, dtype):
    a = make_array(rng, (3, 4), dtype, -20, 20)
    bits = np.dtype(dtype).itemsize * 8
    # shifts past the width and negative shifts have PyTorch-defined results
    b = np.array([0, 1, 3, bits - 1, bits, bits + 3, -1, 2], dtype=np.int64).reshape(2, 4)
    b = b.astype(dtype) if dtype != "uint8" else np.abs(b).astype(dtype)
    return [Sample((a[:2], b)), Sample((a, 2)), Sample((a, make_array(rng, (4,), dtype, 0, 5)))]


def _comparison(name, ufunc, scalar=1.0):
    return OpInfo(name, lambda m, a, b: getattr(m, name)(a, b), ufunc,
                  binary_samples(scalar=scalar), dtypes=WITH_BOOL, grad=False,
                  inplace=name + "_")


def _bitwise(name, ufunc):
    return OpInfo(name, lambda m, a, b: getattr(m, name)(a, b), ufunc,
                  binary_samples(low=-20, high=20, scalar=5), dtypes=INTEGRAL, grad=False,
                  inplace=name + "_")


def _classify(name, ref, dtypes=WITH_BOOL):
    return OpInfo(name, lambda m, a: getattr(m, name)(a), ref, _special_values,
                  dtypes=dtypes, grad=False)


def _isclose_samples(rng, dtype):
    a = make_array(rng, (3, 4), dtype)
    b = a.copy()
    if dtype.startswith("float"):
        b = b + np.asarray(1e-6, dtype)
        a[0, 0], b[0, 0], a[0, 1], b[0, 1], a[1, 0], b[1, 0] = np.nan, np.nan, np.inf, \
            np.inf, np.inf, -np.inf
    b[2] = b[2] + np.asarray(1, dtype)
    return [Sample((a, b)), Sample((a, b), {"equal_nan": True}),
            Sample((a, b), {"rtol": 0, "atol": 1}), Sample((a, b[1]))]


OPS = [
    _comparison("eq", np.equal), _comparison("ne", np.not_equal),
    _comparison("lt", np.less), _comparison("le", np.less_equal),
    _comparison("gt", np.greater, scalar=1), _comparison("ge", np.greater_equal, scalar=2),
    OpInfo("eq_operator", lambda m, a, b: a == b, np.equal, binary_samples(scalar=0),
           dtypes=("int64", "float32"), grad=False),
    OpInfo("lt_operator_reflected", lambda m, a, b: b > a, np.less, binary_samples(),
           dtypes=("int64", "float32"), grad=False),
    OpInfo("logical_and", lambda m, a, b: m.logical_and(a, b), np.logical_and,
           binary_samples(low=-1, high=1), dtypes=WITH_BOOL, grad=False,
           inplace="logical_and_"),
    OpInfo("logical_or", lambda m, a, b: m.logical_or(a, b), np.logical_or,
           binary_samples(low=-1, high=1), dtypes=("bool", "int64", "float32"), grad=False),
    OpInfo("logical_xor", lambda m, a, b: m.logical_xor(a, b), np.logical_xor,
           binary_samples(low=-1, high=1), dtypes=("bool", "int64", "float32"), grad=False),
    OpInfo("logical_not", lambda m, a: m.logical_not(a), np.logical_not,
           unary_samples(-1, 1), dtypes=WITH_BOOL, grad=False, inplace="logical_not_"),
    _bitwise("bitwise_and", np.bitwise_and), _bitwise("bitwise_or", np.bitwise_or),
    _bitwise("bitwise_xor", np.bitwise_xor),
    OpInfo("bitwise_not", lambda m, a: m.bitwise_not(a), np.invert, unary_samples(-20, 20),
           dtypes=INTEGRAL, grad=False, inplace="bitwise_not_"),
    OpInfo("invert_operator", lambda m, a: ~a, np.invert, unary_samples(-20, 20),
           dtypes=INTEGRAL, grad=False),
    OpInfo("bitwise_left_shift", lambda m, a, b: m.bitwise_left_shift(a, b), None,
           _shift_samples, dtypes=("uint8", "int8", "int32", "int64"), grad=False,
           inplace="bitwise_left_shift_"),
    OpInfo("bitwise_right_shift", lambda m, a, b: a >> b, None, _shift_samples,
           dtypes=("uint8", "int8", "int32", "int64"), grad=False, inplace="__irshift__"),
    _classify("isnan", np.isnan), _classify("isinf", np.isinf),
    _classify("isfinite", np.isfinite), _classify("isposinf", np.isposinf),
    _classify("isneginf", np.isneginf), _classify("signbit", np.signbit,
                                       ("uint8", "int64", "float16", "float32", "float64")),
    _classify("isreal", np.isreal),
    OpInfo("isclose", lambda m, a, b, **k: m.isclose(a, b, **k),
           lambda a, b, **k: np.isclose(a, b, **k), _isclose_samples,
           dtypes=("bool", "int64", "float32", "float64"), grad=False),
    OpInfo("allclose", lambda m, a, b, **k: m.allclose(a, b, **k),
           lambda a, b, **k: np.allclose(a, b, **k), _isclose_samples,
           dtypes=("int64", "float32", "float64"), grad=False),
    OpInfo("equal", lambda m, a, b: m.equal(a, b), None, binary_samples(scalar=None),
           dtypes=("int64", "float32"), grad=False),
]
