"""Op-table entries for ops/reduction.py, ops/minmax.py, ops/statistics.py and
ops/cumulative.py (sorting and searching live in op_db/sorting.py)."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, make_array

LOW = ("float16", "bfloat16")


def distinct(rng, shape, dtype, noncontiguous=False):
    """Values without ties (exact in every dtype), so argmax-like picks are unambiguous."""
    if noncontiguous:
        big = distinct(rng, tuple(shape[:-1]) + (shape[-1] * 2,), dtype)
        return big[..., ::2]
    n = int(np.prod(shape))
    v = rng.permutation(n).astype(np.float64)
    if dtype not in ("uint8", "bool"):
        v -= n // 2
    if dtype.startswith("float") or dtype == "bfloat16":
        v = v * 0.5 + 0.25
    if dtype == "bfloat16":
        import ml_dtypes
        return v.reshape(shape).astype(ml_dtypes.bfloat16)
    return v.reshape(shape).astype(dtype)


def cases(*specs, maker=make_array, **mk):
    """Samples from (shape, kwargs) pairs; a third item True makes the input
    non-contiguous."""
    def samples(rng, dtype):
        out = []
        for spec in specs:
            shape, kw = spec[0], spec[1]
            nc = len(spec) > 2 and spec[2]
            out.append(Sample((maker(rng, shape, dtype, noncontiguous=nc, **mk),), dict(kw)))
        return out
    return samples


def fixed(*arrays_and_kwargs):
    """Samples from explicit arrays (cast to the tested dtype)."""
    def samples(rng, dtype):
        return [Sample((np.asarray(a).astype(dtype if dtype != "bfloat16" else np.float32),),
                       dict(k)) for a, k in arrays_and_kwargs]
    return samples


def both(*fns):
    def samples(rng, dtype):
        return [s for f in fns for s in f(rng, dtype)]
    return samples


def _axis(k):
    d = k.get("dim")
    return tuple(d) if isinstance(d, list) else d


def np_reduce(fn, int_dtype=None):
    def ref(x, **k):
        kw = {"dtype": int_dtype} if int_dtype and x.dtype.kind in "biu" else {}
        return fn(x, axis=_axis(k), keepdims=k.get("keepdim", False), **kw)
    return ref


REDUCE = [((3, 4), {}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": (0, 2)}),
          ((2, 3, 4), {"dim": -1, "keepdim": True}), ((), {}), ((0, 3), {"dim": 0}),
          ((3, 4), {"dim": 1}, True), ((), {"dim": 0})]
DIM = [((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": 0, "keepdim": True}), ((5,), {"dim": -1}),
       ((), {"dim": 0}), ((3, 4), {"dim": 0}, True), ((0, 3), {"dim": 1})]
ZEROS = fixed(([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, -1.0]], {"dim": 1}),
              ([[1.5, 0.0, 2.0], [1.0, 2.0, -1.0]], {}),
              ([[0.5, -2.0], [3.0, 0.0]], {"dim": 0, "keepdim": True}))
NORM = [((3, 4), {}), ((3, 4), {"p": 1, "dim": 1}), ((2, 3, 4), {"p": 3, "dim": (0, 2)}),
        ((3, 4), {"p": float("inf"), "dim": 0}), ((3, 4), {"p": -float("inf")}),
        ((3, 4), {"p": 0.5, "dim": 1, "keepdim": True}), ((), {}), ((0, 3), {"dim": 1}),
        ((3, 4), {"p": 0}), ((3, 4), {"p": "fro", "dim": (0, 1)}, True)]
VAR = [((3, 4), {}), ((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
       ((3, 4), {"dim": 0, "correction": 0}), ((3, 4), {"dim": 1, "unbiased": False}),
       ((5,), {"correction": 2.5}), ((3, 4), {"dim": 1}, True)]
Q = [((3, 4), {"q": 0.3}), ((3, 4), {"q": 0.5, "dim": 1}),
     ((2, 3, 4), {"q": 0.7, "dim": 0, "keepdim": True}), ((5,), {"q": 0.0}),
     ((5,), {"q": 1.0}), ((), {"q": 0.4}), ((3, 4), {"q": 0.3, "dim": 1}, True)] + [
    ((3, 5), {"q": 0.35, "dim": 1, "interpolation": m})
    for m in ("lower", "higher", "midpoint", "nearest")]


def _q_tensor(rng, dtype):
    x = make_array(rng, (3, 4), dtype)
    q = np.asarray([0.1, 0.5, 0.9], dtype=dtype)
    return [Sample((x, q), {"dim": 1}, grad=(0,)), Sample((x, q), {"keepdim": True},
                                                          grad=(0,))]


def _lse_ref(x, **k):
    m = np.max(x, axis=_axis(k), keepdims=True) if x.size else 0
    return np.log(np.sum(np.exp(x - m), axis=_axis(k), keepdims=True)).squeeze(
        () if k.get("keepdim") else _axis(k)) + (np.squeeze(m, _axis(k)) if not
                                                 k.get("keepdim") and x.size else m)


OPS = [
    OpInfo("sum", lambda m, x, **k: m.sum(x, **k), np_reduce(np.sum, np.int64),
           cases(*REDUCE), dtypes=("bool", "int32") + FLOATS + LOW, atol=1e-4),
    OpInfo("nansum", lambda m, x, **k: m.nansum(x, **k), np_reduce(np.nansum, np.int64),
           cases(*REDUCE), dtypes=("int32",) + FLOATS, atol=1e-4),
    OpInfo("mean", lambda m, x, **k: m.mean(x, **k), np_reduce(np.mean),
           cases(*REDUCE[:5], REDUCE[6]), dtypes=FLOATS + LOW),
    OpInfo("nanmean", lambda m, x, **k: m.nanmean(x, **k), np_reduce(np.nanmean),
           cases(*REDUCE[:5], REDUCE[6])),
    OpInfo("prod", lambda m, x, **k: m.prod(x, **k), None,
           both(cases(((3, 4), {}), ((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": -1,
                                                                       "keepdim": True}),
                      ((), {}), ((0, 3), {"dim": 0}), ((3, 4), {"dim": 0}, True),
                      low=0.5, high=1.5), ZEROS),
           dtypes=("int32",) + FLOATS + LOW),
    OpInfo("logsumexp", lambda m, x, **k: m.logsumexp(x, **k), _lse_ref,
           cases(((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 2), "keepdim": True}),
                 ((), {"dim": 0}), ((0, 3), {"dim": 1}), ((3, 4), {"dim": 0}, True),
                 high=30.0), dtypes=FLOATS + LOW),
    OpInfo("all", lambda m, x, **k: m.all(x, **k), np_reduce(np.all),
           cases(*REDUCE, low=0, high=1), dtypes=("bool", "int32", "float32"), grad=False),
    OpInfo("any", lambda m, x, **k: m.any(x, **k), None,
           cases(*REDUCE, low=0, high=1), dtypes=("bool", "uint8", "float32"), grad=False),
    OpInfo("count_nonzero", lambda m, x, **k: m.count_nonzero(x, **k), None,
           cases(((3, 4), {}), ((2, 3, 4), {"dim": (0, 2)}), ((3, 4), {"dim": 1}, True),
                 ((), {}), ((0, 2), {"dim": 0}), low=-1, high=1),
           dtypes=("bool", "int32", "float32"), grad=False),
    OpInfo("norm", lambda m, x, **k: m.norm(x, **k), None,
           both(cases(*NORM), fixed(([0.0, 0.0, 0.0], {}), ([[0.0, 0.0], [1.0, -2.0]],
                                                            {"dim": 1, "p": 3}))),
           dtypes=FLOATS + LOW, atol=1e-4),
    # ---- minmax.py
    OpInfo("max", lambda m, x, **k: m.max(x, **k), np_reduce(np.max),
           cases(((3, 4), {}), ((2, 3, 4), {}), ((), {}), ((3, 4), {}, True), maker=distinct),
           dtypes=ALL_NUMERIC),
    OpInfo("max_dim", lambda m, x, **k: m.max(x, **k), None, cases(*DIM, maker=distinct),
           dtypes=ALL_NUMERIC),
    OpInfo("min", lambda m, x, **k: m.min(x, **k), np_reduce(np.min),
           cases(((3, 4), {}), ((), {}), ((3, 4), {}, True), maker=distinct),
           dtypes=ALL_NUMERIC),
    OpInfo("min_dim", lambda m, x, **k: m.min(x, **k), None, cases(*DIM, maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("amax", lambda m, x, **k: m.amax(x, **k), np_reduce(np.amax),
           cases(*[c for c in REDUCE if c[0] != (0, 3)], ((0, 3), {"dim": 1}),
                 maker=distinct), dtypes=ALL_NUMERIC),
    OpInfo("amin", lambda m, x, **k: m.amin(x, **k), np_reduce(np.amin),
           cases(*[c for c in REDUCE if c[0] != (0, 3)], maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("aminmax", lambda m, x, **k: m.aminmax(x, **k), None,
           cases(((3, 4), {}), ((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": 0, "keepdim": True}),
                 ((), {}), ((3, 4), {"dim": 0}, True), maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("argmax", lambda m, x, **k: m.argmax(x, **k), None,
           cases(((3, 4), {}), ((3, 4), {"keepdim": True}), *DIM, maker=distinct),
           dtypes=("uint8", "int32") + FLOATS + LOW, grad=False),
    OpInfo("argmin", lambda m, x, **k: m.argmin(x, **k), None,
           cases(((3, 4), {}), *DIM, maker=distinct), dtypes=("int32",) + FLOATS,
           grad=False),
    # ---- statistics.py
    OpInfo("var", lambda m, x, **k: m.var(x, **k), None, cases(*VAR, ((), {"dim": 0})),
           dtypes=FLOATS + LOW),
    OpInfo("std", lambda m, x, **k: m.std(x, **k), None, cases(*VAR), dtypes=FLOATS + LOW),
    OpInfo("var_mean", lambda m, x, **k: m.var_mean(x, **k), None, cases(*VAR)),
    OpInfo("std_mean", lambda m, x, **k: m.std_mean(x, **k), None, cases(*VAR)),
    OpInfo("median", lambda m, x, **k: m.median(x, **k), None,
           cases(((3, 4), {}), ((5,), {}), ((), {}), ((3, 4), {}, True), *DIM,
                 maker=distinct), dtypes=("int32",) + FLOATS + LOW),
    OpInfo("nanmedian", lambda m, x, **k: m.nanmedian(x, **k), None,
           cases(((3, 4), {}), ((), {}), *DIM, maker=distinct), dtypes=FLOATS),
    OpInfo("mode", lambda m, x, **k: m.mode(x, **k), None,
           cases(((3, 8), {}), ((3, 8), {"dim": 0}), ((), {}), ((2, 7), {"keepdim": True}),
                 ((3, 8), {}, True), low=0, high=3),
           dtypes=("int32",) + FLOATS, grad=False),
    OpInfo("kthvalue", lambda m, x, k=2, **kw: m.kthvalue(x, k, **kw), None,
           cases(((3, 4), {}), ((3, 4), {"k": 3, "dim": 0}), ((2, 3, 4), {"k": 1, "dim": 1,
                                                                           "keepdim": True}),
                 ((), {"k": 1}), ((3, 4), {"k": 4}, True), maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("quantile", lambda m, x, *a, **k: m.quantile(x, *a, **k), None,
           both(cases(*Q), _q_tensor)),
    OpInfo("nanquantile", lambda m, x, *a, **k: m.nanquantile(x, *a, **k), None,
           both(cases(*Q[:4]), _q_tensor)),
    OpInfo("histc", lambda m, x, **k: m.histc(x, **k), None,
           cases(((20,), {"bins": 5}), ((3, 4), {"bins": 4, "min": -1, "max": 2}),
                 ((0,), {"bins": 3}), ((), {"bins": 2}), ((3, 4), {"bins": 3}, True)),
           dtypes=FLOATS, grad=False),
    OpInfo("bincount", lambda m, x, *w, **k: m.bincount(x, *w, **k), None,
           lambda rng, d: [Sample((make_array(rng, (10,), d, 0, 6),)),
                           Sample((make_array(rng, (10,), d, 0, 6),), {"minlength": 9}),
                           Sample((np.zeros(0, d),), {"minlength": 2}),
                           Sample((make_array(rng, (10,), d, 0, 6), rng.random(10)))],
           dtypes=("uint8", "int32", "int64"), grad=False),
    # ---- cumulative.py
    OpInfo("cumsum", lambda m, x, **k: m.cumsum(x, **k),
           lambda x, dim, **k: np.cumsum(x.reshape(x.shape or (1,)), axis=dim,
                                         dtype=np.int64 if x.dtype.kind in "biu" else None
                                         ).reshape(x.shape),
           cases(*[c for c in DIM if "keepdim" not in c[1]]),
           dtypes=("bool", "int32") + FLOATS + LOW, inplace="cumsum_", atol=1e-4),
    OpInfo("cumprod", lambda m, x, **k: m.cumprod(x, **k), None,
           both(cases(*[c for c in DIM if "keepdim" not in c[1]], low=0.5, high=1.5),
                fixed(([[1.5, 0.0, 2.0, 0.0, 1.0], [0.5, 2.0, 0.0, 3.0, -1.0],
                        [1.0, 2.0, -1.0, 0.5, 2.0]], {"dim": 1}),
                      ([[0.0, 2.0], [3.0, 0.0]], {"dim": 0}))),
           dtypes=("int32",) + FLOATS),
    OpInfo("cummax", lambda m, x, **k: m.cummax(x, **k), None,
           cases(*[c for c in DIM if "keepdim" not in c[1]], maker=distinct),
           dtypes=("int32",) + FLOATS + LOW),
    OpInfo("cummin", lambda m, x, **k: m.cummin(x, **k), None,
           cases(*[c for c in DIM if "keepdim" not in c[1]], maker=distinct),
           dtypes=("int32",) + FLOATS),
    OpInfo("logcumsumexp", lambda m, x, **k: m.logcumsumexp(x, **k), None,
           cases(*[c for c in DIM if "keepdim" not in c[1]], high=20.0), dtypes=FLOATS),
]
