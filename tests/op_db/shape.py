"""Op-table entries for ops/shape.py: joining, splitting, flipping, triangles, diagonals,
repetition and grids."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, make_array

NUMERIC = ("bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64")


def _a(rng, shape, d, nc=False):
    return make_array(rng, shape, d, noncontiguous=nc)


def _samples(*specs):
    """specs: (shapes, kwargs) pairs; shapes is a tuple of input shapes, or (shape, 'nc')."""
    def samples(rng, d):
        out = []
        for shapes, kwargs in specs:
            args = tuple(_a(rng, s[0], d, True) if isinstance(s, list) else _a(rng, s, d)
                         for s in shapes)
            out.append(Sample(args, dict(kwargs)))
        return out
    return samples


def _nc(shape):
    return [shape]  # marks a non-contiguous input in _samples


def _mixed_cat_samples(rng, d):
    return [Sample((_a(rng, (2, 3), d), _a(rng, (2, 3), "int64")), {}),
            Sample((_a(rng, (2, 3), d), _a(rng, (0,), "int32")), {})]


def _np_cat(*xs, dim=0):
    kept = [x for x in xs if x.shape != (0,)] or [xs[0]]
    return np.concatenate(kept, axis=dim)


def _np_split(x, sizes, dim):
    return np.split(x, np.cumsum(sizes)[:-1], axis=dim)


OPS = [
    OpInfo("cat", lambda m, *xs, **k: m.cat(xs, **k),
           _np_cat,
           _samples((((2, 3), (1, 3)), {}), (((2, 3), _nc((2, 2))), {"dim": 1}),
                    (((2, 0), (2, 3), (2, 1)), {"dim": -1}), (((0,), (2, 3)), {}),
                    (((4,),), {}), (((0, 3), (0, 3)), {})),
           dtypes=NUMERIC),
    OpInfo("cat_promote", lambda m, a, b: m.cat([a, b]), None, _mixed_cat_samples,
           dtypes=("bool", "int32", "float32", "float64"), grad=False),
    OpInfo("stack", lambda m, *xs, **k: m.stack(xs, **k),
           lambda *xs, **k: np.stack(xs, axis=k.get("dim", 0)),
           _samples((((2, 3), (2, 3)), {}), (((2, 3), _nc((2, 3))), {"dim": -1}),
                    (((), ()), {}), (((0, 2),), {"dim": 1}), (((3,), (3,), (3,)), {"dim": 1})),
           dtypes=NUMERIC),
    OpInfo("hstack", lambda m, *xs: m.hstack(xs), lambda *xs: np.hstack(xs),
           _samples((((2, 3), (2, 1)), {}), (((3,), (2,)), {}), (((), ()), {}))),
    OpInfo("vstack", lambda m, *xs: m.vstack(xs), lambda *xs: np.vstack(xs),
           _samples((((2, 3), (1, 3)), {}), (((3,), (3,)), {}), (((), ()), {}))),
    OpInfo("row_stack", lambda m, *xs: m.row_stack(xs), lambda *xs: np.vstack(xs),
           _samples((((2, 3), (1, 3)), {}),)),
    OpInfo("dstack", lambda m, *xs: m.dstack(xs), lambda *xs: np.dstack(xs),
           _samples((((2, 3), (2, 3)), {}), (((3,), (3,)), {}), (((2, 2, 1), (2, 2, 2)), {}))),
    OpInfo("column_stack", lambda m, *xs: m.column_stack(xs), lambda *xs: np.column_stack(xs),
           _samples((((3,), (3, 2)), {}), (((), ()), {}), (((2, 2), _nc((2, 2))), {}))),
    OpInfo("split", lambda m, x, s, **k: m.split(x, s, **k),
           lambda x, s, dim=0: np.split(x, range(s, x.shape[dim], s), axis=dim),
           lambda rng, d: [Sample((_a(rng, (5, 3), d), 2)), Sample((_a(rng, (2, 4), d), 3),
                                                                    {"dim": 1}),
                           Sample((_a(rng, (3, 4), d, True), 1), {"dim": -1}),
                           Sample((_a(rng, (0, 2), d), 2))],
           dtypes=ALL_NUMERIC),
    OpInfo("split_sizes", lambda m, x, **k: m.split(x, [1, 0, 2], **k),
           lambda x, dim=0: _np_split(x, [1, 0, 2], dim),
           _samples((((3, 2),), {}), ((_nc((2, 3)),), {"dim": 1}), (((2, 3),), {"dim": -1}))),
    OpInfo("chunk", lambda m, x, c, **k: m.chunk(x, c, **k), None,
           lambda rng, d: [Sample((_a(rng, (5, 2), d), 4)), Sample((_a(rng, (2, 6), d), 4),
                                                                    {"dim": 1}),
                           Sample((_a(rng, (0,), d), 2)), Sample((_a(rng, (3, 4), d, True), 2),
                                                                 {"dim": -1})]),
    OpInfo("tensor_split", lambda m, x, s, **k: m.tensor_split(x, s, **k),
           lambda x, s, dim=0: np.array_split(x, s, axis=dim) if isinstance(s, int)
           else np.split(x, s, axis=dim),
           lambda rng, d: [Sample((_a(rng, (7, 2), d), 3)), Sample((_a(rng, (5,), d), [1, 4])),
                           Sample((_a(rng, (2, 5), d, True), [3, 1]), {"dim": 1}),
                           Sample((_a(rng, (2, 5), d), 7), {"dim": -1})]),
    OpInfo("unbind", lambda m, x, **k: m.unbind(x, **k),
           lambda x, dim=0: [np.take(x, i, axis=dim) for i in range(x.shape[dim])],
           _samples((((3, 2),), {}), ((_nc((2, 3)),), {"dim": 1}), (((4,),), {}),
                    (((2, 0),), {}), (((2, 1, 2),), {"dim": -2})),
           dtypes=ALL_NUMERIC),
    OpInfo("hsplit", lambda m, x, s: m.hsplit(x, s),
           lambda x, s: np.hsplit(x, s),
           lambda rng, d: [Sample((_a(rng, (2, 4), d), 2)), Sample((_a(rng, (6,), d), [1, 3]))]),
    OpInfo("vsplit", lambda m, x, s: m.vsplit(x, s), lambda x, s: np.vsplit(x, s),
           lambda rng, d: [Sample((_a(rng, (4, 2), d), 2))]),
    OpInfo("dsplit", lambda m, x, s: m.dsplit(x, s), lambda x, s: np.dsplit(x, s),
           lambda rng, d: [Sample((_a(rng, (1, 2, 4), d), 2))]),
    OpInfo("flip", lambda m, x, d: m.flip(x, d), lambda x, d: np.flip(x, d).copy(),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), (0,))), Sample((_a(rng, (2, 3, 4), d),
                                                                        (0, -1))),
                           Sample((_a(rng, (3, 4), d, True), (1,))),
                           Sample((_a(rng, (), d), ())), Sample((_a(rng, (0, 2), d), (0, 1)))],
           dtypes=ALL_NUMERIC),
    OpInfo("fliplr", lambda m, x: m.fliplr(x), np.fliplr,
           _samples((((3, 4),), {}), ((_nc((2, 3)),), {}))),
    OpInfo("flipud", lambda m, x: m.flipud(x), np.flipud,
           _samples((((3, 4),), {}), (((5,),), {}))),
    OpInfo("roll", lambda m, x, s, **k: m.roll(x, s, **k),
           lambda x, s, dims=None: np.roll(x, s, axis=dims),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), 1)), Sample((_a(rng, (3, 4), d), -5),
                                                                   {"dims": 1}),
                           Sample((_a(rng, (2, 3, 4), d), (1, 2)), {"dims": (0, -1)}),
                           Sample((_a(rng, (3, 4), d, True), 2), {"dims": 0}),
                           Sample((_a(rng, (0, 2), d), 1))],
           dtypes=ALL_NUMERIC),
    OpInfo("rot90", lambda m, x, k, dims: m.rot90(x, k, dims),
           lambda x, k, dims: np.rot90(x, k, dims).copy(),
           lambda rng, d: [Sample((_a(rng, (3, 4), d), 1, (0, 1))),
                           Sample((_a(rng, (2, 3, 4), d), -1, (2, 0))),
                           Sample((_a(rng, (3, 4), d, True), 2, (1, 0))),
                           Sample((_a(rng, (3, 4), d), 7, (0, 1)))]),
    OpInfo("tril", lambda m, x, **k: m.tril(x, **k),
           lambda x, diagonal=0: np.tril(x, diagonal),
           _samples((((3, 4),), {}), (((2, 3, 4),), {"diagonal": 1}),
                    ((_nc((4, 3)),), {"diagonal": -1}), (((0, 3),), {})),
           dtypes=ALL_NUMERIC, inplace="tril_"),
    OpInfo("triu", lambda m, x, **k: m.triu(x, **k),
           lambda x, diagonal=0: np.triu(x, diagonal),
           _samples((((3, 4),), {}), (((2, 3, 4),), {"diagonal": -2}),
                    ((_nc((4, 3)),), {"diagonal": 2})),
           dtypes=ALL_NUMERIC, inplace="triu_"),
    OpInfo("diag", lambda m, x, *k: m.diag(x, *k), lambda x, *k: np.diag(x, *k),
           lambda rng, d: [Sample((_a(rng, (3,), d),)), Sample((_a(rng, (3,), d), -1)),
                           Sample((_a(rng, (3, 4), d), 1)), Sample((_a(rng, (3, 4), d, True),)),
                           Sample((_a(rng, (0,), d),))],
           dtypes=ALL_NUMERIC),
    OpInfo("diagflat", lambda m, x, *k: m.diagflat(x, *k), lambda x, *k: np.diagflat(x, *k),
           lambda rng, d: [Sample((_a(rng, (2, 2), d),)), Sample((_a(rng, (3,), d), 2)),
                           Sample((_a(rng, (), d),))]),
    OpInfo("trace", lambda m, x: m.trace(x),
           lambda x: np.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else None),
           _samples((((3, 4),), {}), (((3, 3),), {}), ((_nc((4, 2)),), {}), (((0, 2),), {})),
           dtypes=("int32", "int64") + FLOATS),
    OpInfo("repeat", lambda m, x, r: x.repeat(*r), lambda x, r: np.tile(x, r),
           lambda rng, d: [Sample((_a(rng, (2, 3), d), (2, 1))),
                           Sample((_a(rng, (3,), d), (2, 1, 2))), Sample((_a(rng, (), d), (3,))),
                           Sample((_a(rng, (2, 2), d, True), (1, 0))),
                           Sample((_a(rng, (0, 2), d), (2, 2)))],
           dtypes=ALL_NUMERIC),
    OpInfo("tile", lambda m, x, r: m.tile(x, r), np.tile,
           lambda rng, d: [Sample((_a(rng, (2, 3), d), (2,))),
                           Sample((_a(rng, (3,), d), (2, 2))), Sample((_a(rng, (), d), ()))]),
    OpInfo("repeat_interleave", lambda m, x, r, **k: m.repeat_interleave(x, r, **k),
           lambda x, r, dim=None: np.repeat(x, np.asarray(r).astype(np.int64), axis=dim),
           lambda rng, d: [Sample((_a(rng, (2, 3), d), 2)), Sample((_a(rng, (2, 3), d), 2),
                                                                   {"dim": 1}),
                           Sample((_a(rng, (), d), 3)),
                           Sample((_a(rng, (3, 2), d, True), np.array([1, 0, 3])), {"dim": 0}),
                           Sample((_a(rng, (2, 2), d), np.array([2, 1])), {"dim": -1}),
                           Sample((_a(rng, (2, 2), d), np.array(2)), {"dim": 0})],
           dtypes=ALL_NUMERIC),
    OpInfo("repeat_interleave_counts", lambda m, r: m.repeat_interleave(r),
           lambda r: np.repeat(np.arange(r.shape[0]), r),
           lambda rng, d: [Sample((np.array([1, 0, 3]),)), Sample((np.zeros(0, np.int64),))],
           dtypes=("int64",), grad=False),
    OpInfo("meshgrid_ij", lambda m, *xs: m.meshgrid(*xs, indexing="ij"),
           lambda *xs: np.meshgrid(*xs, indexing="ij"),
           _samples((((3,), (2,)), {}), (((2,), (), (3,)), {}), (((0,), (2,)), {}))),
    OpInfo("meshgrid_xy", lambda m, *xs: m.meshgrid(list(xs), indexing="xy"),
           lambda *xs: np.meshgrid(*xs, indexing="xy"),
           _samples((((3,), (2,)), {}), (((2,), (1,), (3,)), {}))),
    OpInfo("cartesian_prod", lambda m, *xs: m.cartesian_prod(*xs),
           lambda *xs: np.stack([g.reshape(-1) for g in np.meshgrid(*xs, indexing="ij")], 1)
           if len(xs) > 1 else xs[0],
           _samples((((3,), (2,)), {}), (((2,), (2,), (2,)), {}), (((3,),), {}))),
    OpInfo("combinations", lambda m, x, **k: m.combinations(x, **k), None,
           _samples((((4,),), {}), (((4,),), {"r": 3}), (((3,),), {"with_replacement": True}),
                    (((2,),), {"r": 3}), (((3,),), {"r": 0}), (((0,),), {}))),
    OpInfo("broadcast_tensors", lambda m, *xs: m.broadcast_tensors(*xs),
           lambda *xs: np.broadcast_arrays(*xs),
           _samples((((3, 1), (4,)), {}), (((), (2, 2)), {}), (((2, 1, 3), (4, 1), ()), {}))),
    OpInfo("atleast_1d", lambda m, *xs: m.atleast_1d(*xs), lambda *xs: np.atleast_1d(*xs),
           _samples((((),), {}), (((3,),), {}), (((), (2, 2)), {}))),
    OpInfo("atleast_2d", lambda m, *xs: m.atleast_2d(*xs), lambda *xs: np.atleast_2d(*xs),
           _samples((((),), {}), (((3,),), {}), (((), (2, 2), (1, 2, 1)), {}))),
    OpInfo("atleast_3d", lambda m, *xs: m.atleast_3d(*xs), lambda *xs: np.atleast_3d(*xs),
           _samples((((),), {}), (((3,),), {}), (((2, 2),), {}), (((1, 2, 1, 2),), {}))),
]
