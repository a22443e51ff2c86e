"""ember.vision transforms' errors and invariants, io round trips, ops against NumPy."""
import itertools
import random

import numpy as np
import pytest

import ember
from ember.vision import io, ops, utils
from ember.vision import transforms as T
from ember.vision.transforms import functional as F

Image = pytest.importorskip("PIL.Image")


def _image(c=3, h=9, w=11, seed=0):
    return ember.from_numpy(np.random.default_rng(seed).integers(0, 256, (c, h, w),
                                                                   dtype=np.uint8))


# ---------------------------------------------------------------- transforms
def test_normalize_formula_and_errors():
    x = ember.rand(2, 3, 4, 5)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    expected = (x.numpy() - np.array(mean, np.float32)[:, None, None]) / \
        np.array(std, np.float32)[:, None, None]
    np.testing.assert_allclose(T.Normalize(mean, std)(x).numpy(), expected, rtol=1e-6)
    with pytest.raises(TypeError, match="Input tensor should be a float tensor. Got "
                                        "ember.uint8."):
        F.normalize(_image(), mean, std)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, mean, [1.0, 0.0, 1.0])
    y = x.clone()
    assert F.normalize(y, mean, std, inplace=True) is y


def test_normalize_is_differentiable():
    x = ember.rand(3, 2, 2, requires_grad=True)
    F.normalize(x, [0.0, 0.0, 0.0], [2.0, 4.0, 8.0]).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[:, 0, 0], [0.5, 0.25, 0.125])


def test_batched_tensors_match_per_image():
    batch = ember.stack([_image(seed=s) for s in range(3)])
    for fn in (lambda t: F.resize(t, [5, 6]), lambda t: F.rotate(t, 33.0),
               lambda t: F.adjust_hue(t, 0.3), lambda t: F.gaussian_blur(t, 3, 1.0),
               lambda t: F.equalize(t), lambda t: F.center_crop(t, 4)):
        together = fn(batch).numpy()
        one_by_one = np.stack([fn(batch[i]).numpy() for i in range(3)])
        np.testing.assert_array_equal(together, one_by_one)


def test_convert_image_dtype_unsafe():
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(ember.rand(1, 2, 2), ember.int32)


def test_to_tensor_and_back():
    a = np.random.default_rng(0).integers(0, 256, (5, 6, 3), dtype=np.uint8)
    t = T.ToTensor()(Image.fromarray(a))
    assert t.dtype == ember.float32 and t.shape == (3, 5, 6)
    np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(np.array(T.ToPILImage()(T.PILToTensor()(Image.fromarray(a)))),
                                  a)
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray"):
        F.to_tensor([1, 2])


def test_crop_errors():
    with pytest.raises(ValueError, match=r"Required crop size \(20, 20\) is larger than input "
                                         r"image size \(9, 11\)"):
        T.RandomCrop(20)(_image())
    with pytest.raises(ValueError, match="Requested crop size"):
        F.five_crop(_image(), 10)
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(_image(), 0.7)
    with pytest.raises(ValueError, match="brightness values should be between"):
        T.ColorJitter(brightness=(2, 1))


def test_random_choice_uses_python_random():
    picks = [T.Lambda(lambda x, i=i: i) for i in range(3)]
    random.seed(5)
    got = [T.RandomChoice(picks, p=[0.2, 0.3, 0.5])(None) for _ in range(20)]
    random.seed(5)
    expected = [random.choices(range(3), weights=[0.2, 0.3, 0.5])[0] for _ in range(20)]
    assert got == expected


def test_random_flip_draws_like_torch(torch_mod):
    img = _image()
    flips = []
    ember.manual_seed(3)
    for _ in range(10):
        flips.append(bool((T.RandomHorizontalFlip()(img) != img).any()))
    torch_mod.manual_seed(3)
    assert flips == [bool(torch_mod.rand(1) < 0.5) for _ in range(10)]


def test_compose_on_pil_pipeline():
    pil = Image.fromarray(np.zeros((20, 30, 3), np.uint8))
    out = T.Compose([T.Resize(10), T.CenterCrop(8), T.ToTensor(),
                     T.Normalize([0.5] * 3, [0.5] * 3)])(pil)
    assert out.shape == (3, 8, 8)
    np.testing.assert_allclose(out.numpy(), -1.0)


