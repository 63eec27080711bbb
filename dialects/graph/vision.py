"""Vision operators for detection heads: non-maximum suppression and ROIAlign."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import FloatAttr, I64, IntegerAttr, IntegerType, TensorType, f64, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from nimble.dialects.graph.base import GraphOp, as_tensor
from nimble.dialects.graph.types import is_float
from nimble.dialects.interfaces import FusionKind
from nimble.dialects.shape_functions import DimAlgebra, ShapeError


def _box_iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of one corner box [x1, y1, x2, y2] with each row of `others` (any diagonal)."""
    def corners(b: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.minimum(b[..., 0], b[..., 2]), np.minimum(b[..., 1], b[..., 3]),
                np.maximum(b[..., 0], b[..., 2]), np.maximum(b[..., 1], b[..., 3]))

    ax1, ay1, ax2, ay2 = corners(box)
    bx1, by1, bx2, by2 = corners(others)
    iw = np.clip(np.minimum(ax2, bx2) - np.maximum(ax1, bx1), 0, None)
    ih = np.clip(np.minimum(ay2, by2) - np.maximum(ay1, by1), 0, None)
    inter = iw * ih
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


@irdl_op_definition
class NmsOp(GraphOp):
    """Greedy non-maximum suppression: indices of kept boxes, by descending score.

    The number of kept boxes is known only at run time; the result is `tensor<?xi64>`
    and its upper bound (for allocation) is `min(N, max_output)`.

    Example: `%keep = graph.nms %boxes, %scores {iou_threshold = 5.0e-01 : f64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>`
    """

    name = "graph.nms"
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    result = result_def(TensorType)
    iou_threshold = prop_def(FloatAttr)
    score_threshold = opt_prop_def(FloatAttr)
    max_output = opt_prop_def(IntegerAttr[I64])
    assembly_format = "$boxes `,` $scores attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    DATA_DEPENDENT: ClassVar[bool] = True

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        boxes, scores = k.dims(self.boxes), k.dims(self.scores)
        if len(boxes) != 2 or len(scores) != 1:
            raise ShapeError("boxes must be [N, 4] and scores [N]")
        k.equal(boxes[1], 4, "boxes must have 4 coordinates")
        n = k.equal(boxes[0], scores[0], "boxes and scores differ in count")
        if self.max_output is not None:
            if self.max_output.value.data < 0:
                raise ShapeError("max_output must be >= 0")
            n = k.min(n, self.max_output.value.data)
        return [[n]]

    def result_element_types(self) -> list[Attribute]:
        if not (is_float(self.boxes.type.element_type) and is_float(self.scores.type.element_type)):
            raise ShapeError("boxes and scores must be float tensors")
        return [IntegerType(64)]

    def reference(self, boxes: Any, scores: Any) -> Sequence[Any]:
        order = np.argsort(-scores.astype(np.float64), kind="stable")
        if self.score_threshold is not None:
            order = order[scores[order] > self.score_threshold.value.data]
        limit = len(order) if self.max_output is None else self.max_output.value.data
        keep: list[int] = []
        suppressed = np.zeros(len(boxes), dtype=bool)
        b64 = boxes.astype(np.float64)
        for i in order:
            if len(keep) >= limit:
                break
            if suppressed[i]:
                continue
            keep.append(int(i))
            suppressed |= _box_iou(b64[i], b64) > self.iou_threshold.value.data
        return [np.array(keep, dtype=np.int64)]


