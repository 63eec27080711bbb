"""ONNX control flow as graph control flow: `If` becomes `graph.if`.

Each branch (a graph without inputs that may read any value of the enclosing scopes by
name) is imported into its region; the results take the least static type both
branches' outputs conform to (a dim on which they differ is `?`).
"""

from __future__ import annotations

from xdsl.ir import Region, SSAValue

from nimble.dialects import graph
from nimble.dialects.graph.types import join_types
from nimble.frontend.onnx.common import OnnxImportError


def if_(b, n, xs, a):
    cond = xs[0]
    then_block, then_outs = b.subgraph(a["then_branch"], "then_branch")
    else_block, else_outs = b.subgraph(a["else_branch"], "else_branch")
    if len(then_outs) != len(else_outs) or len(then_outs) != len(n.output):
        raise OnnxImportError(f"{b.where()}: the branches give {len(then_outs)} and {len(else_outs)} outputs, "
                              f"the node {len(n.output)}")
    types = []
    for k, (x, y) in enumerate(zip(then_outs, else_outs)):
        joined = join_types(x.type, y.type)
        if joined is None:
            raise OnnxImportError(f"{b.where()}: output #{k} is {x.type} in then_branch but {y.type} in else_branch")
        types.append(joined)
    then_block.add_op(graph.YieldOp(_conform(then_block, then_outs, types)))
    else_block.add_op(graph.YieldOp(_conform(else_block, else_outs, types)))
    op = b.emit(graph.IfOp(cond, types, Region(then_block), Region(else_block)))
    return list(op.results)


def _conform(block, values: list[SSAValue], types) -> list[SSAValue]:
    """Values relaxed to the (less static) result types."""
    out = []
    for v, t in zip(values, types):
        if v.type != t:
            cast = graph.CastOp.create(operands=[v], result_types=[t])
            block.add_op(cast)
            v = cast.results[0]
        out.append(v)
    return out
