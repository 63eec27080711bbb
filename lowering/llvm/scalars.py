"""Scalar and vector arithmetic in the LLVM lowering: one table per kind of op (`INT_BINARY`,
`FLOAT_BINARY`, `CASTS`, `INTRINSICS`, `LIBM`), numpy's NaN rules for min/max, index
division that rounds, masks, lane reductions and broadcasts."""

from __future__ import annotations

from xdsl.dialects import math as xmath
from xdsl.dialects import vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    i16,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue

from nimble.dialects import arith, llvm
from nimble.dialects import loop
from nimble.lowering.llvm.base import LoweringBase
from nimble.lowering.llvm.common import EXACT, FAST, REASSOC, LLVMLoweringError, is_constant, llvm_type
from nimble.runtime.llvm_jit import LIBM

INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp, arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp, arith.RemSIOp: llvm.SRemOp, arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp, arith.XOrIOp: llvm.XOrOp, arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
}

FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp, arith.DivfOp: llvm.FDivOp,
}

CASTS: dict[type[Operation], type[Operation]] = {
    arith.SIToFPOp: llvm.SIToFPOp, arith.UIToFPOp: llvm.UIToFPOp, arith.FPToSIOp: llvm.FPToSIOp,
    arith.FPToUIOp: llvm.FPToUIOp,
    arith.ExtFOp: llvm.FPExtOp, arith.TruncFOp: llvm.FPTruncOp, arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp, arith.TruncIOp: llvm.TruncOp, arith.BitcastOp: llvm.BitcastOp,
}

# Float ops that are LLVM intrinsics, by name (suffixed with the type: llvm.exp.f32).
INTRINSICS: dict[type[Operation], str] = {
    xmath.ExpOp: "llvm.exp", xmath.LogOp: "llvm.log", xmath.SqrtOp: "llvm.sqrt", xmath.AbsFOp: "llvm.fabs",
    xmath.PowFOp: "llvm.pow",
    xmath.FloorOp: "llvm.floor", xmath.CeilOp: "llvm.ceil", xmath.RoundEvenOp: "llvm.roundeven",
    xmath.SinOp: "llvm.sin", xmath.CosOp: "llvm.cos",
    vector.FMAOp: "llvm.fma",
}

# Float functions from the C library: name for f32, name for f64.
LIBM_FUNCTIONS: dict[type[Operation], tuple[str, str]] = {
    xmath.TanhOp: ("tanhf", "tanh"),
    xmath.ErfOp: ("erff", "erf"),
    **{op: (f"{op.name[5:]}f", op.name[5:]) for op in (xmath.TanOp, xmath.AsinOp, xmath.AcosOp, xmath.AtanOp,
                                                       xmath.SinhOp, xmath.CoshOp, xmath.AsinhOp, xmath.AcoshOp,
                                                       xmath.AtanhOp)},
}

assert all(name in LIBM for names in LIBM_FUNCTIONS.values() for name in names)  # (the runtime binds these)


