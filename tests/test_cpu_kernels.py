"""The compiled CPU kernels (ember/backends/csrc) against their NumPy reference: the same
seeded draws bit for bit, at each random-kernel build PyTorch has (DEFAULT and AVX2), and the
C library's functions applied exactly. The NumPy reference itself is checked against real
PyTorch in tests/test_random.py."""
import math
import os
import warnings

import numpy as np
import pytest

import ember
from ember.backends import cpu, cpu_kernels

if cpu_kernels.compiled is None and os.environ.get(cpu_kernels.ENV, "").lower() != "numpy":
    raise RuntimeError("ember's compiled kernels are not built: pip install -e . with a C "
                       "compiler present builds them")
needs_build = pytest.mark.skipif(cpu_kernels.compiled is None,
                                 reason="EMBER_KERNELS=numpy: the compiled kernels are off")


def _draw(fn, seed, compiled, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "compiled", compiled)
    ember.manual_seed(seed)
    return fn()


@needs_build
@pytest.mark.parametrize("capability", ["DEFAULT", "AVX2"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("n", [16, 17, 31, 1000, 4099])
def test_samplers_match_numpy_reference(capability, dtype, n, monkeypatch):
    monkeypatch.setattr(cpu, "_capability", capability)
    d = getattr(ember, dtype)
    draws = [lambda: ember.randn(n, dtype=d),
             lambda: ember.empty(n, dtype=d).normal_(0.5, 3.0),
             lambda: ember.rand(n, dtype=d),
             lambda: ember.empty(n, dtype=d).uniform_(-1.7, 2.3),
             lambda: ember.randn(n, dtype=d)[::2].contiguous(),
             lambda: ember.empty(2 * n, dtype=d)[::2].normal_(1.0, 0.25)]
    compiled = cpu_kernels.compiled
    for seed in range(3):
        for fn in draws:
            fast = _draw(fn, seed, compiled, monkeypatch).float().numpy()
            ref = _draw(fn, seed, None, monkeypatch).float().numpy()
            np.testing.assert_array_equal(fast, ref)
        # the stream is left at the same place: the next draws agree too
        monkeypatch.setattr(cpu_kernels, "compiled", compiled)
        ember.manual_seed(seed)
        ember.randn(n, dtype=d)
        after_fast = ember.rand(5, dtype=ember.float64).numpy()
        monkeypatch.setattr(cpu_kernels, "compiled", None)
        ember.manual_seed(seed)
        ember.randn(n, dtype=d)
        np.testing.assert_array_equal(after_fast, ember.rand(5, dtype=ember.float64).numpy())


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, 1e300, 700.0, 710.0, -745.0, -1e-17,
           math.pi / 2, 1e22, float("inf"), float("-inf"), float("nan")]


@needs_build
@pytest.mark.parametrize("name", ["log", "log1p", "exp", "sin", "cos", "tan"])
def test_libm_float64_is_the_c_library(name):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.random(20000), rng.standard_normal(20000) * 50, SPECIAL])
    got = cpu_kernels.libm(name, x.copy())
    fn = getattr(math, name)
    for a, b in zip(x, got):
        try:
            want = fn(a)
        except ValueError:          # math raises where C returns nan or -inf
            want = float("-inf") if (a == 0 or (name == "log1p" and a == -1)) else float("nan")
        except OverflowError:
            want = float("inf")
        assert (np.isnan(want) and np.isnan(b)) or want == b, (name, a, want, b)


@pytest.mark.parametrize("name", ["log", "exp", "sin", "cos"])
def test_libm_float32_paths_agree(name, monkeypatch):
    # float32 has no Python twin: the compiled loop and the NumPy path's ctypes call into the
    # C library must give the same bits.
    x = np.random.default_rng(1).random(3000).astype(np.float32) * 4
    x = np.concatenate([x, np.array([0, 1, 1e-30, 88.0, 89.0], np.float32)])
    fast = cpu_kernels.libm(name, x.copy())
    monkeypatch.setattr(cpu_kernels, "compiled", None)
    ref = cpu_kernels.libm(name, x.copy())
    np.testing.assert_array_equal(fast, ref)
    # and it is the correctly rounded value almost everywhere (a sanity check on the binding)
    with np.errstate(over="ignore"):
        exact = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    assert np.mean(fast == exact) > 0.98


def test_missing_build_warns_once(monkeypatch):
    monkeypatch.setattr(cpu_kernels, "compiled", None)
    monkeypatch.setattr(cpu_kernels, "_missing", ImportError("no _kernels"))
    monkeypatch.setattr(cpu_kernels, "_warned", False)
    with pytest.warns(RuntimeWarning, match="running on the NumPy path, which is slower"):
        cpu_kernels.libm("log", np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cpu_kernels.libm("log", np.ones(3))      # said once only


# ---------------------------------------------------------------------- activations
def _both_paths(fn, monkeypatch, module=None):
    """fn() with the compiled kernels, then on the NumPy reference (`module`'s kernels off:
    backends/activations.py's unless given)."""
    if module is None:
        from ember.backends import activations as module
    fast = fn()
    monkeypatch.setattr(module, "compiled", None)
    return fast, fn()


def _gelu_inputs(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(70001) * 4
    special = [0.0, -0.0, 1e-30, -1e-30, -9.5, -13.2, -20.0, -30.0, 20.0, 30.0, float("inf"),
               float("-inf"), float("nan")]
    return np.concatenate([x, special]).astype(dtype)


@needs_build
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_matches_numpy_reference(approximate, dtype, monkeypatch):
    from ember.backends import activations
    x = _gelu_inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.size).astype(dtype)
    (y, _), (ref, _) = _both_paths(lambda: activations.gelu(x, approximate), monkeypatch)
    dy, dref = _both_paths(lambda: activations.gelu_backward(g, x, approximate), monkeypatch)
    assert y.dtype == ref.dtype == dy.dtype == dref.dtype == dtype
    np.testing.assert_array_equal(np.isnan(y), np.isnan(ref))
    eps = np.finfo(dtype).eps
    # a few units in the last place, relative even in the far left tail. NOTE: float64's
    # tail (x ~ -11) amplifies the rounding of erfc's argument x / sqrt 2 by about 2 x^2 / 2,
    # so the C library's erfc and scipy's ndtr differ there by up to ~100 ulp.
    tol = 16 * eps if dtype == np.float32 else 256 * eps
    np.testing.assert_allclose(y, ref, rtol=tol, atol=np.finfo(dtype).tiny)  # (subnormals: 0)
    np.testing.assert_allclose(dy, dref, rtol=tol, atol=4 * eps * np.abs(g).max())


@needs_build
@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gelu_reduced_precision_through_float32(approximate, dtype, monkeypatch):
    from ember.backends import activations
    x = ember.randn(5000, dtype=getattr(ember, dtype))._data * 3
    (y, _), (ref, _) = _both_paths(lambda: activations.gelu(x, approximate), monkeypatch)
    assert y.dtype == ref.dtype == x.dtype
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32),
                               rtol=np.finfo(y.dtype).eps, atol=0)


