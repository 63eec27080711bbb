"""`expand-math`: f32 `math.tanh`, `math.erf` and `math.exp` as polynomials in `arith`.

LLVM has no intrinsic for tanh or erf, and its `llvm.exp` on a vector becomes one C
library call per lane: slow, and a body holding one is not vectorised. The
approximations are the 13/6-degree (tanh, inputs clamped to [-9, 9]) and 13/8-degree
(erf, clamped to [-4, 4]) rational interpolants used by Eigen's
`generic_fast_tanh_float` / `generic_fast_erf_float` (and by TVM and XLA), and
Cephes' `expf` (as Eigen's `pexp`): `exp(x) = 2^n * exp(r)` with `n = round(x / ln 2)`,
`r = x - n ln 2` (ln 2 in two parts), `exp(r)` a degree-7 polynomial, `2^n` built in
the exponent bits. Accurate to a few ulp for tanh and exp, ~1e-7 absolute for erf, on
scalars and on vectors alike (exp's denormal results included); exp keeps NaN and
gives inf above 88.72. f64 keeps the C library.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, ModuleOp, VectorType, f32, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from nimble.dialects.device import Device
from nimble.dialects import arith
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
EXP_OVERFLOW = 88.72283935546875  # above: inf (the largest f32 is exp(88.7228...))
EXP_LIMITS = (-103.972084045410, EXP_OVERFLOW)  # the clamp: below, exp rounds to 0 in f32
LN2 = (0.693359375, -2.12194440e-4)  # ln 2 = LN2[0] + LN2[1], the first part exact in few bits
EXP_POLY = [5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4]
"""exp(r) = 1 + r + r^2 * (EXP_POLY[0] + EXP_POLY[1] r + ...) on |r| <= ln(2)/2 (Cephes)."""


def _is_f32(value: SSAValue) -> bool:
    t = value.type
    return (t.get_element_type() if isinstance(t, VectorType) else t) == f32


class _Constants:
    """The coefficients of one kernel's expansions, each made once, at the top of the
    kernel (every expansion of a 250-op elementwise chain made its own ~13, which
    hoist-invariant then moved out of the loops one by one and CSE merged)."""

    def __init__(self, block: Block):
        self.block = block
        self.made: dict[tuple[Attribute, Attribute], SSAValue] = {}
        self.last: Operation | None = None

    def get(self, rewriter: PatternRewriter, value: Attribute, t: Attribute) -> SSAValue:
        found = self.made.get((value, t))
        if found is None:
            op = arith.ConstantOp(value, t)
            rewriter.insert(op, InsertPoint.after(self.last) if self.last else InsertPoint.at_start(self.block))
            self.last = op
            found = self.made[value, t] = op.result
        return found


class _Builder:
    """New ops in order, with f32 (or f32 vector) constants of the replaced op's type."""

    def __init__(self, t: Attribute, constants: _Constants, rewriter: PatternRewriter):
        self.t = t
        self.ops: list[Operation] = []
        self.constants = constants
        self.rewriter = rewriter

    def add(self, o: Operation) -> SSAValue:
        self.ops.append(o)
        return o.results[0]

    def const(self, v: float | int, element: Attribute = f32) -> SSAValue:
        shape = tuple(self.t.get_shape()) if isinstance(self.t, VectorType) else None
        return self.constants.get(self.rewriter, *_constant(v, element, shape))

    def horner(self, x: SSAValue, coefficients: Sequence[float]) -> SSAValue:
        """coefficients[0] + coefficients[1] x + ... (in Horner's form)."""
        acc = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.add(arith.AddfOp(self.add(arith.MulfOp(acc, x)), self.const(c)))
        return acc

    def clamp(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        return self.add(arith.MinimumfOp(self.add(arith.MaximumfOp(x, self.const(lo))), self.const(hi)))


@functools.cache
def _constant(v: float | int, element: Attribute, shape: tuple[int, ...] | None) -> tuple[Attribute, Attribute]:
    """The attribute of constant `v` (a splat vector of `shape`) and its type: the same
    few coefficients recur in every expansion, and making their attributes is most of
    the cost of an op."""
    if shape is not None:
        t = loop.vector_type(element, shape)
        return DenseIntOrFPElementsAttr.from_list(t, [v] * t.get_shape()[0]), t
    return (FloatAttr(v, f32) if element == f32 else IntegerAttr(v, element)), element


def _rational(b: _Builder, x: SSAValue, table: tuple) -> Operation:
    clamp, numerator, denominator = table
    x = b.clamp(x, -clamp, clamp)
    x2 = b.add(arith.MulfOp(x, x))
    return arith.DivfOp(b.add(arith.MulfOp(x, b.horner(x2, numerator))), b.horner(x2, denominator))


def _exp(b: _Builder, x0: SSAValue) -> Operation:
    x = b.clamp(x0, *EXP_LIMITS)
    n = b.add(xmath.FloorOp(b.add(arith.AddfOp(b.add(arith.MulfOp(x, b.const(1.0 / math.log(2)))), b.const(0.5)))))
    r = b.add(arith.SubfOp(b.add(arith.SubfOp(x, b.add(arith.MulfOp(n, b.const(LN2[0]))))),
                           b.add(arith.MulfOp(n, b.const(LN2[1])))))
    r2 = b.add(arith.MulfOp(r, r))
    y = b.add(arith.AddfOp(b.add(arith.AddfOp(b.add(arith.MulfOp(b.horner(r, EXP_POLY), r2)), r)), b.const(1.0)))
    # 2^n as 2^h * 2^(n-h), h = n >> 1: both factors have normal exponents for n in
    # [-150, 128] (a denormal or the largest finite result comes out of the product).
    i32_t = loop.vector_type(i32, tuple(b.t.get_shape())) if isinstance(b.t, VectorType) else i32
    k = b.add(arith.FPToSIOp(n, i32_t))
    h = b.add(arith.ShRSIOp(k, b.const(1, i32)))
    for part in (h, b.add(arith.SubiOp(k, h))):
        biased = b.add(arith.AddiOp(part, b.const(127, i32)))
        y = b.add(arith.MulfOp(y, b.add(arith.BitcastOp(b.add(arith.ShLIOp(biased, b.const(23, i32))), b.t))))
    big = b.add(arith.CmpfOp(x0, b.const(EXP_OVERFLOW), "ogt"))
    e = b.add(arith.SelectOp(big, b.const(math.inf), y))
    nan = b.add(arith.CmpfOp(x0, x0, "uno"))
    return arith.SelectOp(nan, x0, e)


class _Expand(RewritePattern):
    def __init__(self, constants: _Constants):
        self.constants = constants

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (*RATIONAL, xmath.ExpOp)) or not _is_f32(op.operands[0]):
            return
        b = _Builder(op.results[0].type, self.constants, rewriter)
        x = op.operands[0]
        last = _exp(b, x) if isinstance(op, xmath.ExpOp) else _rational(b, x, RATIONAL[type(op)])
        rewriter.replace(op, [*b.ops, last])


@dataclass(frozen=True)
class ExpandMathPass(ModulePass):
    """Replace f32 tanh, erf and exp by polynomial approximations in arith (vectorisable),
    in CPU code (device kernels call the device's own math functions)."""

    name = "expand-math"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.body.block.ops):
            if loop.kernel_device(f) == Device.CPU and f.regions and f.regions[0].blocks:
                expand = _Expand(_Constants(f.regions[0].blocks.first))
                PatternRewriteWalker(GreedyRewritePatternApplier([expand])).rewrite_region(f.regions[0])


