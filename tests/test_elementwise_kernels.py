"""The compiled elementwise functions (exp, sigmoid, sqrt) and whole-array sums
(backends/elementwise.py, backends/reduction.py) against PyTorch and NumPy within float
tolerances, and the same bits on one thread and on two."""
import numpy as np
import pytest

import ember
from ember.backends import cpu_kernels, elementwise, reduction

needs_build = pytest.mark.skipif(cpu_kernels.compiled is None,
                                 reason="EMBER_KERNELS=numpy: the compiled kernels are off")

N = (1 << 20) + 37     # above the thread team's thresholds, and not a whole number of blocks


def _on_threads(count, fn):
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(count)
        return fn()
    finally:
        ember.set_num_threads(before)


def _exp_inputs():
    rng = np.random.default_rng(3)
    x = rng.uniform(-110.0, 95.0, N).astype(np.float32)
    x[: N // 2] = rng.standard_normal(N // 2).astype(np.float32) * 4
    # the edges: overflow just past ln(FLT_MAX), subnormal results, inf, nan, signed zeros
    edges = [88.3, 88.7, 88.72, 88.7229, 88.73, 89.5, -87.0, -87.5, -95.0, -103.0, -103.9,
             -104.5, -1e30, 1e30, np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-30]
    x[: len(edges)] = np.array(edges, np.float32)
    return x


@needs_build
def test_exp_matches_torch_within_an_ulp(torch_mod):
    x = _exp_inputs()
    got = ember.tensor(x).exp().numpy()
    want = torch_mod.from_numpy(x).exp().numpy()
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    # within one unit in the last place of the exact value (float64's exp), subnormal
    # results included; torch's own loop is within one too, so two between them
    exact = np.exp(x[finite].astype(np.float64))
    ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got[finite] - exact) / ulp) <= 1.01
    np.testing.assert_allclose(got[finite], want[finite], rtol=3e-7, atol=3e-45)


@needs_build
def test_sigmoid_and_sqrt_match_torch(torch_mod):
    x = _exp_inputs()
    with np.errstate(invalid="ignore"):
        for name, inputs, ulps in (("sigmoid", x, 3), ("sqrt", np.abs(x), 0.5)):
            got = getattr(ember.tensor(inputs), name)().numpy()
            want = getattr(torch_mod.from_numpy(inputs), name)().numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            # (sigmoid is 0 below -88.7 on both sides, where exp(-x) overflows)
            finite = np.isfinite(want) & (want > 1e-37)
            exact = getattr(torch_mod.from_numpy(inputs.astype(np.float64)), name)().numpy()
            ulp = np.spacing(exact[finite].astype(np.float32)).astype(np.float64)
            assert np.max(np.abs(got[finite] - exact[finite]) / ulp) <= ulps, name
            np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)],
                                       rtol=5e-7, atol=1e-37)
        np.testing.assert_array_equal(ember.tensor(x).sqrt().numpy(), np.sqrt(x))


@needs_build
def test_exp_gradient_is_the_output(torch_mod):
    x = np.random.default_rng(4).uniform(-5, 5, N).astype(np.float32)
    e = ember.tensor(x, requires_grad=True)
    e.exp().sum().backward()
    t = torch_mod.tensor(x, requires_grad=True)
    t.exp().sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=3e-7)


