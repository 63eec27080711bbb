"""Recurrent ONNX ops (`RNN`, `LSTM`, `GRU`) as loops over their cells.

Each direction is a `graph.while` over the time steps whose body is the cell; the input
projection of every step (x W^T + Wb) is one matmul before the loop, so `fuse-ops` gives
the cell (recurrent matmul, gates, state update) one kernel. `direction="reverse"` walks
the steps from the last (its outputs still stand at their step's place);
`"bidirectional"` runs both and concatenates them as ONNX lays them out. `layout=1`
(batch first) transposes in and out. Activations come from a table (Sigmoid, Tanh,
Relu). `sequence_lens` (forward) masks the steps past each sequence's length: its state
stops changing and its outputs are 0. LSTM peepholes are supported; `clip`,
`input_forget`, other activations and `sequence_lens` with `reverse` are reported as
unsupported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType
from xdsl.ir import Block, Region, SSAValue

from nimble.dialects import arith
from nimble.dialects import graph, dynshape
from nimble.dialects.graph.slice import END
from nimble.frontend.onnx.common import OnnxImportError, conform, scalar
from nimble.frontend.onnx.shapes import dim_of, shape_value

ACTIVATIONS: dict[str, type[graph.GraphOp]] = {"Sigmoid": graph.SigmoidOp, "Tanh": graph.TanhOp, "Relu": graph.ReluOp}
DIRECTIONS = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class _Spec:
    """What one recurrent node asks for: directions, activations, layout."""

    def __init__(self, b, a: dict[str, Any], optional: dict[str, Any], defaults: Sequence[str],
                 extra: Sequence[str] = ()):
        unsupported = [k for k in ("clip", *extra) if a.get(k)]
        direction = _text(a.get("direction", "forward"))
        if direction not in DIRECTIONS:
            unsupported.append(f"direction {direction!r}")
        self.reverse = DIRECTIONS.get(direction, [False])
        self.lengths = optional.get("sequence_lens")
        if self.lengths is not None and any(self.reverse):
            unsupported.append(f"sequence_lens with direction {direction!r}")
        names = [_text(x) for x in a.get("activations", [])] or list(defaults) * len(self.reverse)
        if len(names) != len(defaults) * len(self.reverse):
            unsupported.append(f"{len(names)} activations (expected {len(defaults)} per direction)")
        unknown = sorted({n for n in names if n not in ACTIVATIONS})
        if unknown:
            unsupported.append(f"activations {', '.join(unknown)} (supported: {', '.join(ACTIVATIONS)})")
        if unsupported:
            raise OnnxImportError(f"{b.where()}: {', '.join(unsupported)} not supported")
        per = len(defaults)
        self.activations = [[ACTIVATIONS[n] for n in names[k * per:(k + 1) * per]] for k in range(len(self.reverse))]
        self.batch_first = bool(a.get("layout", 0))


def _optional(xs, names: Sequence[str]) -> dict[str, Any]:
    return {name: xs[k] if len(xs) > k else None for k, name in enumerate(names, start=3)}


def _direction(b, v: SSAValue, k: int) -> SSAValue:
    """Direction `k` of a weight, bias or state (axis 0), without that axis."""
    if v.type.get_shape()[0] != 1:
        shape_k = TensorType(v.type.element_type, [1, *v.type.get_shape()[1:]])
        ends = [k + 1] + [END] * (len(v.type.get_shape()) - 1)
        v = b.emit(graph.SliceOp(v, [k] + [0] * (len(ends) - 1), ends, [1] * len(ends), shape_k)).results[0]
    return b.op(graph.SqueezeOp, [v], axes=[0])


def _t(b, v: SSAValue) -> SSAValue:
    return b.op(graph.TransposeOp, [v], perm=[1, 0])


def _recurrence(b, x: SSAValue, projected: SSAValue, initial: list[SSAValue | None], hidden: int, reverse: bool,
                cell: Callable[[SSAValue, list[SSAValue]], list[SSAValue]],
                lengths: SSAValue | None = None) -> tuple[SSAValue, list[SSAValue]]:
    """A `graph.while` over the time steps of `x` (from the last when `reverse`) carrying
    the states (the first is the output `h`) and every step's `h`, in step order;
    `cell(projected row, states)` gives the next states. With `lengths` (per batch
    entry), a step past an entry's length keeps its states and outputs 0 (a step
    counter tensor is carried for the comparison). Returns all steps' `h`
    [T, 1, batch, hidden] and the last states."""
    t = x.type.element_type
    steps = b.emit(dynshape.DimOp(x, 0)).result
    batch = b.emit(dynshape.DimOp(x, 1)).result
    state_shape = b.emit(dynshape.FromDimsOp([batch, b.index(hidden)])).result
    states = [v if v is not None else b.op(graph.ZerosOp, [state_shape], t) for v in initial]
    none_yet = b.op(graph.ZerosOp, [b.emit(dynshape.FromDimsOp([b.index(0), batch, b.index(hidden)])).result], t)
    state_type = TensorType(t, [x.type.get_shape()[1], hidden])
    ys_type = TensorType(t, [DYNAMIC_INDEX, x.type.get_shape()[1], hidden])
    carried = [IndexType(), *[state_type] * len(states), ys_type]
    if lengths is not None:
        counter_type = TensorType(lengths.type.element_type, [])
        carried.append(counter_type)
    cond, body = Block(arg_types=carried), Block(arg_types=carried)
    outer = b.block
    b.block = cond
    more = b.emit(arith.CmpiOp(cond.args[0], steps, "slt")).result
    b.emit(graph.ConditionOp.create(operands=[more]))
    b.block = body
    i, *current, ys = body.args[:len(states) + 2]
    next_i = b.emit(arith.AddiOp(i, b.index(1))).result
    at = b.emit(arith.SubiOp(b.emit(arith.SubiOp(steps, b.index(1))).result, i)).result if reverse else i
    after = b.emit(arith.AddiOp(at, b.index(1))).result if reverse else next_i
    step_type = TensorType(t, [1, *projected.type.get_shape()[1:]])
    row = b.emit(graph.SliceOp(projected, [at, 0, 0], [after, END, END], [1, 1, 1], step_type)).results[0]
    following = cell(b.op(graph.SqueezeOp, [row], axes=[0]), list(current))
    out = following[0]
    extra: list[SSAValue] = []
    if lengths is not None:
        step = body.args[-1]
        active = b.op(graph.UnsqueezeOp, [b.op(graph.LessOp, [step, lengths])], axes=[1])  # [batch, 1]
        out = b.op(graph.WhereOp, [active, following[0], scalar(b, 0, following[0])])
        following = [b.op(graph.WhereOp, [active, new, old]) for new, old in zip(following, current)]
        extra = [b.op(graph.AddOp, [step, scalar(b, 1, step)])]
    h = b.op(graph.UnsqueezeOp, [out], axes=[0])
    ys_next = b.op(graph.ConcatOp, [h, ys] if reverse else [ys, h], axis=0)
    b.emit(graph.YieldOp([next_i, *conform(b, [*following, ys_next, *extra], carried[1:])]))
    b.block = outer
    start = [scalar(b, 0, lengths)] if lengths is not None else []
    loop_op = b.emit(graph.WhileOp([b.index(0), *conform(b, [*states, none_yet, *start], carried[1:])], carried,
                                   Region(cond), Region(body)))
    _, *last, ys_all = loop_op.results[:len(states) + 2]
    return b.op(graph.UnsqueezeOp, [ys_all], axes=[1]), last


Cell = Callable[[SSAValue, list[SSAValue]], list[SSAValue]]


def _run(b, spec: _Spec, xs: list[SSAValue], initial: list[SSAValue | None], hidden: int,
         direction: Callable[[int, SSAValue], tuple[SSAValue, Cell]]) -> list[SSAValue]:
    """Every direction's loop, and ONNX's outputs: Y [T, D, batch, hidden] and the last
    states [D, batch, hidden] (batch first under `layout=1`). `direction(k, x)` gives
    direction k's projected inputs and cell."""
    x = xs[0]
    if spec.batch_first:
        x = b.op(graph.TransposeOp, [x], perm=[1, 0, 2])
        initial = [None if v is None else b.op(graph.TransposeOp, [v], perm=[1, 0, 2]) for v in initial]
    ys, lasts = [], []
    for k, reverse in enumerate(spec.reverse):
        projected, cell = direction(k, x)
        states = [None if v is None else _direction(b, v, k) for v in initial]
        y, last = _recurrence(b, x, projected, states, hidden, reverse, cell, spec.lengths)
        ys.append(y)
        lasts.append([b.op(graph.UnsqueezeOp, [v], axes=[0]) for v in last])
    y = ys[0] if len(ys) == 1 else b.op(graph.ConcatOp, ys, axis=1)
    finals = [group[0] if len(group) == 1 else b.op(graph.ConcatOp, list(group), axis=0) for group in zip(*lasts)]
    if spec.batch_first:
        y = b.op(graph.TransposeOp, [y], perm=[2, 0, 1, 3])
        finals = [b.op(graph.TransposeOp, [v], perm=[1, 0, 2]) for v in finals]
    return [y, *finals]


