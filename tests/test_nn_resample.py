"""interpolate / Upsample, grid_sample, affine_grid, pixel and channel shuffles and the
distances against real PyTorch: values and gradients (float32, float64), reprs, errors;
float64 gradchecks."""
import warnings

import numpy as np
import pytest
from checks import check_grad
from test_nn_losses import compare

import ember


def _x(shape, seed=0, low=-2, high=2):
    return np.random.default_rng(seed).uniform(low, high, shape)


def _F(lib):
    return lib.nn.functional


X3, X4, X5 = _x((2, 2, 5)), _x((2, 2, 5, 4), 1), _x((1, 2, 3, 4, 3), 2)
INTERP = [
    ("nearest_up", X3, dict(scale_factor=2)),
    ("nearest_frac", X4, dict(scale_factor=(1.7, 0.6))),
    ("nearest_size", X4, dict(size=(7, 3))),
    ("nearest_3d", X5, dict(size=(5, 2, 4))),
    ("nearest_exact", X4, dict(size=(7, 9), mode="nearest-exact")),
    ("nearest_exact_sf", X3, dict(scale_factor=1.3, mode="nearest-exact")),
    ("linear", X3, dict(size=8, mode="linear")),
    ("linear_ac", X3, dict(size=3, mode="linear", align_corners=True)),
    ("linear_sf", X3, dict(scale_factor=1.7, mode="linear")),
    ("linear_sf_recompute", X3, dict(scale_factor=1.7, mode="linear",
                                     recompute_scale_factor=True)),
    ("bilinear", X4, dict(size=(9, 3), mode="bilinear")),
    ("bilinear_ac", X4, dict(scale_factor=(2.5, 1.5), mode="bilinear", align_corners=True)),
    ("bilinear_sf", X4, dict(scale_factor=0.7, mode="bilinear")),
    ("bicubic", X4, dict(size=(8, 6), mode="bicubic")),
    ("bicubic_ac_sf", X4, dict(scale_factor=1.6, mode="bicubic", align_corners=True)),
    ("bicubic_down", X4, dict(size=(3, 3), mode="bicubic")),
    ("trilinear", X5, dict(size=(4, 6, 2), mode="trilinear")),
    ("trilinear_ac", X5, dict(scale_factor=1.5, mode="trilinear", align_corners=True)),
    ("area", X4, dict(size=(3, 2), mode="area")),
    ("area_sf", X3, dict(scale_factor=0.5, mode="area")),
]


@pytest.mark.parametrize("name,x,kw", INTERP, ids=[c[0] for c in INTERP])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_interpolate_matches_torch(name, x, kw, dtype, torch_mod):
    compare(lambda L, t: _F(L).interpolate(t, **kw), [x], torch_mod, dtype)


@pytest.mark.parametrize("name,x,kw", INTERP[::3], ids=[c[0] for c in INTERP[::3]])
def test_interpolate_gradcheck(name, x, kw):
    check_grad(lambda t: ember.nn.functional.interpolate(t, **kw), [x[:1, :1]])


def test_interpolate_double_backward():
    from checks import check_gradgrad
    check_gradgrad(lambda t: ember.nn.functional.interpolate(t, size=7, mode="linear") ** 2,
                   [X3[:1, :1]])


def test_upsample_modules(torch_mod):
    def build(lib):
        nn = lib.nn
        return [nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear",
                                                         align_corners=True),
                nn.Upsample(scale_factor=(2, 1.5)), nn.UpsamplingNearest2d(scale_factor=2),
                nn.UpsamplingBilinear2d(size=4), nn.PixelShuffle(2), nn.PixelUnshuffle(3),
                nn.ChannelShuffle(2), nn.CosineSimilarity(), nn.PairwiseDistance(p=1)]
    assert [repr(m) for m in build(ember)] == [repr(m) for m in build(torch_mod)]
    compare(lambda L, t: L.nn.UpsamplingBilinear2d(scale_factor=1.5)(t), [X4], torch_mod)
    compare(lambda L, t: L.nn.UpsamplingNearest2d(size=(3, 7))(t), [X4], torch_mod)
    compare(lambda L, t: L.nn.Upsample(scale_factor=1.5, mode="bicubic")(t), [X4], torch_mod)
    with pytest.warns(UserWarning):
        compare(lambda L, t: _F(L).upsample(t, size=(3, 2), mode="bilinear"), [X4], torch_mod)