# ---------------------------------------------------------------------- recurrent cells
@needs_build
@pytest.mark.parametrize("batch,n", [(1, 1), (3, 7), (32, 128), (5, 200)])
def test_lstm_gates_match_numpy_reference(batch, n, monkeypatch):
    from ember.backends import recurrent
    rng = np.random.default_rng(batch * n)
    pre = (rng.standard_normal((batch, 4 * n)) * 4).astype(np.float32)
    pre.flat[:6] = [0.0, -0.0, 1e-4, -1e-6, 60.0, -100.0][:pre.size][:6]
    x = (rng.standard_normal((batch, 4 * n)) * 2).astype(np.float32)
    c = rng.standard_normal((batch, n)).astype(np.float32)

    def forward():
        act, outs = pre.copy(), [np.empty_like(c) for _ in range(3)]
        recurrent.lstm_gates(act, x, c, *outs)
        return [act] + outs
    fast = forward()
    monkeypatch.setattr(recurrent, "compiled", None)
    ref = forward()
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(fast[0], ref[0], rtol=8 * eps, atol=1e-37)   # activations
    # c' = f c + i g cancels where the two terms nearly meet: its error is relative to them
    # (tanh and the output gate only shrink it for tanh(c') and h')
    i, f, g = (ref[0][:, k * n:(k + 1) * n] for k in range(3))
    scale = np.abs(f * c) + np.abs(i * g)
    for a, b in zip(fast[1:], ref[1:]):                                      # h', c', tanh(c')
        np.testing.assert_allclose(a, b, rtol=8 * eps, atol=8 * eps * scale.max())

    grad_h, grad_c = (rng.standard_normal((batch, n)).astype(np.float32) for _ in range(2))
    act, tc = ref[0], ref[3]
    results = []
    for compiled in (cpu_kernels.compiled, None):
        monkeypatch.setattr(recurrent, "compiled", compiled)
        for gc in (grad_c, None):
            d = np.empty_like(act)
            results.append((recurrent.lstm_gate_grads(act, tc, c, grad_h, gc, d), d))
    # the same formula, rounding for rounding: equal bits
    for (prev_fast, d_fast), (prev_ref, d_ref) in zip(results[:2], results[2:]):
        np.testing.assert_array_equal(d_fast, d_ref)
        np.testing.assert_array_equal(prev_fast, prev_ref)


@needs_build
def test_lstm_tanh_within_three_ulps_of_float64():
    """The cell gate's tanh (csrc/recurrent.c: expm1 by one range reduction) keeps its
    relative precision near 0 and is exactly +-1 past |x| = 10, against float64's tanh."""
    from ember.backends import recurrent
    rng = np.random.default_rng(11)
    sweep = np.concatenate([
        np.geomspace(1e-38, 12.0, 30000), rng.uniform(-10, 10, 20000), [0.0, 0.17, 0.1733,
        0.35, 0.3466, 0.6931, 9.0, 9.02, 9.1, 10.0, 20.0, 88.0, 100.0, np.inf]])
    sweep = np.concatenate([sweep, -sweep]).astype(np.float32)
    n = sweep.size
    act = np.full((1, 4 * n), -0.0, np.float32)   # (-0.0 + x is x, signed zeros too)
    gates_x = np.zeros_like(act)
    gates_x[0, 2 * n:3 * n] = sweep            # the cell gate's pre-activations
    outs = [np.empty((1, n), np.float32) for _ in range(3)]
    recurrent.lstm_gates(act, gates_x, np.zeros((1, n), np.float32), *outs)
    got, want = act[0, 2 * n:3 * n], np.tanh(sweep.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) <= 3 * ulp).all()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(sweep))    # -0.0 stays -0.0
    np.testing.assert_array_equal(got[np.abs(sweep) >= 10], np.sign(sweep[np.abs(sweep) >= 10]))
    act[:], gates_x[0, 2 * n] = -0.0, np.nan
    recurrent.lstm_gates(act, gates_x, np.zeros((1, n), np.float32), *outs)
    assert np.isnan(act[0, 2 * n])


@needs_build
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("steps,batch,n", [(1, 1, 1), (7, 3, 5), (35, 32, 128), (5, 9, 200)])
def test_lstm_layer_matches_numpy_reference(reverse, steps, batch, n, monkeypatch):
    from ember.backends import recurrent
    rng = np.random.default_rng(steps + n)
    gates_x = rng.standard_normal((steps, batch, 4 * n)).astype(np.float32)
    h0, c0 = (rng.standard_normal((batch, n)).astype(np.float32) for _ in range(2))
    w_hh = (rng.standard_normal((4 * n, n)) / np.sqrt(n)).astype(np.float32)
    grad_out = rng.standard_normal((steps, batch, n)).astype(np.float32)[:, :, ::1]
    grad_h, grad_c = (rng.standard_normal((batch, n)).astype(np.float32) for _ in range(2))

    def run(threads):
        before = ember.get_num_threads()
        try:
            ember.set_num_threads(threads)
            hs, h, c, saved = recurrent.lstm_layer(gates_x, h0, c0, w_hh, reverse)
            grads = recurrent.lstm_layer_backward(grad_out, grad_h, grad_c, c0, w_hh, saved,
                                                  reverse)
        finally:
            ember.set_num_threads(before)
        return (hs, h, c) + saved + tuple(grads)
    one, two = run(1), run(2)
    # (the (35, 32, 128) and (5, 9, 200) layers split their batch rows between two threads)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    monkeypatch.setattr(recurrent, "compiled", None)
    ref = run(1)
    # the kernel's products (gemm.c's, or BLAS's sgemm) and matmul (NumPy's) sum in another
    # order: float32 rounding, carried through the steps
    for fast, slow in zip(one, ref):
        np.testing.assert_allclose(fast, slow, rtol=2e-5, atol=2e-5 * (1 + np.abs(slow).max()))


