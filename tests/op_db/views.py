"""Op-table entries for ops/views.py (matmul's entry lives in linalg.py)."""
import numpy as np

from . import ALL_NUMERIC, OpInfo, Sample, make_array, unary_samples


def _shape_samples(*shapes_and_args):
    def samples(rng, dtype):
        # a shape given as a list makes a non-contiguous input
        return [Sample((make_array(rng, tuple(shape), dtype,
                                   noncontiguous=isinstance(shape, list)),) + tuple(args))
                for shape, args in shapes_and_args]
    return samples


def _like_samples(*pairs):
    """(input shape, other shape): ops shaped like `other` (only input is differentiated)."""
    def samples(rng, dtype):
        return [Sample((make_array(rng, tuple(a), dtype, noncontiguous=isinstance(a, list)),
                        make_array(rng, b, dtype)), grad=(0,)) for a, b in pairs]
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
    OpInfo("flatten", lambda m, x: m.flatten(x, 1),
           lambda x: x.reshape(x.shape[0], int(np.prod(x.shape[1:]))),
           _shape_samples(((2, 3, 4), ()), ((3, 4), ()), ((0, 2, 2), ()))),
    OpInfo("squeeze_dim", lambda m, x, d: m.squeeze(x, d),
           lambda x, d: np.squeeze(x, d) if x.ndim and x.shape[d] == 1 else x,
           _shape_samples(((3, 1, 4), (1,)), ((3, 1), (0,)), ((), (0,)), ((1, 0, 1), (-1,)))),
    OpInfo("squeeze_dims", lambda m, x, d: m.squeeze(x, d),
           lambda x, d: np.squeeze(x, tuple(i for i in d if x.shape[i] == 1)),
           _shape_samples(((1, 3, 1, 4), ((0, 2),)), ((3, 1), ((0, 1),)), ((1, 1), ((),)),
                          ([1, 3], ((0, 1),)))),
    OpInfo("select", lambda m, x, d, i: m.select(x, d, i), lambda x, d, i: np.take(x, i, d),
           _shape_samples(((3, 4), (0, 1)), ((3, 4), (1, -1)), ((2, 3, 4), (-1, 2)),
                          ((5,), (0, 4)), ([3, 4], (1, 2))), dtypes=ALL_NUMERIC),
    OpInfo("narrow", lambda m, x, d, s, n: m.narrow(x, d, s, n),
           lambda x, d, s, n: np.take(x, range(s % x.shape[d] if s < 0 else s,
                                               (s % x.shape[d] if s < 0 else s) + n), d),
           _shape_samples(((3, 4), (0, 1, 2)), ((3, 4), (1, -3, 2)), ((2, 3, 4), (-1, 0, 0)),
                          ((5,), (0, 5, 0)), ([2, 3], (1, 1, 2))), dtypes=ALL_NUMERIC),
    OpInfo("diagonal", lambda m, x, *a: m.diagonal(x, *a), lambda x, *a: np.diagonal(x, *a),
           _shape_samples(((3, 4), ()), ((3, 4), (1,)), ((3, 4), (-2,)), ((2, 3, 4), (0, 2, 0)),
                          ((2, 3, 4), (1, -1, -2)), ((3, 3), (5,)), ((0, 2), ()),
                          ([3, 3], (-1,))),
           dtypes=ALL_NUMERIC),
    OpInfo("diag_embed", lambda m, x, *a: m.diag_embed(x, *a), None,
           _shape_samples(((3,), ()), ((2, 3), (1,)), ((2, 3), (-1, 0, 2)), ((2, 2), (0, -1, 0)),
                          ((0,), ()))),
    OpInfo("unfold", lambda m, x, *a: x.unfold(*a),
           lambda x, d, n, s: np.moveaxis(np.lib.stride_tricks.sliding_window_view(
               x, n, axis=d)[(slice(None),) * (d % x.ndim) + (slice(None, None, s),)], -1, -1)
           if x.ndim else x.reshape(1),
           _shape_samples(((7,), (0, 2, 1)), ((7,), (0, 3, 2)), ((3, 5), (1, 2, 2)),
                          ((4, 3), (0, 4, 1)), ((2, 3, 4), (-1, 1, 3)), ((), (0, 1, 1)),
                          ((3, 4), (1, 0, 1)), ([3, 4], (1, 2, 1))), dtypes=ALL_NUMERIC),
    OpInfo("movedim", lambda m, x, s, d: m.movedim(x, s, d), np.moveaxis,
           _shape_samples(((2, 3, 4), (0, -1)), ((2, 3, 4), ((0, 1), (2, 0))), ((3,), (0, 0)),
                          ((2, 3), ((), ())), ([2, 3], (1, 0)))),
    OpInfo("moveaxis", lambda m, x, s, d: m.moveaxis(x, s, d), np.moveaxis,
           _shape_samples(((2, 3, 4), (1, 0)),)),
    OpInfo("swapaxes", lambda m, x: m.swapaxes(x, 0, -1), lambda x: np.swapaxes(x, 0, -1),
           _shape_samples(((2, 3, 4), ()), ((3,), ()))),
    OpInfo("view_as", lambda m, x, o: x.view_as(o), lambda x, o: x.reshape(o.shape),
           _like_samples(((3, 4), (2, 6)), ((2, 3, 4), (24,)), ((), (1, 1)))),
    OpInfo("reshape_as", lambda m, x, o: x.reshape_as(o), lambda x, o: x.reshape(o.shape),
           _like_samples(([3, 4], (2, 6)), ((2, 3, 4), (4, 6)), ((0, 3), (3, 0)))),
    OpInfo("expand_as", lambda m, x, o: x.expand_as(o),
           lambda x, o: np.broadcast_to(x, o.shape),
           _like_samples(((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)))),
    OpInfo("unflatten", lambda m, x, d, s: m.unflatten(x, d, s),
           lambda x, d, s: x.reshape(x.shape[:d % x.ndim] + s + x.shape[d % x.ndim + 1:]),
           _shape_samples(((3, 4), (1, (2, 2))), ((2, 6, 2), (1, (3, -1))),
                          ([3, 4], (-1, (4, 1))), ((0, 4), (0, (0, 1))))),
]