# ---------------------------------------------------------------------- grid_sample
GRID2 = _x((2, 3, 4, 2), 7, -1.3, 1.3)
GRID3 = _x((1, 2, 3, 2, 3), 8, -1.3, 1.3)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_grid_sample_2d_matches_torch(mode, padding, align, dtype, torch_mod):
    compare(lambda L, x, g: _F(L).grid_sample(x, g, mode, padding, align), [X4, GRID2],
            torch_mod, dtype, rtol=1e-9 if dtype == "float64" else 1e-4)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_3d_matches_torch(mode, padding, align, torch_mod):
    compare(lambda L, x, g: _F(L).grid_sample(x, g, mode, padding, align), [X5, GRID3],
            torch_mod)


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                          ("bicubic", "border")])
def test_grid_sample_gradcheck(mode, padding):
    check_grad(lambda x, g: ember.nn.functional.grid_sample(x, g, mode, padding, False),
               [X4[:1, :1, :3, :3], GRID2[:1, :2, :2]])


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (1, 2, 3, 2, 4)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_matches_torch(size, align, torch_mod):
    theta = _x((size[0], 2, 3) if len(size) == 4 else (size[0], 3, 4), 9)
    compare(lambda L, t: _F(L).affine_grid(t, size, align_corners=align), [theta], torch_mod)
    compare(lambda L, t: _F(L).affine_grid(t, size, align_corners=align), [theta], torch_mod,
            "float32")


def test_affine_then_sample_gradcheck():
    theta = _x((1, 2, 3), 9, -0.8, 0.8)
    check_grad(lambda x, t: ember.nn.functional.grid_sample(
        x, ember.nn.functional.affine_grid(t, (1, 1, 3, 2), False), align_corners=False),
        [X4[:1, :1, :3, :3], theta])


# ---------------------------------------------------------------------- shuffles, distances
SHUFFLES = [
    ("pixel_shuffle", lambda L, t: _F(L).pixel_shuffle(t, 2), _x((2, 8, 3, 2))),
    ("pixel_shuffle_batchdims", lambda L, t: _F(L).pixel_shuffle(t, 3), _x((2, 1, 9, 2, 1))),
    ("pixel_unshuffle", lambda L, t: _F(L).pixel_unshuffle(t, 2), _x((2, 3, 4, 6))),
    ("channel_shuffle", lambda L, t: _F(L).channel_shuffle(t, 3), _x((2, 6, 2, 2))),
    ("ChannelShuffle", lambda L, t: L.nn.ChannelShuffle(2)(t), _x((2, 4, 3))),
    ("PixelShuffle", lambda L, t: L.nn.PixelShuffle(2)(t), _x((1, 4, 2, 3))),
    ("cosine_similarity", lambda L, a, b: _F(L).cosine_similarity(a, b),
     _x((4, 3)), _x((4, 3), 1)),
    ("cosine_similarity_dim0_bcast", lambda L, a, b: _F(L).cosine_similarity(a, b, 0, 0.5),
     _x((3, 4)), _x((3, 1), 1)),
    ("pairwise_distance", lambda L, a, b: _F(L).pairwise_distance(a, b), _x((4, 3)),
     _x((4, 3), 1)),
    ("pairwise_distance_p1_keep", lambda L, a, b: _F(L).pairwise_distance(a, b, 1, 1e-3, True),
     _x((4, 3)), _x((4, 3), 1)),
    ("pairwise_distance_1d", lambda L, a, b: L.nn.PairwiseDistance(3)(a, b), _x((3,)),
     _x((3,), 1)),
    ("pdist", lambda L, t: _F(L).pdist(t), _x((5, 3))),
    ("pdist_p1", lambda L, t: L.pdist(t, 1), _x((5, 3))),
    ("cdist", lambda L, a, b: L.cdist(a, b), _x((2, 4, 3)), _x((2, 5, 3), 1)),
    ("cdist_p1_bcast", lambda L, a, b: L.cdist(a, b, 1.0), _x((2, 4, 3)), _x((5, 3), 1)),
    ("cdist_pinf", lambda L, a, b: L.cdist(a, b, float("inf")), _x((4, 3)), _x((5, 3), 1)),
    ("cdist_p3", lambda L, a, b: L.cdist(a, b, 3), _x((4, 3)), _x((5, 3), 1)),
    ("cdist_mm", lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
     _x((4, 3)), _x((5, 3), 1)),
    ("cdist_large", lambda L, a, b: L.cdist(a, b), _x((30, 3)), _x((4, 3), 1)),
]


