"""The compiled window kernels (csrc/conv.c: im2col / col2im, max and average pooling)
against their NumPy reference (backends/conv_kernels.py, pool_kernels.py), the convolution
ops walking the batch in many small pieces against real PyTorch, and the compiled float32
convolution (its own GEMM, csrc/gemm.c) against PyTorch and across thread counts."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.backends import conv_kernels, cpu_kernels, pool_kernels

needs_build = pytest.mark.skipif(cpu_kernels.compiled is None,
                                 reason="EMBER_KERNELS=numpy: the compiled kernels are off")

# (x shape, kernel, stride, padding ((lo, hi), ...), dilation, groups)
GEOMETRIES = [
    ((3, 4, 9, 11), (3, 2), (2, 1), ((1, 1), (2, 2)), (1, 2), 2),
    ((2, 3, 8, 8), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
    ((2, 6, 5, 4), (1, 1), (2, 2), ((0, 0), (0, 0)), (1, 1), 3),
    ((2, 2, 5, 6), (4, 3), (1, 1), ((1, 2), (2, 2)), (1, 2), 1),      # 'same': asymmetric
    ((2, 3, 1, 1), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),      # 1x1 images, ResNet end
    ((3, 4, 2, 2), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 2),
    ((3, 2, 13), (4,), (3,), ((2, 2),), (2,), 1),
    ((2, 2, 4, 5, 6), (2, 3, 2), (1, 2, 1), ((1, 1), (0, 0), (1, 1)), (1, 1, 2), 2),
    # rows of 16 and more: copied run by run (strided) or as whole spans (same width)
    ((2, 2, 4, 40), (2, 3), (1, 2), ((0, 0), (1, 1)), (1, 1), 1),
    ((2, 3, 6, 17), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), 1),
]


def _out(shape, ksize, stride, padding, dilation):
    return tuple(conv_kernels.out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi)
                 in zip(shape[2:], ksize, stride, dilation, padding))


def _pieces(total, length):
    """Column ranges of every kind: the whole batch, inside one sample, whole samples, and
    ranges that start and end inside different samples."""
    cuts = {(0, total), (0, min(total, length)), (total - 1, 1), (length // 2, total // 2)}
    if total > length:
        cuts.add((length - 1, length + 2) if total >= 2 * length + 1 else (1, total - 1))
    return sorted((j0, c) for j0, c in cuts if c > 0 and j0 + c <= total)


@needs_build
@pytest.mark.parametrize("geo", GEOMETRIES, ids=range(len(GEOMETRIES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_columns_match_numpy_reference(geo, dtype, monkeypatch):
    shape, ksize, stride, padding, dilation, groups = geo
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    out = _out(shape, ksize, stride, padding, dilation)
    length = int(np.prod(out))
    args = (ksize, stride, padding, dilation, groups, out)
    compiled = conv_kernels.compiled
    for j0, count in _pieces(shape[0] * length, length):
        fast = conv_kernels.im2col(np, x, *args, j0, count)
        gx_fast = conv_kernels.col2im(np, fast * 0.5, np.full(shape, 1, dtype), *args, j0)
        monkeypatch.setattr(conv_kernels, "compiled", None)
        ref = conv_kernels.im2col(np, x, *args, j0, count)
        gx_ref = conv_kernels.col2im(np, ref * 0.5, np.full(shape, 1, dtype), *args, j0)
        monkeypatch.setattr(conv_kernels, "compiled", compiled)
        assert fast.dtype == ref.dtype == dtype and fast.shape == ref.shape
        np.testing.assert_array_equal(fast, ref)          # a copy: bit for bit
        # col2im sums up to prod(ksize) terms per element, in another order
        eps = np.finfo(dtype).eps
        np.testing.assert_allclose(gx_fast, gx_ref, rtol=8 * eps, atol=8 * eps)


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of about 3 KB: the ops then walk every batch in many pieces of each kind."""
    monkeypatch.setattr(conv_kernels, "CHUNK_BYTES", 3000)
    monkeypatch.setattr(conv_kernels, "PIECE_BYTES", 3000)