# ---------------------------------------------------------------------- embedding gradient
@needs_build
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,rows,dim,skip", [(0, 3, 4, -1), (7, 5, 3, 2), (3000, 64, 128, 0)])
def test_index_row_sum_matches_numpy_reference(dtype, n, rows, dim, skip, monkeypatch):
    from ember.backends import reduction
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, dim)).astype(dtype)
    index = rng.integers(0, rows, n)

    def run(threads):
        before = ember.get_num_threads()
        try:
            ember.set_num_threads(threads)
            return reduction.index_row_sum(x, index, rows, skip)
        finally:
            ember.set_num_threads(before)
    one, two = run(1), run(2)     # (3000 x 128 rows: split between the two threads)
    monkeypatch.setattr(reduction, "compiled", None)
    ref = run(1)
    # each row's sum in the order of its occurrences on both paths: the same bits
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, ref)
    assert one.dtype == ref.dtype == x.dtype and one.shape == (rows, dim)
    monkeypatch.setattr(reduction, "compiled", cpu_kernels.compiled)
    with pytest.raises(IndexError, match=f"index {rows} is out of bounds"):
        reduction.index_row_sum(np.ones((2, dim), dtype), np.array([0, rows]), rows, skip)


def test_embedding_gradient_matches_torch(torch_mod):
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((50, 16)).astype(np.float32)
    index = rng.integers(0, 50, (32, 40))
    grad = rng.standard_normal((32, 40, 16)).astype(np.float32)
    for padding_idx in (None, 7):
        w = ember.tensor(weight, requires_grad=True)
        ember.nn.functional.embedding(ember.tensor(index), w, padding_idx).backward(
            ember.tensor(grad))
        tw = torch_mod.tensor(weight, requires_grad=True)
        torch_mod.nn.functional.embedding(torch_mod.tensor(index), tw, padding_idx).backward(
            torch_mod.tensor(grad))
        # both add each row's gradients in the order they come
        np.testing.assert_array_equal(w.grad.numpy(), tw.grad.numpy())


# ---------------------------------------------------------------------- softmax
def _reference(module, fn, monkeypatch):
    """fn() with the compiled kernels, then on the NumPy reference of `module`."""
    fast = fn()
    with monkeypatch.context() as m:
        m.setattr(module, "compiled", None)
        return fast, fn()


