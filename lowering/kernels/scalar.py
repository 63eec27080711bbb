"""What each elementwise graph op computes on one element: a table of scalar rules.

`SCALAR[type(op)](emit, op, args)` returns the scalar SSA value of `op`'s result at one
index, given its operands' scalars there (already broadcast). `emit` inserts an op and
returns its result. Rules build xdsl `arith` and `math` ops; one line per op where the
op is a single instruction, a short function where it is a formula. Each rule follows
the op's numpy reference (`reference` on the op class), which the tests compare with.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from nimble.dialects import arith, graph

Emit = Callable[[Operation], SSAValue]
Rule = Callable[[Emit, Operation, Sequence[SSAValue]], SSAValue]


class NoScalarRule(Exception):
    """The op (or this use of it: an element type) has no scalar rule."""


def is_float(t: Attribute) -> bool:
    return isinstance(t, AnyFloat)


def const(emit: Emit, value: float | int, t: Attribute) -> SSAValue:
    if is_float(t):
        return emit(arith.ConstantOp(FloatAttr(float(value), t)))
    if isinstance(t, (IntegerType, IndexType)):
        if isinstance(t, IntegerType) and t.width.data == 1:
            value = -1 if value else 0  # i1 constants are signed in MLIR's printer
        return emit(arith.ConstantOp(IntegerAttr(int(value), t)))
    raise NoScalarRule(f"no constants of type {t}")


def _typed(float_op: type[Operation] | None, int_op: type[Operation] | None) -> Rule:
    """A binary rule that is one arith op, chosen by the element type."""

    def rule(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        chosen = float_op if is_float(args[0].type) else int_op
        if chosen is None:
            raise NoScalarRule(f"{op.name} on {args[0].type}")
        return emit(chosen(*args))

    return rule


def _compare(float_pred: str, int_pred: str) -> Rule:
    def rule(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        if is_float(args[0].type):
            return emit(arith.CmpfOp(args[0], args[1], float_pred))
        return emit(arith.CmpiOp(args[0], args[1], int_pred))

    return rule


def _int_div(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    # Truncating like the reference. The divisors that trap the CPU must not reach the
    # division: 0 (the reference raises; the kernel gives a / 1) and -1 (MIN / -1
    # overflows: the result is -a, wrapping, as numpy's).
    a, b = args
    zero, minus_one = const(emit, 0, b.type), const(emit, -1, b.type)
    is_minus_one = emit(arith.CmpiOp(b, minus_one, "eq"))
    trap = emit(arith.OrIOp(emit(arith.CmpiOp(b, zero, "eq")), is_minus_one))
    safe = emit(arith.SelectOp(trap, const(emit, 1, b.type), b))
    quotient = emit(arith.DivSIOp(a, safe))
    return emit(arith.SelectOp(is_minus_one, emit(arith.SubiOp(zero, a)), quotient))


def _div(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    if is_float(args[0].type):
        return emit(arith.DivfOp(*args))
    return _int_div(emit, op, args)


def _unary_math(math_op: type[Operation]) -> Rule:
    def rule(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        if not is_float(args[0].type):
            raise NoScalarRule(f"{op.name} on {args[0].type}")
        return emit(math_op(args[0]))

    return rule


def _neg(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    if is_float(x.type):
        return emit(arith.NegfOp(x))
    return emit(arith.SubiOp(const(emit, 0, x.type), x))


def _abs(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    return emit(xmath.AbsFOp(x) if is_float(x.type) else xmath.AbsIOp(x))


def _rsqrt(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    return emit(arith.DivfOp(const(emit, 1.0, x.type), emit(xmath.SqrtOp(x))))


def _sigmoid(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    # 0.5 * (1 + tanh(x / 2)): the reference's formula, exact and overflow-free.
    (x,) = args
    half = const(emit, 0.5, x.type)
    t = emit(xmath.TanhOp(emit(arith.MulfOp(x, half))))
    return emit(arith.MulfOp(half, emit(arith.AddfOp(const(emit, 1.0, x.type), t))))


def _gelu(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    e = emit(xmath.ErfOp(emit(arith.MulfOp(x, const(emit, 1.0 / math.sqrt(2.0), x.type)))))
    one_plus = emit(arith.AddfOp(const(emit, 1.0, x.type), e))
    return emit(arith.MulfOp(emit(arith.MulfOp(const(emit, 0.5, x.type), x)), one_plus))


def _relu(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    zero = const(emit, 0, x.type)
    return emit(arith.MaximumfOp(x, zero) if is_float(x.type) else arith.MaxSIOp(x, zero))


def _not(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    return emit(arith.XOrIOp(x, const(emit, 1, x.type)))


def _is_nan(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    return emit(arith.CmpfOp(x, x, "uno"))


def _is_inf(emit: Emit, op: graph.IsInfOp, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    positive, negative = op.detects()
    if positive and negative:
        return emit(arith.CmpfOp(emit(xmath.AbsFOp(x)), const(emit, math.inf, x.type), "oeq"))
    if positive or negative:
        return emit(arith.CmpfOp(x, const(emit, math.inf if positive else -math.inf, x.type), "oeq"))
    return const(emit, 0, IntegerType(1))


def _clip(emit: Emit, op: graph.ClipOp, args: Sequence[SSAValue]) -> SSAValue:
    (x,) = args
    fl = is_float(x.type)
    if op.min is not None:
        lo = op.min.value.data
        lo_v = const(emit, lo if fl else math.ceil(lo), x.type)
        x = emit(arith.MaximumfOp(x, lo_v) if fl else arith.MaxSIOp(x, lo_v))
    if op.max is not None:
        hi = op.max.value.data
        hi_v = const(emit, hi if fl else math.floor(hi), x.type)
        x = emit(arith.MinimumfOp(x, hi_v) if fl else arith.MinSIOp(x, hi_v))
    return x


def _bits(t: Attribute) -> int:
    return t.width.data if isinstance(t, IntegerType) else t.bitwidth


def convert(emit: Emit, x: SSAValue, to: Attribute) -> SSAValue:
    """numpy's `astype` for one scalar (bool is i1: nonzero becomes true)."""
    src = x.type
    if src == to:
        return x
    if isinstance(to, IntegerType) and to.width.data == 1:
        zero = const(emit, 0, src)
        return emit(arith.CmpfOp(x, zero, "une") if is_float(src) else arith.CmpiOp(x, zero, "ne"))
    src_bool = isinstance(src, IntegerType) and src.width.data == 1
    if is_float(src) and is_float(to):
        return emit(arith.ExtFOp(x, to) if _bits(to) > _bits(src) else arith.TruncFOp(x, to))
    if is_float(src):
        return emit(arith.FPToSIOp(x, to))
    if is_float(to):
        return emit(arith.UIToFPOp(x, to) if src_bool else arith.SIToFPOp(x, to))
    if _bits(to) > _bits(src):
        return emit(arith.ExtUIOp(x, to) if src_bool else arith.ExtSIOp(x, to))
    return emit(arith.TruncIOp(x, to))