@pytest.mark.parametrize("geo", GEOMETRIES, ids=range(len(GEOMETRIES)))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_convolution_in_pieces_matches_torch(torch_mod, geo, dtype, small_pieces):
    torch = torch_mod
    shape, ksize, stride, padding, dilation, groups = geo
    nd = len(ksize)
    same = any(lo != hi for lo, hi in padding)     # (reachable through padding='same' only)
    pads = "same" if same else tuple(lo for lo, _ in padding)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((2 * groups, shape[1] // groups) + ksize).astype(dtype)
    b = rng.standard_normal(2 * groups).astype(dtype)
    name = f"conv{nd}d"
    kw = dict(stride=stride, padding=pads, dilation=dilation, groups=groups)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ex, ew, eb = (ember.tensor(a, requires_grad=True) for a in (x, w, b))
    ty = getattr(torch.nn.functional, name)(tx, tw, tb, **kw)
    ey = getattr(F, name)(ex, ew, eb, **kw)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    pairs = [(ey.detach(), ty.detach()), (ex.grad, tx.grad), (ew.grad, tw.grad),
             (eb.grad, tb.grad)]
    for e, t in pairs:
        np.testing.assert_allclose(e.numpy(), t.numpy(), **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_transpose_and_fold_in_pieces_match_torch(torch_mod, dtype, small_pieces):
    torch = torch_mod
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5, 6)).astype(dtype)
    w = rng.standard_normal((4, 3, 3, 2)).astype(dtype)
    kw = dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), dilation=(1, 2), groups=2)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv_transpose2d(tx, tw, **kw)
    ey = F.conv_transpose2d(ex, ew, **kw)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.tensor(g))
    ey.backward(ember.tensor(g))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-10, atol=1e-10)
    for e, t in [(ey.detach(), ty.detach()), (ex.grad, tx.grad), (ew.grad, tw.grad)]:
        np.testing.assert_allclose(e.numpy(), t.numpy(), **tol)
    cols = torch.nn.functional.unfold(torch.tensor(x), (2, 3), dilation=(2, 1), padding=1,
                                      stride=(1, 2))
    ecols = F.unfold(ember.tensor(x), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    np.testing.assert_array_equal(ecols.numpy(), cols.numpy())
    back = torch.nn.functional.fold(cols, (5, 6), (2, 3), dilation=(2, 1), padding=1,
                                    stride=(1, 2))
    eback = F.fold(ecols, (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    np.testing.assert_allclose(eback.numpy(), back.numpy(), **tol)


def _conv_and_grads(lib, x, w, g, **kw):
    tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
    y = lib.nn.functional.conv2d(tx, tw, **kw)
    y.backward(lib.tensor(g))
    return [a.detach().numpy() for a in (y, tx.grad, tw.grad)]


@pytest.mark.parametrize("out_channels", [1, 6, 9, 17, 33])
@pytest.mark.parametrize("pieces", ["default", "small"])
def test_float32_convolution_matches_torch(torch_mod, out_channels, pieces, monkeypatch):
    # output channels past the kernel's tile rows, samples wider than a piece (small pieces:
    # 32-column parts of a sample, the last one shorter) or runs of whole samples (default)
    if pieces == "small":
        monkeypatch.setattr(conv_kernels, "PIECE_BYTES", 3000)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 4, 12, 13)).astype(np.float32)
    w = rng.standard_normal((out_channels, 4, 3, 3)).astype(np.float32)
    g = rng.standard_normal((5, out_channels, 12, 13)).astype(np.float32)
    mine = _conv_and_grads(ember, x, w, g, padding=1)
    theirs = _conv_and_grads(torch_mod, x, w, g, padding=1)
    for e, t in zip(mine, theirs):
        assert e.dtype == np.float32
        np.testing.assert_allclose(e, t, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape, wshape, kw", [
    ((3, 4, 20), (5, 4, 3), dict(padding=3, dilation=2)),
    ((2, 4, 5, 6, 7), (6, 2, 3, 2, 3), dict(padding=(1, 0, 2), dilation=(1, 2, 1), groups=2)),
    ((2, 3, 9, 8), (4, 3, 2, 3), dict(padding="same", dilation=(2, 1))),
    ((4, 6, 7, 7), (9, 6, 1, 1), dict()),
])
def test_unit_stride_float32_convolution_matches_torch(torch_mod, shape, wshape, kw):
    # unit strides read the padded input in place (no columns): 1-d, 3-d, dilation, groups,
    # asymmetric padding, 1x1 kernels
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    conv = f"conv{len(shape) - 2}d"
    ey = getattr(F, conv)(ember.tensor(x), ember.tensor(w), **kw)
    ty = getattr(torch_mod.nn.functional, conv)(torch_mod.tensor(x), torch_mod.tensor(w), **kw)
    np.testing.assert_allclose(ey.numpy(), ty.numpy(), rtol=1e-4, atol=1e-4)


