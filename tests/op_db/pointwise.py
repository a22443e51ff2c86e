"""Op-table entries for ops/pointwise.py (binary math, pow, clamp, where, lerp, ...)."""
import numpy as np

from . import (ALL_NUMERIC, BROADCAST_PAIRS, FLOATS, OpInfo, Sample, binary_samples,
               make_array, unary_samples)

INTS_FLOATS = ("uint8", "int32", "int64", "float16", "float32", "float64")


def pair_samples(a_range, b_range, scalar=None, scalar_first=None, pairs=BROADCAST_PAIRS):
    """Samples of two arrays drawn from different ranges (divisors, exponents, ...)."""
    def samples(rng, dtype):
        out = [Sample((make_array(rng, sa, dtype, *a_range), make_array(rng, sb, dtype,
                                                                         *b_range)))
               for sa, sb in pairs]
        out.append(Sample((make_array(rng, (3, 4), dtype, *a_range, noncontiguous=True),
                           make_array(rng, (3, 4), dtype, *b_range))))
        if scalar is not None:
            out.append(Sample((make_array(rng, (3, 4), dtype, *a_range), scalar)))
        if scalar_first is not None:
            out.append(Sample((scalar_first, make_array(rng, (3, 4), dtype, *b_range))))
        return out
    return samples


def _float_ref(ref):
    def run(*args, **kwargs):
        args = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind in "biu"
                else a for a in args]
        return ref(*args, **kwargs)
    return run


def _xlogy(x, y):
    with np.errstate(all="ignore"):
        return np.where(x == 0, 0, x * np.log(y)).astype(np.result_type(x, y))


def _where_samples(rng, dtype):
    out = []
    for shape_c, shape_x, shape_y in (((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)),
                                      ((), (5,), ()), ((0, 2), (2,), (1, 2))):
        c = rng.random(shape_c) > 0.5
        out.append(Sample((np.asarray(c), make_array(rng, shape_x, dtype),
                           make_array(rng, shape_y, dtype))))
    out.append(Sample((np.asarray(rng.random((3, 4)) > 0.5), make_array(rng, (3, 4), dtype),
                       2)))
    return out


def _clamp_samples(rng, dtype):
    x = make_array(rng, (3, 4), dtype, -3, 3)
    lo = 1 if dtype == "uint8" else -1  # NumPy refuses -1 for uint8 (PyTorch wraps it)
    return [Sample((x,), {"min": lo, "max": 2}), Sample((x,), {"min": 0}),
            Sample((x,), {"max": 0.5}),
            Sample((make_array(rng, (), dtype, -3, 3),), {"min": lo, "max": 1}),
            Sample((make_array(rng, (3, 4), dtype, -3, 3, noncontiguous=True),),
                   {"min": 2, "max": 1})]


def _clamp_tensor_samples(rng, dtype):
    x = make_array(rng, (3, 4), dtype, -3, 3)
    lo = make_array(rng, (4,), dtype, -2, 0)
    hi = make_array(rng, (3, 1), dtype, 0.5, 2)
    return [Sample((x, lo, hi)), Sample((x, lo, None)), Sample((x, None, hi)),
            Sample((x, hi, lo))]


def _lerp_samples(rng, dtype):
    a, b = make_array(rng, (3, 4), dtype), make_array(rng, (3, 4), dtype)
    return [Sample((a, b, 0.3)), Sample((a, b, 0.8)),
            Sample((a, make_array(rng, (4,), dtype), make_array(rng, (3, 1), dtype, 0, 1))),
            Sample((make_array(rng, (), dtype), make_array(rng, (), dtype),
                    make_array(rng, (), dtype, -1, 2)))]


def _lerp_ref(a, b, w):
    return a + w * (b - a)


def _clamp_ref(x, lo=None, hi=None, min=None, max=None):
    lo = lo if lo is not None else min
    hi = hi if hi is not None else max
    if lo is not None:
        x = np.maximum(x, lo)
    if hi is not None:
        x = np.minimum(x, hi)
    return x


def _minmax_samples(rng, dtype):
    out = binary_samples()(rng, dtype)
    if dtype.startswith("float"):
        a = make_array(rng, (2, 3), dtype)
        b = a.copy()
        b[0] = np.nan
        b[1, 0] = a[1, 0] + 1
        out.append(Sample((a, b), grad=()))
    return out


