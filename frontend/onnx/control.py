"""ONNX control flow as graph control flow: `If` becomes `graph.if`, `Loop` and `Scan`
a `graph.while`.

Subgraphs read any value of the enclosing scopes by name. An `If` whose condition is
known at import is the branch taken, imported in its place; otherwise its branches are
imported into its regions; each result takes the least static type both branches'
outputs conform to (a dim on which they differ is `?`).

A `Loop` carries an `index` counter, the same count as an int64 tensor (for the trip
count test and for bodies that compute with it), the condition, the loop-carried values
and one stack per scan output. The body sees the iteration number both as a tensor and
as a dim (so `Slice`s at it are slices with run-time bounds); each step appends its
scan outputs along a new leading axis (when a scan output's shape is known only at run
time, the first step starts its stack). A carried value
whose shape changes between iterations gets `?` dims (the body is imported again with
the relaxed types).

A `Scan` is the same loop over the leading axis of its scan inputs: the body gets each
step's slices and the states; its scan outputs are stacked the same way (other scan
axes and reverse directions are reported as unsupported).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerType, TensorType, i64
from xdsl.ir import Block, Region, SSAValue

from nimble.dialects import arith
from nimble.dialects import graph, dynshape
from nimble.dialects.graph.slice import END
from nimble.dialects.graph.types import join_types, numpy_dtype
from nimble.frontend.onnx.common import OnnxImportError, conform
from nimble.frontend.onnx.shapes import Sym


def if_(b, n, xs, a):
    cond = xs[0]
    if n.input[0] in b.constants:  # known at import (a rank test in a function body): the branch taken only
        taken = "then_branch" if bool(np.asarray(b.constants[n.input[0]]).reshape(())) else "else_branch"
        _, outs = b.subgraph(a[taken], taken, block=b.block)
        if len(outs) != len(n.output):
            raise OnnxImportError(f"{b.where()}: {taken} gives {len(outs)} outputs, the node {len(n.output)}")
        return outs
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
    outer = b.block
    for block, outs in ((then_block, then_outs), (else_block, else_outs)):
        b.block = block
        b.emit(graph.YieldOp(conform(b, outs, types)))
    b.block = outer
    op = b.emit(graph.IfOp(cond, types, Region(then_block), Region(else_block)))
    return list(op.results)


BOOL = TensorType(IntegerType(1), [])
COUNT = TensorType(i64, [])


def loop(b, n, xs, a):
    body = a["body"]
    trips = xs[0] if len(xs) > 0 else None
    cond = xs[1] if len(xs) > 1 and xs[1] is not None else b.const(np.array(True))
    inits = list(xs[2:])
    scans = len(body.output) - 1 - len(inits)
    if scans < 0:
        raise OnnxImportError(f"{b.where()}: the body gives {len(body.output)} outputs for {len(inits)} carried values")
    types, outs = _settle(b, "carried value", [v.type for v in inits], 1,
                          lambda types: _loop_body(b, body, types, [], None)[0])
    scan_types = [o.type for o in outs[1 + len(inits):]]
    for k, t in enumerate(scan_types):
        if not isinstance(t, TensorType):
            raise OnnxImportError(f"{b.where()}: scan output #{k} has the type {t}, not a tensor")
    stacks = [TensorType(t.element_type, [DYNAMIC_INDEX, *t.get_shape()]) for t in scan_types]
    carried = [IndexType(), COUNT, BOOL, *types, *stacks]
    cond_block, body_block = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    b.block = cond_block
    more = cond_block.args[2]
    if trips is not None:
        more = b.op(graph.AndOp, [b.op(graph.LessOp, [cond_block.args[1], trips]), more])
    b.emit(graph.ConditionOp.create(operands=[more]))
    b.block = outer
    _loop_body(b, body, types, stacks, body_block)
    # An empty stack: known dims as they are, run-time dims 0 (the first step replaces it).
    starts = [b.const(np.zeros((0, *(max(d, 0) for d in t.get_shape())), numpy_dtype(t.element_type))) for t in scan_types]
    zero = b.const(np.array(0, np.int64))
    op = b.emit(graph.WhileOp([b.index(0), zero, _boolean(b, cond),
                               *conform(b, inits, types), *conform(b, starts, stacks)],
                              carried, Region(cond_block), Region(body_block)))
    return list(op.results[3:])


def _settle(b, what: str, types: list, first: int, outputs_of) -> tuple[list, list[SSAValue]]:
    """The carried types of a loop whose body is imported by `outputs_of(types)` (its
    carried outputs start at `first`): each relaxed until a step keeps it (a dim that
    changes becomes `?`), and the body's outputs with them."""
    while True:
        outs = outputs_of(types)
        relaxed = [join_types(t, o.type) for t, o in zip(types, outs[first:first + len(types)])]
        if None in relaxed:
            k = relaxed.index(None)
            raise OnnxImportError(f"{b.where()}: {what} #{k} is {types[k]} before the loop but "
                                  f"{outs[first + k].type} after a step")
        if relaxed == types:
            return types, outs
        types = relaxed


