"""RoIAlign (Mask R-CNN): average of bilinear samples on a regular grid in each output bin.

NOTE: forward only (no autograd); the arithmetic follows torchvision's CPU kernel (samples
outside [-1, size] count as zero, coordinates below 0 clamp to 0).
"""
import math

import numpy as np

from ... import nn
from ... import _creation

__all__ = ["roi_align", "RoIAlign"]


def _rois_array(boxes):
    if isinstance(boxes, (list, tuple)):
        rows = [np.concatenate([np.full((len(b), 1), i, dtype=np.float64),
                                b.detach().cpu().numpy().astype(np.float64)], axis=1)
                for i, b in enumerate(boxes)]
        return np.concatenate(rows, axis=0) if rows else np.zeros((0, 5))
    if boxes.dim() != 2 or boxes.size(1) != 5:
        raise ValueError("The boxes tensor shape is not correct as Tensor[K, 5]")
    return boxes.detach().cpu().numpy().astype(np.float64)


def _bilinear(feature, y, x):
    """feature (C, H, W); y (n, 1), x (1, m) sample grids -> (C, n, m)."""
    _, height, width = feature.shape
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y_low, x_low = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = np.where(y_edge, height - 1, y_low)
    x_low = np.where(x_edge, width - 1, x_low)
    y = np.where(y_edge, y_low, y)
    x = np.where(x_edge, x_low, x)
    y_high = np.where(y_edge, y_low, y_low + 1)
    x_high = np.where(x_edge, x_low, x_low + 1)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    out = (hy * hx * feature[:, y_low, x_low] + hy * lx * feature[:, y_low, x_high]
           + ly * hx * feature[:, y_high, x_low] + ly * lx * feature[:, y_high, x_high])
    return np.where(outside, 0.0, out)


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1,
              aligned=False):
    """Pool each box (Tensor[K, 5] of (batch index, x1, y1, x2, y2), or a list of
    Tensor[L, 4] per image) of `input` (N, C, H, W) to (K, C, *output_size)."""
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else output_size
    rois = _rois_array(boxes)
    data = input.detach().cpu().numpy()
    compute = data.astype(np.float64)
    out = np.zeros((len(rois), data.shape[1], ph, pw), dtype=data.dtype)
    offset = 0.5 if aligned else 0.0
    # NOTE: one iteration per box: the sampling grid size differs from box to box
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sx, sy = x1 * spatial_scale - offset, y1 * spatial_scale - offset
        rw, rh = x2 * spatial_scale - offset - sx, y2 * spatial_scale - offset - sy
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        ys = sy + (np.arange(ph)[:, None] * bh + (np.arange(gh) + 0.5) * bh / gh).reshape(-1)
        xs = sx + (np.arange(pw)[:, None] * bw + (np.arange(gw) + 0.5) * bw / gw).reshape(-1)
        samples = _bilinear(compute[int(b)], ys[:, None], xs[None, :])
        c = samples.shape[0]
        pooled = samples.reshape(c, ph, gh, pw, gw).sum(axis=(2, 4)) / count
        out[k] = pooled
    return _creation.from_numpy(out).to(input.device)


class RoIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")