OPS = [
    OpInfo("remainder", lambda m, a, b: m.remainder(a, b), np.remainder,
           pair_samples((-5, 5), (1, 3), scalar=1.5), dtypes=INTS_FLOATS,
           inplace="remainder_"),
    OpInfo("remainder_scalar_first", lambda m, a, b: m.remainder(a, b), np.remainder,
           pair_samples((-5, 5), (1, 3), scalar_first=7), dtypes=("uint8", "int64",
                                                                   "float32"), grad=False),
    OpInfo("remainder_negative_divisor", lambda m, a, b: a % b, np.remainder,
           pair_samples((-5, 5), (-3, -1), scalar=-2), dtypes=("int64", "float64"),
           inplace="__imod__"),
    OpInfo("fmod", lambda m, a, b: m.fmod(a, b), np.fmod,
           pair_samples((-5, 5), (1, 3), scalar=-1.5), dtypes=INTS_FLOATS, inplace="fmod_"),
    OpInfo("pow", lambda m, a, b: m.pow(a, b), np.power,
           pair_samples((0.5, 2), (-2, 2), scalar=2.5, scalar_first=1.7),
           dtypes=("float16", "float32", "float64"), inplace="pow_"),
    OpInfo("pow_int", lambda m, a, b: a ** b, np.power,
           pair_samples((0, 4), (0, 3), scalar=3, scalar_first=2),
           dtypes=("uint8", "int8", "int32", "int64"), inplace="__ipow__"),
    OpInfo("pow_int_negative_exponent", lambda m, a, b: m.pow(a, b), None,
           pair_samples((-3, 3), (-3, 3)), dtypes=("int8", "int64"), grad=False),
    OpInfo("pow_scalar_exponent", lambda m, a: a ** 3, lambda a: a ** 3, unary_samples(),
           dtypes=("float32", "float64")),
    OpInfo("square", lambda m, a: m.square(a), np.square, unary_samples(),
           dtypes=("bool",) + INTS_FLOATS, inplace="square_"),
    OpInfo("float_power", lambda m, a, b: m.float_power(a, b),
           lambda a, b: np.power(np.float64(a), np.float64(b)),
           pair_samples((0.5, 2), (-2, 2), scalar=2, scalar_first=3),
           dtypes=("int64", "float32", "float64")),
    OpInfo("atan2", lambda m, a, b: m.atan2(a, b), _float_ref(np.arctan2), binary_samples(),
           dtypes=("int64", "float16", "float32", "float64"), inplace="atan2_"),
    OpInfo("hypot", lambda m, a, b: m.hypot(a, b), np.hypot, binary_samples(),
           dtypes=("float16", "float32", "float64"), inplace="hypot_"),
    OpInfo("logaddexp", lambda m, a, b: m.logaddexp(a, b), np.logaddexp, binary_samples(),
           dtypes=("bfloat16", "float32", "float64")),
    OpInfo("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), np.logaddexp2,
           binary_samples(), dtypes=FLOATS),
    OpInfo("xlogy", lambda m, a, b: m.xlogy(a, b), _xlogy,
           pair_samples((-2, 2), (0.5, 3), scalar=2.5, scalar_first=1.5),
           dtypes=FLOATS, inplace="xlogy_"),
    OpInfo("copysign", lambda m, a, b: m.copysign(a, b), _float_ref(np.copysign),
           binary_samples(scalar=-1.0), dtypes=("int64", "float32", "float64"),
           inplace="copysign_"),
    OpInfo("heaviside", lambda m, a, b: m.heaviside(a, b), None,
           pair_samples((-2, 2), (0, 1)), dtypes=("int64", "float32", "float64"), grad=False,
           inplace="heaviside_"),
    OpInfo("maximum", lambda m, a, b: m.maximum(a, b), np.maximum, _minmax_samples,
           dtypes=ALL_NUMERIC),
    OpInfo("minimum", lambda m, a, b: m.minimum(a, b), np.minimum, _minmax_samples,
           dtypes=ALL_NUMERIC),
    OpInfo("fmax", lambda m, a, b: m.fmax(a, b), np.fmax, _minmax_samples,
           dtypes=("int64", "float32", "float64")),
    OpInfo("fmin", lambda m, a, b: m.fmin(a, b), np.fmin, _minmax_samples,
           dtypes=("int64", "float32", "float64")),
    OpInfo("where", lambda m, c, a, b: m.where(c, a, b), np.where, _where_samples,
           dtypes=("bool", "uint8", "int64", "float16", "float32", "float64")),
    OpInfo("lerp", lambda m, a, b, w: m.lerp(a, b, w), _lerp_ref, _lerp_samples,
           dtypes=("float16", "float32", "float64"), inplace="lerp_"),
    OpInfo("clamp", lambda m, x, **k: m.clamp(x, **k), _clamp_ref, _clamp_samples,
           dtypes=("uint8", "int64", "float16", "float32", "float64"), inplace="clamp_"),
    OpInfo("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi), _clamp_ref,
           _clamp_tensor_samples, dtypes=("int64", "float32", "float64"), inplace="clamp_"),
    OpInfo("clamp_min", lambda m, x, **k: m.clamp_min(x, **k),
           lambda x, min: np.maximum(x, min), unary_samples(min=0.5), dtypes=FLOATS,
           inplace="clamp_min_"),
    OpInfo("clamp_max", lambda m, x, **k: x.clamp_max(**k), lambda x, max: np.minimum(x, max),
           unary_samples(max=-0.5), dtypes=FLOATS, inplace="clamp_max_"),
    OpInfo("clip", lambda m, x, **k: m.clip(x, **k), lambda x, min, max: np.clip(x, min, max),
           unary_samples(min=-1, max=1), dtypes=("int64", "float32"), inplace="clip_"),
    OpInfo("relu", lambda m, x: m.relu(x), lambda x: np.maximum(x, 0).astype(x.dtype),
           unary_samples(), dtypes=("uint8", "int8", "int64", "float16", "float32",
                                    "float64"), inplace="relu_"),
]
