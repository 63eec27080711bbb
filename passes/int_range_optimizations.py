"""`int-range-optimizations`: fold host index arithmetic whose outcome bounds decide.

Bounds are facts of the form `lo <= v` (an int) and `v <= w + k` (`w` an SSA value or
nothing, `k` an int), taken from constants, dims (never negative) and the counters of
`graph.while` loops: a carried index that starts at `init`, steps by a constant `>= 0`
and is compared `counter < bound` by the condition lies in `[lo(init), bound - 1]` in
the body; the induction variable of a kernel loop (`loop.foreach`, `loop.reduce`, `scf.for`) with
a positive constant step lies in `[lb, ub - 1]`; `x + c` and `x - c` shift x's bounds. From them, comparisons that always hold or never do become constants,
`max`/`min` of ordered operands become one of them, selects on a constant pick their
side, and `(x + c) - x` is `c`. The slice `xs[i]` of a loop over `xs` is the case this
is for: the Python-style clamping of `i` and `i + 1` into `[0, len(xs)]` and the check
that the slice has one row fold away, leaving the offset computation (as MLIR's
`int-range-optimizations` does with its integer range analysis).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i1
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith
from nimble.dialects import loop as loop_dialect
from nimble.dialects import dynshape
from nimble.dialects.graph import ConditionOp, WhileOp, YieldOp


@dataclass(frozen=True)
class Bound:
    lo: int | None = None  # lo <= v
    hi: tuple[SSAValue | None, int] | None = None  # v <= hi[0] + hi[1] (hi[0] None: a constant)


def _constant(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and isinstance(v.type, IndexType):
        return op.value.value.data
    return None


class _Ranges:
    def __init__(self) -> None:
        self.facts: dict[SSAValue, Bound] = {}

    def of(self, v: SSAValue) -> Bound:
        c = _constant(v)
        if c is not None:
            return Bound(c, (None, c))
        if isinstance(v.owner, dynshape.DimOp):
            return Bound(0, None)
        return self.facts.get(v, Bound())

    def ge(self, x: SSAValue, y: SSAValue) -> bool:
        """Whether `x >= y` always holds."""
        if x is y:
            return True
        bx, by = self.of(x), self.of(y)
        if by.hi is not None:
            w, k = by.hi
            if w is None and bx.lo is not None and bx.lo >= k:
                return True
            if w is x and k <= 0:
                return True
        return False

    def lt(self, x: SSAValue, y: SSAValue) -> bool:
        """Whether `x < y` always holds."""
        bx, by = self.of(x), self.of(y)
        if bx.hi is None:
            return False
        w, k = bx.hi
        return (w is y and k <= -1) or (w is None and by.lo is not None and k < by.lo)

    # -- what one op's result is known to be, or what it folds to --------------------
    def visit(self, op: Operation) -> SSAValue | int | bool | None:
        """The value `op`'s result always equals (a value, an int, a bool), if any;
        records its bounds otherwise."""
        if isinstance(op, arith.CmpiOp) and isinstance(op.lhs.type, IndexType):
            return self._compare(op.predicate.value.data, op.lhs, op.rhs)
        if isinstance(op, arith.SelectOp):
            c = op.cond.owner
            if isinstance(c, arith.ConstantOp) and c.result.type == i1:
                return op.lhs if c.value.value.data else op.rhs
            return None
        if isinstance(op, arith.MaxSIOp):
            if self.ge(op.lhs, op.rhs):
                return op.lhs
            if self.ge(op.rhs, op.lhs):
                return op.rhs
            los = [b.lo for b in (self.of(op.lhs), self.of(op.rhs)) if b.lo is not None]
            self.facts[op.result] = Bound(max(los) if los else None)
        elif isinstance(op, arith.MinSIOp):
            if self.ge(op.rhs, op.lhs):
                return op.lhs
            if self.ge(op.lhs, op.rhs):
                return op.rhs
            bl, br = self.of(op.lhs), self.of(op.rhs)
            lo = min(bl.lo, br.lo) if bl.lo is not None and br.lo is not None else None
            self.facts[op.result] = Bound(lo, bl.hi or br.hi)
        elif isinstance(op, arith.AddiOp) and isinstance(op.result.type, IndexType):
            for x, c in ((op.lhs, _constant(op.rhs)), (op.rhs, _constant(op.lhs))):
                if c is not None:
                    b = self.of(x)
                    hi = (b.hi[0], b.hi[1] + c) if b.hi is not None else None
                    self.facts[op.result] = Bound(b.lo + c if b.lo is not None else None, hi)
                    break
        elif isinstance(op, arith.SubiOp) and isinstance(op.result.type, IndexType):
            add = op.lhs.owner
            if isinstance(add, arith.AddiOp):
                for x, c in ((add.lhs, _constant(add.rhs)), (add.rhs, _constant(add.lhs))):
                    if x is op.rhs and c is not None:
                        return c
            c = _constant(op.rhs)
            if c is not None:  # x - c: x's bounds shifted
                b = self.of(op.lhs)
                hi = (b.hi[0], b.hi[1] - c) if b.hi is not None else None
                self.facts[op.result] = Bound(b.lo - c if b.lo is not None else None, hi)
        elif isinstance(op, WhileOp):
            self._counters(op)
        elif isinstance(op, loop_dialect.ForeachOp | loop_dialect.ReduceOp):
            self._induction(op.iv, op.lower, op.upper, op.step)
        elif isinstance(op, scf.ForOp):
            self._induction(op.body.block.args[0], op.lb, op.ub, op.step)
        return None

    def _compare(self, predicate: int, x: SSAValue, y: SSAValue) -> bool | None:
        # arith.cmpi predicates: eq 0, ne 1, slt 2, sle 3, sgt 4, sge 5
        if predicate in (0, 1):
            cx, cy = _constant(x), _constant(y)
            if x is y or (cx is not None and cx == cy):
                return predicate == 0
            if self.lt(x, y) or self.lt(y, x):
                return predicate == 1
            return None
        if predicate not in _SIGNED_ORDER:
            return None  # ult, ule, ugt, uge: the bounds here are signed
        less, swap = _SIGNED_ORDER[predicate]
        a, b = (y, x) if swap else (x, y)
        if self.lt(a, b):
            return less
        if self.ge(a, b):
            return not less
        return None

    def _counters(self, loop: WhileOp) -> None:
        """Bounds of the loop's counters inside its body."""
        cond, body = loop.cond_region.block, loop.body_region.block
        condition = cond.last_op
        compare = condition.operands[0].owner if isinstance(condition, ConditionOp) else None
        yielded = body.last_op
        if not isinstance(yielded, YieldOp):
            return
        for k, (init, arg) in enumerate(zip(loop.inits, body.args)):
            if not isinstance(arg.type, IndexType):
                continue
            step = yielded.operands[k].owner
            by = _constant(step.rhs) if isinstance(step, arith.AddiOp) and step.lhs is arg else None
            if by is None or by < 0:
                continue
            hi = None
            if isinstance(compare, arith.CmpiOp) and compare.predicate.value.data == 2 \
                    and compare.lhs is cond.args[k] and not loop_dialect.defined_inside(compare.rhs, loop):
                hi = (compare.rhs, -1)  # the body runs only while counter < bound
            self.facts[arg] = Bound(self.of(init).lo, hi)


    def _induction(self, iv: SSAValue, lower: SSAValue, upper: SSAValue, step: SSAValue) -> None:
        """Bounds of a kernel loop's induction variable: `lb <= iv <= ub - 1` (for a
        positive constant step)."""
        by = _constant(step)
        if by is None or by < 1:
            return
        ub = _constant(upper)
        self.facts[iv] = Bound(self.of(lower).lo, (None, ub - 1) if ub is not None else (upper, -1))


