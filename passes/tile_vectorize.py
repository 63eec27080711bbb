"""`tile-vectorize`: realise the `unroll` and `vector` schedules of innermost loop nests.

For a nest `foreach i { foreach j { body } }` (the `i` loop optional) whose body holds no
loops but flat `loop.reduce`s, the schedule is read from the loops:

- `unroll = R` on `i` and `unroll = U` on `j` make an R x U register tile: the body is
  copied for each (i + r, j + u) and the copies are *jammed*: their reductions become
  one `loop.reduce` carrying every copy's accumulators, so loads shared by copies are
  made once (a matmul's B row feeds all R rows of the tile);
- `vector = V` on `j` computes V consecutive `j` at once (lane-varying loads must be
  contiguous in the last index; uniform values are broadcast);
- `vector = V` on a `loop.reduce` computes V consecutive reduction steps at once in
  vector accumulators, then combines lanes (a dot product along contiguous memory).

Iterations left over (sizes not multiples of the tile) run in peeled loops with a 1 x 1
tile; the reduction vectorisation peels its remainder too. When a body does something
the transformation does not handle (a gather along the lane, nested loops, an op with
no vector form), the nest is left as it is: schedules are hints, never semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerType,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from nimble.dialects import loop
from nimble.dialects.shape_functions import constant_index
from nimble.passes.reduction_strips import distribute

# Ops whose vector form the LLVM backend supports: widened by changing result types.
_WIDENABLE: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp, arith.NegfOp,
    arith.CmpfOp, arith.SelectOp, xmath.ExpOp, xmath.LogOp, xmath.SqrtOp, xmath.AbsFOp, xmath.PowFOp,
)
_KIND = {"add": vector.CombiningKindFlag.ADD, "mul": vector.CombiningKindFlag.MUL,
         "max": vector.CombiningKindFlag.MAXIMUMF, "min": vector.CombiningKindFlag.MINIMUMF}


class NotVectorizable(Exception):
    pass


def _schedule(op: loop._LoopOp) -> loop.Schedule:
    return op.schedule.schedule if op.schedule is not None else loop.Schedule()


@dataclass
class _Copy:
    """One copy of the body in a tile: what the loop ivs become, and the lane."""

    subst: dict[SSAValue, SSAValue]
    lane: SSAValue | None  # the original iv whose consecutive values fill the vector lanes
    width: int
    j_offset: int | None = None  # lane offset of this copy inside a packed panel
    mask: SSAValue | None = None  # lanes in range, for a masked leftover tile


class _Emitter:
    """Emits jammed, widened copies of a loop body."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.memo: list[dict[tuple, SSAValue]] = [{}]
        self.affine: set[SSAValue] = set()
        """Index values `lane + uniform`: contiguous along the lanes, like the lane itself."""
        self.packs: dict[Operation, tuple[SSAValue, SSAValue]] = {}
        """Loads redirected to a packed panel: load op -> (panel, the reduction iv)."""

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

    def const_index(self, n: int) -> SSAValue:
        return self.memoized(("index", n), lambda: self.emit(arith.ConstantOp(IntegerAttr(n, IndexType()))).result)

    def splat(self, value: float, t: VectorType) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(t, [value] * t.get_shape()[0])
        return self.memoized(("splat", value, t), lambda: self.emit(arith.ConstantOp(attr, t)).result)

    def lane_mask(self, count: SSAValue, width: int) -> SSAValue:
        """<width x i1>: lane l is on when l < count."""
        i32 = IntegerType(32)
        lanes_t = VectorType(i32, [width])
        lanes = self.memoized(("lanes", width), lambda: self.emit(arith.ConstantOp(
            DenseIntOrFPElementsAttr.from_list(lanes_t, list(range(width))), lanes_t)).result)
        n = self.broadcast(self.emit(arith.IndexCastOp(count, i32)).result, width)
        return self.emit(arith.CmpiOp.create(operands=[lanes, n], result_types=[VectorType(IntegerType(1), [width])],
                                             properties={"predicate": IntegerAttr(2, IntegerType(64))})).results[0]

    def broadcast(self, value: SSAValue, width: int) -> SSAValue:
        t = VectorType(value.type, [width])
        return self.memoized(("bcast", value, width), lambda: self.emit(vector.BroadcastOp(value, t)).vector)

    # -- one op, one copy ---------------------------------------------------------------
    def clone(self, op: Operation, copy: _Copy, varying: set[SSAValue]) -> None:
        if isinstance(op, loop.ReduceOp):
            raise NotVectorizable("reductions are jammed by the caller")
        if isinstance(op, arith.AddiOp) and copy.lane is not None and self._lane_affine(op, copy, varying):
            return
        if isinstance(op, memref.LoadOp):
            self._load(op, copy, varying)
        elif isinstance(op, memref.StoreOp):
            self._store(op, copy, varying)
        elif any(v in varying for v in op.operands) and copy.lane is not None:
            self._widen(op, copy, varying)
        else:
            self._uniform(op, copy)

    def _lane_affine(self, op: arith.AddiOp, copy: _Copy, varying: set[SSAValue]) -> bool:
        """`lane + uniform` (either order): kept as the scalar index of lane 0."""
        a, b = op.lhs, op.rhs
        if b in varying and a not in varying:
            a, b = b, a
        if b in varying or not (a is copy.lane or a in self.affine):
            return False
        self.affine.add(op.result)
        new = arith.AddiOp(copy.subst.get(a, a), copy.subst.get(b, b))
        self.emit(new)
        copy.subst[op.result] = new.result
        return True

    def _operands(self, op: Operation, copy: _Copy) -> list[SSAValue]:
        return [copy.subst.get(v, v) for v in op.operands]

    def _uniform(self, op: Operation, copy: _Copy) -> None:
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

    def _widen(self, op: Operation, copy: _Copy, varying: set[SSAValue]) -> None:
        if not isinstance(op, _WIDENABLE) or len(op.results) != 1:
            raise NotVectorizable(f"{op.name} has no vector form")
        operands = []
        for v in op.operands:
            new = copy.subst.get(v, v)
            if v not in varying:
                if isinstance(new.type, IndexType):
                    raise NotVectorizable("an index value mixes with lane values")
                new = self.broadcast(new, copy.width)
            operands.append(new)
        result_type = VectorType(op.results[0].type, [copy.width])
        key = (type(op), tuple(operands), tuple(sorted(op.properties.items())))
        copy.subst[op.results[0]] = self.memoized(key, lambda: self.emit(type(op).create(
            operands=operands, result_types=[result_type], properties=dict(op.properties),
            attributes=dict(op.attributes))).results[0])

    def _lane_index(self, indices: Sequence[SSAValue], copy: _Copy, varying: set[SSAValue]) -> bool:
        """True if the access is contiguous along the lane (lane iv as last index only)."""
        varies = [i for i in indices if i in varying]
        if not varies:
            return False
        last = indices[-1]
        if copy.lane is None or varies != [last] or not (last is copy.lane or last in self.affine):
            raise NotVectorizable("a lane-varying access that is not contiguous")
        return True

    def _load(self, op: memref.LoadOp, copy: _Copy, varying: set[SSAValue]) -> None:
        if not self._lane_index(list(op.indices), copy, varying):
            self._uniform(op, copy)
            return
        t = VectorType(op.res.type, [copy.width])
        if op in self.packs and copy.j_offset is not None:
            panel, k = self.packs[op]
            indices = [copy.subst[k], self.const_index(copy.j_offset)]
            copy.subst[op.res] = self.memoized(("vload", panel, tuple(indices), copy.width), lambda: self.emit(
                vector.LoadOp(panel, indices, t)).result)
            return
        indices = [copy.subst.get(i, i) for i in op.indices]
        if copy.mask is not None:
            if not isinstance(op.res.type, AnyFloat):
                raise NotVectorizable("masked accesses are for float buffers")
            zeros = self.splat(0.0, t)
            copy.subst[op.res] = self.memoized(("mload", op.memref, tuple(indices), copy.mask), lambda: self.emit(
                vector.MaskedLoadOp(op.memref, indices, copy.mask, zeros)).result)
            return
        copy.subst[op.res] = self.memoized(("vload", op.memref, tuple(indices), copy.width), lambda: self.emit(
            vector.LoadOp(copy.subst.get(op.memref, op.memref), indices, t)).result)

    def _store(self, op: memref.StoreOp, copy: _Copy, varying: set[SSAValue]) -> None:
        indices = [copy.subst.get(i, i) for i in op.indices]
        if not self._lane_index(list(op.indices), copy, varying):
            if copy.lane is not None and op.value in varying:
                raise NotVectorizable("a lane-varying value stored to one address")
            self._uniform(op, copy)
            return
        value = copy.subst.get(op.value, op.value)
        if op.value not in varying:
            value = self.broadcast(value, copy.width)
        if copy.mask is not None:
            if not isinstance(op.value.type, AnyFloat):
                raise NotVectorizable("masked accesses are for float buffers")
            self.emit(vector.MaskedStoreOp.create(operands=[op.memref, *indices, copy.mask, value]))
            return
        self.emit(vector.StoreOp(value, op.memref, indices))


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