def _softmax_inputs(dtype, shape=(37, 301)):
    """Rows of normal draws and rows of special values: -inf among finite values, all -inf,
    +inf, nan, huge and tiny magnitudes, signed zeros, values whose exps underflow."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 5
    inf, nan, big = float("inf"), float("nan"), np.finfo(dtype).max
    specials = [[-inf, 1.0, 2.0], [-inf] * 3, [inf, 1.0, 2.0], [nan, 1.0, 2.0],
                [big, -big, 0.0], [1e-30, -1e-30, 0.0], [0.0, -0.0, 0.0], [0.0, -120.0, -800.0]]
    for k, row in enumerate(specials):
        x[k, :len(row)] = row
        x[k, len(row):] = row[-1]
    return x.astype(dtype)


def _assert_softmax_close(a, b, g, y, log, dtype):
    eps = np.finfo(dtype).eps
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    if g is None:       # forward: a few ulps (flushed subnormals aside)
        np.testing.assert_allclose(a, b, rtol=8 * eps, atol=np.finfo(dtype).tiny if not log
                                   else 8 * eps)
        return
    # backward: the row sums round at about eps times the sum of magnitudes
    p = np.exp(y.astype(np.float64)) if log else y
    scale = np.abs(g) + np.nansum(np.abs(g) * (1 if log else p), axis=-1, keepdims=True) * p
    ok = np.isfinite(b)
    np.testing.assert_array_less(np.abs(a - b)[ok], (16 * eps * (scale + np.abs(b)))[ok] +
                                 np.finfo(dtype).tiny)


@needs_build
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_matches_numpy_reference(log, dtype, monkeypatch):
    from ember.backends import softmax
    x = _softmax_inputs(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    for dim in (1, 0):      # rows, then columns `inner` apart
        y, ref = _reference(softmax, lambda: softmax.softmax(x, dim, log), monkeypatch)
        assert y.dtype == ref.dtype == dtype
        _assert_softmax_close(y, ref, None, None, log, dtype)
        dx, dref = _reference(softmax, lambda: softmax.softmax_backward(g, ref, dim, log),
                              monkeypatch)
        assert dx.dtype == dref.dtype == dtype
        gt, yt = (g, ref) if dim == 1 else (g.T, ref.T)
        _assert_softmax_close(dx if dim == 1 else dx.T, dref if dim == 1 else dref.T, gt, yt,
                              log, dtype)


@needs_build
@pytest.mark.parametrize("shape,dim", [((2, 3, 5, 4), 1), ((2, 3, 5, 4), 3), ((4, 130), 0),
                                       ((), 0), ((0, 3), 1), ((3, 0), 1), ((5,), 0),
                                       ((3, 1, 17), 1), ((4, 5, 1), 1)])
def test_softmax_shapes_match_numpy_reference(shape, dim, monkeypatch):
    from ember.backends import softmax
    rng = np.random.default_rng(2)
    x, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    x = np.asfortranarray(x)       # (a non-contiguous input is copied for the kernel)
    for log in (False, True):
        y, ref = _reference(softmax, lambda: softmax.softmax(x, dim, log), monkeypatch)
        assert y.shape == ref.shape == x.shape
        np.testing.assert_allclose(y, ref, rtol=8e-7, atol=1e-6)
        dx, dref = _reference(softmax, lambda: softmax.softmax_backward(g, ref, dim, log),
                              monkeypatch)
        np.testing.assert_allclose(dx, dref, rtol=1e-5, atol=1e-5)


@needs_build
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_reduced_precision_through_float32(dtype, monkeypatch):
    from ember.backends import softmax
    x = ember.randn(64, 50, dtype=getattr(ember, dtype))._data * 3
    for log in (False, True):
        y, ref = _reference(softmax, lambda: softmax.softmax(x, 1, log), monkeypatch)
        assert y.dtype == ref.dtype == x.dtype
        # (the float32 results differ in their last bits: rounded, by a unit at most)
        np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32),
                                   rtol=np.finfo(y.dtype).eps, atol=np.finfo(y.dtype).eps)
        dx, dref = _reference(softmax, lambda: softmax.softmax_backward(x, y, 1, log),
                              monkeypatch)
        assert dx.dtype == x.dtype
        np.testing.assert_allclose(dx.astype(np.float32), dref.astype(np.float32),
                                   rtol=np.finfo(y.dtype).eps, atol=np.finfo(y.dtype).eps)


# ---------------------------------------------------------------------- layer norm
def _layer_norm_inputs(dtype, m=67, n=201):
    """Rows of draws at several scales and offsets (a large mean over a small spread tests
    the two-pass variance), and rows of special values: constant, huge, tiny, inf, nan."""
    rng = np.random.default_rng(3)
    scale = 10.0 ** rng.integers(-3, 4, (m, 1))
    x = rng.standard_normal((m, n)) * scale + rng.standard_normal((m, 1)) * 100
    inf, nan = float("inf"), float("nan")
    for k, row in enumerate([[1.5], [0.0, -0.0], [1e30, -1e30], [1e-30, -2e-30],
                             [inf, 1.0], [nan, 1.0], [1e4 + 1e-3, 1e4 - 1e-3]]):
        x[k] = np.resize(row, n)
    return x.astype(dtype)


@needs_build
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_matches_numpy_reference(affine, dtype, monkeypatch):
    from ember.backends import normalization as ln
    x = _layer_norm_inputs(dtype)
    m, n = x.shape
    rng = np.random.default_rng(4)
    w = rng.standard_normal(n).astype(dtype) if affine in ("both", "weight") else None
    b = rng.standard_normal(n).astype(dtype) if affine in ("both", "bias") else None
    g = rng.standard_normal((m, n)).astype(dtype)
    gmean, grstd = (rng.standard_normal((m, 1)).astype(dtype) for _ in range(2))
    eps, tiny = np.finfo(dtype).eps, np.finfo(dtype).tiny
    fast, ref = _reference(ln, lambda: ln.layer_norm(x, w, b, 1e-5, n), monkeypatch)
    assert fast[1].shape == ref[1].shape == fast[2].shape == ref[2].shape == (m,)
    # (the statistics as columns below)
    fast = (fast[0], fast[1][:, None], fast[2][:, None])
    ref = (ref[0], ref[1][:, None], ref[2][:, None])
    for a, r in zip(fast[:3], ref[:3]):
        assert a.dtype == r.dtype == dtype
        np.testing.assert_array_equal(np.isnan(a), np.isnan(r))
    # the mean to a few ulps of the row's magnitude, rstd to a few ulps (the variance of a
    # row whose spread is tiny beside its mean loses what the mean's rounding loses)
    mag = np.abs(x).max(axis=1, keepdims=True)
    finite = np.isfinite(ref[1])
    np.testing.assert_array_less(np.abs(fast[1] - ref[1])[finite], (8 * eps * mag)[finite] +
                                 tiny)
    # (the mean's error d adds d^2 to the variance: relative d^2 rstd^2)
    ok = np.isfinite(ref[2]) & finite
    rel = 16 * eps + (8 * eps * mag * ref[2]) ** 2
    np.testing.assert_array_less(np.abs(fast[2] - ref[2])[ok], (rel * ref[2])[ok] + tiny)
    # y = xhat w + b: a few ulps of |xhat w| + |b|, plus what the mean's and rstd's errors
    # carry into xhat
    aw, ab = np.abs(1 if w is None else w), np.abs(0 if b is None else b)
    xw = np.abs(x - ref[1]) * ref[2] * aw
    bound = 8 * eps * (xw + ab) + 8 * eps * mag * ref[2] * aw + rel * xw
    rows = np.isfinite(ref[0]).all(axis=1)
    np.testing.assert_array_less(np.abs(fast[0] - ref[0])[rows], bound[rows] + tiny)
    # the backward on the rows of finite values (the others make every column sum nan)
    x, g, gmean, grstd, mean, rstd = (a[rows] for a in (x, g, gmean, grstd, ref[1], ref[2]))
    for needs in [(True, True, True), (True, False, False), (False, True, True)]:
        for gm, gr in [(None, None), (gmean, grstd)]:
            got, want = _reference(ln, lambda: ln.layer_norm_backward(
                g, x, w, mean, rstd, gm, gr, needs=needs), monkeypatch)
            for k, (a, r) in enumerate(zip(got, want)):
                assert (a is None) == (r is None) == (not needs[k] or k == 1 and w is None)
                if a is None:
                    continue
                assert a.dtype == r.dtype == dtype and np.isfinite(r).all()
                # (sums over a row or a column: a few ulps of the largest result)
                np.testing.assert_array_less(np.abs(a - r), 16 * eps * np.abs(r).max())


@needs_build
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layer_norm_reduced_precision_through_float32(dtype, monkeypatch):
    from ember.backends import normalization as ln
    x = ember.randn(40, 70, dtype=getattr(ember, dtype))._data
    w = ember.randn(70, dtype=getattr(ember, dtype))._data
    (y, mean, rstd, _), (ry, rmean, rrstd, _) = _reference(
        ln, lambda: ln.layer_norm(x, w, None, 1e-5, 70), monkeypatch)
    assert y.dtype == ry.dtype == x.dtype and mean.dtype == rmean.dtype == np.float32
    np.testing.assert_allclose(mean, rmean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rstd, rrstd, rtol=1e-6)
    np.testing.assert_allclose(y.astype(np.float32), ry.astype(np.float32),
                               rtol=np.finfo(y.dtype).eps, atol=np.finfo(y.dtype).eps)
    got, want = _reference(ln, lambda: ln.layer_norm_backward(x, x, w, mean, rstd), monkeypatch)
    assert got[0].dtype == x.dtype and got[1].dtype == got[2].dtype == np.float32
    for a, r in zip(got, want):
        np.testing.assert_allclose(a.astype(np.float32), r.astype(np.float32), rtol=1e-2,
                                   atol=1e-2 * np.abs(r.astype(np.float32)).max())


# ---------------------------------------------------------------------- batch norm
@needs_build
@pytest.mark.parametrize("shape", [(37, 5), (6, 7, 45), (4, 3, 9, 11), (1, 300, 3)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_matches_numpy_reference(shape, affine, dtype, monkeypatch):
    from ember.backends import normalization as bn
    rng = np.random.default_rng(5)
    c = shape[1]
    # channels at several scales and offsets; one constant channel, one of huge values
    x = rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 3, (1, c) + (1,) * (len(shape) - 2))
    x = x + rng.standard_normal((1, c) + (1,) * (len(shape) - 2)) * 50
    x[:, 0] = 1.5
    x[:, -1] *= 1e15
    x = x.astype(dtype)
    w = rng.standard_normal(c).astype(dtype) if affine != "none" else None
    b = rng.standard_normal(c).astype(dtype) if affine == "both" else None
    eps = np.finfo(dtype).eps
    (y, mean, var), (ry, rmean, rvar) = _reference(bn, lambda: bn.batch_norm(x, w, b, 1e-5),
                                                   monkeypatch)
    assert y.dtype == ry.dtype == mean.dtype == var.dtype == dtype and y.shape == x.shape
    dims = (0,) + tuple(range(2, x.ndim))
    mag = np.abs(x).max(axis=dims)
    # sums in float64 (for float64 in its own precision, in another order): a few ulps
    np.testing.assert_array_less(np.abs(mean - rmean), 8 * eps * mag + np.finfo(dtype).tiny)
    np.testing.assert_allclose(var, rvar, rtol=16 * eps)
    cshape = (1, c) + (1,) * (x.ndim - 2)
    scale = np.abs(1 if w is None else w.reshape(cshape)) / np.sqrt(rvar.reshape(cshape) + 1e-5)
    bound = 8 * eps * (np.abs(x - rmean.reshape(cshape)) * scale + np.abs(
        0 if b is None else b.reshape(cshape))) + 8 * eps * mag.reshape(cshape) * scale
    np.testing.assert_array_less(np.abs(y - ry), bound + np.finfo(dtype).tiny)
    g = rng.standard_normal(shape).astype(dtype)
    gmean, gvar = rng.standard_normal(c).astype(dtype), rng.standard_normal(c).astype(dtype)
    for needs in [(True, True, True), (True, False, False), (False, True, True)]:
        for gm, gv in [(None, None), (gmean, gvar)]:
            got, want = _reference(bn, lambda: bn.batch_norm_backward(
                g, x, w, rmean, rvar, 1e-5, gm, gv, needs), monkeypatch)
            for k, (a, r) in enumerate(zip(got, want)):
                assert (a is None) == (r is None) == (not needs[k] or k == 1 and w is None)
                if a is not None:
                    assert a.dtype == r.dtype == dtype and a.shape == r.shape
                    np.testing.assert_array_less(np.abs(a - r), 16 * eps * np.abs(r).max())


@needs_build
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_batch_norm_reduced_precision_through_float32(dtype, monkeypatch):
    from ember.backends import normalization as bn
    x = ember.randn(8, 6, 5, dtype=getattr(ember, dtype))._data
    w = ember.randn(6, dtype=getattr(ember, dtype))._data
    (y, mean, var), (ry, rmean, rvar) = _reference(bn, lambda: bn.batch_norm(x, w, None, 1e-5),
                                                   monkeypatch)
    assert y.dtype == ry.dtype == x.dtype and mean.dtype == var.dtype == np.float32
    np.testing.assert_allclose(mean, rmean, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var, rvar, rtol=1e-6)
    np.testing.assert_allclose(y.astype(np.float32), ry.astype(np.float32),
                               rtol=np.finfo(y.dtype).eps, atol=np.finfo(y.dtype).eps)
    got, want = _reference(bn, lambda: bn.batch_norm_backward(x, x, w, mean, var, 1e-5),
                           monkeypatch)
    assert got[0].dtype == x.dtype and got[1].dtype == got[2].dtype == np.float32
    for a, r in zip(got, want):
        np.testing.assert_allclose(a.astype(np.float32), r.astype(np.float32), rtol=1e-2,
                                   atol=1e-2 * np.abs(r.astype(np.float32)).max())


# ---------------------------------------------------------------------- threads
@needs_build
def test_row_kernels_give_the_same_results_on_two_threads():
    """Above their thread threshold (1M float32 elements) the kernels split rows or column
    blocks over the team: the same values as on one thread (each row or column is summed by
    one thread in one order; layer norm's dw and db add per-thread partial sums)."""
    from ember.backends import normalization, softmax
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1100, 1000)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(1000).astype(np.float32)
    x4 = x.reshape(11, 100, 20, 50)

    def run():
        y, mean, rstd, _ = normalization.layer_norm(x, w, None, 1e-5, 1000)
        bn = normalization.batch_norm(x4, w[:100], None, 1e-5)
        return ([softmax.softmax(x, 1), softmax.softmax(x, 0, log=True),
                 softmax.softmax_backward(g, x, 1), y, mean, rstd,
                 *normalization.layer_norm_backward(g, x, w, mean, rstd)[:1], *bn,
                 *normalization.batch_norm_backward(g.reshape(x4.shape), x4, w[:100], bn[1],
                                                    bn[2], 1e-5)],
                normalization.layer_norm_backward(g, x, w, mean, rstd)[1:])
    before = cpu_kernels.compiled.get_num_threads()
    try:
        cpu_kernels.compiled.set_num_threads(1)
        one = run()
        cpu_kernels.compiled.set_num_threads(2)
        two = run()
    finally:
        cpu_kernels.compiled.set_num_threads(before)
    for a, b in zip(one[0], two[0]):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(one[1], two[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(a).max())


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_zero_dim_keeps_its_shape(approximate, torch_mod):
    e = ember.tensor(0.7, requires_grad=True)
    t = torch_mod.tensor(0.7, requires_grad=True)
    ye = ember.nn.functional.gelu(e, approximate=approximate)
    yt = torch_mod.nn.functional.gelu(t, approximate=approximate)
    ye.backward()
    yt.backward()
    assert tuple(ye.shape) == tuple(yt.shape) == () and tuple(e.grad.shape) == ()
    np.testing.assert_allclose(ye.item(), yt.item(), rtol=1e-6)
    np.testing.assert_allclose(e.grad.item(), t.grad.item(), rtol=1e-6)


def _weights_and_grads(dtype, seed):
    """A parameter of 10007 values (not a whole number of vectors) and three gradients."""
    rng = np.random.default_rng(seed)
    n = 10007
    return rng.standard_normal(n).astype(dtype), \
        [rng.standard_normal(n).astype(dtype) for _ in range(3)]


@needs_build
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", [
    dict(momentum=0, dampening=0, lr=0.1, weight_decay=0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0, lr=0.01, weight_decay=0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.1, lr=0.05, weight_decay=1e-2, nesterov=False,
         maximize=True),
    dict(momentum=0.8, dampening=0, lr=1, weight_decay=1e-4, nesterov=True, maximize=False),
    dict(momentum=0.5, dampening=0, lr=0, weight_decay=0, nesterov=False, maximize=False),
])
def test_sgd_step_matches_numpy_reference(dtype, options, monkeypatch):
    from ember.backends import optimizers
    w0, grads = _weights_and_grads(dtype, seed=0)
    runs = []
    for compiled in (cpu_kernels.compiled, None):
        monkeypatch.setattr(optimizers, "compiled", compiled)
        w, buf = w0.copy(), None
        for g in grads:   # the first step makes the buffer, the later ones update it
            buf = optimizers.sgd_step(w, g, buf, **options)
        runs.append((w, buf))
    (w_fast, b_fast), (w_ref, b_ref) = runs
    np.testing.assert_array_equal(w_fast, w_ref)
    assert (b_fast is None) == (b_ref is None) == (options["momentum"] == 0)
    if b_ref is not None:
        np.testing.assert_array_equal(b_fast, b_ref)


