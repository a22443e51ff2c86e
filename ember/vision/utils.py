"""Image utilities: make_grid, save_image, draw_bounding_boxes."""
import math
import warnings

import numpy as np

from .._creation import from_numpy
from .._dtype import int64, uint8
from .._optional import require
from .._tensor import Tensor
from ..ops.shape import cat, stack, tile
from .transforms import functional as F

__all__ = ["make_grid", "save_image", "draw_bounding_boxes"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """Tile a batch (B, C, H, W) (or a list of images) into one image, `nrow` per row."""
    if isinstance(tensor, list):
        tensor = stack(tensor, dim=0)
    if not isinstance(tensor, Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:
            tensor = cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = cat((tensor, tensor, tensor), 1)
    if normalize is True:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and "
                            "max are numbers")
        a = tensor.detach().cpu().numpy().copy()
        axes = (1, 2, 3) if scale_each else (0, 1, 2, 3)
        if value_range is not None:
            low = np.full((1, 1, 1, 1), value_range[0], dtype=np.float64)
            high = np.full((1, 1, 1, 1), value_range[1], dtype=np.float64)
        else:
            low = a.min(axis=axes, keepdims=True).astype(np.float64)
            high = a.max(axis=axes, keepdims=True).astype(np.float64)
        a = np.clip(a, low.astype(a.dtype), high.astype(a.dtype))
        a = ((a - low.astype(a.dtype)) / np.maximum(high - low, 1e-5).astype(a.dtype))
        tensor = from_numpy(a.astype(a.dtype, copy=False)).to(tensor.device)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    a = tensor.detach().cpu().numpy()
    nmaps, channels, h, w = a.shape
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    cells = np.full((ymaps * xmaps, channels, h + padding, w + padding), pad_value,
                    dtype=a.dtype)
    cells[:nmaps, :, padding:, padding:] = a
    grid = cells.reshape(ymaps, xmaps, channels, h + padding, w + padding)
    grid = grid.transpose(2, 0, 3, 1, 4).reshape(channels, ymaps * (h + padding),
                                                 xmaps * (w + padding))
    grid = np.pad(grid, ((0, 0), (0, padding), (0, padding)), constant_values=pad_value)
    return from_numpy(np.ascontiguousarray(grid)).to(tensor.device)


def save_image(tensor, fp, format=None, **kwargs):
    """make_grid, scale [0, 1] to bytes (rounding), save with Pillow."""
    Image = require("PIL.Image", "save_image")
    grid = make_grid(tensor, **kwargs)
    a = grid.detach().cpu().numpy()
    a = np.clip(a * a.dtype.type(255) + a.dtype.type(0.5), 0, 255).astype(np.uint8)
    Image.fromarray(np.ascontiguousarray(a.transpose(1, 2, 0))).save(fp, format=format)


def _generate_color_palette(num_objects):
    palette = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1], dtype=np.int64)
    return [tuple(int(v) for v in (i * palette) % 255) for i in range(num_objects)]


def _parse_colors(colors, num_objects):
    ImageColor = require("PIL.ImageColor", "draw_bounding_boxes")
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"`colors` must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, got {colors}.")
    else:
        colors = [colors] * num_objects
    return [ImageColor.getrgb(c) if isinstance(c, str) else tuple(c) for c in colors]


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1,
                        font=None, font_size=None, label_colors=None):
    """Draw (xmin, ymin, xmax, ymax) boxes on a (C, H, W) uint8 or float image with
    Pillow; returns a tensor of the same dtype."""
    ImageDraw = require("PIL.ImageDraw", "draw_bounding_boxes")
    ImageFont = require("PIL.ImageFont", "draw_bounding_boxes")

    if not isinstance(image, Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.size(0) not in {1, 3}:
        raise ValueError("Only grayscale and RGB images are supported")
    if (boxes[:, 0] > boxes[:, 2]).any() or (boxes[:, 1] > boxes[:, 3]).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. "
                         "Please specify labels for each box.")
    colors = _parse_colors(colors, num_boxes)
    label_colors = colors if label_colors is None else _parse_colors(label_colors, num_boxes)
    if font is None:
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if image.size(0) == 1:
        image = tile(image, (3, 1, 1))
    original = image.dtype
    if original.is_floating_point:
        image = F.convert_image_dtype(image, uint8)
    canvas = F.to_pil_image(image)
    draw = ImageDraw.Draw(canvas, "RGBA") if fill else ImageDraw.Draw(canvas)
    for bbox, color, label, label_color in zip(boxes.to(int64).tolist(), colors,
                                               labels, label_colors):
        if fill:
            draw.rectangle(bbox, width=width, outline=color, fill=color + (100,))
        else:
            draw.rectangle(bbox, width=width, outline=color)
        if label is not None:
            margin = width + 1
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color,
                      font=txt_font)
    out = F.pil_to_tensor(canvas)
    if original.is_floating_point:
        out = F.convert_image_dtype(out, original)
    return out