def test_unary_keeps_numpys_function_elsewhere(monkeypatch):
    """Small or strided arrays, float64, and the NumPy path (no build) use NumPy's functions
    (sigmoid as 1 / (1 + exp(-x)))."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-5, 5, N)
    references = {"exp": np.exp, "sigmoid": lambda a: np.reciprocal(np.exp(-a) + 1),
                  "sqrt": np.sqrt}
    cases = [x.astype(np.float32)[:1000], x.astype(np.float32)[::2], x]
    with np.errstate(invalid="ignore"):
        for name, reference in references.items():
            for a in cases:
                np.testing.assert_array_equal(elementwise.unary(name, a), reference(a))
        monkeypatch.setattr(elementwise, "compiled", None)
        a = x.astype(np.float32)
        for name, reference in references.items():
            np.testing.assert_array_equal(elementwise.unary(name, a), reference(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_and_mean_match_torch(dtype, torch_mod):
    rng = np.random.default_rng(6)
    x = rng.uniform(-1, 3, N).astype(dtype).reshape(-1, 1)
    exact = x.astype(np.float64).sum()
    rtol = 1e-6 if dtype is np.float32 else 1e-13
    e, t = ember.tensor(x), torch_mod.from_numpy(x)
    for got, want in ((e.sum(), t.sum()), (e.mean(), t.mean()),
                      (e.sum((0, 1), keepdim=True), t.sum((0, 1), keepdim=True)),
                      (e.mean(dim=(1, 0), keepdim=True), t.mean(dim=(1, 0), keepdim=True))):
        assert got.dtype == getattr(ember, np.dtype(dtype).name)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=rtol)
    np.testing.assert_allclose(e.sum().item(), exact, rtol=rtol)
    np.testing.assert_allclose(e.mean().item(), exact / x.size, rtol=rtol)


def test_sum_keeps_numpys_reduction_elsewhere(monkeypatch):
    """Sums over trailing dims, small arrays, other accumulation types and the NumPy path are
    NumPy's own sum."""
    x = np.random.default_rng(8).standard_normal((N // 64, 64)).astype(np.float32)
    for a, dims, acc in ((x, (1,), None), (x[:10], None, None), (x, None, np.float64),
                         (x.T, None, None)):
        np.testing.assert_array_equal(reduction.sum(a, dims, False, acc),
                                      np.sum(a, axis=dims, dtype=acc))
    monkeypatch.setattr(reduction, "compiled", None)
    np.testing.assert_array_equal(reduction.sum(x), np.sum(x))
    np.testing.assert_array_equal(reduction.mean(x), np.mean(x))


@needs_build
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1024, 384), (16, 64, 256), (4099, 37), (3, 50000)])
def test_sum_over_leading_dims_is_numpys_bit_for_bit(dtype, shape):
    """A bias's gradient: the compiled column sum adds the rows in NumPy's order (row after
    row), so NumPy's bits, on one thread and on two (threads own columns)."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    x.reshape(-1)[:5] = [-0.0, np.inf, -np.inf, np.nan, 1e30]
    x[..., -1] = -0.0                      # a column of negative zeros: NumPy's sum is +0.0
    lead = tuple(range(len(shape) - 1))
    assert reduction._leading(x, lead, None) == len(lead)
    with np.errstate(invalid="ignore"):
        want = x.sum(axis=lead)
        for count in (1, 2):
            for keepdim in (False, True):
                got = _on_threads(count, lambda: reduction.sum(x, lead, keepdim))
                assert got.dtype == x.dtype
                np.testing.assert_array_equal(
                    got, want.reshape((1,) * len(lead) + want.shape) if keepdim else want)
        assert not np.signbit(want[-1]) and not np.signbit(reduction.sum(x, lead)[-1])
        if len(shape) == 3:   # (over the first dim only: also a leading sum)
            np.testing.assert_array_equal(_on_threads(2, lambda: reduction.sum(x, (0,))),
                                          x.sum(axis=0))


@needs_build
def test_one_and_two_threads_give_the_same_bits():
    """Each exp is computed on its own, and the sum's order of additions is fixed by the
    array's length alone (blocks, their lanes, then the blocks pairwise)."""
    x = _exp_inputs()
    x64 = np.random.default_rng(9).standard_normal(N)

    def run():
        with np.errstate(all="ignore"):
            return [elementwise.unary("exp", x), elementwise.unary("sigmoid", x),
                    elementwise.unary("sqrt", x), reduction.sum(x), reduction.mean(x),
                    reduction.sum(np.nan_to_num(x, posinf=0, neginf=0)),
                    reduction.sum(x64), reduction.mean(x64)]
    one, two = _on_threads(1, run), _on_threads(2, run)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


@needs_build
def test_row_kernels_at_transformer_sizes_give_the_same_bits_on_two_threads(torch_mod):
    """A GPT block's softmax, layer norm and MLP-sized adds (256K-512K elements) run on the
    team: the same bits as on one thread, layer norm's weight and bias gradients included
    (their partial sums are per block of rows, the blocks fixed by the sizes), and torch's
    values within float tolerances."""
    from ember.backends import normalization, softmax
    rng = np.random.default_rng(10)
    att = rng.standard_normal((16, 4, 64, 64)).astype(np.float32)
    x = rng.standard_normal((2048, 128)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(128).astype(np.float32)
    h = rng.standard_normal((1024, 512)).astype(np.float32)

    def run():
        y, mean, rstd, _ = normalization.layer_norm(x, w, w, 1e-5, 128)
        return [softmax.softmax(att, 3), softmax.softmax(att, 3, log=True),
                softmax.softmax_backward(att, att, 3), y, mean, rstd,
                *normalization.layer_norm_backward(g, x, w, mean, rstd),
                elementwise.binary("add", h, h), elementwise.binary("mul", h, 0.5)]
    one, two = _on_threads(1, run), _on_threads(2, run)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    xt = torch_mod.tensor(x, requires_grad=True)
    wt = torch_mod.tensor(w, requires_grad=True)
    bt = torch_mod.tensor(w, requires_grad=True)
    yt = torch_mod.nn.functional.layer_norm(xt, (128,), wt, bt, 1e-5)
    yt.backward(torch_mod.from_numpy(g))
    np.testing.assert_allclose(two[3], yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    for got, want in zip(two[6:9], (xt.grad, wt.grad, bt.grad)):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(two[0], torch_mod.from_numpy(att).softmax(3).numpy(),
                               rtol=1e-6, atol=1e-7)


@needs_build
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_its_backward_match_torch_and_numpy_bit_for_bit(dtype, torch_mod):
    """relu and threshold_backward run compiled on large arrays: torch's bits, special values
    included (a nan input passes its gradient on, zeros are +0), at one thread and at two."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(N).astype(dtype)
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40], dtype)
    x[: len(special)] = special
    g = rng.standard_normal(N).astype(dtype)
    g[len(special): 2 * len(special)] = special
    t = ember.tensor(x, requires_grad=True)
    for threads in (1, 2):
        out = _on_threads(threads, lambda: ember.relu(t))
        out.backward(ember.tensor(g))
        tt = torch_mod.tensor(x, requires_grad=True)
        want = torch_mod.relu(tt)
        want.backward(torch_mod.tensor(g))
        np.testing.assert_array_equal(out.detach().numpy(), want.detach().numpy())
        np.testing.assert_array_equal(t.grad.numpy().view(np.uint8),
                                      tt.grad.numpy().view(np.uint8))
        t.grad = None