@needs_build
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", [
    dict(beta1=0.9, beta2=0.999, lr=1e-3, weight_decay=0, eps=1e-8, decoupled=False,
         amsgrad=False),
    dict(beta1=0.9, beta2=0.99, lr=1e-2, weight_decay=1e-2, eps=1e-6, decoupled=True,
         amsgrad=True),
    dict(beta1=0.3, beta2=0.9, lr=0.1, weight_decay=1e-3, eps=1e-8, decoupled=False,
         amsgrad=False),   # (lerp weight 0.7: PyTorch's other formula)
])
def test_adam_step_matches_numpy_reference_and_torch(dtype, options, monkeypatch, torch_mod):
    """The compiled Adam step gives the NumPy reference's bits, and both follow
    torch.optim.Adam(W) over three steps."""
    from ember.backends import optimizers
    w0, grads = _weights_and_grads(dtype, seed=1)
    runs = []
    for compiled in (cpu_kernels.compiled, None):
        monkeypatch.setattr(optimizers, "compiled", compiled)
        w, m, v, vmax = w0.copy(), np.zeros_like(w0), np.zeros_like(w0), np.zeros_like(w0)
        for step, g in enumerate(grads, 1):
            optimizers.adam_step(w, g, m, v, vmax, step=step, **options)
        runs.append((w, m, v, vmax))
    for fast, ref in zip(*runs):
        np.testing.assert_array_equal(fast, ref)
    o = options
    cls = torch_mod.optim.AdamW if o["decoupled"] else torch_mod.optim.Adam
    p = torch_mod.tensor(w0, requires_grad=True)
    opt = cls([p], lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"],
              weight_decay=o["weight_decay"], amsgrad=o["amsgrad"])
    for g in grads:
        p.grad = torch_mod.tensor(g)
        opt.step()
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(runs[0][0], p.detach().numpy(), rtol=tol, atol=tol)


