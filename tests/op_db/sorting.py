"""Op-table entries for ops/sorting.py."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, make_array
from .reduction import cases, distinct

SORT = [((3, 4), {}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": 1, "descending": True}),
        ((5,), {"descending": True}), ((), {}), ((0, 3), {"dim": 1}),
        ((3, 4), {"dim": -1}, True), ((3, 4), {"stable": True, "descending": True})]


def _sorted_pair(rng, dtype):
    seq = np.sort(make_array(rng, (6,), dtype, -4, 4))
    rows = np.sort(make_array(rng, (2, 5), dtype, -4, 4), axis=-1)
    v = make_array(rng, (3, 4), dtype, -5, 5)
    return [Sample((seq, v)), Sample((seq, v), {"right": True}),
            Sample((seq, v), {"side": "right", "out_int32": True}),
            Sample((rows, make_array(rng, (2, 3), dtype, -5, 5))),
            Sample((rows, make_array(rng, (2, 3), dtype, -5, 5)), {"right": True}),
            Sample((seq, make_array(rng, (), dtype, -5, 5))),
            Sample((seq, np.zeros((0,), dtype)))]


def _bucketize(rng, dtype):
    bounds = np.unique(make_array(rng, (6,), dtype, -4, 4))
    v = make_array(rng, (3, 4), dtype, -5, 5)
    return [Sample((v, bounds)), Sample((v, bounds), {"right": True}),
            Sample((make_array(rng, (), dtype, -5, 5), bounds)),
            Sample((v[:, ::2], bounds), {"out_int32": True})]


def _ties(rng, dtype):
    # small integers: many repeats, for unique's counts and inverse
    return [Sample((make_array(rng, s, dtype, 0, 4, noncontiguous=nc),), k)
            for s, k, nc in [((12,), {}, False), ((3, 4), {"return_inverse": True}, False),
                             ((3, 4), {"return_counts": True, "return_inverse": True}, True),
                             ((), {}, False), ((0,), {"return_counts": True}, False),
                             ((4, 3), {"dim": 0, "return_inverse": True,
                                       "return_counts": True}, False),
                             ((3, 4), {"dim": 1}, False)]]


def _ties_dim(rng, dtype):
    x = make_array(rng, (6, 2), dtype, 0, 1)
    return _ties(rng, dtype) + [Sample((x,), {"dim": 0, "return_counts": True,
                                              "return_inverse": True})]


OPS = [
    OpInfo("sort", lambda m, x, **k: m.sort(x, **k), None, cases(*SORT, maker=distinct),
           dtypes=ALL_NUMERIC),
    OpInfo("argsort", lambda m, x, **k: m.argsort(x, **k),
           None, cases(*SORT, maker=distinct), dtypes=("uint8", "int32") + FLOATS,
           grad=False),
    OpInfo("msort", lambda m, x: m.msort(x), lambda x: np.sort(x, axis=0),
           cases(((3, 4), {}), ((5,), {}), ((3, 4), {}, True), ((0, 2), {}), maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("topk", lambda m, x, k=2, **kw: m.topk(x, k, **kw), None,
           cases(((3, 4), {}), ((3, 4), {"k": 3, "dim": 0}), ((5,), {"k": 5}),
                 ((2, 3, 4), {"k": 1, "dim": 1, "largest": False}), ((), {"k": 1}),
                 ((4,), {"k": 0}), ((3, 4), {"k": 2}, True), maker=distinct),
           dtypes=("uint8", "int32") + FLOATS + ("bfloat16",)),
    OpInfo("unique", lambda m, x, **k: m.unique(x, **k), None, _ties,
           dtypes=("bool", "uint8", "int32") + FLOATS, grad=False),
    OpInfo("unique_consecutive", lambda m, x, **k: m.unique_consecutive(x, **k), None,
           _ties_dim, dtypes=("bool", "int32", "float32"), grad=False),
    OpInfo("searchsorted", lambda m, s, v, **k: m.searchsorted(s, v, **k),
           None, _sorted_pair, dtypes=("int32",) + FLOATS, grad=False),
    OpInfo("bucketize", lambda m, v, b, **k: m.bucketize(v, b, **k), None, _bucketize,
           dtypes=("int64", "float32"), grad=False),
]
