"""Image file I/O through Pillow: read/decode to uint8 (C, H, W) tensors, encode/write PNG
and JPEG."""
import io as _io
from enum import Enum

import numpy as np

from ..._creation import from_numpy
from ..._dtype import uint8
from ..._optional import require
from ..._tensor import Tensor

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png",
           "decode_jpeg", "read_image", "encode_png", "write_png", "encode_jpeg",
           "write_jpeg"]


class ImageReadMode(Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA  # alias, as in torchvision


_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA",
          ImageReadMode.RGB: "RGB", ImageReadMode.RGB_ALPHA: "RGBA"}


def read_file(path):
    """The file's bytes as a 1-D uint8 tensor."""
    with open(path, "rb") as f:
        data = f.read()
    return from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    with open(filename, "wb") as f:
        f.write(data.detach().cpu().numpy().astype(np.uint8).tobytes())


def _mode(mode):
    if isinstance(mode, str):
        return ImageReadMode[mode.upper()]
    return mode


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode encoded bytes (a 1-D uint8 tensor) or a file path to a (C, H, W) tensor:
    uint8, or uint16 for 16-bit images read UNCHANGED."""
    Image = require("PIL.Image", "decode_image")
    ImageOps = require("PIL.ImageOps", "decode_image")
    if isinstance(input, str) or hasattr(input, "__fspath__"):
        input = read_file(input)
    if not isinstance(input, Tensor) or input.dtype != uint8 or input.dim() != 1:
        raise RuntimeError("Expected a 1 dimensional uint8 tensor holding the encoded image")
    img = Image.open(_io.BytesIO(input.numpy().tobytes()))
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    mode = _mode(mode)
    if mode != ImageReadMode.UNCHANGED:
        img = img.convert(_MODES[mode])
    elif img.mode == "P":
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    elif img.mode in ("1", "CMYK", "YCbCr"):
        img = img.convert("L" if img.mode == "1" else "RGB")
    if img.mode in ("I;16", "I;16B", "I"):
        a = np.array(img).astype(np.uint16)
    else:
        a = np.array(img)
    a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
    return from_numpy(np.ascontiguousarray(a))


decode_png = decode_image
decode_jpeg = decode_image


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    return decode_image(read_file(path), mode, apply_exif_orientation)


def _to_pil(input):
    Image = require("PIL.Image", "encode_png / encode_jpeg")
    if not isinstance(input, Tensor) or input.dim() != 3:
        raise RuntimeError("Input should be a 3 dimensional (C, H, W) tensor")
    if input.dtype != uint8:
        raise RuntimeError(f"Input tensor dtype should be uint8, got {input.dtype}")
    a = input.detach().cpu().numpy()
    channels = a.shape[0]
    if channels not in (1, 2, 3, 4):
        raise RuntimeError(f"The number of channels should be 1, 2, 3 or 4, got: {channels}")
    mode = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels]
    a = a[0] if channels == 1 else a.transpose(1, 2, 0)
    return Image.fromarray(np.ascontiguousarray(a), mode=mode)


def _encode(img, **kwargs):
    buffer = _io.BytesIO()
    img.save(buffer, **kwargs)
    return from_numpy(np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy())


def encode_png(input, compression_level=6):
    if not 0 <= compression_level <= 9:
        raise RuntimeError(f"Compression level should be between 0 and 9, got "
                           f"{compression_level}")
    return _encode(_to_pil(input), format="PNG", compress_level=compression_level)


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input, quality=75):
    if not 1 <= quality <= 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, (list, tuple)):
        return [encode_jpeg(i, quality) for i in input]
    return _encode(_to_pil(input), format="JPEG", quality=quality)


def write_jpeg(input, filename, quality=75):
    write_file(filename, encode_jpeg(input, quality))