def _loop_body(b, body, types, stacks, block) -> tuple[list[SSAValue], list[SSAValue]]:
    """Import the body into `block` (or a scratch block, to learn its output types):
    its outputs, and the values it yields (none for a scratch block)."""
    carried = [IndexType(), COUNT, BOOL, *types, *stacks]
    target = block if block is not None else Block(arg_types=carried)
    i, count, cond, *rest = target.args
    values = rest[:len(types)]
    outer = b.block
    _, outs = b.subgraph(body, "the Loop body", target, [count, cond, *values], {0: Sym([i], True)})
    if block is None:
        return outs, []
    b.block = target
    cond_out = _boolean(b, outs[0])
    v_out = conform(b, outs[1:1 + len(types)], types)
    stacked = [_stack(b, i, acc, s, t) for acc, s, t in zip(rest[len(types):], outs[1 + len(types):], stacks)]
    one = b.const(np.array(1, np.int64))
    following = [b.emit(arith.AddiOp(i, b.index(1))).result, b.op(graph.AddOp, [count, one]), cond_out, *v_out,
                 *conform(b, stacked, stacks)]
    b.emit(graph.YieldOp(following))
    b.block = outer
    return outs, following


def _stack(b, i: SSAValue, acc: SSAValue, step: SSAValue, t: TensorType) -> SSAValue:
    """`acc` with `step` appended as a new row. When the step's shape is known only at
    run time, the empty stack carried in cannot have it: the first step starts the
    stack instead (a `graph.if` on the counter)."""
    row = b.op(graph.UnsqueezeOp, [step], axes=[0])
    if all(d >= 0 for d in step.type.get_shape()):
        return b.op(graph.ConcatOp, [acc, row], axis=0)
    first = b.emit(arith.CmpiOp(i, b.index(0), "eq")).result
    outer = b.block
    then_block, else_block = Block(), Block()
    b.block = then_block
    b.emit(graph.YieldOp(conform(b, [row], [t])))
    b.block = else_block
    b.emit(graph.YieldOp(conform(b, [b.op(graph.ConcatOp, [acc, row], axis=0)], [t])))
    b.block = outer
    return b.emit(graph.IfOp(first, [t], Region(then_block), Region(else_block))).results[0]


def _boolean(b, v: SSAValue) -> SSAValue:
    """A one-element condition as `tensor<i1>`."""
    if v.type == BOOL:
        return v
    return b.op(graph.ReshapeOp, [v], shape=[])


def scan(b, n, xs, a):
    body = a["body"]
    m = a.get("num_scan_inputs", 0)
    unsupported = [k for k in ("scan_input_axes", "scan_input_directions", "scan_output_axes",
                               "scan_output_directions") if any(a.get(k, []))]
    if unsupported:
        raise OnnxImportError(f"{b.where()}: {', '.join(unsupported)} other than 0 not supported")
    inits, inputs = list(xs[:len(xs) - m]), list(xs[len(xs) - m:])
    if not inputs:
        raise OnnxImportError(f"{b.where()}: a Scan without scan inputs")
    types, outs = _settle(b, "state", [v.type for v in inits], 0,
                          lambda types: _scan_body(b, body, inputs, types, [], None)[0])
    scan_types = [o.type for o in outs[len(inits):]]
    stacks = [TensorType(t.element_type, [DYNAMIC_INDEX, *t.get_shape()]) for t in scan_types]
    carried = [IndexType(), *types, *stacks]
    cond_block, body_block = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    steps = b.emit(dynshape.DimOp(inputs[0], 0)).result
    b.block = cond_block
    b.emit(graph.ConditionOp.create(operands=[b.emit(arith.CmpiOp(cond_block.args[0], steps, "slt")).result]))
    b.block = outer
    _scan_body(b, body, inputs, types, stacks, body_block)
    starts = [b.const(np.zeros((0, *(max(d, 0) for d in t.get_shape())), numpy_dtype(t.element_type))) for t in scan_types]
    op = b.emit(graph.WhileOp([b.index(0), *conform(b, inits, types), *conform(b, starts, stacks)],
                              carried, Region(cond_block), Region(body_block)))
    return list(op.results[1:])


def _scan_body(b, body, inputs, types, stacks, block) -> tuple[list[SSAValue], list[SSAValue]]:
    """Like `_loop_body`, for a Scan: the body reads row i of every scan input."""
    carried = [IndexType(), *types, *stacks]
    target = block if block is not None else Block(arg_types=carried)
    i, *rest = target.args
    outer = b.block
    b.block = target
    after = b.emit(arith.AddiOp(i, b.index(1))).result
    rows = []
    for x in inputs:
        rank = len(x.type.get_shape())
        row_type = TensorType(x.type.element_type, [1, *x.type.get_shape()[1:]])
        row = b.emit(graph.SliceOp(x, [i] + [0] * (rank - 1), [after] + [END] * (rank - 1), [1] * rank,
                                   row_type)).results[0]
        rows.append(b.op(graph.SqueezeOp, [row], axes=[0]))
    b.block = outer
    _, outs = b.subgraph(body, "the Scan body", target, [*rest[:len(types)], *rows])
    if block is None:
        return outs, []
    b.block = target
    states = conform(b, outs[:len(types)], types)
    stacked = [_stack(b, i, acc, s, t) for acc, s, t in zip(rest[len(types):], outs[len(types):], stacks)]
    following = [after, *states, *conform(b, stacked, stacks)]
    b.emit(graph.YieldOp(following))
    b.block = outer
    return outs, following
