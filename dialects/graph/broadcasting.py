"""Where numpy broadcasting may stretch a `?` dim: what a kernel's `no_stretch` variant
assumes away and its launch checks (`manifest-alloc`, `lower-graph-to-loops`, the VM)."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from nimble.dialects.graph.elementwise import ElementwiseBinaryOp, WhereOp
from nimble.dialects.graph.layout import BroadcastToOp
from nimble.dialects.graph.linalg import MatmulOp

BROADCASTING = (ElementwiseBinaryOp, WhereOp, BroadcastToOp)
"""The ops whose tensor operands broadcast to the result by numpy's rules (matmul's
batch dims apart)."""


def broadcast_sites(op: Operation) -> list[tuple[SSAValue, int, SSAValue, int]]:
    """(operand, axis, result, axis) pairs where a `?` operand dim may be stretched
    (a 1 broadcast to the result's size) by numpy broadcasting in `op`. The
    `no_stretch` kernel variant assumes none is; its caller checks that before use."""
    if isinstance(op, MatmulOp):
        result = op.result
        rank = len(result.type.get_shape())
        out_batch = rank - (len(op.lhs.type.get_shape()) > 1) - (len(op.rhs.type.get_shape()) > 1)
        sites = []
        for operand in (op.lhs, op.rhs):
            batch = operand.type.get_shape()[:-2]
            for j, d in enumerate(batch):
                if d < 0:
                    sites.append((operand, j, result, out_batch - len(batch) + j))
        return sites
    if not isinstance(op, BROADCASTING):
        return []
    tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
    if len(tensors) < 2 and not isinstance(op, BroadcastToOp):
        return []  # one operand: its shape is the result's, nothing stretches
    result = op.results[0]
    rank = len(result.type.get_shape())
    sites = []
    for operand in tensors:
        shape = operand.type.get_shape()
        for j, d in enumerate(shape):
            if d < 0:
                sites.append((operand, j, result, rank - len(shape) + j))
    return sites
