"""Widening and jamming of loop bodies: the machinery under `tile-vectorize`.

A `Copy` says what one copy of a body computes in a tile (the ivs' values, the vector
lane, its offset in a packed panel, its mask); `Emitter` emits ops for copies (uniform
ops once, lane-varying ops as vector ops, contiguous accesses as vector loads/stores,
packed and masked variants); `Tile` emits all copies of a body with their reductions
jammed into one `loop.reduce`, or vectorised along their own iv. `NotVectorizable` is
raised for anything else, and the caller keeps the nest as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import memref, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith
from nimble.dialects import loop
from nimble.dialects.shape_functions import constant_index

# Ops whose vector form the LLVM backend supports: widened by changing result types.
_WIDENABLE: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp, arith.NegfOp,
    arith.CmpfOp, arith.SelectOp, xmath.ExpOp, xmath.LogOp, xmath.SqrtOp, xmath.AbsFOp, xmath.PowFOp,
    xmath.FloorOp, arith.FPToSIOp, arith.AddiOp, arith.SubiOp, arith.ShLIOp, arith.ShRSIOp, arith.BitcastOp,
    # (the last ones: exp's 2^n, expand-math)
)
_KIND = {"add": vector.CombiningKindFlag.ADD, "mul": vector.CombiningKindFlag.MUL,
         "max": vector.CombiningKindFlag.MAXIMUMF, "min": vector.CombiningKindFlag.MINIMUMF}


_F32_MASKS = ("masked accesses are for f32 buffers: xdsl's LLVM conversion declares one `llvm.masked.*` "
              "intrinsic per module, whatever the element type (an f16 one next to an f32 one fails)")


class NotVectorizable(Exception):
    pass


def schedule_of(op: loop._LoopOp) -> loop.Schedule:
    return op.schedule.schedule if op.schedule is not None else loop.Schedule()


@dataclass
class Copy:
    """One copy of the body in a tile: what the loop ivs become, and the lane."""

    subst: dict[SSAValue, SSAValue]
    lane: SSAValue | None  # the original iv whose consecutive values fill the vector lanes
    width: int
    j_offset: int | None = None  # lane offset of this copy inside a packed panel
    mask: SSAValue | None = None  # lanes in range, for a masked leftover tile
    count: SSAValue | None = None  # how many (the mask's lanes below it are on)
    aligned: bool = False  # lane 0's value is a multiple of `width` (tile-vectorize's columns)


class Emitter:
    """Emits jammed, widened copies of a loop body."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.memo: list[dict[tuple, SSAValue]] = [{}]
        self.strides: dict[SSAValue, int] = {}
        """Index values `lane * s + uniform` and their stride s (1: contiguous along the
        lanes, like the lane itself; 2: every other element, a stride-2 window)."""
        self.packs: dict[Operation, tuple[SSAValue, SSAValue, tuple[SSAValue, ...]]] = {}
        """Loads redirected to a packed panel: load op -> (panel, the reduction iv, the
        panel's leading indices in a buffer of several panels, which a copy may
        substitute: row lanes' second panel of a pair)."""
        self.staged_columns: dict[Operation, tuple[SSAValue, SSAValue]] = {}
        """Loads `X[..., k, j]` redirected, with lanes along k, to a transposed copy of
        some columns: load op -> (copy `[j - first, k]`, first)."""

    def emit(self, op: Operation) -> Operation:
        self.b.insert(op)
        return op

    def memoized(self, key: tuple, make) -> SSAValue:
        for scope in reversed(self.memo):
            if key in scope:
                return scope[key]
        value = make()
        self.memo[-1][key] = value
        return value

    @contextmanager
    def into(self, block: Block) -> Iterator[None]:
        """Emit at the end of `block`, in a memo scope of its own; both restored however
        the emission ends (a `NotVectorizable` that a caller catches must not leave a
        scope behind: its values, in a block then dropped, would be found again)."""
        saved = self.b
        self.b = Builder(InsertPoint.at_end(block))
        self.memo.append({})
        try:
            yield
        finally:
            self.memo.pop()
            self.b = saved

    def const_index(self, n: int) -> SSAValue:
        return self.memoized(("index", n), lambda: self.emit(arith.ConstantOp(IntegerAttr(n, IndexType()))).result)

    def splat(self, value: float, t: VectorType) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(t, [value] * t.get_shape()[0])
        return self.memoized(("splat", value, t), lambda: self.emit(arith.ConstantOp(attr, t)).result)

    def lane_mask(self, count: SSAValue, width: int) -> SSAValue:
        """<width x i1>: lane l is on when l < count."""
        return self.emit(vector.CreateMaskOp([count], loop.vector_type(IntegerType(1), (width,)))).results[0]

    def foreach(self, lower: SSAValue, upper: SSAValue, step: int, schedule: loop.Schedule | None,
                body: Callable[[SSAValue], object]) -> None:
        """A `loop.foreach` over [lower, upper) by `step`, its ops emitted by `body(iv)` (in
        a memo scope of their own); nothing where the range is known empty."""
        if empty(lower, upper):
            return
        block = Block(arg_types=[IndexType()])
        with self.into(block):
            body(block.args[0])
        block.add_op(loop.YieldOp())
        attr = loop.ScheduleAttr(schedule) if schedule is not None and schedule != loop.Schedule() else None
        self.emit(loop.ForeachOp(lower, upper, self.const_index(step), Region(block), attr))

    def broadcast(self, value: SSAValue, width: int) -> SSAValue:
        t = loop.vector_type(value.type, (width,))
        return self.memoized(("bcast", value, width), lambda: self.emit(vector.BroadcastOp(value, t)).vector)

    # -- one op, one copy ---------------------------------------------------------------
    def clone(self, op: Operation, copy: Copy, varying: set[SSAValue]) -> None:
        if isinstance(op, loop.ReduceOp):
            raise NotVectorizable("reductions are jammed by the caller")
        if isinstance(op, arith.AddiOp | arith.SubiOp | arith.MuliOp) and copy.lane is not None \
                and self._lane_affine(op, copy, varying):
            return
        if isinstance(op, _LANE_BLOCK) and copy.aligned and op.lhs is copy.lane and self._lane_block(op, copy, varying):
            return
        if isinstance(op, memref.LoadOp):
            self._load(op, copy, varying)
        elif isinstance(op, memref.StoreOp):
            self._store(op, copy, varying)
        elif any(v in varying for v in op.operands) and copy.lane is not None:
            self._widen(op, copy, varying)
        else:
            self._uniform(op, copy)
            if copy.lane is not None:  # (its operands uniform: a quotient `_lane_block` made so)
                varying.difference_update(op.results)

    def stride(self, v: SSAValue, copy: Copy) -> int | None:
        return 1 if v is copy.lane else self.strides.get(v)

    def _lane_affine(self, op: arith.AddiOp | arith.SubiOp | arith.MuliOp, copy: Copy, varying: set[SSAValue]) -> bool:
        """`lane + uniform` (either order), `lane - uniform` or `lane * constant`: kept as
        the scalar index of lane 0, with its stride."""
        a, b = op.lhs, op.rhs
        if isinstance(op, arith.AddiOp | arith.MuliOp) and b in varying and a not in varying:
            a, b = b, a
        stride = self.stride(a, copy)
        if b in varying or stride is None:
            return False
        if isinstance(op, arith.MuliOp):
            factor = constant_index(b)
            if factor is None or factor < 1:
                return False
            stride *= factor
        self.strides[op.result] = stride
        new = type(op)(copy.subst.get(a, a), copy.subst.get(b, b))
        self.emit(new)
        copy.subst[op.result] = new.result
        return True

    def _lane_block(self, op: Operation, copy: Copy, varying: set[SSAValue]) -> bool:
        """`lane / c` or `lane % c` for a constant c, a multiple of the width, the lanes
        starting at a multiple of the width (`Copy.aligned`): they lie in one block of c,
        so the quotient is the same for all of them (uniform: dropped from `varying`) and
        the remainder runs on with them (stride 1). A reshape merging `[4, 64]` into 256
        reads its source at `(j / 64, j % 64)`: vector loads along j."""
        c = constant_index(op.rhs)
        if c is None or c <= 0 or c % copy.width:
            return False
        new = op.clone(value_mapper={op.lhs: copy.subst.get(op.lhs, op.lhs)})
        self.emit(new)
        copy.subst[op.results[0]] = new.results[0]
        if isinstance(op, _LANE_REMAINDERS):
            self.strides[op.results[0]] = 1
        else:
            varying.discard(op.results[0])
        return True

    def _operands(self, op: Operation, copy: Copy) -> list[SSAValue]:
        return [copy.subst.get(v, v) for v in op.operands]

    def _uniform(self, op: Operation, copy: Copy) -> None:
        if op.regions:
            raise NotVectorizable(f"{op.name} has regions")
        operands = self._operands(op, copy)
        key = (type(op), tuple(operands), tuple(r.type for r in op.results),
               tuple(sorted(op.properties.items())), tuple(sorted(op.attributes.items())))

        def make() -> SSAValue:
            new = op.clone(value_mapper=dict(zip(op.operands, operands)))
            self.emit(new)
            return new.results[0] if new.results else None

        result = self.memoized(key, make) if len(op.results) == 1 and not isinstance(op, memref.StoreOp) else make()
        if op.results:
            copy.subst[op.results[0]] = result

    def _widen(self, op: Operation, copy: Copy, varying: set[SSAValue]) -> None:
        if not isinstance(op, _WIDENABLE) or len(op.results) != 1 or isinstance(op.results[0].type, IndexType):
            raise NotVectorizable(f"{op.name} has no vector form")
        operands = []
        for v in op.operands:
            new = copy.subst.get(v, v)
            if v not in varying:
                if isinstance(new.type, IndexType):
                    raise NotVectorizable("an index value mixes with lane values")
                new = self.broadcast(new, copy.width)
            operands.append(new)
        result_type = loop.vector_type(op.results[0].type, (copy.width,))
        key = (type(op), tuple(operands), tuple(sorted(op.properties.items())))
        copy.subst[op.results[0]] = self.memoized(key, lambda: self.emit(type(op).create(
            operands=operands, result_types=[result_type], properties=dict(op.properties),
            attributes=dict(op.attributes))).results[0])

    def _lane_index(self, indices: Sequence[SSAValue], copy: Copy, varying: set[SSAValue]) -> int:
        """The stride of the access along the lanes (lane iv as last index only): 0 if
        the access is uniform, 1 if contiguous."""
        varies = [i for i in indices if i in varying]
        if not varies:
            return 0
        last = indices[-1]
        stride = self.stride(last, copy)
        if copy.lane is None or varies != [last] or stride is None:
            raise NotVectorizable("a lane-varying access that is not contiguous")
        return stride

    def _load(self, op: memref.LoadOp, copy: Copy, varying: set[SSAValue]) -> None:
        t = loop.vector_type(op.res.type, (copy.width,))
        if op in self.staged_columns and copy.lane is not None:
            staged, first = self.staged_columns[op]
            j = copy.subst.get(op.indices[-1], op.indices[-1])
            column = self.memoized(("column", j, first), lambda: self.emit(arith.SubiOp(j, first)).result)
            indices = [column, copy.subst[op.indices[-2]]]
            copy.subst[op.res] = self.memoized(("vload", staged, tuple(indices), copy.width), lambda: self.emit(
                vector.LoadOp(staged, indices, t)).result)
            return
        if op in self.packs and copy.j_offset is not None:  # (a transposed panel too)
            panel, k, at = self.packs[op]
            indices = [*(copy.subst.get(a, a) for a in at), copy.subst[k], self.const_index(copy.j_offset)]
            copy.subst[op.res] = self.memoized(("vload", panel, tuple(indices), copy.width), lambda: self.emit(
                vector.LoadOp(panel, indices, t)).result)
            return
        stride = self._lane_index(list(op.indices), copy, varying)
        if not stride:
            self._uniform(op, copy)
            varying.discard(op.res)
            return
        indices = [copy.subst.get(i, i) for i in op.indices]
        if stride != 1:
            copy.subst[op.res] = self._strided_load(op, indices, stride, copy)
            return
        if copy.mask is not None:
            if op.res.type != f32:
                raise NotVectorizable(_F32_MASKS)
            zeros = self.splat(0.0, t)
            buffer = copy.subst.get(op.memref, op.memref)
            copy.subst[op.res] = self.memoized(("mload", buffer, tuple(indices), copy.mask), lambda: self.emit(
                vector.MaskedLoadOp(buffer, indices, copy.mask, zeros)).result)
            return
        copy.subst[op.res] = self.memoized(("vload", op.memref, tuple(indices), copy.width), lambda: self.emit(
            vector.LoadOp(copy.subst.get(op.memref, op.memref), indices, t)).result)

    def _strided_load(self, op: memref.LoadOp, indices: list[SSAValue], stride: int, copy: Copy) -> SSAValue:
        """Lanes reading every other element (a stride-2 window): two overlapping vector
        loads, from lane 0's element and from the one `width - 1` further (so nothing past
        the last lane's element is read), the even elements shuffled out. Masked to
        `count` lanes, the loads take the elements up to lane `count - 1`'s: 2 count - 1
        of them, from the first load's first element on."""
        if stride != 2 or (copy.mask is not None and copy.count is None):
            raise NotVectorizable(f"a stride-{stride} access along the lanes")
        if copy.mask is not None and op.res.type != f32:
            raise NotVectorizable(_F32_MASKS)
        width = copy.width
        t = loop.vector_type(op.res.type, (width,))
        buffer = copy.subst.get(op.memref, op.memref)

        def load(at: list[SSAValue], elements: SSAValue | None) -> SSAValue:
            if elements is None:
                return self.emit(vector.LoadOp(buffer, at, t)).result
            mask = self.lane_mask(elements, width)
            return self.emit(vector.MaskedLoadOp(buffer, at, mask, self.splat(0.0, t))).result

        def make() -> SSAValue:
            elements = second_elements = None
            if copy.mask is not None:
                elements = self.emit(arith.SubiOp(self.emit(arith.MuliOp(copy.count, self.const_index(2))).result,
                                                  self.const_index(1))).result
                second_elements = self.emit(arith.SubiOp(elements, self.const_index(width - 1))).result
            first = load(indices, elements)
            further = self.emit(arith.AddiOp(indices[-1], self.const_index(width - 1))).result
            second = load([*indices[:-1], further], second_elements)
            half = width // 2
            mask = [2 * i if i < half else 2 * i + 1 for i in range(width)]
            return self.emit(vector.ShuffleOp(first, second, DenseArrayBase.from_list(i64, mask), result_type=t)).result

        return self.memoized(("vload2", buffer, tuple(indices), width, copy.mask), make)

    def _store(self, op: memref.StoreOp, copy: Copy, varying: set[SSAValue]) -> None:
        indices = [copy.subst.get(i, i) for i in op.indices]
        stride = self._lane_index(list(op.indices), copy, varying)
        if not stride:
            if copy.lane is not None and op.value in varying:
                raise NotVectorizable("a lane-varying value stored to one address")
            self._uniform(op, copy)
            return
        if stride != 1:
            raise NotVectorizable("a strided store")
        value = copy.subst.get(op.value, op.value)
        if op.value not in varying:
            value = self.broadcast(value, copy.width)
        if copy.mask is not None:
            if op.value.type != f32:
                raise NotVectorizable(_F32_MASKS)
            buffer = copy.subst.get(op.memref, op.memref)
            self.emit(vector.MaskedStoreOp.create(operands=[buffer, *indices, copy.mask, value]))
            return
        self.emit(vector.StoreOp(value, op.memref, indices))


