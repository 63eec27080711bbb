"""Vision operators that are not loop nests, compiled for the CPU: non-maximum suppression.

`graph.nms` on the CPU (no device placed it) runs `NMS_KERNEL`, a loop-level kernel
written by hand and JIT-compiled once per process (`compile_kernels`), instead of the
reference interpreter's numpy loop (1.9 ms for the detection example's 2304 boxes, 50
kept). It is a greedy selection that needs no sort:

1. Each box's corners (either diagonal) and area in f64, as the reference computes
   them, and an order key in one i64: the score's bits made to compare as integers
   (-0.0 as 0.0, NaN below -inf) above the complement of the box's index, so the
   largest key is the reference's next candidate (NaN last, descending score, lowest
   index first); boxes under the score threshold get `NONE`.
2. `max_output` picks: the largest key left (a max-reduction over the keys) is kept,
   and every box whose IoU with it (in f64, same operations and roundings: the float
   ops are `nimble.exact`, no fused multiply-adds) exceeds the threshold leaves.
   Once a pick finds nothing the rest scan nothing.

O(max_output x N) like the reference, in machine code. Inputs other than f32 boxes and
scores run the reference (`cpu_op`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

NONE = -(1 << 63)
"""The key of a box that is not, or no longer, a candidate."""

NMS_KERNEL = f"""
func.func @nms_cpu(%boxes: memref<?x4xf32>, %scores: memref<?xf32>, %iou_threshold: memref<1xf64>,
                   %score_threshold: memref<1xf32>, %filtered: memref<1xi64>, %keep: memref<?xi64>,
                   %count: memref<1xi64>) attributes {{nimble.kernel = "nms_cpu"}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = memref.dim %scores, %c0 : memref<?xf32>
  %slots = memref.dim %keep, %c0 : memref<?xi64>
  %limit = arith.subi %slots, %c1 : index
  %iou_t = memref.load %iou_threshold[%c0] : memref<1xf64>
  %score_t = memref.load %score_threshold[%c0] : memref<1xf32>
  %filter = memref.load %filtered[%c0] : memref<1xi64>
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %none = arith.constant {NONE} : i64
  %low = arith.constant 4294967295 : i64
  %f0 = arith.constant 0.0 : f32
  %d0 = arith.constant 0.0 : f64
  %d1 = arith.constant 1.0 : f64
  %i0 = arith.constant 0 : i32
  %magnitude = arith.constant 2147483647 : i32
  %nan_key = arith.constant -2147483648 : i32
  %shift = arith.constant 32 : i64
  %any_score = arith.cmpi eq, %filter, %zero : i64
  %key = loop.alloc dram (%n) : memref<?xi64>
  %x1 = loop.alloc dram (%n) : memref<?xf64>
  %y1 = loop.alloc dram (%n) : memref<?xf64>
  %x2 = loop.alloc dram (%n) : memref<?xf64>
  %y2 = loop.alloc dram (%n) : memref<?xf64>
  %area = loop.alloc dram (%n) : memref<?xf64>
  loop.foreach %j = %c0 to %n step %c1 {{
    %b0 = memref.load %boxes[%j, %c0] : memref<?x4xf32>
    %b1 = memref.load %boxes[%j, %c1] : memref<?x4xf32>
    %b2 = memref.load %boxes[%j, %c2] : memref<?x4xf32>
    %b3 = memref.load %boxes[%j, %c3] : memref<?x4xf32>
    %e0 = arith.extf %b0 : f32 to f64
    %e1 = arith.extf %b1 : f32 to f64
    %e2 = arith.extf %b2 : f32 to f64
    %e3 = arith.extf %b3 : f32 to f64
    %lx = arith.minimumf %e0, %e2 : f64
    %ly = arith.minimumf %e1, %e3 : f64
    %hx = arith.maximumf %e0, %e2 : f64
    %hy = arith.maximumf %e1, %e3 : f64
    %w = arith.subf %hx, %lx {{nimble.exact}} : f64
    %h = arith.subf %hy, %ly {{nimble.exact}} : f64
    %a = arith.mulf %w, %h {{nimble.exact}} : f64
    memref.store %lx, %x1[%j] : memref<?xf64>
    memref.store %ly, %y1[%j] : memref<?xf64>
    memref.store %hx, %x2[%j] : memref<?xf64>
    memref.store %hy, %y2[%j] : memref<?xf64>
    memref.store %a, %area[%j] : memref<?xf64>
    %s = memref.load %scores[%j] : memref<?xf32>
    %is_zero = arith.cmpf oeq, %s, %f0 : f32
    %s0 = arith.select %is_zero, %f0, %s : f32
    %bits = arith.bitcast %s0 : f32 to i32
    %negative = arith.cmpi slt, %bits, %i0 : i32
    %flipped = arith.xori %bits, %magnitude : i32
    %ordered = arith.select %negative, %flipped, %bits : i32
    %nan = arith.cmpf uno, %s, %s : f32
    %k32 = arith.select %nan, %nan_key, %ordered : i32
    %k64 = arith.extsi %k32 : i32 to i64
    %high = arith.shli %k64, %shift : i64
    %j64 = arith.index_cast %j : index to i64
    %rest = arith.subi %low, %j64 : i64
    %k = arith.ori %high, %rest : i64
    %above = arith.cmpf ogt, %s, %score_t : f32
    %candidate = arith.ori %any_score, %above : i1
    %kj = arith.select %candidate, %k, %none : i64
    memref.store %kj, %key[%j] : memref<?xi64>
    loop.yield
  }}
  memref.store %zero, %count[%c0] : memref<1xi64>
  loop.foreach %p = %c0 to %limit step %c1 {{
    %kept = memref.load %count[%c0] : memref<1xi64>
    %p64 = arith.index_cast %p : index to i64
    %going = arith.cmpi eq, %kept, %p64 : i64
    %scan = arith.select %going, %n, %c0 : index
    %best = loop.reduce %j = %c0 to %scan step %c1 combine(max) init(%none) : i64 {{
      %kj = memref.load %key[%j] : memref<?xi64>
      loop.yield %kj : i64
    }}
    %found = arith.cmpi ne, %best, %none : i64
    %bits = arith.andi %best, %low : i64
    %i64 = arith.subi %low, %bits : i64
    %i = arith.index_cast %i64 : i64 to index
    %slot = arith.select %found, %p, %limit : index
    memref.store %i64, %keep[%slot] : memref<?xi64>
    %next = arith.addi %p64, %one : i64
    %counted = arith.select %found, %next, %kept : i64
    memref.store %counted, %count[%c0] : memref<1xi64>
    %once = arith.select %found, %c1, %c0 : index
    loop.foreach %z = %c0 to %once step %c1 {{
      memref.store %none, %key[%i] : memref<?xi64>
      loop.yield
    }}
    %sweep = arith.select %found, %n, %c0 : index
    loop.foreach %j = %c0 to %sweep step %c1 {{
      %ax1 = memref.load %x1[%i] : memref<?xf64>
      %ay1 = memref.load %y1[%i] : memref<?xf64>
      %ax2 = memref.load %x2[%i] : memref<?xf64>
      %ay2 = memref.load %y2[%i] : memref<?xf64>
      %aa = memref.load %area[%i] : memref<?xf64>
      %bx1 = memref.load %x1[%j] : memref<?xf64>
      %by1 = memref.load %y1[%j] : memref<?xf64>
      %bx2 = memref.load %x2[%j] : memref<?xf64>
      %by2 = memref.load %y2[%j] : memref<?xf64>
      %ba = memref.load %area[%j] : memref<?xf64>
      %rx = arith.minimumf %ax2, %bx2 : f64
      %lx = arith.maximumf %ax1, %bx1 : f64
      %iw0 = arith.subf %rx, %lx {{nimble.exact}} : f64
      %iw = arith.maximumf %iw0, %d0 : f64
      %ry = arith.minimumf %ay2, %by2 : f64
      %ly = arith.maximumf %ay1, %by1 : f64
      %ih0 = arith.subf %ry, %ly {{nimble.exact}} : f64
      %ih = arith.maximumf %ih0, %d0 : f64
      %inter = arith.mulf %iw, %ih {{nimble.exact}} : f64
      %both = arith.addf %aa, %ba {{nimble.exact}} : f64
      %union = arith.subf %both, %inter {{nimble.exact}} : f64
      %positive = arith.cmpf ogt, %union, %d0 : f64
      %divisor = arith.select %positive, %union, %d1 : f64
      %ratio = arith.divf %inter, %divisor {{nimble.exact}} : f64
      %iou = arith.select %positive, %ratio, %d0 : f64
      %over = arith.cmpf ogt, %iou, %iou_t : f64
      %kj = memref.load %key[%j] : memref<?xi64>
      %left = arith.select %over, %none, %kj : i64
      memref.store %left, %key[%j] : memref<?xi64>
      loop.yield
    }}
    loop.yield
  }}
  func.return
}}
"""

_KERNEL: list[Any] = []  # the compiled kernel, made on first use


def _kernel() -> Any:
    if not _KERNEL:
        from nimble.compile import compile_kernels

        _KERNEL.append(compile_kernels(NMS_KERNEL)["nms_cpu"])
    return _KERNEL[0]


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float, score_threshold: float | None,
        max_output: int | None) -> np.ndarray:
    """The kept indices by descending score (int64), as `graph.nms`'s reference."""
    n = scores.shape[0]
    limit = n if max_output is None else max(0, min(n, int(max_output)))
    keep = np.empty(limit + 1, np.int64)  # the last slot takes the stores of picks that find nothing
    count = np.zeros(1, np.int64)
    # The threshold compares in f32, as numpy compares an f32 array with a Python float.
    threshold = np.array([0.0 if score_threshold is None else score_threshold], np.float32)
    _kernel()(np.ascontiguousarray(boxes), np.ascontiguousarray(scores), np.array([iou_threshold], np.float64),
              threshold, np.array([score_threshold is not None], np.int64), keep, count)
    return keep[:count[0]].copy()


