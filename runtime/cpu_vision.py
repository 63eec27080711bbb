"""Vision operators that are not loop nests, run on the CPU by their compiled kernels:
non-maximum suppression.

`graph.nms` on the CPU (no device placed it), f32 boxes and scores, runs the kernel the
compiler added for it (`lowering/vm/native_kernels.py`: `nms_cpu`, a greedy selection in
machine code), compiled with the module's other kernels and saved with them: the VM
binds it to the op's host function (`device.native_kernel`) as a `NativeKernel`, checked
against the arguments it takes (`NMS_ABI`), and `nms` calls it. Other inputs, or a host
function without a kernel, run the reference (`cpu_op`: None).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nimble.dialects.graph.vision import NmsOp
from nimble.runtime.bytecode import BytecodeError, Kernel, dtype_of
from nimble.runtime.kernels import ArrayKernel

NMS_ABI = [("f32", (-1, 4)), ("f32", (-1,)), ("f64", (1,)), ("f32", (1,)), ("i64", (1,)), ("i64", (-1,)),
           ("i64", (1,))]
"""`nms_cpu`'s arguments: boxes, scores, the IoU threshold, the score threshold, whether
it filters (0 or 1), the kept indices (one slot more than can be kept) and their count."""
ABIS = {NmsOp: NMS_ABI}
"""Per op class: the arguments of its kernel."""


class NativeKernel(ArrayKernel):
    """A host op's compiled kernel (`device.NATIVE_KERNEL`), called on numpy arrays: one
    per argument of its ABI (`Kernel.abi`: buffers only)."""

    def __init__(self, kernel: Kernel, address: Callable[[], int], checked: bool = False):
        if any(a is None for a in kernel.abi):
            raise BytecodeError(f"kernel '{kernel.name}' implements a host op: it takes buffers only")
        self.abi = [(dtype, tuple(-1 if d < 0 else d for d in dims)) for dtype, dims in kernel.abi]
        super().__init__(kernel.name, [(dtype_of(dtype), dims) for dtype, dims in self.abi],
                         [f"{dtype}{list(dims)}" for dtype, dims in self.abi], address, checked)

    def fits(self, op: Any) -> bool:
        """Whether it takes the arguments of `op`'s kernel (`ABIS`)."""
        return ABIS.get(type(op)) == self.abi


def nms(kernel: Callable[..., None], boxes: np.ndarray, scores: np.ndarray, iou_threshold: float,
        score_threshold: float | None, max_output: int | None) -> np.ndarray:
    """The kept indices by descending score (int64), as `graph.nms`'s reference, by
    `kernel` (`nms_cpu`, taking `NMS_ABI`)."""
    n = scores.shape[0]
    limit = n if max_output is None else max(0, min(n, int(max_output)))
    keep = np.empty(limit + 1, np.int64)  # the last slot takes the stores of picks that find nothing
    count = np.zeros(1, np.int64)
    # The threshold compares in f32, as numpy compares an f32 array with a Python float.
    threshold = np.array([0.0 if score_threshold is None else score_threshold], np.float32)
    kernel(np.ascontiguousarray(boxes), np.ascontiguousarray(scores), np.array([iou_threshold], np.float64),
           threshold, np.array([score_threshold is not None], np.int64), keep, count)
    return keep[:count[0]].copy()


def cpu_op(op: Any, kernel: NativeKernel | None) -> Callable[[Any, list[Any]], list[Any] | None] | None:
    """The compiled CPU implementation of `op` by its `kernel`, `run(op, args)`; `run`
    returns None for arguments it does not take. None without a kernel that fits: the
    reference runs it (listed by `Executable.fallbacks`)."""
    if kernel is None:
        return None

    def run(op: Any, args: list[Any]) -> list[Any] | None:
        boxes, scores = args
        if not (isinstance(boxes, np.ndarray) and isinstance(scores, np.ndarray) and boxes.dtype == np.float32
                and scores.dtype == np.float32 and boxes.shape == (scores.shape[0], 4)):
            return None  # not host f32 arrays of these shapes
        score_threshold = op.score_threshold.value.data if op.score_threshold is not None else None
        max_output = op.max_output.value.data if op.max_output is not None else None
        return [nms(kernel, boxes, scores, op.iou_threshold.value.data, score_threshold, max_output)]
    return run
