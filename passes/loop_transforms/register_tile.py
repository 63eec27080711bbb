"""Register tiles: `Tile` emits every copy of a body (`Copy`, one per element of the
tile) with their reductions jammed into one `loop.reduce` (loads shared by copies made
once), or vectorised along their own iv (lanes along k, a masked last step); the
epilogue after the reductions as a loop over the copies when it is long. The copies'
ops come from `Emitter` (passes/loop_transforms/tile_emitter.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IndexType,
    MemRefType,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index
from nimble.passes.loop_transforms.tile_emitter import (
    Copy,
    Emitter,
    NotVectorizable,
    schedule_of,
    split_at,
    varying_closure,
    varying_values,
)

_KIND = {loop.Combiner.ADD: vector.CombiningKindFlag.ADD, loop.Combiner.MUL: vector.CombiningKindFlag.MUL,
         loop.Combiner.MAX: vector.CombiningKindFlag.MAXIMUMF, loop.Combiner.MIN: vector.CombiningKindFlag.MINIMUMF}


EPILOGUE_LOOP_OPS = 16
"""Ops after a tile's reductions (stores aside) from which they run as a loop over the
tile's copies (`Tile._epilogue_loop`): gelu (~30 ops per vector) takes it, a bias and an
activation (2 or 3) keep one copy each. Measured on `gelu(x W + b)` at `?` rows (same
process, alternating, min of 36 calls), loop vs a copy per tile element: dense 256 ->
1024 kernel 2134 loop-level ops vs 4618, first-call JIT 0.66-0.67 s vs 0.80-0.81; dense
768 -> 3072 0.64-0.74 vs 0.79-0.85 s, matmul 768 -> 3072 0.42-0.45 vs 0.58-0.68 s; run
time at 5, 20, 128 and 600 rows, 1 thread: x1.01-1.13 faster (dense), x1.00-1.01
(matmul); 2 threads x1.00-1.07 (dense), matmul x0.94-1.11 over two runs (noise at 5 and
20 rows)."""


class Tile:
    """Emit one tile: `copies` of `body`, reductions jammed."""

    def __init__(self, emitter: Emitter, body: Sequence[Operation], copies: list[Copy], lane: SSAValue | None,
                 unroll: bool = True, k_width: int = 0, each_step: Callable[[SSAValue], None] | None = None):
        self.e = emitter
        self.body = [o for o in body if not isinstance(o, loop.YieldOp)]
        self.copies = copies
        self.varying = varying_values(self.body, lane)
        self.unroll = unroll
        """Keep the reductions' `unroll` (off for leftover tiles: they run once per row
        of tiles, and each unrolled copy is code to compile)."""
        self.k_width = k_width
        """Lanes along k for the reductions whatever their schedule (dot products)."""
        self.each_step = each_step
        """Emits ops once per step of the jammed reductions, given the step's index, after
        the copies' (software prefetches)."""
        self.epilogue_loops = True
        """Whether a long epilogue may run as a loop over the copies (`_epilogue_loop`)."""
        self.after_reductions = False
        """The body follows reductions made apart, their results in the copies (lanes along
        the rows sum in registers and transpose, passes/loop_transforms/row_lanes.py): an epilogue."""

    def run(self) -> None:
        reduces = [n for n, op in enumerate(self.body) if isinstance(op, loop.ReduceOp)]
        after = reduces[-1] + 1 if reduces else (0 if self.after_reductions else len(self.body))
        for op in self.body[:after]:
            if isinstance(op, loop.ReduceOp):
                self.reduce(op)
            else:
                for copy in self.copies:
                    self.e.clone(op, copy, self.varying)
        epilogue = self.body[after:]
        if not self._epilogue_loop(epilogue):
            for op in epilogue:
                for copy in self.copies:
                    self.e.clone(op, copy, self.varying)

    def _epilogue_loop(self, epilogue: list[Operation]) -> bool:
        """The ops after the reductions (a dense layer's bias and gelu, then the store) as
        a loop over the tile's copies, not a copy each, when they are `EPILOGUE_LOOP_OPS`
        or more: each copy's values they use (its accumulators, its row and column) are
        first stored to a small stack buffer, one slot per copy, and each trip loads one
        copy's. The register tile's code then holds one epilogue instead of one per copy
        (24 in a 6 x 4 tile); the round trip through the stack is a store and a load per
        value against the epilogue's ~30 vector ops per copy. Not for masked copies (each
        has its own mask) or ops with regions. Returns whether it did."""
        copies = self.copies
        long = sum(1 for op in epilogue if not isinstance(op, memref.StoreOp)) >= EPILOGUE_LOOP_OPS
        if not (self.epilogue_loops and long) or len(copies) < 2 or any(op.regions for op in epilogue):
            return False
        first = copies[0]
        if any(c.mask is not None or (c.lane, c.width, c.aligned) != (first.lane, first.width, first.aligned)
               for c in copies) or any(op in self.e.packs or op in self.e.staged_columns for op in epilogue):
            return False  # (a copy's offset in a packed panel matters to the reductions' loads only)
        made = {r for op in epilogue for r in op.results}
        used = list(dict.fromkeys(v for op in epilogue for v in op.operands if v not in made))
        per_copy = [v for v in used if any(c.subst.get(v, v) is not first.subst.get(v, v) for c in copies)]
        types = [first.subst.get(v, v).type for v in per_copy]
        if any(c.subst.get(v, v).type != t for c in copies for v, t in zip(per_copy, types)) \
                or any(not isinstance(t, VectorType | IndexType | AnyFloat) for t in types):
            return False
        e, n = self.e, len(copies)
        slots = []
        for v, t in zip(per_copy, types):  # one slot per copy: [n] or [n, lanes]
            shape = [n, *t.get_shape()] if isinstance(t, VectorType) else [n]
            element = t.get_element_type() if isinstance(t, VectorType) else t
            slots.append(e.emit(loop.AllocOp(loop.Level.REG, MemRefType(element, shape))).memref)
        for index, copy in enumerate(copies):
            at = e.const_index(index)
            for v, t, slot in zip(per_copy, types, slots):
                value = copy.subst.get(v, v)
                if isinstance(t, VectorType):
                    e.emit(vector.StoreOp(value, slot, [at, e.const_index(0)]))
                else:
                    e.emit(memref.StoreOp.get(value, slot, [at]))

        def trip(at: SSAValue) -> None:  # one copy's epilogue
            copy = Copy(dict(first.subst), first.lane, first.width, None, None, None, first.aligned)
            for v, t, slot in zip(per_copy, types, slots):
                if isinstance(t, VectorType):
                    copy.subst[v] = e.emit(vector.LoadOp(slot, [at, e.const_index(0)], t)).result
                else:
                    copy.subst[v] = e.emit(memref.LoadOp.get(slot, [at])).res
            for op in epilogue:
                e.clone(op, copy, self.varying)

        e.foreach(e.const_index(0), e.const_index(n), 1, None, trip)
        return True

    def reduce(self, op: loop.ReduceOp) -> None:
        body = list(op.body.block.ops)
        if any(o.regions for o in body):
            raise NotVectorizable("nested loops inside a reduction")
        vk = self.k_width or schedule_of(op).vector
        if vk > 1 and all(c.lane is None for c in self.copies):
            self.reduce_along_k(op, vk)
            return
        self.jammed_reduce(op, op.lower, op.upper, op.step, [c.width if r in self.varying else 0
                                                            for c in self.copies for r in op.results])

    def jammed_reduce(self, op: loop.ReduceOp, lower: SSAValue, upper: SSAValue, step: SSAValue,
                      widths: list[int], k_lane: bool = False,
                      seeds: list[SSAValue] | None = None) -> list[SSAValue]:
        """One reduce carrying every copy's accumulators (initial values `seeds`, flat by
        copy, default the op's inits); returns the new results, flat by copy."""
        for bound in (op.lower, op.upper, op.step):
            if len({copy.subst.get(bound, bound) for copy in self.copies}) > 1:
                raise NotVectorizable("reduction bounds differ between the tile's copies")
            if bound in self.varying and not k_lane:
                raise NotVectorizable("reduction bounds differ between the lanes")
        n = len(op.results)
        inits: list[SSAValue] = []
        for ci, copy in enumerate(self.copies):
            for ri, init in enumerate(op.inits):
                value = seeds[ci * n + ri] if seeds is not None else copy.subst.get(init, init)
                width = widths[ci * n + ri]
                if width and k_lane:
                    value = self._identity_vector(op.kinds[ri], value.type, width)
                elif width and not isinstance(value.type, VectorType):  # seeded by a lane-varying value: a vector already
                    value = self.e.broadcast(value, width)
                inits.append(value)
        block = Block(arg_types=[IndexType()])
        yielded: list[SSAValue] = []
        inner_varying = varying_closure(list(op.body.block.ops), self.varying | ({op.iv} if k_lane else set()))
        with self.e.into(block):
            for ci, copy in enumerate(self.copies):
                inner = Copy(dict(copy.subst), op.iv, widths[ci * n]) if k_lane else \
                    Copy(dict(copy.subst), copy.lane, copy.width, copy.j_offset, copy.mask, copy.count)
                inner.subst[op.iv] = block.args[0]
                for body_op in op.body.block.ops:
                    if isinstance(body_op, loop.YieldOp):
                        for ri, v in enumerate(body_op.values):
                            new = inner.subst.get(v, v)
                            width = widths[ci * n + ri]
                            if width and v not in inner_varying:
                                new = self.e.broadcast(new, width)
                            elif not width and v in inner_varying:
                                raise NotVectorizable("a lane-varying value reduced into a scalar")
                            yielded.append(new)
                    else:
                        self.e.clone(body_op, inner, inner_varying)
            if self.each_step is not None:
                self.each_step(block.args[0])
        kinds = [k for _ in self.copies for k in op.kinds]
        # Copies that start from the same value and add the same values (a row's sum in
        # each of the row's vectors) share one accumulator.
        carried = list(dict.fromkeys(zip(inits, yielded, kinds)))
        block.add_op(loop.YieldOp([y for _, y, _ in carried]))
        unroll = schedule_of(op).unroll if self.unroll else 0
        kept = loop.ScheduleAttr(loop.Schedule(unroll=unroll)) if unroll > 1 else None
        new = loop.ReduceOp(lower, upper, step, [i for i, _, _ in carried], [k for _, _, k in carried],
                            Region(block), kept)
        self.e.emit(new)
        result_of = dict(zip(carried, new.results))
        results = [result_of[key] for key in zip(inits, yielded, kinds)]
        if not k_lane:
            for ci, copy in enumerate(self.copies):
                for ri, r in enumerate(op.results):
                    copy.subst[r] = results[ci * n + ri]
        return results

    def _identity_vector(self, kind: loop.Combiner, t: Attribute, width: int) -> SSAValue:
        value = kind.identity(t)
        vt = loop.vector_type(t, (width,))
        attr = DenseIntOrFPElementsAttr.from_list(vt, [value] * width)
        return self.e.memoized(("splat", kind, vt), lambda: self.e.emit(arith.ConstantOp(attr, vt)).result)

    def reduce_along_k(self, op: loop.ReduceOp, width: int) -> None:
        """Vector accumulators over consecutive k, lanes combined, scalar remainder."""
        if any(not isinstance(r.type, AnyFloat) for r in op.results):
            raise NotVectorizable("only float reductions are vectorised along k")
        if constant_index(op.step) != 1:
            raise NotVectorizable("reduction does not step by 1")
        upper = self.copies[0].subst.get(op.upper, op.upper)
        lower = self.copies[0].subst.get(op.lower, op.lower)
        if any(copy.subst.get(op.lower, op.lower) is not lower for copy in self.copies):
            raise NotVectorizable("reduction starts where the tile's copies differ")
        if constant_index(lower) == 0:
            main = split_at(self.e, upper, width)
        else:  # full vectors from `lower` on (the upper part of a split reduction)
            count = self.e.emit(arith.SubiOp(upper, lower)).result
            main = self.e.emit(arith.AddiOp(lower, split_at(self.e, count, width))).result
        n = len(op.results)
        vectors = self.jammed_reduce(op, lower, main, self.e.const_index(width),
                                     [width] * (n * len(self.copies)), k_lane=True)
        if main is not upper and schedule_of(op).mask:
            masked = self._masked_step(op, main, upper, width, vectors)
            if masked is not None:
                vectors, main = masked, upper
        rest = [Copy(dict(copy.subst), None, 1) for copy in self.copies]
        totals: list[SSAValue] = []
        for ci, copy in enumerate(self.copies):
            for ri, init in enumerate(op.inits):
                kind = vector.CombiningKindAttr(_KIND[op.kinds[ri]])
                acc = copy.subst.get(init, init)
                totals.append(self.e.emit(vector.ReductionOp.create(
                    operands=[vectors[ci * n + ri], acc], result_types=[acc.type], properties={"kind": kind})).dest)
        if main is upper:  # no remainder
            for ci, copy in enumerate(self.copies):
                for ri, r in enumerate(op.results):
                    copy.subst[r] = totals[ci * n + ri]
            return
        # The remainder: the original reduction from `main` on, seeded with the lanes' totals.
        Tile(self.e, [], rest, None).jammed_reduce(op, main, upper, self.e.const_index(1),
                                                    [0] * (n * len(rest)), seeds=totals)
        for copy, scalar in zip(self.copies, rest):
            for r in op.results:
                copy.subst[r] = scalar.subst[r]

    def _masked_step(self, op: loop.ReduceOp, start: SSAValue, upper: SSAValue, width: int,
                     vectors: list[SSAValue]) -> list[SSAValue] | None:
        """The steps [start, upper) whole vectors leave (fewer than `width`) as one step in
        lanes under a mask, off lanes taking the combiner's identity, into each copy's
        accumulators `vectors` (a softmax row of 8 or 100: one vector step, not a scalar
        loop of exps). A `loop.reduce` by `width`: it runs once, or not at all when no
        step is left (a row of 128 pays nothing for it). None, and nothing emitted, if
        the body cannot be masked (an f16 row: the caller's scalar steps instead)."""
        e = self.e
        block = Block(arg_types=[IndexType()])
        try:
            with e.into(block):
                count = e.emit(arith.SubiOp(upper, block.args[0])).result
                mask = e.lane_mask(count, width)
                varying = varying_closure(list(op.body.block.ops), self.varying | {op.iv})
                yielded: list[SSAValue] = []
                for copy in self.copies:
                    step = Copy(dict(copy.subst), op.iv, width, mask=mask, count=count)
                    step.subst[op.iv] = block.args[0]
                    body = list(op.body.block.ops)
                    for body_op in body[:-1]:
                        e.clone(body_op, step, varying)
                    for ri, v in enumerate(body[-1].operands):
                        value = step.subst.get(v, v)
                        if v not in varying:
                            value = e.broadcast(value, width)
                        identity = self._identity_vector(op.kinds[ri], value.type.get_element_type(), width)
                        yielded.append(e.emit(arith.SelectOp(mask, value, identity)).result)
        except NotVectorizable:
            return None  # (the block and its memo scope are dropped: nothing escaped them)
        block.add_op(loop.YieldOp(yielded))
        kinds = [k for _ in self.copies for k in op.kinds]
        return list(e.emit(loop.ReduceOp(start, upper, e.const_index(width), vectors, kinds, Region(block))).results)
