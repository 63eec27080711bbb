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
  vector accumulators, then combines lanes (a dot product along contiguous memory);
- `vector = V` on `i` (with `unroll = V` on `j`) puts the lanes along the rows for the
  reduction and transposes the V x V accumulators for the rest of the body
  (passes/loop_transforms/row_lanes.py: a dense layer with few rows, `W` read in place; `pack` on `j`
  stages each tile's rows of `W` first); without a reduction (a copy that transposes)
  it runs in V x V blocks transposed in registers (passes/loop_transforms/transpose_tiles.py).

Iterations left over (sizes not multiples of the tile) run in peeled loops with a 1 x 1
tile (one masked vector step with `mask`); the reduction vectorisation peels its
remainder too. With `dots` on `j`, the columns a register tile's vectors leave run after
all the rows as dot products along the reduction (`leftover_dots`). When a body does something
the transformation does not handle (a gather along the lane, nested loops, an op with
no vector form), the nest is left as it is: schedules are hints, never semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index
from nimble.passes.loop_transforms.pack_panels import column_read, copy_panel, lane_index, transposed
from nimble.passes.loop_transforms.reduction_strips import distribute
from nimble.passes.loop_transforms.register_tile import Tile
from nimble.passes.loop_transforms.row_lanes import row_lanes
from nimble.passes.loop_transforms.tile_emitter import (
    Copy,
    Emitter,
    NotVectorizable,
    discard,
    empty,
    offsets,
    schedule_of,
    split_at,
)
from nimble.passes.loop_transforms.transpose_tiles import transpose_tiles


def _leftover_end(e: Emitter, start: SSAValue, upper: SSAValue, tile: int) -> SSAValue:
    """Where whole tiles of `tile` from `start` end, before `upper`."""
    lo, hi = constant_index(start), constant_index(upper)
    if lo is not None and hi is not None:
        return e.const_index(lo + (hi - lo) // tile * tile)
    count = e.emit(arith.SubiOp(upper, start)).result
    return e.emit(arith.AddiOp(start, split_at(e, count, tile))).result


MASK_MIN_COLUMNS = 2
"""Leftover columns from which a register tile's remainder is one masked vector step
(`mask`, where not `dots`); a single column runs scalar. Measured before `dots`, 1
thread, 3 x 3 conv + relu (static shapes, panels of 64 pixels): 256 channels at 14 x 14
(4 pixels left) masked 2.57 ms vs scalar 3.46; 512 channels at 7 x 7 (1 pixel left)
3.08 vs 2.88."""


def _defined_in(value: SSAValue, nest: Operation) -> bool:
    """Whether `value` is computed inside `nest` (an iv of it or an op in its body)."""
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is not None and (op is nest or nest.is_ancestor(op))


class _NestTiler:
    """One nest rewritten by its schedules (`transform_nest`): register tiles of `rows` x
    `cols` vectors of `width`, then the rows and columns they leave, or packed panels
    of the lane operands. Emits into `e`; a shape it cannot take raises `NotVectorizable`."""

    def __init__(self, e: Emitter, outer: loop.ForeachOp | None, inner: loop.ForeachOp, body: list[Operation],
                 so: loop.Schedule, si: loop.Schedule):
        self.e, self.outer, self.inner, self.body, self.si = e, outer, inner, body, si
        self.rows, self.cols = max(so.unroll, 1), max(si.unroll, 1)
        self.width = si.vector if si.vector > 1 else 1
        self.parallel = so.parallel or si.parallel
        self.packable: tuple[loop.ReduceOp, list[memref.LoadOp]] | None = None
        self.dots: Block | None = None

    def columns(self, i_values: list[SSAValue], j_width: int, j_cols: int, j_lower: SSAValue,
                j_upper: SSAValue) -> None:
        """Tiles of rows `i_values` x (`j_cols` vectors of `j_width`) over [lower, upper)."""

        def tile(j0: SSAValue) -> None:
            copies = []
            j_values = offsets(self.e, j0, j_cols, j_width)
            for i_value in i_values:
                for j_value in j_values:
                    subst = {self.inner.iv: j_value}
                    if self.outer is not None:
                        subst[self.outer.iv] = i_value
                    copies.append(Copy(subst, self.inner.iv if j_width > 1 else None, j_width, aligned=True))
            lane = self.inner.iv if j_width > 1 else None
            Tile(self.e, self.body, copies, lane, len(i_values) == self.rows).run()

        # Columns are parallel too: where rows are too few to split (batch 1), they are.
        self.e.foreach(j_lower, j_upper, j_width * j_cols, loop.Schedule(parallel=self.parallel), tile)

    def leftover_vectors(self, i_values: list[SSAValue], start: SSAValue, end: SSAValue) -> None:
        """Whole vectors [start, end) left by full tiles (fewer than `cols`): in a conv's
        panels (`mask`: a short last panel), one tile of `cols - 1` where that many are
        left, then single vectors. A 7 x 7 map's 49 pixels leave 3, and each single-vector
        tile read all the weights again: 512 channels, 1 thread, 2.74 -> 2.40 ms. (Not for
        other nests: the matmul kernel's fallback paths took 20% longer to compile; nor
        for the few rows full tiles leave, at most `rows - 1` of a conv's channels.)"""
        if self.cols > 2 and self.si.mask and len(i_values) == self.rows:
            wide = _leftover_end(self.e, start, end, self.width * (self.cols - 1))
            self.columns(i_values, self.width, self.cols - 1, start, wide)
            start = wide
        self.columns(i_values, self.width, 1, start, end)

    def remainder_columns(self, i_values: list[SSAValue], start: SSAValue) -> None:
        """Columns [start, n) left by full tiles: whole vectors, then scalars (or one
        masked vector, with `mask`)."""
        n = self.inner.upper
        if self.width > 1:
            mid = split_at(self.e, n, self.width)
            self.leftover_vectors(i_values, start, mid)
            start = mid
            if self.si.mask:
                self.masked_columns(i_values, start)
                return
        self.columns(i_values, 1, 1, start, n)

    def masked_columns(self, i_values: list[SSAValue], start: SSAValue) -> None:
        """The last (width - 1 or fewer) columns as one masked vector per row; in a
        register tile (a reduction per element) only from `MASK_MIN_COLUMNS` of them,
        else one by one."""
        n = self.inner.upper
        if empty(start, n):
            return  # no columns left (a static size)
        if any(isinstance(o, loop.ReduceOp) for o in self.body):
            left = self.e.emit(arith.SubiOp(n, start)).result
            enough = self.e.emit(arith.CmpiOp(left, self.e.const_index(MASK_MIN_COLUMNS), "sge")).result
            n = self.e.emit(arith.SelectOp(enough, n, start)).result
        count = self.e.emit(arith.SubiOp(n, start)).result
        steps = self.e.emit(arith.CeilDivSIOp(count, self.e.const_index(self.width))).result  # 0 or 1

        def tile(_t: SSAValue) -> None:
            mask = self.e.lane_mask(count, self.width)
            copies = []
            for i_value in i_values:
                subst = {self.inner.iv: start}
                if self.outer is not None:
                    subst[self.outer.iv] = i_value
                copies.append(Copy(subst, self.inner.iv, self.width, None, mask, count, aligned=True))
            Tile(self.e, self.body, copies, self.inner.iv).run()

        self.e.foreach(self.e.const_index(0), steps, 1, loop.Schedule(parallel=self.parallel), tile)
        if n is not self.inner.upper:
            self.columns(i_values, 1, 1, n, self.inner.upper)

    def tile_rows(self, i_values: list[SSAValue]) -> None:
        n = self.inner.upper
        main = split_at(self.e, n, self.width * self.cols)
        if self.width * self.cols > 1:
            self.columns(i_values, self.width, self.cols, self.e.const_index(0), main)
            if self.dots is not None:  # the columns left by whole vectors come after the rows
                if self.cols > 1:
                    self.leftover_vectors(i_values, main, split_at(self.e, n, self.width))
            elif self.cols > 1 or self.si.mask:
                self.remainder_columns(i_values, main)
            else:
                self.columns(i_values, 1, 1, main, n)
        else:
            self.columns(i_values, 1, 1, self.e.const_index(0), n)

    def row_tiles(self, emit_rows) -> None:
        """`emit_rows(i_values)` for full tiles of `rows` rows, then for single rows."""
        if self.outer is None:
            emit_rows([None])
            return
        m = self.outer.upper
        main_rows = split_at(self.e, m, self.rows)
        keep = loop.Schedule(parallel=self.parallel)
        self.e.foreach(self.e.const_index(0), main_rows, self.rows, keep,
                       lambda i0: emit_rows(offsets(self.e, i0, self.rows, 1)))
        self.leftover_rows(main_rows, m, keep, emit_rows)

    def leftover_rows(self, start: SSAValue, m: SSAValue, schedule: loop.Schedule | None, emit_rows) -> None:
        """Rows [start, m), fewer than a tile, in tiles of 4, 2 and 1 rows (rows of a
        tile share every load of the other operand); with a static row count only the
        tiles it needs."""
        size = 1 << (self.rows - 1).bit_length() - 1 if self.rows > 1 else 0
        while size >= 1:
            end = m if size == 1 else _leftover_end(self.e, start, m, size)
            lo, hi = constant_index(start), constant_index(end)
            if lo is None or hi is None or lo < hi:
                self.e.foreach(start, end, size, schedule,
                               lambda i0, size=size: emit_rows(offsets(self.e, i0, size, 1)))
            start, size = end, size // 2

    def packed_rows(self) -> None:
        """Columns outer: per panel of W columns, pack the lane operands, then all rows,
        each row tile running the panel's register tiles one after the other (`panel`
        columns, several tiles: the rows' operand read from L1 by all of them); the
        columns wide panels leave in panels of one tile."""
        red, loads = self.packable
        tile_width = self.width * self.cols
        wide = self.si.panel if self.si.panel > tile_width and self.si.panel % tile_width == 0 else tile_width
        n = self.inner.upper
        main_wide = split_at(self.e, n, wide)
        main_cols = split_at(self.e, n, tile_width) if wide > tile_width else main_wide
        self.e.foreach(self.e.const_index(0), main_wide, wide, loop.Schedule(parallel=self.parallel),
                  lambda j0: self.panel(j0, wide // tile_width))
        lo, hi = constant_index(main_wide), constant_index(main_cols)
        if main_cols is not main_wide and (lo is None or hi is None or lo < hi):
            self.e.foreach(main_wide, main_cols, tile_width, loop.Schedule(parallel=self.parallel),
                           lambda j0: self.panel(j0, 1))
        self.packed_leftovers(red, loads, main_cols)

    def panel(self, j0: SSAValue, tiles: int) -> None:
        """Pack `tiles` register tiles' columns from `j0` on, then run every row on them."""
        red, loads = self.packable
        panel_width = self.width * self.cols * tiles
        k_upper = red.upper
        panels = {}
        for ld in loads:
            key = (ld.memref, tuple(ld.indices))
            if key not in panels:
                t = MemRefType(ld.res.type, [DYNAMIC_INDEX, panel_width])
                panels[key] = self.e.emit(loop.AllocOp(loop.Level.DRAM, t, [k_upper])).memref

                copy_panel(self.e, lambda lo, hi, step, f: self.e.foreach(lo, hi, step, None, f), ld, red.iv,
                           panels[key], j0, k_upper, self.width, self.cols * tiles,
                           offset=column_offset(ld, self.inner, red))
            self.e.packs[ld] = (panels[key], red.iv, ())
        j_values = offsets(self.e, j0, self.cols * tiles, self.width)

        def rows_tile(i_values: list[SSAValue]) -> None:
            for t in range(tiles):
                tile_columns = j_values[t * self.cols:(t + 1) * self.cols]
                copies = [Copy({self.inner.iv: j, self.outer.iv: i}, self.inner.iv, self.width,
                               (t * self.cols + c) * self.width)
                          for i in i_values for c, j in enumerate(tile_columns)]
                Tile(self.e, self.body, copies, self.inner.iv, len(i_values) == self.rows).run()

        m = self.outer.upper
        main_rows = split_at(self.e, m, self.rows)
        self.e.foreach(self.e.const_index(0), main_rows, self.rows, None,
                       lambda i0: rows_tile(offsets(self.e, i0, self.rows, 1)))
        self.leftover_rows(main_rows, m, None, rows_tile)
        self.e.packs.clear()

    def packed_leftovers(self, red: loop.ReduceOp, loads: list[memref.LoadOp], main_cols: SSAValue) -> None:
        """The columns whole panels leave."""
        n = self.inner.upper
        if main_cols is n:  # whole panels (schedule-loops' split)
            return
        if self.dots is not None:  # the columns left by whole vectors come after the rows
            if not all(transposed(ld, red.iv) for ld in loads):
                self.row_tiles(lambda i_values: self.columns(i_values, self.width, 1, main_cols,
                                                             split_at(self.e, n, self.width)))
        elif any(transposed(ld, red.iv) for ld in loads):  # no lane reads a transposed operand in place
            self.row_tiles(lambda i_values: self.columns(i_values, 1, 1, main_cols, n))
        else:
            self.row_tiles(lambda i_values: self.remainder_columns(i_values, main_cols))

    def attempt(self, emit) -> Block | None:
        """What `emit()` makes, in a block of its own; None if it cannot."""
        block = Block()
        try:
            with self.e.into(block):
                emit()
            return block
        except NotVectorizable:
            discard(block)
            return None
        finally:
            self.e.staged_columns.clear()


def transform_nest(outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> bool:
    """Rewrite one nest by its schedules; False (and nothing changed) if not possible."""
    for o in (outer, inner):
        if o is not None and (constant_index(o.lower) != 0 or constant_index(o.step) != 1):
            return False
    if any(isinstance(o, loop.ForeachOp) or (o.regions and not isinstance(o, loop.ReduceOp))
           for o in inner.body.block.ops):
        return False
    anchor = outer if outer is not None else inner
    if any(isinstance(o, loop.ReduceOp) and any(_defined_in(v, anchor) for v in (o.lower, o.upper, o.step))
           for o in inner.body.block.ops):
        return False  # a triangular nest (a running sum): its lanes would need other trip counts
    so = schedule_of(outer) if outer is not None else loop.Schedule()
    si = schedule_of(inner)
    scratch = Block()
    e = Emitter(Builder(InsertPoint.at_end(scratch)))
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
    t = _NestTiler(e, outer, inner, body, so, si)
    foreach = e.foreach  # foreach(lower, upper, step, schedule, body)
    lane_loads = packable_loads(outer, inner) if t.width > 1 else None
    t.packable = lane_loads if si.pack else None
    t.dots = None if lane_loads is None or not si.dots or so.vector > 1 else t.attempt(lambda: leftover_dots(
        e, outer, inner, body, *lane_loads, t.width, t.cols, t.rows, t.parallel, foreach))
    try:
        if so.vector > 1 and not any(isinstance(o, loop.ReduceOp) for o in body):
            transpose_tiles(e, outer, inner, body, foreach)
        elif so.vector > 1:
            row_lanes(e, outer, inner, body, foreach)
        elif t.packable is not None:
            t.packed_rows()
        else:
            t.row_tiles(t.tile_rows)
    except NotVectorizable:
        discard(scratch)
        if t.dots is not None:
            discard(t.dots)
        return False
    if t.dots is not None:
        _move_before(t.dots, None, scratch)
    _move_before(scratch, anchor)
    anchor.detach()
    anchor.erase()
    return True

def _move_before(scratch: Block, anchor: Operation | None, block: Block | None = None) -> None:
    """The ops of `scratch` moved before `anchor` (at the end of `block` if None)."""
    for op in list(scratch.ops):
        op.detach()
        if anchor is None:
            block.add_op(op)
        else:
            anchor.parent_block().insert_op_before(op, anchor)


LEFTOVER_TILE_COLUMNS = 4
"""Columns per tile of the leftover dot products (with the nest's rows): the rows' loads
of the other operand are shared by this many columns."""


def leftover_dots(e: Emitter, outer: loop.ForeachOp, inner: loop.ForeachOp, body: list[Operation],
                  red: loop.ReduceOp, loads: list[memref.LoadOp], width: int, cols: int, rows: int,
                  parallel: bool, foreach) -> None:
    """The columns a register tile's vectors leave (fewer than `width`; up to a panel for
    an operand read transposed) as dot products with lanes along k, after all the rows.
    Each operand read along the lanes as `X[..., k, j]` is copied first, transposed, for
    those columns only (`[j - first, k]`, contiguous along k); one read `X[..., j, k]`
    already is. Per step, one vector of each row's operand feeds every column of the
    tile. A masked vector column costs as much as a full one and a scalar column as
    much again per element: measured, 1 thread, 3 x 3 conv + relu at 512 channels,
    7 x 7 pixels (one column left) 2.78 ms against 2.14 at 6 x 8 pixels; as dot
    products, 7 x 7 2.48 against 6 x 8 2.49 (same process). Rows left by
    whole tiles go one at a time (less code to compile than tiles of 4, 2 and 1)."""
    n, k_upper = inner.upper, red.upper
    k_static = constant_index(k_upper)
    if k_static is not None and k_static < width:
        raise NotVectorizable("a reduction shorter than a vector")
    along_k = all(transposed(ld, red.iv) for ld in loads)
    if not along_k and any(transposed(ld, red.iv) for ld in loads):
        raise NotVectorizable("operands read along the lanes both ways")
    start = split_at(e, n, width * cols if along_k else width)
    if start is n:
        return  # whole vectors (or panels) cover every column
    count = None if along_k else e.emit(arith.SubiOp(n, start)).result
    staged: dict[tuple, tuple[SSAValue, SSAValue]] = {}  # the copy, and the column it starts from
    for ld in loads:
        if transposed(ld, red.iv):
            continue
        key = (ld.memref, tuple(ld.indices))
        if key not in staged:
            offset = column_offset(ld, inner, red)
            first = start if offset is None else e.emit(arith.AddiOp(start, offset)).result
            t = MemRefType(ld.res.type, [width, DYNAMIC_INDEX if k_static is None else k_static])
            buf = e.emit(loop.AllocOp(loop.Level.DRAM, t, [k_upper] if k_static is None else [])).memref
            staged[key] = buf, first

            def copy(k: SSAValue, c: SSAValue, ld=ld, buf=buf, first=first) -> None:
                j = e.emit(arith.AddiOp(first, c)).result
                v = e.emit(memref.LoadOp.get(ld.memref, [*ld.indices[:-2], k, j])).res
                e.emit(memref.StoreOp.get(v, buf, [c, k]))

            zero = e.const_index(0)
            foreach(zero, k_upper, 1, None, lambda k: foreach(zero, count, 1, None, lambda c: copy(k, c)))
        e.staged_columns[ld] = staged[key]

    def row_tile(i_values: list[SSAValue]) -> None:
        def tile(j0: SSAValue, size: int) -> None:
            j_values = offsets(e, j0, size)
            copies = [Copy({outer.iv: i, inner.iv: j}, None, 1) for i in i_values for j in j_values]
            Tile(e, body, copies, None, False, k_width=width).run()

        whole = _leftover_end(e, start, n, LEFTOVER_TILE_COLUMNS)
        foreach(start, whole, LEFTOVER_TILE_COLUMNS, None, lambda j0: tile(j0, LEFTOVER_TILE_COLUMNS))
        foreach(whole, n, 1, None, lambda j0: tile(j0, 1))

    m = outer.upper
    main_rows = split_at(e, m, rows)
    keep = loop.Schedule(parallel=parallel)
    foreach(e.const_index(0), main_rows, rows, keep, lambda i0: row_tile(offsets(e, i0, rows)))
    if main_rows is not m:
        foreach(main_rows, m, 1, keep, lambda i: row_tile([i]))


def packable_loads(outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> tuple[loop.ReduceOp, list[memref.LoadOp]] | None:
    """The nest's single reduction and its loads to pack: read along the lanes as
    `X[..., k, j]` (k the reduction iv, j the lane) or transposed, `X[..., j, k]` (a
    dense layer's weights), the same for every row; `j` may be `j + c` for a `c` fixed
    in the nest (`pack_panels.column_read`)."""
    reduces = [o for o in inner.body.block.ops if isinstance(o, loop.ReduceOp)]
    if len(reduces) != 1 or outer is None:
        return None
    (red,) = reduces
    inside = {outer.iv, inner.iv, red.iv, *(r for o in outer.body.walk() for r in o.results)}
    loads = [o for o in red.body.block.ops if isinstance(o, memref.LoadOp)
             and any(column_read(i, inner.iv, inside)[0] for i in o.indices)]
    for ld in loads:
        idx = list(ld.indices)
        if len(idx) < 2 or red.iv not in idx[-2:] or not column_read(lane_index(ld, red.iv), inner.iv, inside)[0] \
                or any(i in inside for i in idx[:-2]):
            return None
    return (red, loads) if loads else None


def column_offset(ld: memref.LoadOp, inner: loop.ForeachOp, red: loop.ReduceOp) -> SSAValue | None:
    """The column a packable load's lanes start from (`c` in `X[k, j + c]`), None for 0."""
    return column_read(lane_index(ld, red.iv), inner.iv, ())[1]


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
        for red in [o for o in op.walk() if isinstance(o, loop.ReduceOp)]:
            if red.parent is not None and schedule_of(red).vector > 1:
                vectorize_reduce(red)


def vectorize_reduce(red: loop.ReduceOp) -> bool:
    """A reduction outside a scheduled nest (a softmax's row max and sum, hoisted out of
    the loop over the row) along k in vector accumulators; False if not possible."""
    scratch = Block()
    e = Emitter(Builder(InsertPoint.at_end(scratch)))
    copy = Copy({}, None, 1)
    try:
        Tile(e, [red], [copy], None).run()
    except NotVectorizable:
        discard(scratch)
        return False
    _move_before(scratch, red)
    for r in red.results:
        r.replace_all_uses_with(copy.subst[r])
    red.detach()
    red.erase()
    return True


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
