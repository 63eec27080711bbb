"""Recurrent ONNX ops as loops over their cells."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from nimble.dialects import graph, shape
from nimble.dialects.graph.slice import END
from nimble.frontend.onnx.common import OnnxImportError, scalar


def _check(b, a, optional: dict[str, Any], extra: Sequence[str] = ()) -> None:
    unsupported = [k for k in ("activations", "clip", *extra) if a.get(k)]
    if a.get("direction", b"forward") not in (b"forward", "forward"):
        unsupported.append(f"direction {a['direction']!r}")
    if a.get("layout", 0):
        unsupported.append("layout=1")
    if optional.get("sequence_lens") is not None:
        unsupported.append("sequence_lens")
    if optional.get("P") is not None:
        unsupported.append("peepholes (P)")
    if unsupported:
        raise OnnxImportError(f"{b.where()}: {', '.join(unsupported)} not supported")


def _optional(xs, names: Sequence[str]) -> dict[str, Any]:
    return {name: xs[k] if len(xs) > k else None for k, name in enumerate(names, start=3)}


def _first(b, v: SSAValue) -> SSAValue:
    return b.op(graph.SqueezeOp, [v], axes=[0])  # drop the direction axis


def _t(b, v: SSAValue) -> SSAValue:
    return b.op(graph.TransposeOp, [v], perm=[1, 0])


def _recurrence(b, x: SSAValue, projected: SSAValue, initial: list[SSAValue | None], hidden: int,
                cell: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> tuple[SSAValue, list[SSAValue]]:
    """A `graph.while` over the time steps of `x` carrying the states (the first is the
    output `h`) and every step's `h`; `cell(projected row, states)` gives the next
    states. Returns all steps' `h` [T, 1, batch, hidden] and the last states."""
    t = x.type.element_type
    steps = b.emit(shape.DimOp(x, 0)).result
    batch = b.emit(shape.DimOp(x, 1)).result
    state_shape = b.emit(shape.FromDimsOp([batch, b.index(hidden)])).result
    states = [_first(b, v) if v is not None else b.op(graph.ZerosOp, [state_shape], t) for v in initial]
    none_yet = b.op(graph.ZerosOp, [b.emit(shape.FromDimsOp([b.index(0), batch, b.index(hidden)])).result], t)
    state_type = TensorType(t, [x.type.get_shape()[1], hidden])
    ys_type = TensorType(t, [DYNAMIC_INDEX, x.type.get_shape()[1], hidden])
    carried = [IndexType(), *[state_type] * len(states), ys_type]
    cond, body = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    b.block = cond
    more = b.emit(arith.CmpiOp(cond.args[0], steps, "slt")).result
    b.emit(graph.ConditionOp.create(operands=[more]))
    b.block = body
    i, *current, ys = body.args
    next_i = b.emit(arith.AddiOp(i, b.index(1))).result
    step_type = TensorType(t, [1, *projected.type.get_shape()[1:]])
    row = b.emit(graph.SliceOp(projected, [i, 0, 0], [next_i, END, END], [1, 1, 1], step_type)).results[0]
    following = cell(_first(b, row), list(current))
    ys_next = b.op(graph.ConcatOp, [ys, b.op(graph.UnsqueezeOp, [following[0]], axes=[0])], axis=0)
    b.emit(graph.YieldOp([next_i, *_conform(b, [*following, ys_next], carried[1:])]))
    b.block = outer
    loop_op = b.emit(graph.WhileOp([b.index(0), *_conform(b, [*states, none_yet], carried[1:])], carried,
                                   Region(cond), Region(body)))
    _, *last, ys_all = loop_op.results
    return b.op(graph.UnsqueezeOp, [ys_all], axes=[1]), last


def _outputs(b, y: SSAValue, last: list[SSAValue]) -> list[SSAValue]:
    return [y, *(b.op(graph.UnsqueezeOp, [v], axes=[0]) for v in last)]


