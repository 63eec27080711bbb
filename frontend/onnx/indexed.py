"""Converters of ONNX's ops that address elements through index tensors: ScatterElements
(and Scatter, its older name), ScatterND, GatherND and OneHot, onto
`graph.scatter_elements`, `graph.scatter_nd` (whose index rows are ScatterND's leading
index dims flattened: reshaped here when there are several), `graph.gather_nd` and
`graph.one_hot`."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i64

from nimble.dialects import graph
from nimble.frontend.onnx.common import OnnxImportError


def _reduction(b, a) -> str:
    kind = a.get("reduction", b"none")
    return kind.decode() if isinstance(kind, bytes) else kind


def scatter_elements(b, n, xs, a):
    return [b.op(graph.ScatterElementsOp, xs[:3], axis=a.get("axis", 0), reduction=_reduction(b, a))]


def scatter_nd(b, n, xs, a):
    data, indices, updates = xs[:3]
    shape = indices.type.get_shape()
    depth = shape[-1] if shape else -1
    if depth < 0:
        raise OnnxImportError(f"{b.where()}: the last dim of the indices (the index length) must be static")
    if len(shape) != 2:  # rows: the leading index dims flattened
        indices = b.op(graph.ReshapeOp, [indices], shape=[-1, depth])
        tail = list(data.type.get_shape()[depth:])
        if any(d < 0 for d in tail):
            raise OnnxImportError(f"{b.where()}: with {len(shape) - 1} leading index dims, the data's dims from "
                                  f"{depth} on must be static")
        updates = b.op(graph.ReshapeOp, [updates], shape=[-1, *tail])
    return [b.op(graph.ScatterNDOp, [data, indices, updates], reduction=_reduction(b, a))]


def gather_nd(b, n, xs, a):
    return [b.op(graph.GatherNDOp, xs[:2], batch_dims=a.get("batch_dims", 0))]


def one_hot(b, n, xs, a):
    """ONNX's depth is a tensor input (a constant here: it sizes the result); indices of
    any number type (floats truncated) and values [off, on]."""
    depth = int(np.asarray(b.static(n.input[1], "OneHot's depth")).reshape(-1)[0])
    indices = xs[0]
    if indices.type.element_type != i64:
        indices = b.op(graph.CastOp, [indices], i64)
    return [b.op(graph.OneHotOp, [indices, xs[2]], depth=depth, axis=a.get("axis", -1))]


CONVERTERS = {"ScatterElements": scatter_elements, "Scatter": scatter_elements, "ScatterND": scatter_nd,
              "GatherND": gather_nd, "OneHot": one_hot}
