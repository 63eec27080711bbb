"""Widening and jamming of loop bodies: the machinery under `tile-vectorize`.

A `Copy` says what one copy of a body computes in a tile (the ivs' values, the vector
lane, its offset in a packed panel, its mask); `Emitter` emits ops for copies (uniform
ops once, lane-varying ops as vector ops, contiguous accesses as vector loads/stores,
packed and masked variants); `Tile` (passes/loop_transforms/register_tile.py) emits all copies of a body
with their reductions jammed into one `loop.reduce`, or vectorised along their own iv. `NotVectorizable` is
raised for anything else, and the caller keeps the nest as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import math as xmath
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    VectorType,
    f32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index

WIDENABLE: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp, arith.NegfOp,
    arith.CmpfOp, arith.SelectOp, xmath.ExpOp, xmath.LogOp, xmath.SqrtOp, xmath.AbsFOp, xmath.PowFOp,
    xmath.FloorOp, arith.FPToSIOp, arith.AddiOp, arith.SubiOp, arith.ShLIOp, arith.ShRSIOp, arith.BitcastOp,
    # (the last ones: exp's 2^n, expand-math)
)
"""Ops whose vector form the LLVM backend supports: widened by changing result types."""
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

    def __init__(self, builder: Builder, widenable: tuple[type[Operation], ...] = WIDENABLE):
        self.b = builder
        self.widenable = widenable
        """The ops `_widen` makes lane-wide (their vector form is the backend's to print)."""
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
        operands = (copy.subst.get(a, a), copy.subst.get(b, b))
        new = self.memoized((type(op), *operands), lambda: self.emit(type(op)(*operands)).result)
        self.strides[op.result] = stride
        copy.subst[op.result] = new
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
        if not isinstance(op, self.widenable) or len(op.results) != 1 or isinstance(op.results[0].type, IndexType):
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
            inner = varying_closure(list(op.body.block.ops), varying)
            if any(v in inner for v in op.body.block.last_op.values):
                varying.update(op.results)
            continue
        if any(v in varying for v in op.operands):
            varying.update(op.results)
    return varying


def varying_closure(ops: Sequence[Operation], seed: set[SSAValue]) -> set[SSAValue]:
    varying = set(seed)
    for op in ops:
        if any(v in varying for v in op.operands):
            varying.update(op.results)
    return varying


def discard(scratch: Block) -> None:
    """Drop what an attempt emitted into `scratch` (their uses of values outside go too)."""
    for dead in reversed(list(scratch.ops)):
        dead.detach()
        dead.erase(safe_erase=False)


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
