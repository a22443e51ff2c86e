"""Op-table entries for ops/indexing.py and ops/scatter.py: getitem/setitem, index_put,
take/put, gather/scatter, index_*, masked_*, nonzero, copy_/fill_."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, make_array

NUMERIC = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64")
BASIC_KEYS = [0, -1, (1, 2), slice(1, None), slice(None, None, 2), (slice(None), 1),
              (Ellipsis, 0), (None, 1), (0, None, slice(1, 3)), (slice(-2, None), None, -1),
              (slice(5, 9),), (Ellipsis, None), (slice(None), slice(None)), ()]


def _a(rng, shape, d, nc=False, low=-3.0, high=3.0):
    return make_array(rng, shape, d, low, high, noncontiguous=nc)


def _i(*values):
    return np.array(values, dtype=np.int64)


def _unique_index(rng, shape, size, dim):
    """Indices along `dim` without repeats in any fibre (scatter writes stay deterministic)."""
    full = list(shape)
    full[dim] = size
    order = np.argsort(rng.random(full), axis=dim)
    return np.take(order, range(shape[dim]), axis=dim).astype(np.int64)


def _ref(fn, *kinds):
    """`fn` with index ('i') and mask ('b') arguments restored to int64 / bool: the op table
    hands float16/bfloat16 references every array in float32."""
    def ref(*args, **kwargs):
        args = [a.astype(np.int64) if k == "i" and isinstance(a, np.ndarray) else
                a.astype(bool) if k == "b" and isinstance(a, np.ndarray) else a
                for a, k in zip(args, kinds + (None,) * len(args))]
        return fn(*args, **kwargs)
    return ref


def _basic_samples(rng, d):
    out = [Sample((_a(rng, (3, 4), d),), {"key": k}) for k in BASIC_KEYS]
    out.append(Sample((_a(rng, (3, 4), d, nc=True),), {"key": (slice(None), slice(1, None, 2))}))
    out.append(Sample((_a(rng, (), d),), {"key": None}))
    out.append(Sample((_a(rng, (), d),), {"key": Ellipsis}))
    out.append(Sample((_a(rng, (0, 2), d),), {"key": (slice(None), 1)}))
    return out


def _advanced_samples(rng, d):
    x = _a(rng, (3, 4), d)
    return [Sample((x, _i(0, 2, 0)), {"pos": 0}), Sample((x, _i(-1, 1, 1)), {"pos": 1}),
            Sample((x, _i([0, 1], [1, 1])), {"pos": 0}),
            Sample((_a(rng, (2, 3, 4), d), _i(1, 0, 1)), {"pos": 2}),
            Sample((_a(rng, (3, 4), d, nc=True), _i(3, 0)), {"pos": 1}),
            Sample((x, np.zeros(0, np.int64)), {"pos": 0}),
            Sample((_a(rng, (0, 3), d), _i(0, 2)), {"pos": 1})]


def _mask_index_samples(rng, d):
    x = _a(rng, (3, 4), d)
    return [Sample((x, np.array([True, False, True])), {"pos": 0}),
            Sample((x, make_array(rng, (3, 4), "bool")), {"pos": 0}),
            Sample((x, np.array([False, True, True, False])), {"pos": 1}),
            Sample((x, np.array(True)), {"pos": 0})]


def _advanced(m, x, i, pos):
    if pos == 0:
        return x[i]
    if pos == 1:
        return x[:, i]
    return x[i, 1:, i]  # two advanced indices separated by a slice: their dims go first


def _advanced_ref(x, i, pos):
    if pos == 0:
        return x[i]
    if pos == 1:
        return x[:, i]
    return x[i, 1:, i]


def _mixed_samples(rng, d):
    x = _a(rng, (2, 3, 4), d)
    return [Sample((x, _i(0, 1)), {"key": "int_then_tensor"}),
            Sample((x, _i(2, 0, 2)), {"key": "tensor_none_slice"}),
            Sample((x, _i(1, 1)), {"key": "ellipsis_tensor"})]


def _mixed(m, x, i, key):
    if key == "int_then_tensor":
        return x[1, i]            # PyTorch applies the int first, then indexes the view
    if key == "tensor_none_slice":
        return x[:, i, None, 1:]
    return x[..., i]


def _mixed_ref(x, i, key):
    if key == "int_then_tensor":
        return x[1][i]
    if key == "tensor_none_slice":
        return x[:, i, None, 1:]
    return x[..., i]


def _setitem(m, x, v, key):
    y = x.clone()
    y[key if not isinstance(key, str) else _KEYS[key](m)] = v
    return y


_KEYS = {"tensor": lambda m: m.tensor([2, 0]), "mask": lambda m: m.tensor([True, False, True]),
         "tensor_col": lambda m: (slice(None), m.tensor([1, 3])),
         "int_tensor": lambda m: (1, m.tensor([0, 2]))}


def _setitem_ref(x, v, key):
    y = x.copy()
    keys = {"tensor": np.array([2, 0]), "mask": np.array([True, False, True]),
            "tensor_col": (slice(None), np.array([1, 3])), "int_tensor": (1, np.array([0, 2]))}
    k = keys.get(key, key) if isinstance(key, str) else key
    if isinstance(v, np.ndarray) and v.ndim > y[k].ndim:
        v = v.reshape(v.shape[v.ndim - y[k].ndim:])
    y[k] = v
    return y


def _setitem_samples(rng, d):
    return [Sample((_a(rng, (3, 4), d), _a(rng, (4,), d)), {"key": 0}),
            Sample((_a(rng, (3, 4), d), _a(rng, (), d)), {"key": (slice(None), 1)}),
            Sample((_a(rng, (3, 4), d), _a(rng, (1, 2), d)), {"key": (slice(1, None), slice(2))}),
            Sample((_a(rng, (3, 4), d), _a(rng, (1, 4), d)), {"key": 1}),
            Sample((_a(rng, (3, 4), d), 2.5), {"key": (Ellipsis, 0)}),
            Sample((_a(rng, (3, 4), d), _a(rng, (2, 4), d)), {"key": "tensor"}),
            Sample((_a(rng, (3, 4), d), _a(rng, (4,), d)), {"key": "mask"}),
            Sample((_a(rng, (3, 4), d, nc=True), _a(rng, (3, 1), d)), {"key": "tensor_col"}),
            Sample((_a(rng, (3, 4), d), _a(rng, (2,), d)), {"key": "int_tensor"})]


def _index_put_samples(rng, d):
    return [Sample((_a(rng, (3, 4), d), _i(0, 2, 0), _a(rng, (3, 4), d))),
            Sample((_a(rng, (3, 4), d), _i(1, -1), _a(rng, (4,), d))),
            Sample((_a(rng, (3, 4), d, nc=True), _i(2), _a(rng, (), d))),
            Sample((_a(rng, (3,), d), np.array([True, False, True]), _a(rng, (2,), d))),
            Sample((_a(rng, (3, 4), d), np.zeros(0, np.int64), _a(rng, (0, 4), d)))]


def _dim_samples(rng, d, with_source=False, unique=False):
    """(x, dim, index[, source]) samples for index_select / index_add / index_copy."""
    specs = [((3, 4), 0, (2,)), ((3, 4), 1, (3,)), ((2, 3, 4), -1, (5,)), ((3,), 0, (0,)),
             ((), 0, ())]
    out = []
    for shape, dim, ishape in specs:
        size = shape[dim] if shape else 1
        n = ishape[0] if ishape else 1
        if unique:
            index = rng.permutation(size)[:n].astype(np.int64)
            n = index.size
        else:
            index = rng.integers(0, size, n).astype(np.int64)
        index = index.reshape(ishape if ishape == () else (n,))
        args = (_a(rng, shape, d), dim, index)
        if with_source:
            sshape = list(shape)
            if sshape:
                sshape[dim] = n
            args += (_a(rng, tuple(sshape), d),)
        out.append(Sample(args))
    x = _a(rng, (3, 4), d, nc=True)
    src = (_a(rng, (3, 2), d),) if with_source else ()
    out.append(Sample((x, 1, np.array([3, 0] if unique else [3, 3], np.int64)) + src))
    return out


def _gather_samples(rng, d):
    return [Sample((_a(rng, (3, 4), d), 0, rng.integers(0, 3, (2, 4)))),
            Sample((_a(rng, (3, 4), d), 1, rng.integers(0, 4, (3, 6)))),
            Sample((_a(rng, (2, 3, 4), d), -1, rng.integers(0, 4, (1, 2, 2)))),
            Sample((_a(rng, (3, 4), d, nc=True), 0, rng.integers(0, 3, (0, 4)))),
            Sample((_a(rng, (), d), 0, np.array(0)))]


def _scatter_samples(rng, d, unique=True, value=False):
    out = []
    for shape, dim, ishape, sshape in [((3, 4), 0, (2, 4), (2, 4)), ((3, 4), 1, (3, 2), (3, 3)),
                                       ((2, 3, 4), -1, (1, 2, 3), (2, 3, 4)),
                                       ((3, 4), 0, (0, 4), (1, 4))]:
        dd = dim % len(shape)
        if unique:
            index = _unique_index(rng, ishape, shape[dd], dd)
        else:
            index = rng.integers(0, shape[dd], ishape).astype(np.int64)
        src = 1.5 if value else _a(rng, sshape, d)
        out.append(Sample((_a(rng, shape, d), dim, index, src)))
    return out


def _scatter_ref(x, dim, index, src, mode=None):
    out = x.copy()
    coords = list(np.indices(index.shape, sparse=True))
    coords[dim % x.ndim] = index
    coords = tuple(coords)
    values = src[tuple(slice(0, s) for s in index.shape)] if isinstance(src, np.ndarray) \
        else src
    if mode is None:
        out[coords] = values
    else:
        getattr(np, mode).at(out, coords, values)
    return out


def _reduce_samples(rng, d):
    out = []
    for shape, dim, ishape in [((3, 4), 0, (3, 4)), ((2, 5), 1, (2, 3)), ((4,), 0, (6,))]:
        dd = dim % len(shape)
        index = rng.integers(0, shape[dd], ishape).astype(np.int64)
        src = _a(rng, ishape, d, low=0.5, high=2.0)
        out.append(Sample((_a(rng, shape, d, low=0.5, high=2.0), dim, index, src)))
    x = _a(rng, (3, 2), d, low=0.5, high=2.0)
    x[0, 0] = 0  # products through zero take the group-without-this-member path
    src = _a(rng, (4, 2), d, low=0.5, high=2.0)
    src[1, 1] = 0
    out.append(Sample((x, 0, np.array([[0, 0], [1, 1], [0, 2], [2, 0]], np.int64), src)))
    return out


def _reduce_ref(x, dim, index, src, reduce, include_self):
    out = x.astype(np.float64).copy()
    coords = list(np.indices(index.shape, sparse=True))
    coords[dim % x.ndim] = index
    coords = tuple(coords)
    hit = np.zeros(x.shape, bool)
    hit[coords] = True
    count = np.where(hit, 0, 1) + (~hit if False else 0)
    count = np.ones(x.shape) if include_self else np.where(hit, 0.0, 1.0)
    if not include_self:
        out[hit] = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    ufunc.at(out, coords, src.astype(np.float64))
    if reduce == "mean":
        np.add.at(count, coords, 1)
        out = out / np.maximum(count, 1)
    return out.astype(x.dtype)


def _reduce_op(reduce, include_self):
    return OpInfo(f"scatter_reduce_{reduce}_{'self' if include_self else 'noself'}",
                  lambda m, x, dim, i, s: m.scatter_reduce(x, dim, i, s, reduce,
                                                           include_self=include_self),
                  lambda x, dim, i, s: _reduce_ref(x, dim, i, s, reduce, include_self),
                  _reduce_samples, dtypes=FLOATS, atol=1e-4, rtol=1e-4,
                  gradgrad=reduce not in ("amax", "amin"))


def _mask_samples(rng, d, value=None):
    out = [Sample((_a(rng, (3, 4), d), make_array(rng, (3, 4), "bool"))),
           Sample((_a(rng, (3, 4), d), make_array(rng, (4,), "bool"))),
           Sample((_a(rng, (3, 1), d), make_array(rng, (2, 3, 4), "bool"))),
           Sample((_a(rng, (3, 4), d, nc=True), make_array(rng, (3, 4), "bool"))),
           Sample((_a(rng, (), d), np.array(True))),
           Sample((_a(rng, (0, 2), d), make_array(rng, (0, 2), "bool")))]
    if value is not None:
        for s in out:
            s.args += (value(rng, d),)
    return out


def _masked_scatter_ref(x, mask, src):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.broadcast_to(x, shape).copy()
    m = np.broadcast_to(mask, shape)
    out[m] = src.reshape(-1)[:m.sum()]
    return out


def _take_samples(rng, d):
    return [Sample((_a(rng, (3, 4), d), rng.integers(-12, 12, (2, 3)))),
            Sample((_a(rng, (3, 4), d, nc=True), _i(0, 11, 0))),
            Sample((_a(rng, (), d), np.array(0))), Sample((_a(rng, (3,), d), _i()))]


def _put_samples(rng, d, unique):
    out = []
    for shape, n in [((3, 4), 5), ((5,), 3), ((2, 3), 0)]:
        size = int(np.prod(shape))
        index = (rng.permutation(size)[:n] if unique else rng.integers(-size, size, n))
        out.append(Sample((_a(rng, shape, d), index.astype(np.int64).reshape(-1),
                           _a(rng, (n,), d))))
    return out


def _put_ref(x, index, src, accumulate):
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index, src.reshape(-1))
    else:
        flat[index] = src.reshape(-1)
    return out


def _gather_ref(x, dim, index):
    if x.ndim == 0:
        return x.copy()
    dim %= x.ndim
    key = tuple(slice(0, s) if k != dim else slice(None) for k, s in enumerate(index.shape))
    return np.take_along_axis(x[key], index, dim)


def _take_along_ref(x, index, dim=None):
    if dim is None:
        return np.take_along_axis(x.reshape(-1), index.reshape(-1), 0)
    return np.take_along_axis(x, index, dim)


def _index_copy_ref(x, dim, index, src):
    out = x.copy()
    if x.ndim == 0:
        return src.reshape(()).copy() if index.size else out
    out[(slice(None),) * (dim % x.ndim) + (index,)] = src
    return out


def _index_add_ref(x, dim, index, src, alpha=1):
    out = x.copy()
    if x.ndim == 0:
        return out + alpha * src.sum() * index.size
    np.add.at(out, (slice(None),) * (dim % x.ndim) + (index,), alpha * src)
    return out


OPS = [
    OpInfo("getitem_basic", lambda m, x, key: x[key], lambda x, key: x[key],
           _basic_samples, dtypes=NUMERIC),
    OpInfo("getitem_advanced", _advanced, _ref(_advanced_ref, None, "i"), _advanced_samples,
           dtypes=NUMERIC),
    OpInfo("getitem_mask", _advanced, _ref(_advanced_ref, None, "b"), _mask_index_samples,
           dtypes=NUMERIC),
    OpInfo("getitem_mixed", _mixed, _ref(_mixed_ref, None, "i"), _mixed_samples),
    OpInfo("setitem", _setitem, _setitem_ref, _setitem_samples, dtypes=NUMERIC),
    OpInfo("index_put", lambda m, x, i, v: m.index_put(x, (i,), v),
           lambda x, i, v: _setitem_ref(x, v, (i.astype(bool if i.shape == (3,) else np.int64),)),
           lambda rng, d: [s for k, s in enumerate(_index_put_samples(rng, d)) if k != 0],
           dtypes=NUMERIC),
    OpInfo("index_put_accumulate", lambda m, x, i, v: m.index_put(x, (i,), v, True),
           lambda x, i, v: _index_add_ref(x, 0, i, np.broadcast_to(v, x[i].shape)),
           lambda rng, d: [s for k, s in enumerate(_index_put_samples(rng, d)) if k != 3]),
    OpInfo("take", lambda m, x, i: m.take(x, i), _ref(lambda x, i: x.reshape(-1)[i], None, "i"),
           _take_samples, dtypes=NUMERIC),
    OpInfo("put", lambda m, x, i, s: m.put(x, i, s),
           _ref(lambda x, i, s: _put_ref(x, i, s, False), None, "i"),
           lambda rng, d: _put_samples(rng, d, True),
           dtypes=NUMERIC),
    OpInfo("put_accumulate", lambda m, x, i, s: m.put(x, i, s, accumulate=True),
           lambda x, i, s: _put_ref(x, i, s, True), lambda rng, d: _put_samples(rng, d, False)),
    OpInfo("gather", lambda m, x, dim, i: m.gather(x, dim, i),
           _ref(_gather_ref, None, None, "i"), _gather_samples, dtypes=NUMERIC),
    OpInfo("scatter", lambda m, x, dim, i, s: m.scatter(x, dim, i, s),
           _ref(_scatter_ref, None, None, "i"),
           _scatter_samples, dtypes=NUMERIC),
    OpInfo("scatter_value", lambda m, x, dim, i, s: m.scatter(x, dim, i, s), _scatter_ref,
           lambda rng, d: _scatter_samples(rng, d, value=True)),
    OpInfo("scatter_reduce_add", lambda m, x, dim, i, s: m.scatter(x, dim, i, s, reduce="add"),
           lambda x, dim, i, s: _scatter_ref(x, dim, i, s, "add"),
           lambda rng, d: _scatter_samples(rng, d, unique=False), grad=False),
    OpInfo("scatter_add", lambda m, x, dim, i, s: m.scatter_add(x, dim, i, s),
           lambda x, dim, i, s: _scatter_ref(x, dim, i, s, "add"),
           lambda rng, d: _scatter_samples(rng, d, unique=False),
           dtypes=("int64", "float32", "float64"), inplace="scatter_add_"),
    *[_reduce_op(r, inc) for r in ("sum", "prod", "mean", "amax", "amin")
      for inc in (True, False)],
    OpInfo("index_select", lambda m, x, dim, i: m.index_select(x, dim, i),
           _ref(lambda x, dim, i: np.take(x, i, dim) if x.ndim else x.reshape(1)[i].reshape(
               i.shape), None, None, "i"),
           _dim_samples, dtypes=NUMERIC),
    OpInfo("index_add", lambda m, x, dim, i, s: m.index_add(x, dim, i, s), _index_add_ref,
           lambda rng, d: _dim_samples(rng, d, True), dtypes=("int64",) + FLOATS,
           inplace="index_add_"),
    OpInfo("index_add_alpha", lambda m, x, dim, i, s: m.index_add(x, dim, i, s, alpha=-2),
           lambda x, dim, i, s: _index_add_ref(x, dim, i, s, -2),
           lambda rng, d: _dim_samples(rng, d, True)),
    OpInfo("index_copy", lambda m, x, dim, i, s: m.index_copy(x, dim, i, s),
           _ref(_index_copy_ref, None, None, "i"),
           lambda rng, d: _dim_samples(rng, d, True, unique=True), dtypes=NUMERIC,
           inplace="index_copy_"),
    OpInfo("index_fill", lambda m, x, dim, i, v: m.index_fill(x, dim, i, v),
           _ref(lambda x, dim, i, v: _index_copy_ref(x, dim, i, np.full(x[(slice(None),) * (
               dim % max(x.ndim, 1)) + (i,)].shape if x.ndim else (), v, x.dtype)),
               None, None, "i"),
           lambda rng, d: [Sample(s.args + (-1.5 if d in FLOATS else 1,))
                           for s in _dim_samples(rng, d)], dtypes=NUMERIC),
    OpInfo("index_fill_tensor", lambda m, x, dim, i, v: m.index_fill(x, dim, i, v), None,
           lambda rng, d: [Sample(s.args + (_a(rng, (), d),)) for s in _dim_samples(rng, d)]),
    OpInfo("take_along_dim", lambda m, x, i, *dim: m.take_along_dim(x, i, *dim),
           _ref(_take_along_ref, None, "i"),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), rng.integers(-3, 3, (2, 4)), 0)),
                           Sample((_a(rng, (3, 4), d), rng.integers(0, 4, (3, 1)), -1)),
                           Sample((_a(rng, (3, 4), d), rng.integers(0, 12, (5,)))),
                           Sample((_a(rng, (3, 1), d, nc=True), rng.integers(0, 3, (2, 4)), 0))],
           dtypes=NUMERIC),
    OpInfo("masked_fill", lambda m, x, mask: m.masked_fill(x, mask, -2),
           _ref(lambda x, mask: np.where(mask, -2, x).astype(x.dtype), None, "b"), _mask_samples,
           dtypes=NUMERIC),
    OpInfo("masked_fill_tensor", lambda m, x, mask, v: m.masked_fill(x, mask, v),
           lambda x, mask, v: np.where(mask, v, x).astype(x.dtype),
           lambda rng, d: _mask_samples(rng, d, lambda r, dd: _a(r, (), dd))),
    OpInfo("masked_select", lambda m, x, mask: m.masked_select(x, mask),
           _ref(lambda x, mask: np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape))[
               np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))], None, "b"),
           _mask_samples, dtypes=NUMERIC),
    OpInfo("masked_scatter", lambda m, x, mask, s: m.masked_scatter(x, mask, s),
           _ref(_masked_scatter_ref, None, "b"),
           lambda rng, d: _mask_samples(rng, d, lambda r, dd: _a(
               r, (25,), dd)), dtypes=NUMERIC),
    OpInfo("nonzero", lambda m, x: m.nonzero(x), np.argwhere,
           lambda rng, d: [Sample((make_array(rng, s, d, -1, 1),))
                           for s in [(3, 4), (5,), (), (0, 2), (2, 2, 2)]],
           dtypes=NUMERIC, grad=False),
    OpInfo("nonzero_tuple", lambda m, x: m.nonzero(x, as_tuple=True),
           lambda x: np.nonzero(np.atleast_1d(x)),
           lambda rng, d: [Sample((make_array(rng, s, d, -1, 1),))
                           for s in [(3, 4), (5,), (), (0, 2)]], dtypes=("bool", "int64"),
           grad=False),
    OpInfo("argwhere", lambda m, x: m.argwhere(x), np.argwhere,
           lambda rng, d: [Sample((make_array(rng, s, d, -1, 1),)) for s in [(3, 4), ()]],
           dtypes=("bool", "float32"), grad=False),
    OpInfo("copy_", lambda m, x, s: (x * 1).copy_(s) if x.dtype.is_floating_point
           else x.clone().copy_(s), lambda x, s: np.broadcast_to(s, x.shape).astype(x.dtype),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), _a(rng, (3, 4), "float64"))),
                           Sample((_a(rng, (3, 4), d), _a(rng, (4,), d))),
                           Sample((_a(rng, (2, 3), d, nc=True), _a(rng, (), d)))],
           dtypes=ALL_NUMERIC),
    OpInfo("fill_", lambda m, x, v: (x * 1).fill_(v) if x.dtype.is_floating_point
           else x.clone().fill_(v), lambda x, v: np.full(x.shape, v, x.dtype),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), _a(rng, (), d))),
                           Sample((_a(rng, (0,), d), _a(rng, (), d))),
                           Sample((_a(rng, (2, 3), d, nc=True), 2))],
           dtypes=ALL_NUMERIC),
    OpInfo("zero_", lambda m, x: (x * 1).zero_(), np.zeros_like,
           lambda rng, d: [Sample((_a(rng, (3, 4), d),)), Sample((_a(rng, (), d),))]),
]


# ---------------------------------------------------------------------- index_reduce, copies
def _index_reduce_samples(rng, d):
    """_dim_samples with a source, without the 0-dim input (PyTorch rejects its shapes)."""
    return [s for s in _dim_samples(rng, d, True) if s.args[0].ndim]


def _index_reduce_op(reduce, include_self):
    def op(m, x, dim, i, s):
        return m.index_reduce(x, dim, i, s, reduce, include_self=include_self)
    return OpInfo(f"index_reduce_{reduce}" + ("" if include_self else "_exclude_self"), op,
                  None, _index_reduce_samples, dtypes=("int64",) + FLOATS,
                  inplace="index_reduce_")


def _narrow_ref(x, dim, start, length):
    start = start % x.shape[dim] if start < 0 else start
    return np.take(x, range(start, start + length), dim)


def _as_strided_scatter_ref(x, src, size, stride, offset):
    out = x.copy()
    flat = out.reshape(-1)
    item = flat.itemsize
    np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])[...] = src
    return out


OPS.extend([_index_reduce_op(r, inc) for r in ("prod", "mean", "amax", "amin")
            for inc in (True, False)])
OPS.extend([
    OpInfo("narrow_copy", lambda m, x, dim, start, length: m.narrow_copy(x, dim, start, length),
           _narrow_ref,
           lambda rng, d: [Sample((_a(rng, (3, 4), d), 0, 1, 2)),
                           Sample((_a(rng, (3, 4), d, nc=True), 1, -3, 2)),
                           Sample((_a(rng, (2, 3, 4), d), -1, 0, 0))], dtypes=NUMERIC),
    OpInfo("as_strided_scatter",
           lambda m, x, s, size, stride, off: m.as_strided_scatter(x, s, size, stride, off),
           _as_strided_scatter_ref,
           lambda rng, d: [Sample((_a(rng, (3, 4), d), _a(rng, (2, 2), d), (2, 2), (1, 2), 1)),
                           Sample((_a(rng, (6,), d), _a(rng, (3,), d), (3,), (2,), 0)),
                           Sample((_a(rng, (2, 3), d), _a(rng, (0,), d), (0,), (1,), 0))],
           dtypes=NUMERIC),
])