class _Tile:
    """Emit one tile: `copies` of `body`, reductions jammed."""

    def __init__(self, emitter: _Emitter, body: Sequence[Operation], copies: list[_Copy], lane: SSAValue | None):
        self.e = emitter
        self.body = [o for o in body if not isinstance(o, loop.YieldOp)]
        self.copies = copies
        self.varying = varying_values(self.body, lane)

    def run(self) -> None:
        for op in self.body:
            if isinstance(op, loop.ReduceOp):
                self.reduce(op)
            else:
                for copy in self.copies:
                    self.e.clone(op, copy, self.varying)

    def reduce(self, op: loop.ReduceOp) -> None:
        body = list(op.body.block.ops)
        if any(o.regions for o in body):
            raise NotVectorizable("nested loops inside a reduction")
        vk = _schedule(op).vector
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
        n = len(op.results)
        inits: list[SSAValue] = []
        for ci, copy in enumerate(self.copies):
            for ri, init in enumerate(op.inits):
                value = seeds[ci * n + ri] if seeds is not None else copy.subst.get(init, init)
                width = widths[ci * n + ri]
                if width:
                    value = self._identity_vector(op.kinds[ri], value.type, width) if k_lane else \
                        self.e.broadcast(value, width)
                inits.append(value)
        block = Block(arg_types=[IndexType()])
        saved = self.e.b
        self.e.b = Builder(InsertPoint.at_end(block))
        self.e.memo.append({})
        yielded: list[SSAValue] = []
        inner_varying = _closure(list(op.body.block.ops), self.varying | ({op.iv} if k_lane else set()))
        for ci, copy in enumerate(self.copies):
            inner = _Copy(dict(copy.subst), op.iv, widths[ci * n]) if k_lane else \
                _Copy(dict(copy.subst), copy.lane, copy.width, copy.j_offset, copy.mask)
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
        self.e.memo.pop()
        self.e.b.insert(loop.YieldOp(yielded))
        self.e.b = saved
        kinds = [k for _ in self.copies for k in op.kinds]
        unroll = _schedule(op).unroll
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
        vt = VectorType(t, [width])
        attr = DenseIntOrFPElementsAttr.from_list(vt, [value] * width)
        return self.e.memoized(("splat", kind, vt), lambda: self.e.emit(arith.ConstantOp(attr, vt)).result)

    def reduce_along_k(self, op: loop.ReduceOp, width: int) -> None:
        """Vector accumulators over consecutive k, lanes combined, scalar remainder."""
        if any(not isinstance(r.type, AnyFloat) for r in op.results):
            raise NotVectorizable("only float reductions are vectorised along k")
        if constant_index(op.step) != 1 or constant_index(op.lower) != 0:
            raise NotVectorizable("reduction does not start at 0 with step 1")
        upper = self.copies[0].subst.get(op.upper, op.upper)
        main = _split(self.e, upper, width)
        n = len(op.results)
        vectors = self.jammed_reduce(op, self.e.const_index(0), main, self.e.const_index(width),
                                     [width] * (n * len(self.copies)), k_lane=True)
        rest = [_Copy(dict(copy.subst), None, 1) for copy in self.copies]
        totals: list[SSAValue] = []
        for ci, copy in enumerate(self.copies):
            for ri, init in enumerate(op.inits):
                kind = vector.CombiningKindAttr(_KIND[op.kinds[ri]])
                acc = copy.subst.get(init, init)
                totals.append(self.e.emit(vector.ReductionOp.create(
                    operands=[vectors[ci * n + ri], acc], result_types=[acc.type], properties={"kind": kind})).dest)
        # The remainder: the original reduction from `main` on, seeded with the lanes' totals.
        _Tile(self.e, [], rest, None).jammed_reduce(op, main, upper, self.e.const_index(1),
                                                    [0] * (n * len(rest)), seeds=totals)
        for copy, scalar in zip(self.copies, rest):
            for r in op.results:
                copy.subst[r] = scalar.subst[r]


