"""Detection operators: box utilities, NMS and RoIAlign."""
from .boxes import (
                    batched_nms,
                    box_area,
                    box_convert,
                    box_iou,
                    clip_boxes_to_image,
                    generalized_box_iou,
                    nms,
                    remove_small_boxes,
)
from .roi_align import RoIAlign, roi_align

__all__ = ["batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image",
           "generalized_box_iou", "nms", "remove_small_boxes", "roi_align", "RoIAlign"]