# The *_copy variants (ops/view_copies.py): the view's values in fresh memory.
OPS.extend([
    OpInfo("permute_copy", lambda m, x, *d: m.permute_copy(x, d), lambda x, *d: np.transpose(x, d),
           _shape_samples(((2, 3, 4), (2, 0, 1)), ([3, 4], (1, 0)), ((), ())),
           dtypes=ALL_NUMERIC),
    OpInfo("transpose_copy", lambda m, x: m.transpose_copy(x, 0, -1),
           lambda x: np.swapaxes(x, 0, -1), unary_samples(shapes=[(5,), (3, 4), (2, 3, 4)])),
    OpInfo("diagonal_copy", lambda m, x, o: m.diagonal_copy(x, o, 0, -1),
           lambda x, o: np.diagonal(x, o, 0, -1),
           _shape_samples(((3, 4), (1,)), ([4, 3], (-1,)), ((2, 3, 3), (0,)))),
    OpInfo("expand_copy", lambda m, x: m.expand_copy(x, (2, 3, 4)),
           lambda x: np.broadcast_to(x, (2, 3, 4)),
           _shape_samples(((3, 1), ()), ((4,), ()), ((), ()), ((1, 3, 4), ()))),
    OpInfo("select_copy", lambda m, x, d, i: m.select_copy(x, d, i),
           lambda x, d, i: np.take(x, i, d), _shape_samples(((3, 4), (1, -1)), ([4, 3], (0, 2)))),
    OpInfo("slice_copy", lambda m, x: m.slice_copy(x, 1, 1, None, 2),
           lambda x: x[:, 1::2], _shape_samples(((3, 5), ()), ([4, 6], ()), ((2, 0), ()))),
    OpInfo("unsqueeze_copy", lambda m, x: m.unsqueeze_copy(x, -1), lambda x: np.expand_dims(x, -1),
           unary_samples()),
    OpInfo("squeeze_copy", lambda m, x: m.squeeze_copy(x), np.squeeze,
           _shape_samples(((3, 1, 4), ()), ((1,), ()), ((), ()))),
    OpInfo("view_copy", lambda m, x: m.view_copy(x, (-1, 2)), lambda x: x.reshape(-1, 2),
           _shape_samples(((3, 4), ()), ((2, 3, 2), ()), ((0, 2), ()))),
    OpInfo("unfold_copy", lambda m, x: m.unfold_copy(x, -1, 2, 1),
           lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, -1),
           _shape_samples(((3, 4), ()), ([5, 3], ()))),
    OpInfo("t_copy", lambda m, x: m.t_copy(x), lambda x: x.T,
           _shape_samples(((3, 4), ()), ([4, 2], ()), ((5,), ()))),
])
