"""`expand-math`: f32 `math.tanh` and `math.erf` as rational polynomials in `arith`.

LLVM has no intrinsic for either, so otherwise each element is a C library call: slow,
and a body holding one cannot be vectorised. The approximations are the 13/6-degree
(tanh, inputs clamped to [-9, 9]) and 13/8-degree (erf, clamped to [-4, 4]) rational
interpolants used by Eigen's `generic_fast_tanh_float` / `generic_fast_erf_float` (and
by TVM and XLA): accurate to a few ulp for tanh, ~1e-7 absolute for erf, on scalars
and on vectors alike. f64 keeps the C library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, ModuleOp, VectorType, f32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from nimble.dialects import loop

# (clamp, odd numerator coefficients x^1..x^13, even denominator coefficients x^0..)
TANH = (9.0,
        [4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05, 5.12229709037114e-08,
         -8.60467152213735e-11, 2.00018790482477e-13, -2.76076847742355e-16],
        [4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06])
ERF = (4.0,
       [-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04, -5.69250639462346e-05,
        -2.10102402082508e-06, 2.77068142495902e-08, -2.72614225801306e-10],
       [-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03, -2.13374055278905e-04,
        -1.45660718464996e-05])
RATIONAL = {xmath.TanhOp: TANH, xmath.ErfOp: ERF}


def _is_f32(value: SSAValue) -> bool:
    t = value.type
    return (t.get_element_type() if isinstance(t, VectorType) else t) == f32


class _Expand(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        table = RATIONAL.get(type(op))
        if table is None or not _is_f32(op.operands[0]):
            return
        clamp, numerator, denominator = table
        t = op.results[0].type
        new: list[Operation] = []

        def add(o: Operation) -> SSAValue:
            new.append(o)
            return o.results[0]

        def const(v: float) -> SSAValue:
            if isinstance(t, VectorType):
                return add(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [v] * t.get_shape()[0]), t))
            return add(arith.ConstantOp(FloatAttr(v, f32)))

        def horner(x2: SSAValue, coefficients: Sequence[float]) -> SSAValue:
            acc = const(coefficients[-1])
            for c in reversed(coefficients[:-1]):
                acc = add(arith.AddfOp(add(arith.MulfOp(acc, x2)), const(c)))
            return acc

        x = add(arith.MinimumfOp(add(arith.MaximumfOp(op.operands[0], const(-clamp))), const(clamp)))
        x2 = add(arith.MulfOp(x, x))
        p = add(arith.MulfOp(x, horner(x2, numerator)))
        q = horner(x2, denominator)
        rewriter.replace(op, [*new, arith.DivfOp(p, q)])


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    """Replace f32 tanh and erf by rational approximations in arith (vectorisable), in
    CPU code (device kernels call the device's own math functions)."""

    name = "expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(GreedyRewritePatternApplier([_Expand()]))
        for f in list(op.body.block.ops):
            if loop.kernel_device(f) == "cpu":
                for region in f.regions:
                    walker.rewrite_region(region)