@needs_build
@pytest.mark.parametrize("shape, wshape, kw", [
    ((8, 16, 32, 32), (16, 16, 3, 3), dict(padding=1)),      # parts of samples
    ((24, 6, 14, 14), (16, 6, 5, 5), dict()),                # runs of whole samples
    ((16, 16, 45, 45), (24, 8, 3, 3), dict(stride=2, groups=2)),
])
def test_float32_convolution_bits_do_not_depend_on_threads(shape, wshape, kw):
    # every output is one GEMM chain and the weight gradient's partials are fixed by the
    # shapes, so a thread team gives the bits of one thread
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    y0 = F.conv2d(ember.tensor(x), ember.tensor(w), **kw)
    g = rng.standard_normal(tuple(y0.shape)).astype(np.float32)
    before = ember.get_num_threads()
    runs = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            runs.append(_conv_and_grads(ember, x, w, g, **kw))
    finally:
        ember.set_num_threads(before)
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


_KERNEL_RUN = """
import sys, numpy as np, ember, ember.nn.functional as F
x, w, g = (np.load(sys.argv[1] + name) for name in ("x.npy", "w.npy", "g.npy"))
tx, tw = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
y = F.conv2d(tx, tw, padding=1)
y.backward(ember.tensor(g))
for name, a in (("y", y.detach()), ("gx", tx.grad), ("gw", tw.grad)):
    np.save(sys.argv[1] + name + ".npy", a.numpy())
"""


@needs_build
@pytest.mark.parametrize("x_shape,w_shape", [
    ((6, 5, 21, 19), (7, 5, 3, 3)),
    # a small padded image: the products that only meet padding are skipped (tap classes),
    # which leaves each chain's order
    ((6, 40, 4, 4), (36, 40, 3, 3))])
def test_float32_convolution_bits_match_between_avx512_and_avx2(tmp_path, x_shape, w_shape):
    # one fused multiply-add chain per output, lanes of the weight gradient added in a fixed
    # tree: the AVX2 kernel (EMBER_GEMM_KERNEL=avx2) gives the AVX-512 kernel's bits
    import os
    import subprocess
    import sys
    if not {"avx512f", "avx2", "fma"} <= cpu_kernels.compiled.cpu_features():
        pytest.skip("needs a CPU with both kernels")
    rng = np.random.default_rng(9)
    arrays = {"x": rng.standard_normal(x_shape), "w": rng.standard_normal(w_shape),
              "g": rng.standard_normal((x_shape[0], w_shape[0]) + x_shape[2:])}
    runs = []
    for kernel in ("", "avx2"):
        prefix = str(tmp_path / (kernel or "default")) + "_"
        for name, a in arrays.items():
            np.save(prefix + name + ".npy", a.astype(np.float32))
        env = dict(os.environ, EMBER_GEMM_KERNEL=kernel)
        subprocess.run([sys.executable, "-c", _KERNEL_RUN, prefix], env=env, check=True)
        runs.append([np.load(prefix + name + ".npy") for name in ("y", "gx", "gw")])
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- pooling
# (x shape, kernel, stride, padding ((lo, hi) incl. ceil_mode's extra), dilation)
POOLS = [
    ((2, 3, 8, 8), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),
    ((2, 3, 9, 7), (3, 3), (2, 2), ((1, 1), (1, 2)), (1, 1)),
    ((1, 2, 10, 9), (3, 2), (1, 2), ((1, 2), (0, 1)), (2, 2)),
    ((2, 2, 11), (4,), (3,), ((2, 2),), (1,)),
    ((1, 2, 5, 6, 4), (2, 3, 2), (2, 1, 2), ((1, 1), (1, 1), (0, 1)), (1, 1, 1)),
]


def _pool_input(shape, dtype, rng):
    """Values with ties (integers), NaNs and infinities."""
    x = rng.integers(-3, 4, shape).astype(dtype)
    flat = x.reshape(-1)
    flat[::13] = np.nan
    flat[5::17] = -np.inf
    flat[7::19] = np.inf
    return x