class ScalarLowering(LoweringBase):
    """Arithmetic, comparisons, casts and vector ops of a kernel."""

    def constant(self, op: arith.ConstantOp) -> None:
        t = llvm_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr):
            value = IntegerAttr(value.value.data, t)
        self.values[op.result] = self.constant_value(value, t)

    def binary(self, op: Operation) -> None:
        a, b = (self.v(o) for o in op.operands)
        kind = INT_BINARY.get(type(op))
        if kind is not None:
            self.values[op.results[0]] = self.binary_op(kind, a, b)
        else:
            flags = EXACT if loop.EXACT_MARK in op.attributes else FAST
            self.values[op.results[0]] = self.binary_op(FLOAT_BINARY[type(op)], a, b, flags)

    def combine(self, kind: loop.Combiner, acc: SSAValue, value: SSAValue, in_order: bool = False) -> SSAValue:
        t = acc.type
        element = t.get_element_type() if isinstance(t, VectorType) else t
        if isinstance(element, AnyFloat):
            flags = FAST if in_order else REASSOC
            if kind == loop.Combiner.ADD:
                return self.binary_op(llvm.FAddOp, acc, value, flags)
            if kind == loop.Combiner.MUL:
                return self.binary_op(llvm.FMulOp, acc, value, flags)
            return self.numpy_minmax(kind, acc, value)
        if element == IntegerType(1):  # bools: sum/max are `or`, product/min are `and`
            return self.binary_op(llvm.OrOp if kind in (loop.Combiner.ADD, loop.Combiner.MAX) else llvm.AndOp, acc, value)
        if kind == loop.Combiner.ADD:
            return self.add(acc, value)
        if kind == loop.Combiner.MUL:
            return self.mul(acc, value)
        pred = 4 if kind == loop.Combiner.MAX else 2  # sgt / slt
        better = self.emit(llvm.ICmpOp(value, acc, IntegerAttr(pred, i64)))
        return self.emit(llvm.SelectOp(better, value, acc))

    def numpy_minmax(self, kind: loop.Combiner, a: SSAValue, b: SSAValue) -> SSAValue:
        """numpy's `maximum` / `minimum`: `a` where `a > b` (`a < b`) or `a` is NaN,
        else `b` (so a NaN on either side wins; of two equal values, `b`). LLVM's
        `llvm.maximum` also orders -0 below +0, which costs a sequence of blends on x86:
        a 64-channel 3 x 3 max pool over 112 x 112 (1 thread) took 341 us with it, 288 us
        in this form (a compare, a NaN test, two blends: no sign-of-zero fix-up)."""
        picked = self.emit(llvm.SelectOp(self.fcmp(a, b, "ogt" if kind == loop.Combiner.MAX else "olt"), a, b))
        return self.emit(llvm.SelectOp(self.fcmp(a, a, "uno"), a, picked))

    def minmax_float(self, op: Operation) -> None:
        """Against a constant (relu, a clamp), `llvm.maximum` / `llvm.minimum`, which LLVM
        simplifies knowing the constant (gelu over 128 x 1024, 1 thread: 53 us, 64 in the
        compare/select form); else `numpy_minmax`."""
        a, b = (self.v(o) for o in op.operands)
        kind = "max" if isinstance(op, arith.MaximumfOp) else "min"
        if any(is_constant(o) for o in op.operands):
            self.values[op.results[0]] = self.intrinsic(f"llvm.{kind}imum", [a, b], op.results[0].type)
            return
        self.values[op.results[0]] = self.numpy_minmax(kind, a, b)

    def minmax_int(self, op: Operation) -> None:
        a, b = (self.v(o) for o in op.operands)
        pred = 4 if isinstance(op, arith.MaxSIOp) else 2
        self.values[op.results[0]] = self.emit(llvm.SelectOp(self.emit(llvm.ICmpOp(a, b, IntegerAttr(pred, i64))), a, b))

    def div_round(self, op: Operation) -> None:
        """floordiv / ceildiv on signed index values (shape arithmetic)."""
        a, b = (self.v(o) for o in op.operands)
        q = self.sdiv(a, b)
        r = self.srem(a, b)
        zero = self.const(0, i64)
        nonzero = self.emit(llvm.ICmpOp(r, zero, IntegerAttr(1, i64)))
        signs_differ = self.emit(llvm.ICmpOp(self.binary_op(llvm.XOrOp, r, b), zero, IntegerAttr(2, i64)))
        if isinstance(op, arith.FloorDivSIOp):
            adjust = self.binary_op(llvm.AndOp, nonzero, signs_differ)
            self.values[op.result] = self.sub(q, self.emit(llvm.ZExtOp(adjust, i64)))
        else:
            same = self.binary_op(llvm.XOrOp, signs_differ, self.const(1, IntegerType(1)))
            adjust = self.binary_op(llvm.AndOp, nonzero, same)
            self.values[op.result] = self.add(q, self.emit(llvm.ZExtOp(adjust, i64)))

    def create_mask(self, op: vector.CreateMaskOp) -> None:
        """Lane l on when l < count: the lane numbers against the count, splatted."""
        width = op.mask_vector.type.get_shape()[0]
        t = loop.vector_type(i64, (width,))
        lanes = self.constant_value(DenseIntOrFPElementsAttr.from_list(t, list(range(width))), t)
        count = self.splat(self.v(op.mask_dim_sizes[0]), t)
        self.values[op.mask_vector] = self.emit(llvm.ICmpOp(lanes, count, IntegerAttr(2, i64)))  # slt

    def cmpi(self, op: arith.CmpiOp) -> None:
        self.values[op.result] = self.emit(llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), op.predicate))

    def fcmp(self, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        """`llvm.fcmp`, of vectors too (i1 per lane)."""
        return self.emit(llvm.FCmpOp(a, b, predicate))

    def cmpf(self, op: arith.CmpfOp) -> None:
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        self.values[op.result] = self.fcmp(self.v(op.lhs), self.v(op.rhs), name)

    def select(self, op: arith.SelectOp) -> None:
        self.values[op.result] = self.emit(llvm.SelectOp(*(self.v(o) for o in op.operands)))

    def negf(self, op: arith.NegfOp) -> None:
        self.values[op.result] = self.emit(llvm.FNegOp(self.v(op.operand)))

    def cast(self, op: Operation) -> None:
        x, src, dst = self.v(op.operands[0]), op.operands[0].type, op.results[0].type
        if isinstance(src, BFloat16Type) and dst == f32:  # the bits are the top half of an f32
            wide = self.emit(llvm.ZExtOp(x, i32))
            x = self.emit(llvm.BitcastOp(self.binary_op(llvm.ShlOp, wide, self.const(16, i32)), f32))
        elif isinstance(dst, BFloat16Type) and src == f32:  # round to nearest even
            bits = self.emit(llvm.BitcastOp(x, i32))
            high = self.binary_op(llvm.LShrOp, bits, self.const(16, i32))
            odd = self.binary_op(llvm.AndOp, high, self.const(1, i32))
            rounded = self.add(bits, self.add(odd, self.const(0x7FFF, i32)))
            x = self.emit(llvm.TruncOp(self.binary_op(llvm.LShrOp, rounded, self.const(16, i32)), i16))
        else:
            x = self.emit(CASTS[type(op)](x, dst))
        self.values[op.results[0]] = x

    def index_cast(self, op: arith.IndexCastOp) -> None:
        x = self.v(op.input)
        src, dst = llvm_type(op.input.type), llvm_type(op.result.type)
        if src == dst:
            self.values[op.result] = x
        elif src.width.data < dst.width.data:
            self.values[op.result] = self.emit(llvm.SExtOp(x, dst))
        else:
            self.values[op.result] = self.emit(llvm.TruncOp(x, dst))

    def absi(self, op: xmath.AbsIOp) -> None:
        x = self.v(op.operand)
        neg = self.sub(self.const(0, x.type), x)
        is_neg = self.emit(llvm.ICmpOp(x, self.const(0, x.type), IntegerAttr(2, i64)))
        self.values[op.result] = self.emit(llvm.SelectOp(is_neg, neg, x))

    def intrinsic_op(self, op: Operation) -> None:
        args = [self.v(o) for o in op.operands]
        self.values[op.results[0]] = self.intrinsic(INTRINSICS[type(op)], args, op.results[0].type)

    def libm(self, op: Operation) -> None:
        t = op.results[0].type
        if not isinstance(t, AnyFloat):
            raise LLVMLoweringError(f"'{op.name}' on {t} is not supported")
        x = self.v(op.operands[0])
        if t.bitwidth < 32:  # (f16, bf16: no C function takes them; computed in f32, rounded back)
            wide = self.emit(llvm.FPExtOp(x, f32))
            name = LIBM_FUNCTIONS[type(op)][0]
            y = self.emit(llvm.CallOp(self.external(name, f32, [f32]), wide, return_type=f32))
            self.values[op.results[0]] = self.emit(llvm.FPTruncOp(y, t))
            return
        name = LIBM_FUNCTIONS[type(op)][0 if t == f32 else 1]
        self.values[op.results[0]] = self.emit(llvm.CallOp(self.external(name, t, [t]), x, return_type=t))

    _LANE_COMBINE = {vector.CombiningKindFlag.ADD: "add", vector.CombiningKindFlag.MUL: "mul",
                     vector.CombiningKindFlag.MAXIMUMF: "max", vector.CombiningKindFlag.MINIMUMF: "min"}

    def vector_reduction(self, op: vector.ReductionOp) -> None:
        """Lanes combined as a tree (halves folded onto each other: log2(n) dependent
        steps, not n), then with the accumulator. The reduction's own combiner is
        associative by the loop.reduce contract."""
        v = self.v(op.vector)
        kind = self._LANE_COMBINE[op.kind.data]
        element = op.dest.type
        n = v.type.get_shape()[0]
        while n > 1:
            half = n // 2
            t = loop.vector_type(element, (half,))
            low = self.shuffle_vector(v, v, range(half), t)
            high = self.shuffle_vector(v, v, range(half, n), t)
            v = self.combine(kind, low, high)
            n = half
        lane = self.emit(llvm.BitcastOp(v, element))
        self.values[op.dest] = self.combine(kind, self.v(op.acc), lane)

    def shuffle(self, op: vector.ShuffleOp) -> None:
        mask = op.mask.get_values()
        self.values[op.result] = self.shuffle_vector(self.v(op.v1), self.v(op.v2), mask, op.result.type)

    def broadcast(self, op: vector.BroadcastOp) -> None:
        self.values[op.vector] = self.splat(self.v(op.source), op.vector.type)

    def splat(self, value: SSAValue, t: VectorType) -> SSAValue:
        """`value` in every lane of a `t`: inserted into lane 0, shuffled to all."""
        undef = self.undef(t)
        first = self.pure((llvm.InsertElementOp,), (undef, value, self.const(0, i32)), t,
                          lambda: llvm.InsertElementOp(undef, value, self.const(0, i32)))
        return self.shuffle_vector(first, undef, [0] * t.get_shape()[0], t)