@needs_build
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_steps_split_across_parameters_match_numpy_reference(amsgrad, monkeypatch):
    """adam_steps runs every parameter's elements, laid end to end, on one team: the
    pieces a thread takes start and end inside parameters (sizes below and above the team's
    threshold, float32 and float64, each with its own step count), and every element is
    the NumPy reference's, at one thread and at two."""
    from ember.backends import optimizers
    rng = np.random.default_rng(4)
    dtypes = [np.float32, np.float32, np.float64, np.float32, np.float32]
    sizes, steps = [3, 70001, 40000, 17, 1], [1.0, 2.0, 5.0, 3.0, 1.0]
    params = [[rng.standard_normal(n).astype(dt) for _ in range(5)]
              for n, dt in zip(sizes, dtypes)]
    for p in params:
        p[3] = np.abs(p[3])     # (the second moments and their maximum are never negative)
        p[4] = np.abs(p[4]) + p[3]
    options = dict(beta1=0.9, beta2=0.99, lr=1e-2, weight_decay=1e-2, eps=1e-8,
                   decoupled=True, amsgrad=amsgrad)
    results = []
    for compiled, threads in ((None, 1), (cpu_kernels.compiled, 1), (cpu_kernels.compiled, 2)):
        monkeypatch.setattr(optimizers, "compiled", compiled)
        arrays = [[a.copy() for a in p] for p in params]
        before = ember.get_num_threads()
        try:
            ember.set_num_threads(threads)
            optimizers.adam_steps(*[[p[k] for p in arrays] for k in range(5)], steps=steps,
                                  **options)
        finally:
            ember.set_num_threads(before)
        results.append(arrays)
    reference = results[0]
    for arrays in results[1:]:
        for p, ref in zip(arrays, reference):
            for a, b in zip(p, ref):
                np.testing.assert_array_equal(a, b)


def test_blas_on_one_thread_restores_the_configured_count():
    from ember import _threads
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        with _threads.blas_on_one_thread():
            assert ember.get_num_threads() == 1
        assert ember.get_num_threads() == 2
        with pytest.raises(ValueError):
            with _threads.blas_on_one_thread():
                raise ValueError
        assert ember.get_num_threads() == 2
    finally:
        ember.set_num_threads(before)


@needs_build
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div"])
def test_threaded_binary_is_numpys_operator_bit_for_bit(dtype, name):
    from ember.backends import elementwise
    rng = np.random.default_rng(1)
    n = (1 << 20) + 37           # above the team's threshold for both dtypes
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    b[::1000] = 0.0              # (division by zero gives NumPy's inf/nan)
    numpy_op = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[name]
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        with np.errstate(all="ignore"):
            for other in (b, 0.1, 3, -7.25):
                assert elementwise._team_takes(a, other) is not None
                got = elementwise.binary(name, a, other)
                np.testing.assert_array_equal(got, numpy_op(a, other))
                assert got.dtype == a.dtype
            # broadcast, other dtypes, huge ints and one thread are NumPy's own operator
            for other in (b[:1], b.astype(np.float16), 1 << 40):
                assert elementwise._team_takes(a, other) is None
            ember.set_num_threads(1)
            assert elementwise._team_takes(a, b) is None
    finally:
        ember.set_num_threads(before)


# ---------------------------------------------------------------------- matrix products
def _operand(rng, rows, cols, layout):
    """A float32 (rows, cols) matrix laid out as asked: 'c' rows in place, 't' a transposed
    view, 's' every other row and column of a larger array, 'r' rows reversed (a negative
    stride), 'b' a broadcast row (stride 0)."""
    if layout == "t":
        return rng.standard_normal((cols, rows)).astype(np.float32).T
    if layout == "s":
        return rng.standard_normal((2 * rows, 2 * cols)).astype(np.float32)[::2, ::2]
    if layout == "r":
        return rng.standard_normal((rows, cols)).astype(np.float32)[::-1]
    if layout == "b":
        return np.broadcast_to(rng.standard_normal(cols).astype(np.float32), (rows, cols))
    return rng.standard_normal((rows, cols)).astype(np.float32)


def _products_on(threads, fn, monkeypatch):
    """_both_paths of fn, backends/matmul.py's kernels on `threads` threads."""
    from ember.backends import matmul
    before = cpu_kernels.compiled.get_num_threads()
    try:
        cpu_kernels.compiled.set_num_threads(threads)
        return _both_paths(fn, monkeypatch, matmul)
    finally:
        cpu_kernels.compiled.set_num_threads(before)


def _product_tol(a, b):
    """float32 rounding of k products summed: k eps |a| |b| bounds each element's error"""
    k = a.shape[-1]
    return 2 * max(k, 1) * np.finfo(np.float32).eps * (np.abs(a.astype(np.float64)) @
                                                        np.abs(b.astype(np.float64)))