def _projection(b, x: SSAValue, w: SSAValue, bias: SSAValue | None) -> SSAValue:
    """x W^T (+ bias) for all steps at once: [T, batch, gates], computed as one product
    over the T x batch rows (a product batched over T is T products of `batch` rows,
    each reading all of W: 1.7 ms instead of ~0.3 for an LSTM h256 at T=25, batch 1)."""
    steps, batch, features = x.type.get_shape()
    if features < 0:
        projected = b.op(graph.MatmulOp, [x, _t(b, w)])
        return projected if bias is None else b.op(graph.AddOp, [projected, bias])
    rows = b.op(graph.ReshapeOp, [x], shape=[-1, features])
    projected = b.op(graph.MatmulOp, [rows, _t(b, w)])
    if bias is not None:
        projected = b.op(graph.AddOp, [projected, bias])
    gates = projected.type.get_shape()[-1]
    if steps >= 0 and batch >= 0:
        return b.op(graph.ReshapeOp, [projected], shape=[steps, batch, gates])
    return b.op(graph.DynamicReshapeOp, [projected, shape_value(b, [dim_of(b, x, 0), dim_of(b, x, 1), gates])])


def rnn(b, n, xs, a):
    """A simple RNN: h = f(x W^T + h R^T + Wb + Rb)."""
    optional = _optional(xs, ("B", "sequence_lens", "initial_h"))
    spec = _Spec(b, a, optional, ["Tanh"])
    hidden = a.get("hidden_size", xs[2].type.get_shape()[-1])

    def direction(k: int, x: SSAValue) -> tuple[SSAValue, Cell]:
        (f,) = spec.activations[k]
        bias = None
        if optional["B"] is not None:
            wb, rb = b.op(graph.SplitOp, [_direction(b, optional["B"], k)], axis=0, num=2)
            bias = b.op(graph.AddOp, [wb, rb])
        r_t = _t(b, _direction(b, xs[2], k))

        def cell(xp: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
            return [b.op(f, [b.op(graph.AddOp, [xp, b.op(graph.MatmulOp, [states[0], r_t])])])]

        return _projection(b, x, _direction(b, xs[1], k), bias), cell

    return _run(b, spec, xs, [optional["initial_h"]], hidden, direction)


def lstm(b, n, xs, a):
    """An LSTM (gates i, o, f, c as ONNX orders them)."""
    optional = _optional(xs, ("B", "sequence_lens", "initial_h", "initial_c", "P"))
    spec = _Spec(b, a, optional, ["Sigmoid", "Tanh", "Tanh"], ("input_forget",))
    hidden = a.get("hidden_size", xs[2].type.get_shape()[-1])

    def direction(k: int, x: SSAValue) -> tuple[SSAValue, Cell]:
        f, g, h_act = spec.activations[k]
        bias = None
        if optional["B"] is not None:
            wb, rb = b.op(graph.SplitOp, [_direction(b, optional["B"], k)], axis=0, num=2)
            bias = b.op(graph.AddOp, [wb, rb])
        r_t = _t(b, _direction(b, xs[2], k))  # [hidden, 4h]
        peep = None
        if optional["P"] is not None:  # i, o, f
            peep = b.op(graph.SplitOp, [_direction(b, optional["P"], k)], axis=0, num=3)

        def peeped(gate: SSAValue, which: int, c: SSAValue) -> SSAValue:
            return gate if peep is None else b.op(graph.AddOp, [gate, b.op(graph.MulOp, [peep[which], c])])

        def cell(xp: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
            h, c = states
            gi, go, gf, gc = b.op(graph.SplitOp, [b.op(graph.AddOp, [xp, b.op(graph.MatmulOp, [h, r_t])])],
                                  axis=1, num=4)
            c_next = b.op(graph.AddOp, [b.op(graph.MulOp, [b.op(f, [peeped(gf, 2, c)]), c]),
                                        b.op(graph.MulOp, [b.op(f, [peeped(gi, 0, c)]), b.op(g, [gc])])])
            return [b.op(graph.MulOp, [b.op(f, [peeped(go, 1, c_next)]), b.op(h_act, [c_next])]), c_next]

        return _projection(b, x, _direction(b, xs[1], k), bias), cell

    return _run(b, spec, xs, [optional["initial_h"], optional["initial_c"]], hidden, direction)


def gru(b, n, xs, a):
    """A GRU (gates z, r, h as ONNX orders them; `linear_before_reset` 0 or 1)."""
    optional = _optional(xs, ("B", "sequence_lens", "initial_h"))
    spec = _Spec(b, a, optional, ["Sigmoid", "Tanh"])
    hidden = a.get("hidden_size", xs[2].type.get_shape()[-1])
    before_reset = bool(a.get("linear_before_reset", 0))

    def plus(v: SSAValue, bias: SSAValue | None) -> SSAValue:
        return v if bias is None else b.op(graph.AddOp, [v, bias])

    def direction(k: int, x: SSAValue) -> tuple[SSAValue, Cell]:
        f, g = spec.activations[k]
        rz_r, r_h = b.op(graph.SplitOp, [_direction(b, xs[2], k)], axis=0, sizes=[2 * hidden, hidden])
        rz_r_t, r_h_t = _t(b, rz_r), _t(b, r_h)
        wb = rb_zr = rb_h = None
        if optional["B"] is not None:
            wb, rb = b.op(graph.SplitOp, [_direction(b, optional["B"], k)], axis=0, num=2)
            rb_zr, rb_h = b.op(graph.SplitOp, [rb], axis=0, sizes=[2 * hidden, hidden])

        def cell(xp: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
            (h,) = states
            xz, xr, xh = b.op(graph.SplitOp, [xp], axis=1, num=3)
            hz, hr = b.op(graph.SplitOp, [plus(b.op(graph.MatmulOp, [h, rz_r_t]), rb_zr)], axis=1, num=2)
            z, reset = b.op(f, [b.op(graph.AddOp, [xz, hz])]), b.op(f, [b.op(graph.AddOp, [xr, hr])])
            if before_reset:
                hh = b.op(graph.MulOp, [reset, plus(b.op(graph.MatmulOp, [h, r_h_t]), rb_h)])
            else:
                hh = plus(b.op(graph.MatmulOp, [b.op(graph.MulOp, [reset, h]), r_h_t]), rb_h)
            candidate = b.op(g, [b.op(graph.AddOp, [xh, hh])])
            one = scalar(b, 1, h)
            return [b.op(graph.AddOp, [b.op(graph.MulOp, [b.op(graph.SubOp, [one, z]), candidate]),
                                       b.op(graph.MulOp, [z, h])])]

        return _projection(b, x, _direction(b, xs[1], k), wb), cell

    return _run(b, spec, xs, [optional["initial_h"]], hidden, direction)
