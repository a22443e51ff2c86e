"""What every functional transform starts from: telling a PIL image from a tensor image, the
interpolation modes, the PIL kernels (imported on first use), and the inspection and
conversion transforms (get_dimensions, to_tensor, pil_to_tensor, to_pil_image,
convert_image_dtype, normalize). functional.py re-exports the public ones."""
import sys
from enum import Enum

import numpy as np

from ..._creation import as_tensor, empty, from_numpy
from ..._dtype import float32, get_default_dtype, uint8
from ..._optional import require
from ..._tensor import Tensor
from . import _functional_tensor as ft


class _PilKernels:
    """_functional_pil, imported on first use. Pillow is optional (tensor transforms work
    without it); its kernels are only ever handed PIL images, so Pillow is loaded by then."""

    def __getattr__(self, name):
        from . import _functional_pil   # (optional: PIL)
        return getattr(_functional_pil, name)


fp = _PilKernels()


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


pil_modes_mapping = {InterpolationMode.NEAREST: 0, InterpolationMode.BILINEAR: 2,
                     InterpolationMode.BICUBIC: 3, InterpolationMode.NEAREST_EXACT: 0,
                     InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
                     InterpolationMode.LANCZOS: 1}


def _interpolation_modes_from_int(i):
    return {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
            3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
            5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}[i]


def _is_pil_image(img):
    # NOTE: nothing is a PIL image before PIL.Image is imported, so sys.modules answers
    # without importing Pillow (0.1 s, and it may be absent).
    image = sys.modules.get("PIL.Image")
    return image is not None and isinstance(img, image.Image)


def _is_tensor(img):
    return isinstance(img, Tensor)


def _check_image(img):
    if _is_tensor(img):
        if img.ndim < 2:
            raise TypeError("Tensor is not a torch image.")
    elif not _is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def _np(img):
    return img.detach().cpu().numpy()


def _wrap(array, like):
    return from_numpy(np.ascontiguousarray(array)).to(like.device)


def _on_tensor(fn, img, *args):
    return _wrap(fn(_np(img), *args), img)


def _np_dtype(dtype):
    return empty(0, dtype=dtype).numpy().dtype


def _interp(interpolation):
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    return interpolation


# ---------------------------------------------------------------- inspection / conversion
def get_dimensions(img):
    _check_image(img)
    if _is_tensor(img):
        channels = 1 if img.ndim == 2 else img.shape[-3]
        return [channels, img.shape[-2], img.shape[-1]]
    return fp.get_dimensions(img)


def get_image_size(img):
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def to_tensor(pic):
    """PIL image or HWC ndarray -> CHW tensor; uint8 data is scaled to [0, 1] floats."""
    if not (_is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray) and pic.ndim not in {2, 3}:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    default = get_default_dtype()
    if isinstance(pic, np.ndarray):
        a = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        nptype = {"I": np.int32, "I;16": np.int16, "F": np.float32}.get(pic.mode, np.uint8)
        a = np.array(pic, nptype, copy=True)
        if pic.mode == "1":
            a = 255 * a
        a = a.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    img = from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
    if img.dtype == uint8:
        return img.to(dtype=default).div(255)
    return img


def pil_to_tensor(pic):
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    a = np.array(pic, copy=True)
    a = a.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    """CHW tensor or HWC ndarray -> PIL image; float data is scaled by 255 first."""
    if isinstance(pic, Tensor):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        npimg = np.transpose(_np(pic), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in {2, 3}:
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        npimg = pic[:, :, None] if pic.ndim == 2 else pic
        if npimg.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {npimg.shape[-1]} "
                             "channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    channels = npimg.shape[2]
    if channels == 1:
        npimg = npimg[:, :, 0]
        expected = {np.uint8: "L", np.int16: "I;16", np.uint16: "I;16", np.int32: "I",
                    np.float32: "F"}.get(npimg.dtype.type)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type "
                             f"{np.dtype}. Should be {expected}")
        mode = expected
    else:
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}
        if mode is not None and mode not in permitted[channels]:
            raise ValueError(f"Only modes {permitted[channels]} are supported for "
                             f"{channels}D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = permitted[channels][0]
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    image = require("PIL.Image", "to_pil_image")
    return image.fromarray(np.ascontiguousarray(npimg), mode=mode)


def convert_image_dtype(image, dtype=float32):
    if not isinstance(image, Tensor):
        raise TypeError("Expected tensor as input, got {}".format(type(image)))
    out = ft.convert_image_dtype(_np(image), _np_dtype(dtype))
    if out is None:
        raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed "
                           "safely.")
    return _wrap(out, image)


def normalize(tensor, mean, std, inplace=False):
    """(x - mean) / std per channel, with ember ops (so it is differentiable)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    mean = as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading "
                         "to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)
