"""Image kernels on PIL images (Pillow does the resampling, as in torchvision)."""
import numpy as np
from PIL import Image, ImageEnhance, ImageOps

from . import _functional_tensor as ft


def get_dimensions(img):
    channels = len(img.getbands())
    width, height = img.size
    return [channels, height, width]


def parse_fill(fill, img, name="fillcolor"):
    channels = get_dimensions(img)[0]
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and channels > 1:
        fill = tuple([fill] * channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * channels
        elif len(fill) != channels:
            raise ValueError(f"The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, tuple) else int(fill)
    return {name: fill}


def _to_chw(img):
    a = np.array(img)
    return a[None] if a.ndim == 2 else np.moveaxis(a, -1, 0)


def _from_chw(a, like):
    a = a[0] if a.shape[0] == 1 else np.moveaxis(a, 0, -1)
    out = Image.fromarray(np.ascontiguousarray(a), mode=like.mode)
    if like.mode == "P":
        out.putpalette(like.getpalette())
    return out


def via_array(fn, img, *args):
    """Run a NumPy kernel on a PIL image's pixels (torchvision goes through tensors too)."""
    return _from_chw(fn(_to_chw(img), *args), img)


def pad(img, left, top, right, bottom, fill, mode):
    value = 0
    if mode == "constant":
        value = parse_fill(fill, img, name="fill")["fill"]
    a = _to_chw(img)
    if isinstance(value, tuple):
        chans = [ft.pad(a[i:i + 1], left, top, right, bottom, v, mode)
                 for i, v in enumerate(value)]
        return _from_chw(np.concatenate(chans, axis=0), img)
    return _from_chw(ft.pad(a, left, top, right, bottom, value, mode), img)


def resize(img, size, interpolation):
    return img.resize(tuple(size[::-1]), interpolation)


def rotate(img, angle, interpolation, expand, center, fill):
    return img.rotate(angle, interpolation, expand, center, **parse_fill(fill, img))


def affine(img, matrix, interpolation, fill):
    return img.transform(img.size, Image.AFFINE, matrix, interpolation,
                         **parse_fill(fill, img))


def perspective(img, coeffs, interpolation, fill):
    return img.transform(img.size, Image.PERSPECTIVE, coeffs, interpolation,
                         **parse_fill(fill, img))


def adjust_brightness(img, factor):
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img, factor):
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img, factor):
    return ImageEnhance.Color(img).enhance(factor)


def adjust_sharpness(img, factor):
    return ImageEnhance.Sharpness(img).enhance(factor)


def adjust_hue(img, factor):
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    # NOTE: hue is an angle: uint8 addition wraps around, as intended
    np_h += np.array(np.int8(np.float64(factor) * 255)).view(np.uint8)
    return Image.merge("HSV", (Image.fromarray(np_h, "L"), s, v)).convert(mode)


def adjust_gamma(img, gamma, gain=1.0):
    mode = img.mode
    img = img.convert("RGB")
    lut = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
    return img.point(lut).convert(mode)


def to_grayscale(img, num_output_channels):
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    return Image.fromarray(np.dstack([np.array(gray, dtype=np.uint8)] * 3), "RGB")


def invert(img):
    return ImageOps.invert(img)


def posterize(img, bits):
    return ImageOps.posterize(img, bits)


def solarize(img, threshold):
    return ImageOps.solarize(img, threshold)


def autocontrast(img):
    return ImageOps.autocontrast(img)


def equalize(img):
    return ImageOps.equalize(img)