# (m, k, n): odd edges of the 12 x 32 tiles, a long k over several passes, and products the
# kernel takes only with a transposed operand (under 1M multiply-adds)
PRODUCTS = [(131, 257, 67), (37, 900, 45), (13, 70, 33), (200, 3, 130), (64, 64, 64),
            (25, 1000, 17)]


@needs_build
@pytest.mark.parametrize("mkn", PRODUCTS, ids=str)
@pytest.mark.parametrize("layouts", ["cc", "ct", "tc", "tt", "sr", "rs", "cb", "bt"])
@pytest.mark.parametrize("threads", [1, 2])
def test_matmul_matches_float64_reference(mkn, layouts, threads, monkeypatch):
    from ember.backends import matmul
    m, k, n = mkn
    rng = np.random.default_rng(m * k + n)
    a, b = _operand(rng, m, k, layouts[0]), _operand(rng, k, n, layouts[1])
    if m * k * n >= 1 << 20 or b.strides[1] != 4:
        # (smaller products with B's rows in place go to BLAS: faster there)
        assert cpu_kernels.compiled.sgemm(a, b, None) is not None
    fast, ref = _products_on(threads, lambda: matmul.matmul(a, b), monkeypatch)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert fast.dtype == np.float32 and fast.shape == (m, n)
    tol = _product_tol(a, b)
    assert np.all(np.abs(fast - exact) <= tol)
    assert np.all(np.abs(ref - exact) <= tol)


@needs_build
@pytest.mark.parametrize("bias_shape", [(67,), (1, 67), (131, 1), (131, 67), ()])
@pytest.mark.parametrize("layouts", ["cc", "ct"])
def test_addmm_adds_the_bias_once(bias_shape, layouts, monkeypatch):
    from ember.backends import matmul
    rng = np.random.default_rng(3)
    a, b = _operand(rng, 131, 257, layouts[0]), _operand(rng, 257, 67, layouts[1])
    bias = rng.standard_normal(bias_shape).astype(np.float32)
    assert cpu_kernels.compiled.sgemm(a, b, bias) is not None
    fast, ref = _both_paths(lambda: matmul.addmm(bias, a, b), monkeypatch, matmul)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # the product's rounding, then one more for the bias's addition
    tol = _product_tol(a, b) + np.abs(exact + bias) * np.finfo(np.float32).eps
    assert np.all(np.abs(fast - (exact + bias)) <= tol)
    assert np.all(np.abs(ref - (exact + bias)) <= tol)


@needs_build
@pytest.mark.parametrize("shapes", [((5, 40, 33), (5, 33, 50)), ((3, 1, 40, 33), (4, 33, 50)),
                                    ((40, 33), (6, 33, 50)), ((64, 64, 32), (64, 32, 64))],
                         ids=str)
@pytest.mark.parametrize("threads", [1, 2])
def test_batched_matmul_matches_float64_reference(shapes, threads, monkeypatch):
    from ember.backends import matmul
    rng = np.random.default_rng(5)
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    # b read along its columns (attention's q @ k^T), so the kernel takes every size
    b = np.swapaxes(rng.standard_normal(shapes[1][:-2] + shapes[1][:-3:-1]), -1, -2)
    b = b.astype(np.float32)
    fast, ref = _products_on(threads, lambda: matmul.matmul(a, b), monkeypatch)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert fast.shape == ref.shape == exact.shape and fast.dtype == np.float32
    tol = _product_tol(a, b)
    assert np.all(np.abs(fast - exact) <= tol)
    assert np.all(np.abs(ref - exact) <= tol)


@needs_build
@pytest.mark.parametrize("mkn", [(0, 40, 50), (40, 0, 50), (40, 50, 0), (0, 0, 0)], ids=str)
def test_matmul_with_an_empty_dim_matches_numpy(mkn):
    from ember.backends import matmul
    m, k, n = mkn
    a = np.ones((k, m), np.float32).T
    b = np.ones((k, n), np.float32)
    bias = np.full(n, 2, np.float32)
    np.testing.assert_array_equal(matmul.matmul(a, b), np.zeros((m, n), np.float32) + k)
    np.testing.assert_array_equal(matmul.addmm(bias, a, b),
                                  np.zeros((m, n), np.float32) + k + 2)


@needs_build
def test_matmul_bits_do_not_depend_on_the_thread_count():
    # each element of C is one chain, computed by one thread, however the team splits C
    # (panels of rows or of columns, whichever C has more of, or whole items of a batch)
    from ember.backends import matmul
    rng = np.random.default_rng(11)
    cases = [(rng.standard_normal((60, 200)), rng.standard_normal((700, 200)).T),
             (rng.standard_normal((700, 150)), rng.standard_normal((150, 90))),
             (rng.standard_normal((6, 100, 64)), rng.standard_normal((6, 64, 120)))]
    before = cpu_kernels.compiled.get_num_threads()
    try:
        runs = []
        for threads in (1, 2, 3):
            cpu_kernels.compiled.set_num_threads(threads)
            runs.append([matmul.matmul(a.astype(np.float32), b.astype(np.float32))
                         for a, b in cases])
    finally:
        cpu_kernels.compiled.set_num_threads(before)
    for other in runs[1:]:
        for x, y in zip(runs[0], other):
            np.testing.assert_array_equal(x, y)



@needs_build
def test_float32_training_products_never_reach_blas_threads(monkeypatch):
    # OpenBLAS shares a product over 2^18 multiply-adds among threads of its own, which then
    # spin on the cores ember's team needs: no such float32 product may reach NumPy's matmul
    # in a training step (convolutions with a strided input gradient, a deep convolution on a
    # small image, which runs im2col and a product outside the compiled kernel, an LSTM's
    # weight gradient, nn.Linear's backward at small sizes)
    shared = []
    real = np.matmul

    def recording(a, b, *args, **kwargs):
        if a.dtype == np.float32 and a.ndim >= 2 and b.ndim >= 2 and \
                a.shape[-2] * a.shape[-1] * b.shape[-1] > 1 << 18:
            shared.append((a.shape, b.shape))
        return real(a, b, *args, **kwargs)
    monkeypatch.setattr(np, "matmul", recording)
    before = cpu_kernels.compiled.get_num_threads()
    cpu_kernels.compiled.set_num_threads(2)
    try:
        ember.manual_seed(0)
        nn = ember.nn
        conv = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 16, 5, stride=2),
                             nn.ReLU(), nn.Flatten(),
                             nn.Linear(16 * 12 * 12, 120), nn.ReLU(), nn.Linear(120, 84))
        rnn = nn.LSTM(32, 128, batch_first=True)
        deep = nn.Conv2d(64, 64, 3, padding=1)   # (64 channels of 3 x 3: ResNet's late layers)
        conv(ember.randn(64, 3, 28, 28)).sum().backward()
        deep(ember.randn(8, 64, 3, 3)).sum().backward()
        rnn(ember.randn(32, 35, 32))[0].sum().backward()
    finally:
        cpu_kernels.compiled.set_num_threads(before)
    assert shared == []


