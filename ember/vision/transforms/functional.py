"""transforms.functional: each function takes a PIL image or a tensor (..., C, H, W).
Geometry and colour are here; inspection and conversion in _conversion.py, re-exported."""
import numbers
import sys

import numpy as np

from ..._dtype import float32, uint8
from ..._tensor import Tensor
from . import _functional_tensor as ft
from ._conversion import (InterpolationMode, convert_image_dtype,  # noqa: F401
                          get_dimensions, get_image_num_channels, get_image_size, normalize,
                          pil_modes_mapping, pil_to_tensor, to_pil_image, to_tensor)
from ._conversion import (_check_image, _interp, _is_pil_image, _is_tensor, _np_dtype,
                          _on_tensor, fp)


# ---------------------------------------------------------------- geometry
def _compute_resized_output_size(image_size, size, max_size=None):
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None or len(size) == 1:
        if size is None:
            new_short, new_long = short, long
            scale = max_size / long
            new_short, new_long = int(short * scale), max_size
        else:
            requested = size[0]
            new_short, new_long = requested, int(requested * long / short)
            if max_size is not None:
                if max_size <= requested:
                    raise ValueError(f"max_size = {max_size} must be strictly greater than "
                                     f"the requested size for the smaller edge size = {size}")
                if new_long > max_size:
                    new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
           antialias=True):
    interpolation = _interp(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size is None or specifies "
                             "the length of the smaller edge, i.e. size should be an int or "
                             "a sequence of length 1 in torchscript mode.")
    _, h, w = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((h, w), size, max_size)
    if [h, w] == output_size:
        return img
    if _is_pil_image(img):
        return fp.resize(img, output_size, pil_modes_mapping[interpolation])
    mode = interpolation.value
    if mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise NotImplementedError(f"Input Error: Only 'nearest', 'nearest-exact', 'bilinear' "
                                  f"and 'bicubic' are supported for tensors, got {mode}")
    return _on_tensor(ft.resize, img, output_size, mode, bool(antialias))


def _parse_padding(padding):
    if isinstance(padding, numbers.Number):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return list(padding)


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding: int, (lr, tb) or (left, top, right, bottom); negative values crop."""
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (numbers.Number, tuple, list)) and fill is not None:
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _parse_padding(padding)
    if _is_pil_image(img):
        return fp.pad(img, left, top, right, bottom, fill, padding_mode)
    if padding_mode == "symmetric" and min(left, top, right, bottom) < 0:
        raise ValueError("Padding can not be negative for symmetric padding_mode")
    return _on_tensor(ft.pad, img, left, top, right, bottom, 0 if fill is None else fill,
                      padding_mode)


def crop(img, top, left, height, width):
    if _is_pil_image(img):
        return img.crop((left, top, left + width, top + height))
    _check_image(img)
    if 0 <= top and 0 <= left and top + height <= img.shape[-2] and \
            left + width <= img.shape[-1]:
        return img[..., top:top + height, left:left + width]
    return _on_tensor(ft.crop, img, top, left, height, width)


def _setup_size(size, error_msg):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (tuple, list)) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    ch, cw = output_size
    if cw > w or ch > h:
        img = pad(img, [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                        (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0],
                  fill=0)
        _, h, w = get_dimensions(img)
        if cw == w and ch == h:
            return img
    return crop(img, int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0)), ch, cw)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    return resize(crop(img, top, left, height, width), size, interpolation,
                  antialias=antialias)


def hflip(img):
    if _is_pil_image(img):
        return img.transpose(sys.modules["PIL.Image"].FLIP_LEFT_RIGHT)
    _check_image(img)
    return img.flip(-1)


def vflip(img):
    if _is_pil_image(img):
        return img.transpose(sys.modules["PIL.Image"].FLIP_TOP_BOTTOM)
    _check_image(img)
    return img.flip(-2)


def five_crop(img, size):
    size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
    _, h, w = get_dimensions(img)
    ch, cw = size
    if cw > w or ch > h:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(h, w)}")
    return (crop(img, 0, 0, ch, cw), crop(img, 0, w - cw, ch, cw), crop(img, h - ch, 0, ch, cw),
            crop(img, h - ch, w - cw, ch, cw), center_crop(img, [ch, cw]))


def ten_crop(img, size, vertical_flip=False):
    size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
    flipped = vflip(img) if vertical_flip else hflip(img)
    return five_crop(img, size) + five_crop(flipped, size)


def _tensor_fill(fill, img):
    if fill is None:
        return None
    if isinstance(fill, (int, float)):
        return [float(fill)] * get_dimensions(img)[0]
    return [float(f) for f in fill]


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if _is_pil_image(img):
        return fp.rotate(img, angle, pil_modes_mapping[interpolation], expand, center, fill)
    _, h, w = get_dimensions(img)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = ft.math_inverse_affine(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    size = ft.affine_output_size(matrix, w, h) if expand else None
    return _on_tensor(ft.affine, img, matrix, interpolation.value,
                      None if fill is None else _tensor_fill(fill, img), size)


def _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    return ft.math_inverse_affine(center, angle, translate, scale, shear)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    if isinstance(angle, int):
        angle = float(angle)
    if isinstance(translate, tuple):
        translate = list(translate)
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if isinstance(shear, tuple):
        shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, h, w = get_dimensions(img)
    if _is_pil_image(img):
        center = [w * 0.5, h * 0.5] if center is None else center
        matrix = ft.math_inverse_affine(center, angle, translate, scale, shear)
        return fp.affine(img, matrix, pil_modes_mapping[interpolation], fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = ft.math_inverse_affine(center_f, angle, [1.0 * t for t in translate], scale,
                                    shear)
    return _on_tensor(ft.affine, img, matrix, interpolation.value,
                      None if fill is None else _tensor_fill(fill, img))


def _perspective_coeffs(startpoints, endpoints):
    a = np.zeros((2 * len(startpoints), 8))
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.array(startpoints, dtype=np.float64).reshape(8)
    return np.linalg.lstsq(a, b, rcond=None)[0].astype(np.float32).tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None):
    interpolation = _interp(interpolation)
    coeffs = _perspective_coeffs(startpoints, endpoints)
    if _is_pil_image(img):
        return fp.perspective(img, coeffs, pil_modes_mapping[interpolation], fill)
    return _on_tensor(ft.perspective, img, coeffs, interpolation.value,
                      None if fill is None else _tensor_fill(fill, img))


# ---------------------------------------------------------------- colour
def _channels_check(img, allowed=(1, 3)):
    c = get_dimensions(img)[0]
    if c not in allowed:
        raise TypeError(f"Input image tensor permitted channel values are {list(allowed)}, "
                        f"but found {c}")


def _colour(pil_fn, np_fn, img, factor, name):
    """A colour adjustment by a non-negative `factor`: `pil_fn` on a PIL image, `np_fn` on a
    tensor's array (of one or three channels)."""
    if _is_tensor(img):
        _channels_check(img)
    if factor < 0:
        raise ValueError(f"{name} ({factor}) is not non-negative.")
    if _is_pil_image(img):
        return pil_fn(img, factor)
    _check_image(img)
    return _on_tensor(np_fn, img, factor)


