"""`Resize` as gathers along each resized axis.

ONNX's Resize is separable and, for one axis of a static length, linear in the data
(affine where `tf_crop_and_resize` extrapolates): output row `o` is a weighted sum of
a few input rows (1 for nearest, 2 for linear, 4 for cubic, more when antialiasing).
The weights come from ONNX's own reference implementation run on the identity matrix
(one column per input row), so every mode, coordinate transformation and rounding rule
means exactly what the ONNX reference says; the graph then holds, per resized axis,
`sum_t gather(x, rows_t, axis) * weights_t` (a single gather for nearest).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nimble.dialects import graph
from nimble.frontend.onnx.common import OnnxImportError, dtype_of, onnx_package, rank_of


def _axis_matrix(attributes: dict, size: int, scale: float | None, out: int | None,
                 roi: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """(M, b): resizing a vector of `size` along its only axis is `M @ v + b`."""
    onnx = onnx_package()
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    inputs = ["x", "roi" if roi is not None else "", "scales" if out is None else ""]
    if out is not None:
        inputs.append("sizes")
    node = helper.make_node("Resize", inputs, ["y"], **attributes)
    graph = helper.make_graph([node], "axis", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)], [
        *([onnx.numpy_helper.from_array(np.array([roi[0], 0, roi[1], 1], np.float64), "roi")] if roi else []),
        *([onnx.numpy_helper.from_array(np.array([scale, 1], np.float32), "scales")] if out is None else []),
        *([onnx.numpy_helper.from_array(np.array([out, size], np.int64), "sizes")] if out is not None else []),
    ])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    run = ReferenceEvaluator(model)
    identity = np.eye(size)  # column i: the output when input row i is 1 and others 0
    offset = run.run(None, {"x": np.zeros((size, size))})[0][:, 0]
    matrix = run.run(None, {"x": identity})[0] - offset[:, None]
    matrix[np.abs(matrix) < 1e-12] = 0  # rounding noise of the reference is not a tap
    return matrix, offset


def _weighted_rows(b, x: SSAValue, axis: int, matrix: np.ndarray, offset: np.ndarray) -> SSAValue:
    rank = rank_of(x)
    dtype = dtype_of(x)
    taps = max(int(np.count_nonzero(r)) for r in matrix) or 1
    rows = np.zeros((taps, matrix.shape[0]), np.int64)
    weights = np.zeros((taps, matrix.shape[0]))
    for o, row in enumerate(matrix):
        nonzero = np.flatnonzero(row)
        rows[:len(nonzero), o], weights[:len(nonzero), o] = nonzero, row[nonzero]
    along = [matrix.shape[0]] + [1] * (rank - 1 - axis)  # broadcast along the axis
    result = None
    for t in range(taps):
        picked = b.op(graph.GatherOp, [x, b.const(rows[t])], axis=axis)
        if not np.all(weights[t] == 1):
            picked = b.op(graph.MulOp, [picked, b.const(weights[t].astype(dtype).reshape(along))])
        result = picked if result is None else b.op(graph.AddOp, [result, picked])
    if np.any(offset != 0):
        result = b.op(graph.AddOp, [result, b.const(offset.astype(dtype).reshape(along))])
    return result


def _optional(b, n, k: int, what: str) -> np.ndarray | None:
    """Constant input `k`, None when absent or empty (opset 13 passes empty scales)."""
    if len(n.input) <= k or not n.input[k]:
        return None
    value = b.static(n.input[k], what)
    return value if value.size else None


def resize(b, n, xs, a):
    x = xs[0]
    rank = rank_of(x)
    if a.get("keep_aspect_ratio_policy", b"stretch") not in (b"stretch", "stretch"):
        raise OnnxImportError(f"{b.where()}: keep_aspect_ratio_policy other than 'stretch' is not supported")
    axes = [int(v) % rank for v in a.get("axes", range(rank))]
    roi, scales, sizes = (_optional(b, n, k, f"Resize's {what}") for k, what in ((1, "roi"), (2, "scales"),
                                                                                 (3, "sizes")))
    if scales is None and sizes is None:
        raise OnnxImportError(f"{b.where()}: Resize needs scales or sizes")
    attributes = {k: v for k, v in a.items() if k not in ("axes", "keep_aspect_ratio_policy")}
    dims = x.type.get_shape()
    for k, axis in enumerate(axes):
        scale = None if scales is None else float(scales[k])
        out = None if sizes is None else int(sizes[k])
        if (scale == 1.0 or out == dims[axis]) and roi is None:
            continue
        if dims[axis] < 0:
            raise OnnxImportError(f"{b.where()}: resizing dim {axis}, known only at run time, is not supported")
        box = (float(roi[k]), float(roi[len(axes) + k])) if roi is not None else None
        try:
            matrix, offset = _axis_matrix(attributes, dims[axis], scale, out, box)
        except Exception as e:  # noqa: BLE001 (the reference rejects bad attributes in many ways)
            raise OnnxImportError(f"{b.where()}: {type(e).__name__}: {e}") from None
        x = _weighted_rows(b, x, axis, matrix, offset)
    return [x]