def _nms_op(op: Any, args: list[Any]) -> list[Any] | None:
    boxes, scores = args
    if not (isinstance(boxes, np.ndarray) and isinstance(scores, np.ndarray) and boxes.dtype == np.float32
            and scores.dtype == np.float32 and boxes.shape == (scores.shape[0], 4)):
        return None  # not host f32 arrays of these shapes (as `cpu_op` checked the types)
    score_threshold = op.score_threshold.value.data if op.score_threshold is not None else None
    max_output = op.max_output.value.data if op.max_output is not None else None
    return [nms(boxes, scores, op.iou_threshold.value.data, score_threshold, max_output)]


def cpu_op(op: Any) -> Callable[[Any, list[Any]], list[Any] | None] | None:
    """The compiled CPU implementation of `op` here, `run(op, args)`, when there is one for
    its kind and operand types (f32 tensors); `run` returns None for arguments it does not
    take. None otherwise: the reference runs it (listed by `Executable.fallbacks`)."""
    from xdsl.dialects.builtin import Float32Type, TensorType

    from nimble.dialects.graph.vision import NmsOp

    run = {NmsOp: _nms_op}.get(type(op))
    if run is None or not all(isinstance(v.type, TensorType) and isinstance(v.type.element_type, Float32Type)
                              for v in op.operands):
        return None
    return run