def _cast(emit: Emit, op: graph.CastOp, args: Sequence[SSAValue]) -> SSAValue:
    return convert(emit, args[0], op.result.type.element_type)


def _where(emit: Emit, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    return emit(arith.SelectOp(*args))


def _batch_norm(emit: Emit, op: graph.BatchNormOp, args: Sequence[SSAValue]) -> SSAValue:
    x, scale, bias, mean, var = args
    eps = const(emit, op.epsilon.value.data, x.type)
    inv = emit(arith.DivfOp(const(emit, 1.0, x.type), emit(xmath.SqrtOp(emit(arith.AddfOp(var, eps))))))
    centred = emit(arith.SubfOp(x, mean))
    return emit(arith.AddfOp(emit(arith.MulfOp(emit(arith.MulfOp(centred, inv)), scale)), bias))


TRIGONOMETRIC: dict[type[Operation], type[Operation]] = {
    graph.TanOp: xmath.TanOp, graph.AsinOp: xmath.AsinOp, graph.AcosOp: xmath.AcosOp, graph.AtanOp: xmath.AtanOp,
    graph.SinhOp: xmath.SinhOp, graph.CoshOp: xmath.CoshOp, graph.AsinhOp: xmath.AsinhOp,
    graph.AcoshOp: xmath.AcoshOp, graph.AtanhOp: xmath.AtanhOp,
}
"""`dialects/graph/trigonometry.py`'s ops and the `math` op each computes an element with."""


SCALAR: dict[type[Operation], Rule] = {
    graph.AddOp: _typed(arith.AddfOp, arith.AddiOp),
    graph.SubOp: _typed(arith.SubfOp, arith.SubiOp),
    graph.MulOp: _typed(arith.MulfOp, arith.MuliOp),
    graph.DivOp: _div,
    graph.PowOp: _typed(xmath.PowFOp, None),
    graph.MaximumOp: _typed(arith.MaximumfOp, arith.MaxSIOp),
    graph.MinimumOp: _typed(arith.MinimumfOp, arith.MinSIOp),
    graph.AndOp: _typed(None, arith.AndIOp),
    graph.OrOp: _typed(None, arith.OrIOp),
    graph.EqualOp: _compare("oeq", "eq"),
    graph.LessOp: _compare("olt", "slt"),
    graph.GreaterOp: _compare("ogt", "sgt"),
    graph.WhereOp: _where,
    graph.NegOp: _neg,
    graph.AbsOp: _abs,
    graph.ExpOp: _unary_math(xmath.ExpOp),
    graph.LogOp: _unary_math(xmath.LogOp),
    graph.SqrtOp: _unary_math(xmath.SqrtOp),
    graph.RsqrtOp: _rsqrt,
    graph.TanhOp: _unary_math(xmath.TanhOp),
    graph.SigmoidOp: _sigmoid,
    graph.ReluOp: _relu,
    graph.GeluOp: _gelu,
    graph.ErfOp: _unary_math(xmath.ErfOp),
    graph.FloorOp: _unary_math(xmath.FloorOp),
    graph.CeilOp: _unary_math(xmath.CeilOp),
    graph.RoundOp: _unary_math(xmath.RoundEvenOp),
    graph.SinOp: _unary_math(xmath.SinOp),
    graph.CosOp: _unary_math(xmath.CosOp),
    **{op: _unary_math(function) for op, function in TRIGONOMETRIC.items()},
    graph.NotOp: _not,
    graph.IsNanOp: _is_nan,
    graph.IsInfOp: _is_inf,
    graph.ClipOp: _clip,
    graph.CastOp: _cast,
    graph.BatchNormOp: _batch_norm,
}
