"""Op-table entries for ops/views.py and ops/matmul.py."""
import numpy as np

from . import ALL_NUMERIC, FLOATS, OpInfo, Sample, make_array, unary_samples


def _shape_samples(*shapes_and_args):
    def samples(rng, dtype):
        return [Sample((make_array(rng, shape, dtype),) + tuple(args))
                for shape, args in shapes_and_args]
    return samples


OPS = [
    OpInfo("reshape", lambda m, x, *s: m.reshape(x, s), lambda x, *s: np.reshape(x, s),
           _shape_samples(((3, 4), (2, 6)), ((3, 4), (-1,)), ((), (1, 1)), ((0, 3), (3, 0)),
                          ((2, 3, 4), (4, -1))), dtypes=ALL_NUMERIC),
    OpInfo("permute", lambda m, x, *d: m.permute(x, d), lambda x, *d: np.transpose(x, d),
           _shape_samples(((2, 3, 4), (2, 0, 1)), ((3, 4), (1, 0)), ((), ()))),
    OpInfo("transpose", lambda m, x: m.transpose(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
           unary_samples(shapes=[(5,), (3, 4), (2, 3, 4)])),
    OpInfo("expand", lambda m, x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)),
           _shape_samples(((3, 1), ()), ((4,), ()), ((), ()), ((1, 3, 4), ())),
           torch_op=lambda t, x: x.expand(2, 3, 4)),
    OpInfo("unsqueeze", lambda m, x: m.unsqueeze(x, -1), lambda x: np.expand_dims(x, -1),
           unary_samples()),
    OpInfo("squeeze", lambda m, x: m.squeeze(x), np.squeeze,
           _shape_samples(((3, 1, 4), ()), ((1,), ()), ((), ()), ((1, 0, 1), ()))),
    OpInfo("flatten", lambda m, x: m.flatten(x, 1), lambda x: x.reshape(x.shape[0], int(np.prod(x.shape[1:]))),
           _shape_samples(((2, 3, 4), ()), ((3, 4), ()), ((0, 2, 2), ()))),
    OpInfo("matmul", lambda m, a, b: m.matmul(a, b), np.matmul,
           lambda rng, d: [Sample((make_array(rng, a, d), make_array(rng, b, d)))
                           for a, b in [((3, 4), (4, 5)), ((4,), (4,)), ((4,), (4, 2)),
                                        ((3, 4), (4,)), ((2, 3, 4), (4, 5)),
                                        ((2, 1, 3, 4), (3, 4, 2)), ((0, 4), (4, 2)),
                                        ((3, 0), (0, 2))]],
           atol=1e-4, rtol=1e-4),
    OpInfo("sum", lambda m, x, **k: m.sum(x, **k),
           lambda x, **k: np.sum(x, axis=k.get("dim"), keepdims=k.get("keepdim", False),
                                 dtype=np.int64 if x.dtype.kind in "biu" else None),
           lambda rng, d: [Sample((make_array(rng, s, d),), k) for s, k in [
               ((3, 4), {}), ((3, 4), {"dim": 0}), ((2, 3, 4), {"dim": (0, 2)}),
               ((2, 3, 4), {"dim": -1, "keepdim": True}), ((), {}), ((0, 3), {"dim": 0})]],
           dtypes=("bool", "int32") + FLOATS, atol=1e-4),
    OpInfo("mean", lambda m, x, **k: m.mean(x, **k),
           lambda x, **k: np.mean(x, axis=k.get("dim"), keepdims=k.get("keepdim", False)),
           lambda rng, d: [Sample((make_array(rng, s, d),), k) for s, k in [
               ((3, 4), {}), ((3, 4), {"dim": 1}), ((2, 3, 4), {"dim": (0, 1),
                                                               "keepdim": True}), ((), {})]]),
]