def adjust_brightness(img, brightness_factor):
    return _colour(fp.adjust_brightness, lambda a, f: ft.blend(a, np.zeros_like(a), f), img,
                   brightness_factor, "brightness_factor")


def adjust_contrast(img, contrast_factor):
    return _colour(fp.adjust_contrast, ft.adjust_contrast, img, contrast_factor,
                   "contrast_factor")


def adjust_saturation(img, saturation_factor):
    if _is_tensor(img):
        _channels_check(img)
        if img.shape[-3] == 1:   # (a grayscale image has no saturation to change)
            return img

    def np_fn(a, f):
        return ft.blend(a, ft.rgb_to_grayscale(a), f)
    return _colour(fp.adjust_saturation, np_fn, img, saturation_factor, "saturation_factor")


def adjust_sharpness(img, sharpness_factor):
    return _colour(fp.adjust_sharpness, ft.adjust_sharpness, img, sharpness_factor,
                   "sharpness_factor")


def adjust_hue(img, hue_factor):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if _is_pil_image(img):
        return fp.adjust_hue(img, hue_factor)
    _channels_check(img)
    return _on_tensor(ft.adjust_hue, img, hue_factor)


def adjust_gamma(img, gamma, gain=1):
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if _is_pil_image(img):
        return fp.adjust_gamma(img, gamma, gain)
    result = img if img.is_floating_point() else convert_image_dtype(img, float32)
    result = (gain * result ** gamma).clamp(0, 1)
    return convert_image_dtype(result, img.dtype)


def rgb_to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if _is_pil_image(img):
        return fp.to_grayscale(img, num_output_channels)
    _channels_check(img)
    return _on_tensor(ft.rgb_to_grayscale, img, num_output_channels)


to_grayscale = rgb_to_grayscale


def invert(img):
    if _is_pil_image(img):
        return fp.invert(img)
    _channels_check(img)
    return _on_tensor(ft.invert, img)


def posterize(img, bits):
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    if _is_pil_image(img):
        return fp.posterize(img, bits)
    if img.dtype != uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _channels_check(img)
    return _on_tensor(ft.posterize, img, bits)


def solarize(img, threshold):
    if _is_pil_image(img):
        return fp.solarize(img, threshold)
    _channels_check(img)
    if threshold > ft.max_value(_np_dtype(img.dtype)):
        raise TypeError("Threshold should be less than bound of img.")
    return _on_tensor(ft.solarize, img, threshold)


def autocontrast(img):
    if _is_pil_image(img):
        return fp.autocontrast(img)
    _channels_check(img)
    return _on_tensor(ft.autocontrast, img)


def equalize(img):
    if _is_pil_image(img):
        return fp.equalize(img)
    _channels_check(img)
    if img.dtype != uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    return _on_tensor(ft.equalize, img)


def gaussian_blur(img, kernel_size, sigma=None):
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError("If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for k in kernel_size:
        if k % 2 == 0 or k < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if _is_pil_image(img):
        return fp.via_array(ft.gaussian_blur, img, kernel_size, sigma)
    return _on_tensor(ft.gaussian_blur, img, kernel_size, sigma)


def erase(img, i, j, h, w, v, inplace=False):
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


__all__ = [n for n in dir() if not n.startswith("_") and n not in
           ("numbers", "np", "fp", "ft", "sys", "Tensor", "float32", "uint8")]