@needs_build
@pytest.mark.parametrize("geo", POOLS, ids=range(len(POOLS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_matches_numpy_reference(geo, dtype, monkeypatch):
    shape, ksize, stride, padding, dilation = geo
    rng = np.random.default_rng(3)
    x = _pool_input(shape, dtype, rng)
    out = tuple(conv_kernels.out_size(s, k, t, d, lo, hi) for s, k, t, d, (lo, hi)
                in zip(shape[2:], ksize, stride, dilation, padding))
    overlap = any(s < d * (k - 1) + 1 for k, s, d in zip(ksize, stride, dilation))
    g = rng.standard_normal(shape[:2] + out).astype(dtype)

    def run():
        v, i = pool_kernels.max_pool(np, x, ksize, stride, padding, dilation, out)
        alone, none = pool_kernels.max_pool(np, x, ksize, stride, padding, dilation, out,
                                            False)
        assert none is None
        np.testing.assert_array_equal(alone, v)
        return v, i, pool_kernels.max_pool_backward(np, g, i, shape, overlap)
    v, i, gx = run()
    monkeypatch.setattr(pool_kernels, "compiled", None)
    rv, ri, rgx = run()
    assert v.dtype == rv.dtype == gx.dtype == dtype and i.dtype == ri.dtype == np.int64
    np.testing.assert_array_equal(v, rv)
    np.testing.assert_array_equal(i, ri)
    # (the reference sums overlapping windows in float64: roundings of the terms apart)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(gx, rgx, rtol=4 * eps, atol=8 * eps * np.abs(g).max())


@needs_build
def test_max_pool_window_of_minus_infinity_as_torch(torch_mod):
    # All of a window -inf: PyTorch keeps its first position inside the input (padding is
    # never chosen).
    x = np.full((1, 1, 4, 5), -np.inf, np.float32)
    x[0, 0, 3, 4] = 1
    t = torch_mod.nn.functional.max_pool2d(torch_mod.tensor(x), 3, 2, 1, return_indices=True)
    e = F.max_pool2d(ember.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(e[0].numpy(), t[0].numpy())
    np.testing.assert_array_equal(e[1].numpy(), t[1].numpy())


@needs_build
@pytest.mark.parametrize("geo", POOLS, ids=range(len(POOLS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("divisor", ["count", "padded", 3.0])
def test_avg_pool_matches_numpy_reference(geo, dtype, divisor, monkeypatch):
    from ember.ops.pooling import avg_divisor
    shape, ksize, stride, padding, _ = geo
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dtype)
    out = tuple(conv_kernels.out_size(s, k, t, 1, lo, hi) for s, k, t, (lo, hi)
                in zip(shape[2:], ksize, stride, padding))
    pads = tuple(lo for lo, _ in padding)
    div = avg_divisor(shape[2:], ksize, stride, pads, out, divisor == "padded",
                      divisor if isinstance(divisor, float) else None, dtype)
    g = rng.standard_normal(shape[:2] + out).astype(dtype)

    def run():
        y = pool_kernels.avg_pool(np, x, ksize, stride, padding, out, div)
        return y, pool_kernels.avg_pool_backward(np, g, shape, ksize, stride, padding, out,
                                                 div)
    y, gx = run()
    monkeypatch.setattr(pool_kernels, "compiled", None)
    ry, rgx = run()
    assert y.dtype == ry.dtype == gx.dtype == dtype
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(y, ry, rtol=4 * eps, atol=4 * eps)
    np.testing.assert_allclose(gx, rgx, rtol=4 * eps, atol=4 * eps)


def test_strided_input_matches_torch(torch_mod, small_pieces):
    # a channels-last array seen as NCHW: the kernels read it once made contiguous
    torch = torch_mod
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 10, 12, 3)).astype("float32")
    w = rng.standard_normal((5, 3, 3, 3)).astype("float32")
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ey = F.max_pool2d(F.conv2d(ex.permute(0, 3, 1, 2), ew, padding=1), 2)
    ty = torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(tx.permute(0, 3, 1, 2), tw,
                                                                   padding=1), 2)
    ey.sum().backward()
    ty.sum().backward()
    for e, t in [(ey.detach(), ty.detach()), (ex.grad, tx.grad), (ew.grad, tw.grad)]:
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)
