"""Box utilities in (x1, y1, x2, y2) form unless stated: area, IoU, NMS, conversion."""
import numpy as np

from ..._creation import empty, from_numpy, tensor
from ..._dtype import float32, float64, int32, int64
from ...ops.select import maximum, minimum, where
from ...ops.shape import stack

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "generalized_box_iou", "box_convert",
           "clip_boxes_to_image", "remove_small_boxes"]


def _upcast(t):
    # keep products of coordinates from overflowing (float16 / small ints)
    if t.is_floating_point():
        return t if t.dtype in (float32, float64) else t.float()
    return t if t.dtype in (int32, int64) else t.int()


def box_area(boxes):
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = maximum(boxes1[:, None, :2], boxes2[:, :2])
    rb = minimum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1, boxes2):
    """Pairwise IoU, an (N, M) tensor."""
    inter, union = _inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    inter, union = _inter_union(boxes1, boxes2)
    iou = inter / union
    lt = minimum(boxes1[:, None, :2], boxes2[:, :2])
    rb = maximum(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    hull = wh[:, :, 0] * wh[:, :, 1]
    return iou - (hull - union) / hull


def _iou_numpy(boxes):
    x1, y1, x2, y2 = boxes.T
    area = (x2 - x1) * (y2 - y1)
    w = np.clip(np.minimum(x2[:, None], x2) - np.maximum(x1[:, None], x1), 0, None)
    h = np.clip(np.minimum(y2[:, None], y2) - np.maximum(y1[:, None], y1), 0, None)
    inter = w * h
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / (area[:, None] + area - inter)


def nms(boxes, scores, iou_threshold):
    """Indices (int64) of the boxes kept by greedy non-maximum suppression, by decreasing
    score: a box is dropped when its IoU with a kept higher-scoring box exceeds the
    threshold."""
    if boxes.dim() != 2 or boxes.size(-1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {boxes.size(-1)}")
    if boxes.size(0) != scores.size(0):
        raise RuntimeError("boxes and scores should have same number of elements in "
                           f"dimension 0, got {boxes.size(0)} and {scores.size(0)}")
    b = boxes.detach().cpu().numpy().astype(np.float64)
    order = np.argsort(-scores.detach().cpu().numpy().astype(np.float64), kind="stable")
    iou = _iou_numpy(b[order]) > iou_threshold
    suppressed = np.zeros(len(order), dtype=bool)
    # NOTE: greedy NMS is sequential in the kept boxes; each step is one vectorised row.
    for i in range(len(order)):
        if not suppressed[i]:
            suppressed[i + 1:] |= iou[i, i + 1:]
    return from_numpy(order[~suppressed].astype(np.int64)).to(boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """NMS within each category `idxs` (boxes of different categories never suppress each
    other): each category's boxes are offset so that they cannot overlap."""
    if boxes.numel() == 0:
        return empty((0,), dtype=int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def box_convert(boxes, in_fmt, out_fmt):
    """Convert between 'xyxy', 'xywh' (corner, size) and 'cxcywh' (centre, size)."""
    allowed = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        a, b, c, d = a, b, c - a, d - b
    elif out_fmt == "cxcywh":
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return stack((a, b, c, d), dim=-1)


def clip_boxes_to_image(boxes, size):
    """Clamp x to [0, width] and y to [0, height]; size is (height, width)."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose sides are both at least min_size."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    keep = (ws >= min_size) & (hs >= min_size)
    return where(keep)[0]