def _bilinear(feature: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Sample [C, H, W] at points (y, x) (same shape) as ROIAlign does: zero outside
    [-1, size], clamped at the border. Returns [C, *y.shape]."""
    _, h, w = feature.shape
    outside = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y = np.clip(y, 0, None)
    x = np.clip(x, 0, None)
    y0 = np.minimum(np.floor(y).astype(np.int64), h - 1)
    x0 = np.minimum(np.floor(x).astype(np.int64), w - 1)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    y = np.where(y0 >= h - 1, y0, y)
    x = np.where(x0 >= w - 1, x0, x)
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    value = (hy * hx * feature[:, y0, x0] + hy * lx * feature[:, y0, x1]
             + ly * hx * feature[:, y1, x0] + ly * lx * feature[:, y1, x1])
    return np.where(outside, 0.0, value)


@irdl_op_definition
class RoiAlignOp(GraphOp):
    """ROIAlign (average mode, half-pixel coordinates, as ONNX RoiAlign-16): pools each
    region `[x1, y1, x2, y2]` of image `batch_indices[k]` to `output_height x output_width`.

    Example: `%r = graph.roi_align %feat, %rois, %idx {output_height = 7 : i64, output_width = 7 : i64, spatial_scale = 6.25e-02 : f64} : (tensor<1x256x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x256x7x7xf32>`
    """

    name = "graph.roi_align"
    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    result = result_def(TensorType)
    output_height = prop_def(IntegerAttr[I64])
    output_width = prop_def(IntegerAttr[I64])
    sampling_ratio = prop_def(IntegerAttr[I64], default_value=IntegerAttr(0, i64))
    spatial_scale = prop_def(FloatAttr, default_value=FloatAttr(1.0, f64))
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())
    FUSION: ClassVar[FusionKind] = FusionKind.OUT_FUSABLE  # a compute op; its epilogue may join
    CLAMPS_READS: ClassVar[bool] = True

    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        x, rois, idx = k.dims(self.input), k.dims(self.rois), k.dims(self.batch_indices)
        if len(x) != 4 or len(rois) != 2 or len(idx) != 1:
            raise ShapeError("expects input [N, C, H, W], rois [K, 4], batch_indices [K]")
        k.equal(rois[1], 4, "rois must have 4 coordinates")
        count = k.equal(rois[0], idx[0], "rois and batch_indices differ in count")
        oh, ow = self.output_height.value.data, self.output_width.value.data
        if oh < 1 or ow < 1 or self.sampling_ratio.value.data < 0:
            raise ShapeError("output sizes must be >= 1 and sampling_ratio >= 0")
        return [[count, x[1], oh, ow]]

    def result_element_types(self) -> list[Attribute]:
        if is_float(self.batch_indices.type.element_type):
            raise ShapeError("batch_indices must be integers")
        return [self.input.type.element_type]

    def reference(self, x: Any, rois: Any, batch_indices: Any) -> Sequence[Any]:
        oh, ow = self.output_height.value.data, self.output_width.value.data
        ratio = self.sampling_ratio.value.data
        scale = self.spatial_scale.value.data
        out = np.zeros((len(rois), x.shape[1], oh, ow))
        for r, (roi, b) in enumerate(zip(rois.astype(np.float64), batch_indices)):
            if not 0 <= b < x.shape[0]:
                raise IndexError(f"batch index {b} out of range for {x.shape[0]} images")
            x1, y1, x2, y2 = roi * scale - 0.5
            bin_h, bin_w = (y2 - y1) / oh, (x2 - x1) / ow
            gh = ratio if ratio > 0 else max(1, math.ceil((y2 - y1) / oh))
            gw = ratio if ratio > 0 else max(1, math.ceil((x2 - x1) / ow))
            ys = y1 + (np.arange(oh)[:, None] + (np.arange(gh)[None, :] + 0.5) / gh) * bin_h
            xs = x1 + (np.arange(ow)[:, None] + (np.arange(gw)[None, :] + 0.5) / gw) * bin_w
            yy = np.broadcast_to(ys[:, :, None, None], (oh, gh, ow, gw))
            xx = np.broadcast_to(xs[None, None, :, :], (oh, gh, ow, gw))
            samples = _bilinear(x[b].astype(np.float64), yy, xx)
            out[r] = samples.mean(axis=(2, 4))
        return [as_tensor(out, self.result.type.element_type)]
