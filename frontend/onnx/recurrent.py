"""Recurrent ONNX ops as loops over their cells."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from nimble.dialects import graph, shape
from nimble.dialects.graph.slice import END
from nimble.frontend.onnx.common import OnnxImportError


def lstm(b, n, xs, a):
    """A forward LSTM as a `graph.while` over the time steps: the input projection of all
    steps is one matmul before the loop; the loop body is the cell (recurrent matmul,
    gates, state update), which `fuse-ops` fuses into one kernel."""
    unsupported = [k for k in ("activations", "clip", "input_forget") if a.get(k)]
    if a.get("direction", b"forward") not in (b"forward", "forward"):
        unsupported.append(f"direction {a['direction']!r}")
    if a.get("layout", 0):
        unsupported.append("layout=1")
    optional = {name: xs[k] if len(xs) > k else None for k, name in ((3, "B"), (4, "sequence_lens"), (5, "initial_h"),
                                                                    (6, "initial_c"), (7, "P"))}
    if optional["sequence_lens"] is not None:
        unsupported.append("sequence_lens")
    if optional["P"] is not None:
        unsupported.append("peepholes (P)")
    if unsupported:
        raise OnnxImportError(f"{b.where()}: {', '.join(unsupported)} not supported")
    x, w, r = xs[0], xs[1], xs[2]
    hidden = a.get("hidden_size", r.type.get_shape()[-1])
    t = x.type.element_type
    first = lambda v: b.op(graph.SqueezeOp, [v], axes=[0])  # noqa: E731 (drop the direction axis)
    w_t = b.op(graph.TransposeOp, [first(w)], perm=[1, 0])  # [input, 4h]
    r_t = b.op(graph.TransposeOp, [first(r)], perm=[1, 0])  # [hidden, 4h]
    projected = b.op(graph.MatmulOp, [x, w_t])  # [T, batch, 4h], all steps at once
    if optional["B"] is not None:
        wb, rb = b.op(graph.SplitOp, [first(optional["B"])], axis=0, num=2)
        projected = b.op(graph.AddOp, [projected, b.op(graph.AddOp, [wb, rb])])
    steps = b.emit(shape.DimOp(x, 0)).result
    batch = b.emit(shape.DimOp(x, 1)).result
    state_shape = b.emit(shape.FromDimsOp([batch, b.index(hidden)])).result
    states = [first(optional[k]) if optional[k] is not None else b.op(graph.ZerosOp, [state_shape], t)
              for k in ("initial_h", "initial_c")]
    none_yet = b.op(graph.ZerosOp, [b.emit(shape.FromDimsOp([b.index(0), batch, b.index(hidden)])).result], t)
    state_type = TensorType(t, [x.type.get_shape()[1], hidden])
    ys_type = TensorType(t, [DYNAMIC_INDEX, x.type.get_shape()[1], hidden])
    carried = [IndexType(), state_type, state_type, ys_type]
    cond, body = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    b.block = cond
    more = b.emit(arith.CmpiOp(cond.args[0], steps, "slt")).result
    b.emit(graph.ConditionOp.create(operands=[more]))
    b.block = body
    i, h, c, ys = body.args
    next_i = b.emit(arith.AddiOp(i, b.index(1))).result
    step_type = TensorType(t, [1, *projected.type.get_shape()[1:]])
    row = b.emit(graph.SliceOp(projected, [i, 0, 0], [next_i, END, END], [1, 1, 1], step_type)).results[0]
    gates = b.op(graph.AddOp, [first(row), b.op(graph.MatmulOp, [h, r_t])])
    gi, go, gf, gc = b.op(graph.SplitOp, [gates], axis=1, num=4)
    sig = lambda v: b.op(graph.SigmoidOp, [v])  # noqa: E731
    tanh = lambda v: b.op(graph.TanhOp, [v])  # noqa: E731
    c_next = b.op(graph.AddOp, [b.op(graph.MulOp, [sig(gf), c]), b.op(graph.MulOp, [sig(gi), tanh(gc)])])
    h_next = b.op(graph.MulOp, [sig(go), tanh(c_next)])
    ys_next = b.op(graph.ConcatOp, [ys, b.op(graph.UnsqueezeOp, [h_next], axes=[0])], axis=0)
    b.emit(graph.YieldOp([next_i, *_conform(b, [h_next, c_next, ys_next], carried[1:])]))
    b.block = outer
    loop_op = b.emit(graph.WhileOp([b.index(0), *_conform(b, [*states, none_yet], carried[1:])], carried,
                                   Region(cond), Region(body)))
    _, h_last, c_last, ys_all = loop_op.results
    y = b.op(graph.UnsqueezeOp, [ys_all], axes=[1])  # [T, directions=1, batch, hidden]
    unsqueeze0 = lambda v: b.op(graph.UnsqueezeOp, [v], axes=[0])  # noqa: E731
    return [y, unsqueeze0(h_last), unsqueeze0(c_last)]


def _conform(b, values: list[SSAValue], types: Sequence[Attribute]) -> list[SSAValue]:
    """Values relaxed to the (less static) carried types of a loop."""
    out = []
    for v, t in zip(values, types):
        if v.type != t:
            v = b.emit(graph.CastOp.create(operands=[v], result_types=[t])).results[0]
        out.append(v)
    return out