def lstm(b, n, xs, a):
    """A forward LSTM as a `graph.while` over the time steps: the input projection of all
    steps is one matmul before the loop; the loop body is the cell (recurrent matmul,
    gates, state update), which `fuse-ops` fuses into one kernel."""
    optional = _optional(xs, ("B", "sequence_lens", "initial_h", "initial_c", "P"))
    _check(b, a, optional, ("input_forget",))
    x, w, r = xs[0], xs[1], xs[2]
    hidden = a.get("hidden_size", r.type.get_shape()[-1])
    r_t = _t(b, _first(b, r))  # [hidden, 4h]
    projected = b.op(graph.MatmulOp, [x, _t(b, _first(b, w))])  # [T, batch, 4h], all steps at once
    if optional["B"] is not None:
        wb, rb = b.op(graph.SplitOp, [_first(b, optional["B"])], axis=0, num=2)
        projected = b.op(graph.AddOp, [projected, b.op(graph.AddOp, [wb, rb])])

    def cell(xp: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
        h, c = states
        gi, go, gf, gc = b.op(graph.SplitOp, [b.op(graph.AddOp, [xp, b.op(graph.MatmulOp, [h, r_t])])], axis=1, num=4)
        c_next = b.op(graph.AddOp, [b.op(graph.MulOp, [_sig(b, gf), c]), b.op(graph.MulOp, [_sig(b, gi), _tanh(b, gc)])])
        return [b.op(graph.MulOp, [_sig(b, go), _tanh(b, c_next)]), c_next]

    y, last = _recurrence(b, x, projected, [optional["initial_h"], optional["initial_c"]], hidden, cell)
    return _outputs(b, y, last)


def gru(b, n, xs, a):
    """A forward GRU like the LSTM: input projection hoisted, the cell in the loop
    (`linear_before_reset` 0 or 1, as ONNX defines them)."""
    optional = _optional(xs, ("B", "sequence_lens", "initial_h"))
    _check(b, a, optional)
    x, w, r = xs[0], xs[1], xs[2]
    hidden = a.get("hidden_size", r.type.get_shape()[-1])
    before_reset = bool(a.get("linear_before_reset", 0))
    projected = b.op(graph.MatmulOp, [x, _t(b, _first(b, w))])  # [T, batch, 3h]: z, r, h
    rz_r, r_h = b.op(graph.SplitOp, [_first(b, r)], axis=0, sizes=[2 * hidden, hidden])
    rz_r_t, r_h_t = _t(b, rz_r), _t(b, r_h)
    rb_zr = rb_h = None
    if optional["B"] is not None:
        wb, rb = b.op(graph.SplitOp, [_first(b, optional["B"])], axis=0, num=2)
        projected = b.op(graph.AddOp, [projected, wb])
        rb_zr, rb_h = b.op(graph.SplitOp, [rb], axis=0, sizes=[2 * hidden, hidden])

    def plus(v: SSAValue, bias: SSAValue | None) -> SSAValue:
        return v if bias is None else b.op(graph.AddOp, [v, bias])

    def cell(xp: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
        (h,) = states
        xz, xr, xh = b.op(graph.SplitOp, [xp], axis=1, num=3)
        hz, hr = b.op(graph.SplitOp, [plus(b.op(graph.MatmulOp, [h, rz_r_t]), rb_zr)], axis=1, num=2)
        z, reset = _sig(b, b.op(graph.AddOp, [xz, hz])), _sig(b, b.op(graph.AddOp, [xr, hr]))
        if before_reset:
            hh = b.op(graph.MulOp, [reset, plus(b.op(graph.MatmulOp, [h, r_h_t]), rb_h)])
        else:
            hh = plus(b.op(graph.MatmulOp, [b.op(graph.MulOp, [reset, h]), r_h_t]), rb_h)
        candidate = _tanh(b, b.op(graph.AddOp, [xh, hh]))
        one = scalar(b, 1, h)
        return [b.op(graph.AddOp, [b.op(graph.MulOp, [b.op(graph.SubOp, [one, z]), candidate]),
                                   b.op(graph.MulOp, [z, h])])]

    y, last = _recurrence(b, x, projected, [optional["initial_h"]], hidden, cell)
    return _outputs(b, y, last)


def _sig(b, v: SSAValue) -> SSAValue:
    return b.op(graph.SigmoidOp, [v])


def _tanh(b, v: SSAValue) -> SSAValue:
    return b.op(graph.TanhOp, [v])


def _conform(b, values: list[SSAValue], types: Sequence[Attribute]) -> list[SSAValue]:
    """Values relaxed to the (less static) carried types of a loop."""
    out = []
    for v, t in zip(values, types):
        if v.type != t:
            v = b.emit(graph.CastOp.create(operands=[v], result_types=[t])).results[0]
        out.append(v)
    return out