# ---------------------------------------------------------------- io
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_png_round_trip(tmp_path, channels):
    img = _image(c=channels)
    path = str(tmp_path / "x.png")
    io.write_png(img, path)
    assert ember.equal(io.read_image(path), img)
    assert ember.equal(io.decode_image(io.read_file(path)), img)


def test_read_modes(tmp_path):
    img = _image(c=3)
    path = str(tmp_path / "x.png")
    io.write_png(img, path)
    gray = io.read_image(path, io.ImageReadMode.GRAY)
    expected = np.array(Image.open(path).convert("L"))
    np.testing.assert_array_equal(gray.numpy()[0], expected)
    rgba = io.read_image(path, io.ImageReadMode.RGB_ALPHA)
    assert rgba.shape == (4, 9, 11) and (rgba[3] == 255).all()
    jpg = str(tmp_path / "x.jpg")
    io.write_jpeg(img, jpg, quality=95)
    assert io.read_image(jpg).shape == (3, 9, 11)


def test_save_image(tmp_path):
    x = ember.rand(4, 3, 5, 6)
    path = str(tmp_path / "grid.png")
    utils.save_image(x, path, nrow=2, padding=1)
    grid = utils.make_grid(x, nrow=2, padding=1).numpy()
    expected = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(np.array(Image.open(path)), expected)


# ---------------------------------------------------------------- ops
def _boxes(n, seed=0):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 20, (n, 2))
    return np.concatenate([xy, xy + rng.uniform(1, 10, (n, 2))], 1), rng.uniform(0, 1, n)


def _iou(a, b):
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None] - inter)


def test_box_iou_formula():
    a, _ = _boxes(6)
    b, _ = _boxes(4, 1)
    got = ops.box_iou(ember.from_numpy(a), ember.from_numpy(b))
    np.testing.assert_allclose(got.numpy(), _iou(a, b), rtol=1e-12)


@pytest.mark.parametrize("threshold", [0.1, 0.5])
def test_nms_brute_force(threshold):
    b, s = _boxes(40, 2)
    keep = ops.nms(ember.from_numpy(b), ember.from_numpy(s), threshold).numpy()
    iou = _iou(b, b)
    # the definition: kept boxes, by decreasing score, never overlap more than threshold,
    # and every dropped box overlaps a kept box with a higher score
    assert list(s[keep]) == sorted(s[keep], reverse=True)
    for i, j in itertools.combinations(keep, 2):
        assert iou[i, j] <= threshold
    for d in set(range(40)) - set(keep):
        assert any(iou[d, k] > threshold and s[k] > s[d] for k in keep)


def test_batched_nms_never_crosses_classes():
    b, s = _boxes(30, 3)
    idxs = np.arange(30) % 2
    keep = ops.batched_nms(ember.from_numpy(b), ember.from_numpy(s), ember.from_numpy(idxs),
                           0.2).numpy()
    expected = []
    for c in (0, 1):
        members = np.flatnonzero(idxs == c)
        k = ops.nms(ember.from_numpy(b[members]), ember.from_numpy(s[members]), 0.2).numpy()
        expected.extend(members[k])
    assert sorted(keep) == sorted(expected)
    assert ops.batched_nms(ember.zeros(0, 4), ember.zeros(0), ember.zeros(0), 0.5).shape == (0,)


def test_box_convert_round_trip():
    b, _ = _boxes(5)
    t = ember.from_numpy(b)
    for fmt in ("xywh", "cxcywh"):
        back = ops.box_convert(ops.box_convert(t, "xyxy", fmt), fmt, "xyxy")
        np.testing.assert_allclose(back.numpy(), b, rtol=1e-12)


def test_roi_align_constant_and_linear():
    # on a linear ramp, bilinear sampling is exact: each bin averages to its centre's value
    h, w = 10, 12
    ramp = ember.from_numpy(np.tile(np.arange(w, dtype=np.float64), (1, 1, h, 1)))
    out = ops.roi_align(ramp, ember.tensor([[0, 2.0, 1.0, 8.0, 7.0]], dtype=ember.float64),
                        (2, 3), aligned=True, sampling_ratio=2)
    centres = 2.0 - 0.5 + (np.arange(3) + 0.5) * 2.0
    np.testing.assert_allclose(out.numpy()[0, 0], np.tile(centres, (2, 1)), rtol=1e-12)
    module = ops.RoIAlign((2, 3), 1.0, 2, aligned=True)
    assert ember.equal(module(ramp, [ember.tensor([[2.0, 1.0, 8.0, 7.0]],
                                                  dtype=ember.float64)]), out)
