"""`widen-halves`: f16 tensors are stored as f16 but computed in f32, as ONNX Runtime's
CPU kernels and numpy's half loops compute them.

An op that computes (arithmetic, matrix products, convolutions, reductions, norms: the
fusion kinds `COMPUTES`) on f16 tensors becomes the same op on f32 tensors, with a cast to f32
on each such operand and a cast back on each such result. Then a value rounded to f16
here only to be widened again (`cast(cast(x : f32 -> f16) : f16 -> f32)`, the inner
cast made here, the outer one here or the program's own, such as a function body's
`Cast(to=float)` of an f16 product) is `x` itself: a chain of computing ops keeps its
intermediates in f32 and rounds where a value leaves it (an op that only moves f16
elements, a function result). A sum over a row of halves then accumulates in f32,
where in f16 each addition past 2048 times the smallest term loses it (an attention
row's softmax-weighted sum: ONNX's f16 Attention cases were 2-6 f16 units off their
expected outputs without this pass). A cast that narrows is removed only where this
pass made it.

An op that only moves elements (reshape, transpose, slice, gather, concat, broadcast:
the fusion kinds `MOVES`) moves f32 where an operand was computed on f32 (the chain goes on through it:
attention's scores are reshaped between its products) and halves otherwise (half the
bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import graph
from nimble.dialects.graph.base import GraphOp
from nimble.dialects.interfaces import FusionKind

COMPUTES = (FusionKind.ELEMENTWISE, FusionKind.REDUCTION, FusionKind.OUT_FUSABLE)
"""The fusion kinds of the graph ops that compute (every op of them but `graph.cast`,
which this pass inserts): computed in f32 when their tensors are halves. (Comparisons
and float-class tests give the same answer either way: widening f16 is exact.)"""

MOVES = (FusionKind.INJECTIVE, FusionKind.PERMUTE, FusionKind.VIEW)
"""The fusion kinds of the graph ops that only move elements: on f32 where an operand
was computed on f32."""


def _kind(op: Operation) -> FusionKind | None:
    return op.FUSION if isinstance(op, GraphOp) and not isinstance(op, graph.CastOp) else None


def _is_half(t: Attribute) -> bool:
    return isinstance(t, TensorType) and isinstance(t.element_type, Float16Type)


def _widened(t: Attribute) -> Attribute:
    return TensorType(f32, t.get_shape(), t.encoding) if _is_half(t) else t


def widen(op: Operation, made: dict[Operation, None]) -> bool:
    """`op` computed on f32 in place of its halves (`made` collects the casts); False
    (and nothing changed) when the op on f32 does not verify."""
    operands: list[SSAValue] = []
    before: list[Operation] = []
    for x in op.operands:
        if _is_half(x.type):
            cast = graph.CastOp.to(x, _widened(x.type))
            before.append(cast)
            x = cast.result
        operands.append(x)
    wide = type(op).create(operands=operands, result_types=[_widened(r.type) for r in op.results],
                           properties=dict(op.properties), attributes=dict(op.attributes))
    try:
        wide.verify()
    except VerifyException:
        return False
    Rewriter.insert_op([*before, wide], InsertPoint.before(op))
    made.update(dict.fromkeys(before))
    results = []
    for old, new in zip(op.results, wide.results):
        if new.type != old.type:
            back = graph.CastOp.to(new, old.type)
            Rewriter.insert_op(back, InsertPoint.before(op))
            made[back] = None
            new = back.result
        results.append(new)
    Rewriter.replace_op(op, [], results)
    return True


def drop_round_trips(module: ModuleOp, made: dict[Operation, None]) -> None:
    """`cast(cast(x : f32 -> half) : half -> f32)` -> `x` where this pass made the inner
    cast (the rounding of a result computed on f32); the outer one (widening exactly)
    may be the program's own."""
    for cast in [op for op in module.walk() if isinstance(op, graph.CastOp)]:
        inner = cast.input.owner
        while isinstance(inner, graph.CastOp) and inner.input.type == inner.result.type:
            inner = inner.input.owner  # (an ONNX CastLike to the type it has)
        if inner not in made or cast.result.type != inner.operands[0].type:
            continue
        cast.result.replace_all_uses_with(inner.operands[0])
        Rewriter.erase_op(cast)
        made.pop(cast, None)
        if not inner.results[0].uses:
            Rewriter.erase_op(inner)
            del made[inner]


@dataclass(frozen=True)
class WidenHalvesPass(ModulePass):
    name = "widen-halves"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        made: dict[Operation, None] = {}
        for inner in list(op.walk()):
            kind = _kind(inner)
            if kind in COMPUTES and any(_is_half(v.type) for v in (*inner.operands, *inner.results)) \
                    or kind in MOVES and any(x.owner in made and _is_half(x.type) for x in inner.operands):
                widen(inner, made)
        drop_round_trips(op, made)