@pytest.mark.parametrize("case", SHUFFLES, ids=[c[0] for c in SHUFFLES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_shuffles_and_distances_match_torch(case, dtype, torch_mod):
    _, call, *arrays = case
    compare(call, arrays, torch_mod, dtype, rtol=1e-9 if dtype == "float64" else 1e-4)


@pytest.mark.parametrize("name", ["pdist", "cdist_p1_bcast", "cdist_p3", "cosine_similarity",
                                  "pairwise_distance_p1_keep", "pixel_unshuffle"])
def test_distance_gradcheck(name):
    _, call, *arrays = next(c for c in SHUFFLES if c[0] == name)
    check_grad(lambda *ts: call(ember, *ts), arrays)


def test_zero_distance_gradient_is_zero(torch_mod):
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
    compare(lambda L, t: L.cdist(t, t), [x], torch_mod)
    compare(lambda L, t: L.pdist(t), [x], torch_mod)


ERRORS = [
    lambda L: _F(L).pixel_shuffle(L.zeros(5, 3), 2),
    lambda L: _F(L).pixel_shuffle(L.zeros(1, 5, 3, 3), 2),
    lambda L: _F(L).pixel_unshuffle(L.zeros(1, 5, 5, 4), 2),
    lambda L: _F(L).pixel_unshuffle(L.zeros(1, 5, 4, 5), 2),
    lambda L: _F(L).channel_shuffle(L.zeros(1, 5, 3), 2),
    lambda L: _F(L).channel_shuffle(L.zeros(5, 3), 1),
    lambda L: _F(L).grid_sample(L.zeros(1, 1, 3, 3), L.zeros(1, 2, 2, 2), "foo",
                                align_corners=False),
    lambda L: _F(L).grid_sample(L.zeros(1, 1, 3, 3), L.zeros(1, 2, 2, 2), padding_mode="x",
                                align_corners=False),
    lambda L: _F(L).grid_sample(L.zeros(1, 1, 3, 3, 3), L.zeros(1, 2, 2, 2, 3), "bicubic",
                                align_corners=False),
    lambda L: _F(L).grid_sample(L.zeros(1, 1, 3, 3), L.zeros(1, 2, 2, 3), align_corners=False),
    lambda L: _F(L).grid_sample(L.zeros(1, 1, 3, 3), L.zeros(2, 2, 2, 2), align_corners=False),
    lambda L: _F(L).affine_grid(L.zeros(1, 2, 3), [1, 1, 4], align_corners=False),
    lambda L: _F(L).affine_grid(L.zeros(1, 3, 3), [1, 1, 4, 4], align_corners=False),
    lambda L: _F(L).affine_grid(L.zeros(1, 2, 3), [1, 1, 0, 4], align_corners=False),
    lambda L: _F(L).affine_grid(L.zeros(1, 2, 3, dtype=L.long), [1, 1, 2, 4],
                                align_corners=False),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), scale_factor=2, mode="foo"),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=(2, 2)),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), scale_factor=(2, 2)),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4)),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=2, scale_factor=2),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=2, align_corners=True),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=2, mode="bilinear"),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=2, mode="linear", antialias=True),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), scale_factor=0.1, mode="linear"),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4, 4), size=(2, 0), mode="bilinear"),
    lambda L: _F(L).interpolate(L.zeros(4), size=2),
    lambda L: _F(L).interpolate(L.zeros(1, 1, 4), size=2, recompute_scale_factor=True),
    lambda L: L.cdist(L.zeros(3), L.zeros(2, 3)),
    lambda L: L.cdist(L.zeros(2, 3), L.zeros(2, 4)),
    lambda L: L.cdist(L.zeros(2, 3, dtype=L.long), L.zeros(2, 3, dtype=L.long)),
    lambda L: L.cdist(L.zeros(2, 3), L.zeros(2, 3), p=-1),
    lambda L: L.cdist(L.zeros(2, 3), L.zeros(2, 3), compute_mode="foo"),
    lambda L: L.pdist(L.zeros(2, 3, 4)),
    lambda L: L.pdist(L.zeros(2, 3), p=-1),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case, torch_mod):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](torch_mod)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[case](ember)
    assert str(ours.value) == str(theirs.value)


def test_align_corners_warning(torch_mod):
    for lib in (ember, torch_mod):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _F(lib).grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
        assert "align_corners=False since 1.3.0" in str(w[0].message)