_PRODUCT_RUN = """
import sys, numpy as np
from ember.backends import matmul
a, b, bias = (np.load(sys.argv[1] + name + ".npy") for name in ("a", "b", "bias"))
np.save(sys.argv[1] + "y.npy", matmul.matmul(a, b.T))
np.save(sys.argv[1] + "z.npy", matmul.addmm(bias, a[:, ::2], b[:, :103].T))
"""


@needs_build
def test_matmul_bits_match_between_avx512_and_avx2(tmp_path):
    # one fused multiply-add chain per element in k's order, the bias added after: the AVX2
    # kernel (EMBER_GEMM_KERNEL=avx2, 6 x 16 tiles) gives the AVX-512 kernel's bits (12 x 32)
    import subprocess
    import sys
    if not {"avx512f", "avx2", "fma"} <= cpu_kernels.compiled.cpu_features():
        pytest.skip("needs a CPU with both kernels")
    rng = np.random.default_rng(13)
    arrays = {"a": rng.standard_normal((77, 206)), "b": rng.standard_normal((150, 206)),
              "bias": rng.standard_normal(150)}
    runs = []
    for kernel in ("", "avx2"):
        prefix = str(tmp_path / (kernel or "default")) + "_"
        for name, x in arrays.items():
            np.save(prefix + name + ".npy", x.astype(np.float32))
        env = dict(os.environ, EMBER_GEMM_KERNEL=kernel)
        subprocess.run([sys.executable, "-c", _PRODUCT_RUN, prefix], env=env, check=True)
        runs.append([np.load(prefix + name + ".npy") for name in ("y", "z")])
    for x, y in zip(*runs):
        np.testing.assert_array_equal(x, y)


# ------------------------------------------------------------- small padded convolutions
# csrc/conv_classes.h: output positions grouped by the kernel taps that read inside the
# input, the padding's products skipped (4x4 to 1x1 images, groups, strides, dilation, 3-d)
SMALL_PADDED = [
    ((6, 40, 4, 4), (36, 40, 3, 3), dict(padding=1)),
    ((5, 48, 2, 2), (40, 48, 3, 3), dict(padding=1)),
    ((7, 64, 1, 1), (48, 64, 3, 3), dict(padding=1)),
    ((4, 16, 8, 8), (16, 16, 3, 3), dict(padding=1)),
    ((3, 24, 5, 6), (40, 12, 3, 5), dict(padding=(1, 2), stride=(2, 1), groups=2)),
    ((3, 20, 6, 6), (36, 20, 3, 3), dict(padding=2, dilation=2)),
]


def _small_conv_and_grads(x, w, kw, dtype=np.float32):
    tx = ember.tensor(x.astype(dtype), requires_grad=True)
    tw = ember.tensor(w.astype(dtype), requires_grad=True)
    y = ember.nn.functional.conv2d(tx, tw, **kw)
    y.backward(ember.ones_like(y) + ember.arange(y.numel(), dtype=y.dtype).reshape(y.shape) % 7)
    return [a.detach().numpy() for a in (y, tx.grad, tw.grad)]


@needs_build
@pytest.mark.parametrize("case", SMALL_PADDED, ids=range(len(SMALL_PADDED)))
def test_small_padded_convolutions_match_float64_and_threads(case):
    # float64 runs the im2col/BLAS path over every product; float32 skips the padding's, and
    # each output (and weight gradient) is one chain on one thread: the same bits at 1-3
    # threads
    xs, ws, kw = case
    rng = np.random.default_rng(21)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws) * 0.2
    ref = _small_conv_and_grads(x, w, kw, np.float64)
    before = ember.get_num_threads()
    runs = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            runs.append(_small_conv_and_grads(x, w, kw))
    finally:
        ember.set_num_threads(before)
    for mine, theirs in zip(runs[0], ref):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


@needs_build
def test_small_padded_3d_convolution_matches_float64():
    rng = np.random.default_rng(22)
    x, w = rng.standard_normal((2, 8, 3, 4, 4)), rng.standard_normal((36, 8, 3, 3, 3))
    outs = []
    for dtype in (np.float32, np.float64):
        tx = ember.tensor(x.astype(dtype), requires_grad=True)
        tw = ember.tensor(w.astype(dtype), requires_grad=True)
        y = ember.nn.functional.conv3d(tx, tw, padding=1)
        (y * y).sum().backward()
        outs.append([a.detach().numpy() for a in (y, tx.grad, tw.grad)])
    for mine, theirs in zip(*outs):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())


@needs_build
@pytest.mark.parametrize("shape, groups", [((5, 36, 4, 4), 1), ((3, 48, 1, 1), 2),
                                           ((4, 40, 2, 2), 4)])
def test_conv_flipped_reads_the_flipped_weights_in_place(shape, groups):
    # conv_flipped(y, w) is the convolution of y with w's kernel flipped and its in/out
    # channels swapped: the same chains, so the bits of that convolution with the flipped
    # copy of w (ops/conv.py's form of a unit-stride input gradient)
    from ember.backends import conv_kernels
    rng = np.random.default_rng(23)
    n, c, h, _ = shape
    og, cg = c // groups, 40 // groups
    y = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((c, cg, 3, 3)).astype(np.float32)
    pads = ((1, 1), (1, 1))
    got = conv_kernels.conv_flipped(y, w, pads, (1, 1), groups, (h, h))
    wf = w.reshape(groups, og, cg, 3, 3)[..., ::-1, ::-1].swapaxes(1, 2)
    wm = np.ascontiguousarray(wf).reshape(groups, cg, og * 9)
    want = conv_kernels.conv(y, wm, (3, 3), (1, 1), pads, (1, 1), groups, (h, h))
    assert got is not None and want is not None
    np.testing.assert_array_equal(got, want.reshape(got.shape))


@needs_build
def test_small_padded_convolution_keeps_nans_of_infinite_weights():
    # an infinite weight times the padding's 0 is a NaN in the reference: with a non-finite
    # weight (or output gradient) the kernels keep every product
    rng = np.random.default_rng(24)
    x = rng.standard_normal((3, 40, 2, 2))
    w = rng.standard_normal((36, 40, 3, 3))
    w[5, 7, 0, 0] = np.inf
    mine, ref = (ember.nn.functional.conv2d(ember.tensor(x.astype(d)), ember.tensor(w.astype(d)),
                                            padding=1).numpy() for d in (np.float32, np.float64))
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(ref))
    assert np.isnan(ref).any()