_LANE_REMAINDERS = (arith.RemSIOp, arith.RemUIOp)
_LANE_BLOCK = (*_LANE_REMAINDERS, arith.DivSIOp, arith.DivUIOp, arith.FloorDivSIOp)
"""Index ops `Emitter._lane_block` keeps scalar for aligned lanes (lane values are
never negative: signed and unsigned agree)."""


def varying_values(ops: Sequence[Operation], lane: SSAValue | None) -> set[SSAValue]:
    """Values that depend on `lane` (through operands, or a reduce body's yields)."""
    varying: set[SSAValue] = set() if lane is None else {lane}
    for op in ops:
        if isinstance(op, loop.ReduceOp):
            inner = _closure(list(op.body.block.ops), varying)
            if any(v in inner for v in op.body.block.last_op.values):
                varying.update(op.results)
            continue
        if any(v in varying for v in op.operands):
            varying.update(op.results)
    return varying


def _closure(ops: Sequence[Operation], seed: set[SSAValue]) -> set[SSAValue]:
    varying = set(seed)
    for op in ops:
        if any(v in varying for v in op.operands):
            varying.update(op.results)
    return varying


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
        self.after_reductions = False
        """The body follows reductions made apart, their results in the copies (lanes along
        the rows sum in registers and transpose, passes/row_lanes.py): an epilogue."""

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
        if len(copies) < 2 or sum(1 for op in epilogue if not isinstance(op, memref.StoreOp)) < EPILOGUE_LOOP_OPS \
                or any(op.regions for op in epilogue):
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
            slots.append(e.emit(loop.AllocOp("reg", MemRefType(element, shape))).memref)
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
        inner_varying = _closure(list(op.body.block.ops), self.varying | ({op.iv} if k_lane else set()))
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
        block.add_op(loop.YieldOp(yielded))
        kinds = [k for _ in self.copies for k in op.kinds]
        unroll = schedule_of(op).unroll if self.unroll else 0
        kept = loop.ScheduleAttr(loop.Schedule(unroll=unroll)) if unroll > 1 else None
        new = loop.ReduceOp(lower, upper, step, inits, kinds, Region(block), kept)
        self.e.emit(new)
        results = list(new.results)
        if not k_lane:
            for ci, copy in enumerate(self.copies):
                for ri, r in enumerate(op.results):
                    copy.subst[r] = results[ci * n + ri]
        return results

    def _identity_vector(self, kind: str, t: Attribute, width: int) -> SSAValue:
        value = {"add": 0.0, "mul": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
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
                varying = _closure(list(op.body.block.ops), self.varying | {op.iv})
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


def offsets(e: Emitter, base: SSAValue, count: int, stride: int = 1) -> list[SSAValue]:
    """base, base + stride, ... (`count` values)."""
    return [base, *(e.emit(arith.AddiOp(base, e.const_index(r * stride))).result for r in range(1, count))]


def multiple_of(v: SSAValue, tile: int) -> bool:
    """Whether `v` is known to be a multiple of `tile`: a constant, `x * c`, `x - x % c`
    (a split point) or a select of two such, for c a multiple of tile."""
    c = constant_index(v)
    if c is not None:
        return c % tile == 0
    op = v.owner
    if isinstance(op, arith.MuliOp):
        return any((constant_index(x) or 1) % tile == 0 for x in op.operands)
    if isinstance(op, arith.SubiOp) and isinstance(op.rhs.owner, arith.RemSIOp):
        rem = op.rhs.owner
        return rem.lhs is op.lhs and (constant_index(rem.rhs) or 1) % tile == 0
    if isinstance(op, arith.SelectOp):
        return multiple_of(op.lhs, tile) and multiple_of(op.rhs, tile)
    return False


def empty(lower: SSAValue, upper: SSAValue) -> bool:
    """Whether [lower, upper) is known empty at compile time (a static size's leftovers)."""
    lo, hi = constant_index(lower), constant_index(upper)
    return lower is upper or (lo is not None and hi is not None and lo >= hi)


def split_at(e: Emitter, upper: SSAValue, tile: int) -> SSAValue:
    """upper - upper % tile: where the full tiles end."""
    if tile == 1 or multiple_of(upper, tile):
        return upper
    c = constant_index(upper)
    if c is not None:
        return e.const_index(c - c % tile)

    def make() -> SSAValue:
        rem = e.emit(arith.RemSIOp(upper, e.const_index(tile))).result
        return e.emit(arith.SubiOp(upper, rem)).result

    # Made once per scope: splitting the same bound again gives the same value, and a
    # range from it to itself is seen empty (a conv's im2col rows left no vector
    # columns between their whole vectors and their masked step: 5-10% of the kernel).
    return e.memoized(("split_at", upper, tile), make)
