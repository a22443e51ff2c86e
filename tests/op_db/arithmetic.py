"""Op-table entries for ops/arithmetic.py."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, binary_samples, make_array, unary_samples


def _addc_samples(rng, dtype):
    """Same shapes, broadcast shapes, 0-dim; the divisor kept away from zero."""
    def arr(shape, low=-2, high=2):
        return make_array(rng, shape, dtype, low, high)
    return [Sample((arr((3, 4)), arr((3, 4)), arr((3, 4), 0.5, 2))),
            Sample((arr((4,)), arr((3, 1)), arr((1, 4), 0.5, 2)), {"value": 0.5}),
            Sample((arr(()), arr(()), arr((), 0.5, 2)), {"value": 2})]

OPS = [
    OpInfo("addcmul", lambda m, a, b, c, **k: m.addcmul(a, b, c, **k),
           lambda a, b, c, value=1: a + (int(value) if a.dtype.kind == "i" else value) * b * c,
           _addc_samples,
           dtypes=("int64", "float16", "float32", "float64"), inplace="addcmul_"),
    OpInfo("addcdiv", lambda m, a, b, c, **k: m.addcdiv(a, b, c, **k),
           lambda a, b, c, value=1: a + value * b / c, _addc_samples, inplace="addcdiv_"),
    OpInfo("add", lambda m, a, b, **k: m.add(a, b, **k), np.add,
           binary_samples(scalar=2.5), dtypes=ALL_NUMERIC, inplace="add_"),
    OpInfo("add_alpha", lambda m, a, b, **k: m.add(a, b, alpha=2),
           lambda a, b: a + 2 * b, binary_samples(), dtypes=FLOATS),
    OpInfo("sub", lambda m, a, b: m.sub(a, b), np.subtract, binary_samples(scalar=-1.5),
           dtypes=ALL_NUMERIC, inplace="sub_"),
    OpInfo("mul", lambda m, a, b: m.mul(a, b), np.multiply, binary_samples(scalar=3),
           dtypes=ALL_NUMERIC, inplace="mul_"),
    OpInfo("div", lambda m, a, b: m.div(a, b), np.divide,
           binary_samples(low=0.5, high=3.0, scalar=2.0), dtypes=FLOATS, inplace="div_"),
    OpInfo("div_floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"), np.floor_divide,
           binary_samples(low=1, high=5), dtypes=("int64", "float32", "float64"),
           grad=False),
    OpInfo("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
           lambda a, b: np.trunc(a / b).astype(np.result_type(a, b)),
           binary_samples(low=0.5, high=5), dtypes=FLOATS, grad=False),
    OpInfo("true_divide", lambda m, a, b: m.true_divide(a, b), np.divide,
           binary_samples(low=0.5, high=3.0, scalar=2.0), dtypes=FLOATS,
           inplace="true_divide_"),
    OpInfo("floor_divide", lambda m, a, b: m.floor_divide(a, b), np.floor_divide,
           binary_samples(low=1, high=5, scalar=2), dtypes=("int64", "float32", "float64"),
           grad=False, inplace="floor_divide_"),
    OpInfo("neg", lambda m, a: m.neg(a), np.negative, unary_samples(),
           dtypes=("int8", "int64", "float16", "float32", "float64"), inplace="neg_"),
]