def _split(e: _Emitter, upper: SSAValue, tile: int) -> SSAValue:
    """upper - upper % tile: where the full tiles end."""
    if tile == 1:
        return upper
    t = e.const_index(tile)
    rem = e.emit(arith.RemSIOp(upper, t)).result
    return e.emit(arith.SubiOp(upper, rem)).result


def _foreach(e: _Emitter, lower: SSAValue, upper: SSAValue, step: int, schedule: loop.Schedule | None,
             body) -> None:
    block = Block(arg_types=[IndexType()])
    saved = e.b
    e.b = Builder(InsertPoint.at_end(block))
    e.memo.append({})
    body(block.args[0])
    e.memo.pop()
    e.b.insert(loop.YieldOp())
    e.b = saved
    attr = loop.ScheduleAttr(schedule) if schedule is not None and schedule != loop.Schedule() else None
    e.emit(loop.ForeachOp(lower, upper, e.const_index(step), Region(block), attr))


def _offsets(e: _Emitter, base: SSAValue, count: int, stride: int) -> list[SSAValue]:
    out = [base]
    for r in range(1, count):
        out.append(e.emit(arith.AddiOp(base, e.const_index(r * stride))).result)
    return out


def transform_nest(outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> bool:
    """Rewrite one nest by its schedules; False (and nothing changed) if not possible."""
    for o in (outer, inner):
        if o is not None and (constant_index(o.lower) != 0 or constant_index(o.step) != 1):
            return False
    if any(isinstance(o, loop.ForeachOp) or (o.regions and not isinstance(o, loop.ReduceOp))
           for o in inner.body.block.ops):
        return False
    so = _schedule(outer) if outer is not None else loop.Schedule()
    si = _schedule(inner)
    rows, cols, width = max(so.unroll, 1), max(si.unroll, 1), si.vector if si.vector > 1 else 1
    anchor = outer if outer is not None else inner
    scratch = Block()
    e = _Emitter(Builder(InsertPoint.at_end(scratch)))
    around = [o for o in outer.body.block.ops if o is not inner and not isinstance(o, loop.YieldOp)] \
        if outer is not None else []
    if any(o.regions or isinstance(o, memref.StoreOp | vector.StoreOp) for o in around):
        return False  # a reduction or a store around the inner loop: leave the nest
    # Loads and arithmetic hoisted out of the inner loop (a bias row) go back into it:
    # the tile computes them once per row anyway.
    first = inner.body.block.first_op
    for op in around:
        op.detach()
        inner.body.block.insert_op_before(op, first)
    body = list(inner.body.block.ops)

    parallel = so.parallel or si.parallel

    def columns(i_values: list[SSAValue], j_width: int, j_cols: int, j_lower: SSAValue, j_upper: SSAValue) -> None:
        """Tiles of rows `i_values` x (`j_cols` vectors of `j_width`) over [lower, upper)."""

        def tile(j0: SSAValue) -> None:
            copies = []
            j_values = _offsets(e, j0, j_cols, j_width)
            for i_value in i_values:
                for j_value in j_values:
                    subst = {inner.iv: j_value}
                    if outer is not None:
                        subst[outer.iv] = i_value
                    copies.append(_Copy(subst, inner.iv if j_width > 1 else None, j_width))
            _Tile(e, body, copies, inner.iv if j_width > 1 else None).run()

        # Columns are parallel too: where rows are too few to split (batch 1), they are.
        _foreach(e, j_lower, j_upper, j_width * j_cols, loop.Schedule(parallel=parallel), tile)

    def remainder_columns(i_values: list[SSAValue], start: SSAValue) -> None:
        """Columns [start, n) left by full tiles: single vectors, then scalars (or one
        masked vector, with `mask`)."""
        n = inner.upper
        if width > 1:
            mid = _split(e, n, width)
            columns(i_values, width, 1, start, mid)
            start = mid
            if si.mask:
                masked_columns(i_values, start)
                return
        columns(i_values, 1, 1, start, n)

    def masked_columns(i_values: list[SSAValue], start: SSAValue) -> None:
        """The last (width - 1 or fewer) columns as one masked vector per row."""
        count = e.emit(arith.SubiOp(inner.upper, start)).result
        steps = e.emit(arith.CeilDivSIOp(count, e.const_index(width))).result  # 0 or 1

        def tile(_t: SSAValue) -> None:
            mask = e.lane_mask(count, width)
            copies = []
            for i_value in i_values:
                subst = {inner.iv: start}
                if outer is not None:
                    subst[outer.iv] = i_value
                copies.append(_Copy(subst, inner.iv, width, None, mask))
            _Tile(e, body, copies, inner.iv).run()

        _foreach(e, e.const_index(0), steps, 1, None, tile)

    def tile_rows(i_values: list[SSAValue]) -> None:
        n = inner.upper
        main = _split(e, n, width * cols)
        if width * cols > 1:
            columns(i_values, width, cols, e.const_index(0), main)
            if cols > 1 or si.mask:
                remainder_columns(i_values, main)
            else:
                columns(i_values, 1, 1, main, n)
        else:
            columns(i_values, 1, 1, e.const_index(0), n)

    def row_tiles(emit_rows) -> None:
        """`emit_rows(i_values)` for full tiles of `rows` rows, then for single rows."""
        if outer is None:
            emit_rows([None])
            return
        m = outer.upper
        main_rows = _split(e, m, rows)
        keep = loop.Schedule(parallel=parallel)
        _foreach(e, e.const_index(0), main_rows, rows, keep, lambda i0: emit_rows(_offsets(e, i0, rows, 1)))
        if rows > 1:
            _foreach(e, main_rows, m, 1, keep, lambda i: emit_rows([i]))

    def packable_loads() -> tuple[loop.ReduceOp, list[memref.LoadOp]] | None:
        """The body's single reduction and its loads to pack: read along the lanes as
        `X[..., k, j]` (k the reduction iv, j the lane), the same for every row."""
        reduces = [o for o in body if isinstance(o, loop.ReduceOp)]
        if len(reduces) != 1 or outer is None or width == 1:
            return None
        (red,) = reduces
        inside = {outer.iv, inner.iv, red.iv, *(r for o in body for r in o.results)}
        inside |= {r for o in red.body.block.ops for r in o.results}
        loads = [o for o in red.body.block.ops if isinstance(o, memref.LoadOp) and inner.iv in o.indices]
        for ld in loads:
            idx = list(ld.indices)
            if len(idx) < 2 or idx[-1] is not inner.iv or idx[-2] is not red.iv or any(i in inside for i in idx[:-2]):
                return None
        return (red, loads) if loads else None

    def packed_rows() -> None:
        """Columns outer: per panel of W columns, pack the lane operands, then all rows."""
        red, loads = packable
        panel_width = width * cols
        k_upper = red.upper
        n = inner.upper
        main_cols = _split(e, n, panel_width)

        def panel(j0: SSAValue) -> None:
            panels = {}
            for ld in loads:
                key = (ld.memref, tuple(ld.indices[:-2]))
                if key not in panels:
                    t = MemRefType(ld.res.type, [DYNAMIC_INDEX, panel_width])
                    panels[key] = e.emit(loop.AllocOp("dram", t, [k_upper])).memref

                    def copy_rows(k: SSAValue, ld=ld, buf=panels[key]) -> None:
                        for c in range(cols):
                            j = e.emit(arith.AddiOp(j0, e.const_index(c * width))).result if c else j0
                            v = e.emit(vector.LoadOp(ld.memref, [*ld.indices[:-2], k, j],
                                                     VectorType(ld.res.type, [width]))).result
                            e.emit(vector.StoreOp(v, buf, [k, e.const_index(c * width)]))

                    _foreach(e, e.const_index(0), k_upper, 1, None, copy_rows)
                e.packs[ld] = (panels[key], red.iv)
            j_values = _offsets(e, j0, cols, width)

            def rows_tile(i_values: list[SSAValue]) -> None:
                copies = [_Copy({inner.iv: j, outer.iv: i}, inner.iv, width, c * width)
                          for i in i_values for c, j in enumerate(j_values)]
                _Tile(e, body, copies, inner.iv).run()

            m = outer.upper
            main_rows = _split(e, m, rows)
            _foreach(e, e.const_index(0), main_rows, rows, None, lambda i0: rows_tile(_offsets(e, i0, rows, 1)))
            if rows > 1:
                _foreach(e, main_rows, m, 1, None, lambda i: rows_tile([i]))
            e.packs.clear()

        _foreach(e, e.const_index(0), main_cols, panel_width, loop.Schedule(parallel=parallel), panel)

        row_tiles(lambda i_values: remainder_columns(i_values, main_cols))

    packable = packable_loads() if si.pack else None
    try:
        if packable is not None:
            packed_rows()
        else:
            row_tiles(tile_rows)
    except NotVectorizable:
        for dead in reversed(list(scratch.ops)):
            dead.detach()
            dead.erase(safe_erase=False)
        return False
    for op in list(scratch.ops):
        op.detach()
        anchor.parent_block().insert_op_before(op, anchor)
    anchor.detach()
    anchor.erase()
    return True


@dataclass(frozen=True)
class TileVectorizePass(ModulePass):
    """Register tiles, vector lanes and jammed reductions from the loops' schedules."""

    name = "tile-vectorize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in [o for o in op.walk() if isinstance(o, loop.ForeachOp)]:
            if inner.parent is None:
                continue
            if any(isinstance(o, loop.ForeachOp) for o in inner.body.walk()):
                continue  # not innermost
            parent = inner.parent_op()
            outer = parent if isinstance(parent, loop.ForeachOp) else None
            if any(s is not None and s.schedule is not None for s in (outer, inner)):
                realize_nest(outer, inner)


def realize_nest(outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> bool:
    """Apply the schedules of one innermost nest: strips first (several reductions),
    else the register tile with the outer loop, else the inner loop alone."""
    if inner.schedule is not None and inner.schedule.schedule.tile > 1:
        widths = [r.schedule.schedule.vector for r in inner.body.block.ops
                  if isinstance(r, loop.ReduceOp) and r.schedule is not None]
        strips = distribute(inner, inner.schedule.schedule.unroll, max(widths, default=0))
        if strips is not None:
            return all([transform_nest(None, strip) for strip in strips])
    if transform_nest(outer, inner):
        return True
    return outer is not None and transform_nest(None, inner)
