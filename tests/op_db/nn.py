"""Op-table entries for the nn primitives with kernels of their own: softmax and log_softmax
(ops/softmax_ops.py), nll_loss and cross_entropy (ops/loss_ops.py), layer norm and training
batch norm (ops/nn_ops.py). Their NumPy references are written here in float64 formulas
independent of backends/*.py; gradcheck and gradgradcheck run the VJPs and the VJPs of the
gradients (SoftmaxBackwardDataBackward0, NllLossBackwardBackward0, the norms' ember-op VJPs)."""
import numpy as np

from . import FLOATS, OpInfo, Sample, make_array

LOW = ("float16", "bfloat16")


def _softmax_ref(x, dim, log=False):
    x = np.asarray(x, np.float64)
    if x.ndim == 0:
        return np.zeros(()) if log else np.ones(())
    shifted = x - x.max(axis=dim, keepdims=True)
    lse = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted - lse if log else np.exp(shifted - lse)


def _softmax_samples(rng, dtype):
    out = [Sample((make_array(rng, shape, dtype, -4, 4),), {"dim": dim})
           for shape, dim in (((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), 1),
                              ((4, 1, 3), 1), ((), 0), ((0, 3), 1), ((5,), 0))]
    out.append(Sample((make_array(rng, (3, 4), dtype, -4, 4, noncontiguous=True),), {"dim": 1}))
    out.append(Sample((make_array(rng, (4, 6), dtype, -60, 60),), {"dim": 1}))
    return out


def _nll_ref(x, target, reduction="mean", ignore_index=-100, weight=None):
    x = np.asarray(x, np.float64)
    x3 = x.reshape(x.shape[0], x.shape[1], -1) if x.ndim > 1 else x.reshape(1, -1, 1)
    # (the harness casts every array of a float16 sample to float32, the target too)
    t = np.asarray(target).astype(np.int64).reshape(x3.shape[0], x3.shape[2])
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    w = (np.ones(x3.shape[1]) if weight is None else np.asarray(weight, np.float64))[safe]
    w = w * valid
    picked = np.take_along_axis(x3, safe[:, None, :], axis=1)[:, 0]
    losses = np.where(valid, -picked * w, 0.0)
    if reduction == "none":
        return losses.reshape(np.asarray(target).shape if x.ndim > 1 else ())
    return losses.sum() / w.sum() if reduction == "mean" else losses.sum()


def _nll_samples(log_probs):
    def samples(rng, dtype):
        out = []
        for shape, tshape, kw in (((5, 4), (5,), {}), ((5, 4), (5,), {"reduction": "sum"}),
                                  ((3, 4, 2), (3, 2), {"reduction": "none"}),
                                  ((2, 4, 2, 3), (2, 2, 3), {"ignore_index": 1}),
                                  ((4,), (), {}), ((6, 3), (6,), {"reduction": "none",
                                                                  "ignore_index": 0})):
            x = make_array(rng, shape, dtype, -3, 0 if log_probs else 3)
            target = rng.integers(0, shape[0 if len(shape) == 1 else 1], tshape)
            out.append(Sample((x, target), dict(kw), grad=(0,)))
        return out
    return samples


def _layer_norm_ref(x, w=None, b=None, shape=None, eps=1e-5):
    x = np.asarray(x, np.float64)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    y = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _layer_norm_samples(rng, dtype):
    out = []
    for xs, ns, affine in (((3, 6), (6,), True), ((2, 3, 4), (3, 4), True),
                           ((4, 5), (5,), False), ((2, 0, 3), (3,), True)):
        x = make_array(rng, xs, dtype, -3, 3)
        args = (x, make_array(rng, ns, dtype, 0.5, 2), make_array(rng, ns, dtype)) \
            if affine else (x, None, None)
        out.append(Sample(args, {"shape": ns}))
    return out


def _batch_norm_ref(x, w=None, b=None, eps=1e-5):
    x = np.asarray(x, np.float64)
    dims = (0,) + tuple(range(2, x.ndim))
    cs = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - x.mean(axis=dims, keepdims=True)) / np.sqrt(x.var(axis=dims, keepdims=True) + eps)
    return y * (1 if w is None else w.reshape(cs)) + (0 if b is None else b.reshape(cs))


def _batch_norm_samples(rng, dtype):
    out = []
    for xs, affine in (((4, 3), True), ((3, 2, 5), True), ((2, 3, 2, 2), False)):
        x = make_array(rng, xs, dtype, -3, 3)
        c = xs[1]
        args = (x, make_array(rng, (c,), dtype, 0.5, 2), make_array(rng, (c,), dtype)) \
            if affine else (x, None, None)
        out.append(Sample(args, {}))
    return out


OPS = [
    OpInfo("softmax", lambda m, x, **k: m.nn.functional.softmax(x, **k),
           lambda x, dim: _softmax_ref(x, dim), _softmax_samples, dtypes=FLOATS + LOW),
    OpInfo("log_softmax", lambda m, x, **k: m.nn.functional.log_softmax(x, **k),
           lambda x, dim: _softmax_ref(x, dim, log=True), _softmax_samples,
           dtypes=FLOATS + LOW),
    OpInfo("nll_loss", lambda m, x, t, **k: m.nn.functional.nll_loss(x, t, **k), _nll_ref,
           _nll_samples(True), dtypes=FLOATS + LOW),
    OpInfo("cross_entropy", lambda m, x, t, **k: m.nn.functional.cross_entropy(x, t, **k),
           lambda x, t, **k: _nll_ref(_softmax_ref(x, 0 if np.ndim(x) == 1 else 1, True), t,
                                      **k),
           _nll_samples(False), dtypes=FLOATS + LOW),
    OpInfo("layer_norm", lambda m, x, w, b, shape: m.nn.functional.layer_norm(x, shape, w, b),
           _layer_norm_ref, _layer_norm_samples, dtypes=FLOATS + LOW),
    OpInfo("batch_norm", lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b,
                                                                       training=True),
           _batch_norm_ref, _batch_norm_samples, dtypes=FLOATS + LOW),
]


# ---------------------------------------------------------------------- fractional max pool
def _fractional_samples(nd, shape, out):
    def samples(rng, d):
        # NOTE: samples in [0, 1) fixed per case (the given `_random_samples`), and input
        # values far apart, so that finite differences never cross a window's maximum
        x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(d) / 4
        u = rng.random((shape[0], shape[1], nd)).astype(d)
        return [Sample((x, u), {"out": out}, grad=(0,))]
    return samples


def _fractional_op(nd):
    def op(m, x, u, out):
        pool = getattr(m.nn.functional, f"fractional_max_pool{nd}d")
        return pool(x, 2, output_size=out, _random_samples=u)
    return op


OPS.extend([
    OpInfo("fractional_max_pool2d", _fractional_op(2), None,
           _fractional_samples(2, (2, 3, 7, 8), (4, 5))),
    OpInfo("fractional_max_pool3d", _fractional_op(3), None,
           _fractional_samples(3, (1, 2, 5, 6, 7), (3, 4, 4))),
])
