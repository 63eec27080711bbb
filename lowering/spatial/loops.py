"""Loop transformations for spatial programs (used by `lower-rnn-to-spatial`).

- `merge_reductions` (gate fusion): sibling `loop.reduce`s with the same bounds become one
  reduction with an accumulator each, so all gates of a hidden unit share one pipeline
  and read the shared operand (the input+hidden vector) once per step.
- `stage_dram_reads`: a read of DRAM inside a loop nest that does not depend on every
  loop of the nest (the input vector, read again for each hidden unit) is staged: the
  elements the nest reads are copied into an SRAM buffer before the nest, and the nest
  reads that buffer.
- `hoist_row_scales`: the per-row scale of int8 weights is read once per row, outside the
  reduction over the row.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from nimble.dialects import arith
from nimble.dialects import loop


def _same(a: SSAValue, b: SSAValue) -> bool:
    if a is b:
        return True
    ca, cb = a.owner, b.owner
    return isinstance(ca, arith.ConstantOp) and isinstance(cb, arith.ConstantOp) and ca.value == cb.value


def _stores(op: Operation) -> set[SSAValue]:
    return {o.memref for o in op.walk() if isinstance(o, memref.StoreOp)}


def _loads(op: Operation) -> set[SSAValue]:
    return {o.memref for o in op.walk() if isinstance(o, memref.LoadOp)}


def _deps_between(first: Operation, later: Operation) -> list[Operation] | None:
    """The ops between `first` and `later` (same block) that `later` depends on, if they
    can all move before `first` (pure, reading nothing stored in between); else None."""
    block = later.parent_block()
    ops = list(block.ops)
    lo, hi = ops.index(first), ops.index(later)
    between = set(ops[lo + 1:hi])
    needed: set[Operation] = set()
    work = [v.owner for inner in later.walk() for v in inner.operands if isinstance(v.owner, Operation)]
    while work:
        o = work.pop()
        if o is first:
            return None  # `later` needs `first`'s result: they cannot run as one
        if o not in between or o in needed:
            continue
        needed.add(o)
        work.extend(v.owner for inner in o.walk() for v in inner.operands if isinstance(v.owner, Operation))
    stored = set().union(*(_stores(o) for o in ops[lo + 1:hi]))
    if _loads(later) & stored:
        return None
    for o in needed:
        if o.regions or not is_side_effect_free(o) or _loads(o) & stored:
            return None
    return [o for o in ops[lo + 1:hi] if o in needed]


def _merge(first: loop.ReduceOp, later: loop.ReduceOp) -> loop.ReduceOp:
    block = Block(arg_types=[IndexType()])
    values: list[SSAValue] = []
    for r in (first, later):
        env = {r.iv: block.args[0]}
        for o in r.body.block.ops:
            if isinstance(o, loop.YieldOp):
                values.extend(env[v] if v in env else v for v in o.values)
            else:
                clone = o.clone(value_mapper=env)
                block.add_op(clone)
                env.update(zip(o.results, clone.results))
    block.add_op(loop.YieldOp(values))
    merged = loop.ReduceOp(first.lower, first.upper, first.step, [*first.inits, *later.inits],
                           [*first.kinds, *later.kinds], Region(block), first.schedule)
    Rewriter.insert_op(merged, InsertPoint.before(first))
    for old, new in zip([*first.outs, *later.outs], merged.outs):
        old.replace_all_uses_with(new)
    for r in (first, later):
        r.detach()
        r.erase()
    return merged


def merge_reductions(scope: Operation) -> int:
    """Merge every `loop.reduce` into an earlier sibling with the same bounds where its
    inputs can be computed before that sibling; returns how many merged."""
    merged = 0
    for block in [b for o in scope.walk() for r in o.regions for b in r.blocks]:
        changed = True
        while changed:
            changed = False
            reduces = [o for o in block.ops if isinstance(o, loop.ReduceOp)]
            for i, first in enumerate(reduces):
                for later in reduces[i + 1:]:
                    if not all(_same(a, c) for a, c in ((first.lower, later.lower), (first.upper, later.upper),
                                                         (first.step, later.step))):
                        continue
                    deps = _deps_between(first, later)
                    if deps is None:
                        continue
                    for o in deps:
                        o.detach()
                        Rewriter.insert_op(o, InsertPoint.before(first))
                    _merge(first, later)
                    merged += 1
                    changed = True
                    break
                if changed:
                    break
    return merged


# ---------------------------------------------------------------------------------------
# Staging DRAM reads in SRAM


def _loops_around(op: Operation, scope: Operation) -> list[loop.ForeachOp | loop.ReduceOp]:
    """The loop.foreach/reduce ops around `op` inside `scope`, outermost first."""
    loops = []
    parent = op.parent_op()
    while parent is not None and parent is not scope:
        if isinstance(parent, loop.ForeachOp | loop.ReduceOp):
            loops.append(parent)
        parent = parent.parent_op()
    return loops[::-1]


def _chain(values: list[SSAValue], outer: Operation) -> tuple[list[Operation], set[SSAValue]] | None:
    """The pure ops inside `outer` computing `values` (in order), and the block arguments
    they read; None if they read anything else defined inside `outer`."""
    ops: list[Operation] = []
    args: set[SSAValue] = set()
    seen: set[Operation] = set()

    def visit(v: SSAValue) -> bool:
        owner = v.owner
        if isinstance(owner, Block):
            if loop.defined_inside(v, outer):
                args.add(v)
            return True
        if not loop.defined_inside(v, outer) or owner in seen:
            return True
        if owner.regions or not is_side_effect_free(owner):
            return False
        seen.add(owner)
        if not all(visit(o) for o in owner.operands):
            return False
        ops.append(owner)
        return True

    return (ops, args) if all(visit(v) for v in values) else None


def _is_zero(v: SSAValue) -> bool:
    return isinstance(v.owner, arith.ConstantOp) and v.owner.value.value.data == 0


def _is_one(v: SSAValue) -> bool:
    return isinstance(v.owner, arith.ConstantOp) and v.owner.value.value.data == 1


def stage_dram_reads(scope: Operation, dram: set[SSAValue]) -> int:
    """Stage reads of `dram` buffers inside loop nests of `scope` (see the module
    docstring); returns how many loads now read SRAM."""
    staged = 0
    for load in [o for o in scope.walk() if isinstance(o, memref.LoadOp) and o.memref in dram]:
        loops = _loops_around(load, scope)
        if not loops:
            continue
        outer = loops[0]
        found = _chain(list(load.indices), outer)
        if found is None:
            continue
        ops, args = found
        ivs = [lp.iv for lp in loops]
        kept = [lp for lp in loops if lp.iv in args]
        if len(kept) == len(loops) or not args <= set(ivs):
            continue  # no reuse to gain, or an index from a block that is not a loop
        if not all(_is_zero(lp.lower) and _is_one(lp.step) and not loop.defined_inside(lp.upper, outer)
                   for lp in kept):
            continue  # the copy nest needs the loops' ranges before the nest
        shape = [lp.upper.owner.value.value.data if isinstance(lp.upper.owner, arith.ConstantOp) else DYNAMIC_INDEX
                 for lp in kept]
        dynamic = [lp.upper for lp, d in zip(kept, shape) if d < 0]
        element = load.memref.type.get_element_type()
        b = Builder(InsertPoint.before(outer))
        buf = b.insert(loop.AllocOp(loop.Level.SRAM, MemRefType(element, shape), dynamic)).memref
        buf.name_hint = f"{load.memref.name_hint}_stage" if load.memref.name_hint else None
        # The copy nest: the same loops (those the read depends on), the same index code.
        env: dict[SSAValue, SSAValue] = {}
        builder = b
        for lp in kept:
            block = Block(arg_types=[IndexType()])
            builder.insert(loop.ForeachOp(lp.lower, lp.upper, lp.step, Region(block)))
            env[lp.iv] = block.args[0]
            builder = Builder(InsertPoint.at_end(block))
        for o in ops:
            clone = builder.insert(o.clone(value_mapper=env))
            env.update(zip(o.results, clone.results))
        value = builder.insert(memref.LoadOp.get(load.memref, [env.get(i, i) for i in load.indices])).res
        builder.insert(memref.StoreOp.get(value, buf, [env[lp.iv] for lp in kept]))
        for lp in kept:
            block = env[lp.iv].owner
            Builder(InsertPoint.at_end(block)).insert(loop.YieldOp())
        new = memref.LoadOp.get(buf, [lp.iv for lp in kept])
        Rewriter.replace_op(load, new)
        staged += 1
    return staged


# ---------------------------------------------------------------------------------------
# int8 scales


def hoist_row_scales(scope: Operation, scales: set[SSAValue]) -> None:
    """Move each load of a per-row scale out of the reductions its row is invariant in."""
    for load in [o for o in scope.walk() if isinstance(o, memref.LoadOp) and o.memref in scales]:
        target: Operation = load
        parent = load.parent_op()
        while isinstance(parent, loop.ReduceOp) and not loop.defined_inside(load.indices[0], parent):
            target = parent
            parent = parent.parent_op()
        if target is not load:
            load.detach()
            Rewriter.insert_op(load, InsertPoint.before(target))