_SIGNED_ORDER = {2: (True, False), 3: (False, True), 4: (True, True), 5: (False, False)}
"""slt, sle, sgt, sge: (whether the comparison is `<` rather than `>=`, whether its
operands are swapped to say so)."""


def _fold(ranges: _Ranges, op: Operation) -> None:
    known = ranges.visit(op)
    if known is None:
        return
    if isinstance(known, SSAValue):
        value = known
    else:
        t = op.results[0].type
        const = arith.ConstantOp(IntegerAttr(int(known), t))
        Rewriter.insert_op(const, InsertPoint.before(op))
        value = const.result
    op.results[0].replace_all_uses_with(value)
    Rewriter.erase_op(op)


def fold_index_ranges(scope: Operation, kernels: bool = True) -> None:
    """Fold what bounds decide in the ops nested in `scope` (see the module docstring);
    with `kernels=False`, not inside the kernels of `scope`, a module."""
    ranges = _Ranges()
    tops = [scope] if kernels or not isinstance(scope, ModuleOp) else list(scope.ops)
    for top in tops:
        if top is not scope and loop_dialect.is_kernel(top):
            continue
        for o in list(top.walk()):  # pre-order: a loop's counters are known before its body
            if o.parent is not None and o is not scope:
                _fold(ranges, o)


@dataclass(frozen=True)
class IntRangeOptimizationsPass(ModulePass):
    """Fold host index comparisons, max/min and selects that value bounds decide (and
    the kernels' own, unless `kernels=false`: the memory stage, after the loops stage
    folded theirs and made them final)."""

    name = "int-range-optimizations"

    kernels: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_index_ranges(op, self.kernels)
