"""Register tiles with lanes along the rows: a dense layer `x @ W^T` without packing `W`.

For `foreach i { foreach j { r = reduce k (x[i, k] * W[j, k]); rest(r); store out[i, j] } }`
with few rows (a sequence of tokens), packing `W` into transposed panels for lanes along
`j` costs about as much as the product: every element of `W` is copied once and then
used by few rows. With `vector = V` on the `i` loop and `unroll = V` on `j` (what
schedule-loops gives such a nest for `ROW_LANES` rows) the nest runs instead as:

- `x` packed once (by each chunk of a split launch), transposed, V rows per panel:
  `xt[b, k, l] = x[b * V + l, k]` (small: the rows are few);
- per V x V tile, columns outer (parallel) and panels of rows inner (so the rows of `W`
  a tile reads stay in cache for every panel): whole panels two at a time, for the
  tile's first V / 2 columns and then for its other V / 2 (8 rows of `W` of up to 1024
  floats, 32 KiB, stay in Zen 5's 48 KiB L1 for every pair), the reduction with lanes along `i`, per step two vectors of
  `xt` and V / 2 broadcasts `W[j0 + r, k]` (`W` read in place, row by row) into V
  accumulators: 0.63 loads per FMA, where one panel (the last whole one, when their
  count is odd) takes one vector and V broadcasts, 1.06 (Zen 5 issues two loads and two
  FMAs a cycle); the accumulators stored by column in a `[V, rows]` buffer of the tile;
- then per panel its V x V block transposed in registers (`transpose_block`), and the
  rest of the body (bias, activation, residual loads, the store) with lanes along `j`,
  like any tile.

With `pack` on `j` as well, each tile first copies its V rows of `W` to a buffer whose
row stride is an odd number of 16-float lines (rows of `W` a multiple of 2 KiB apart
share L1 sets: schedule-loops' `STAGE_ROWS`). Either way each step of a tile's
reductions prefetches one line of the next tile's rows of `W` (`loop.prefetch`): `W` is
read once in all, and without it the next tile's rows (staged or read in place) come
from memory at its start instead of during this tile's FMAs.

The rows whole panels leave run as one more panel when schedule-loops gives the nest
them (`partial_rows` or more): packed with zeros past the last row, the tile's results
through a register block, row by row. Columns left over by whole tiles run one element
at a time (schedule-loops otherwise splits the rows at whole panels). `W` may be read
from row `c` on (`W[j + c, k]`: one output of several sliced from the product); a
kernel's nests that pack the same rows share one pack (passes/share_packs.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, FloatAttr, IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index
from nimble.passes.loop_transforms.pack_panels import (
    BLOCK,
    column_read,
    copy_panel,
    transpose_block,
    transposed,
)
from nimble.passes.loop_transforms.register_tile import Tile
from nimble.passes.loop_transforms.tile_emitter import (
    Copy,
    Emitter,
    NotVectorizable,
    offsets,
    schedule_of,
    split_at,
    varying_values,
)

Foreach = Callable[[SSAValue, SSAValue, int, loop.Schedule | None, Callable[[SSAValue], None]], None]
"""`foreach(lower, upper, step, schedule, body)`: emits a loop calling `body(iv)`."""


def _lane_operands(outer: loop.ForeachOp, red: loop.ReduceOp) -> list[memref.LoadOp]:
    """The reduction's loads that vary along the rows: each must read `X[..., i, k]` (a
    transposed panel's operand), the leading indices fixed for the nest."""
    inside = {outer.iv, red.iv, *(r for o in outer.body.walk() for r in o.results)}
    loads = [o for o in red.body.block.ops if isinstance(o, memref.LoadOp) and outer.iv in o.indices]
    for ld in loads:
        idx = list(ld.indices)
        if len(idx) < 2 or idx[-2] is not outer.iv or not transposed(ld, red.iv) or any(i in inside for i in idx[:-2]):
            raise NotVectorizable("a row-varying operand that is not read as X[..., i, k]")
    if not loads:
        raise NotVectorizable("no operand varies along the rows")
    return loads


def row_lanes(e: Emitter, outer: loop.ForeachOp, inner: loop.ForeachOp, body: Sequence[Operation],
              foreach: Foreach) -> None:
    """Emit the nest (body already holding what was hoisted around `inner`) with lanes
    along the rows; raises NotVectorizable (nothing usable emitted) if it cannot."""
    width = schedule_of(outer).vector
    if width != BLOCK or schedule_of(inner).unroll != width:
        raise NotVectorizable(f"row lanes take {BLOCK} x {BLOCK} tiles")
    body = [o for o in body if not isinstance(o, loop.YieldOp)]
    reduces = [o for o in body if isinstance(o, loop.ReduceOp)]
    if len(reduces) != 1 or len(reduces[0].results) != 1:
        raise NotVectorizable("row lanes take one reduction of one result")
    (red,) = reduces
    before = body[:body.index(red)]
    if any(o.regions or isinstance(o, memref.StoreOp | vector.StoreOp) for o in before):
        raise NotVectorizable("a store before the reduction")
    before = _feeding(before, red)  # the rest (a residual's load) belongs to the epilogue
    loads = _lane_operands(outer, red)
    stage = schedule_of(inner).pack
    try:  # the rows of W a tile reads: staged with `pack`, prefetched for the next tile
        weights, offset = row_operands(inner, [*before, red])
    except NotVectorizable:
        if stage:
            raise
        weights, offset = [], None
    parallel = schedule_of(outer).parallel or schedule_of(inner).parallel
    nest = _LaneNest(e, foreach, outer, inner, body, red, before, loads, weights, offset, stage, width)
    foreach(e.const_index(0), nest.tiles_end, width, loop.Schedule(parallel=parallel),
            lambda j0: _LaneTile(nest, j0).run())
    leftovers(e, foreach, outer, inner, body, parallel, nest.m, nest.main_n)


class _LaneNest:
    """What the tiles of a nest with lanes along the rows share: the row panels (their
    counts, at run time too; the packed copies of the row-varying operands), the stride
    of a tile's staged rows of `W`, the body's parts."""

    def __init__(self, e: Emitter, foreach: Foreach, outer: loop.ForeachOp, inner: loop.ForeachOp,
                 body: list[Operation], red: loop.ReduceOp, before: list[Operation],
                 loads: list[memref.LoadOp], weights: list[SSAValue], offset: SSAValue | None, stage: bool,
                 width: int):
        self.e, self.foreach, self.outer, self.inner = e, foreach, outer, inner
        self.body, self.red = body, red
        self.before, self.loads, self.weights, self.offset, self.stage, self.width = \
            before, loads, weights, offset, stage, width
        self.m, self.k_upper = outer.upper, red.upper
        self.main_m, self.main_n = split_at(e, self.m, width), split_at(e, inner.upper, width)
        self.count_panels()
        self.panels: dict[tuple, SSAValue] = {}
        for ld in loads:
            self.pack(ld)
        self.rest = [o for o in body if o is not red]
        # With `pack` on the columns, a V-row slice of each weight is staged per tile with a
        # padded row stride (an odd number of 16-float lines; see STAGE_ROWS).
        k = constant_index(self.k_upper)
        if stage and k is not None:
            self.stride = e.const_index((-(-k // width) | 1) * width)
        elif stage:
            lines = e.emit(arith.CeilDivSIOp(self.k_upper, e.const_index(width))).result
            odd = e.emit(arith.OrIOp(lines, e.const_index(1))).result
            self.stride = e.emit(arith.MuliOp(odd, e.const_index(width))).result
        self.pairs = e.emit(arith.DivSIOp(self.blocks, e.const_index(2))).result
        self.paired = e.emit(arith.MuliOp(self.pairs, e.const_index(2))).result
        self.element = red.results[0].type

    def count_panels(self) -> None:
        """`blocks` (whole panels of V rows), `total` (with the rows they leave as one more
        panel, `part` of them, None if none) and `tiles_end` (where whole tiles of columns
        end): a split's empty side (no rows, or no whole columns) packs and stages nothing."""
        e, width, m, main_m, main_n = self.e, self.width, self.m, self.main_m, self.main_n
        self.blocks = e.emit(arith.DivSIOp(main_m, e.const_index(width))).result
        # The rows whole panels leave (fewer than V) run as one more panel, its lanes past
        # the last row zero and their results dropped (schedule-loops gives the nest such
        # rows from `partial_rows` on).
        self.part = None if main_m is m else e.emit(arith.SubiOp(m, main_m)).result
        self.total = self.blocks
        if self.part is not None and constant_index(self.part) != 0:
            more = e.emit(arith.CmpiOp(self.part, e.const_index(0), "sgt")).result
            one = e.emit(arith.SelectOp(more, e.const_index(1), e.const_index(0))).result
            self.total = e.emit(arith.AddiOp(self.blocks, one)).result
        else:
            self.part = None
        self.tiles_end = main_n
        dynamic = [v for v in (main_n, m) if constant_index(v) is None]
        if dynamic:
            tests = [e.emit(arith.CmpiOp(v, e.const_index(0), "sgt")).result for v in dynamic]
            some = tests[0] if len(tests) == 1 else e.emit(arith.AndIOp(*tests)).result
            self.blocks = e.emit(arith.SelectOp(some, self.blocks, e.const_index(0))).result
            self.total = self.blocks if self.total is self.blocks else \
                e.emit(arith.SelectOp(some, self.total, e.const_index(0))).result
            self.tiles_end = e.emit(arith.SelectOp(some, main_n, e.const_index(0))).result

    def pack(self, ld: memref.LoadOp) -> None:
        """The panels of V rows of the operand `ld` reads, transposed (one buffer for every
        load of the same rows)."""
        e, foreach, width, red, k_upper = self.e, self.foreach, self.width, self.red, self.k_upper
        key = (ld.memref, tuple(ld.indices[:-2]))
        if key in self.panels:
            return
        t = MemRefType(ld.res.type, [DYNAMIC_INDEX, DYNAMIC_INDEX, width])
        panel = self.panels[key] = e.emit(loop.AllocOp(loop.Level.DRAM, t, [self.total, k_upper])).memref

        def whole(b: SSAValue) -> None:
            i0 = e.emit(arith.MuliOp(b, e.const_index(width))).result
            copy_panel(e, lambda lo, hi, step, f: foreach(lo, hi, step, None, f), ld, red.iv, panel, i0,
                       k_upper, width, 1, at=[b])

        # Every chunk of a split launch packs all panels for itself (a copy of the
        # rows, small beside the product; a shared one would need a barrier, and the
        # launching thread could no longer run a worker's chunk when it is slow to wake).
        foreach(e.const_index(0), self.blocks, 1, None, whole)
        if self.part is not None:
            foreach(self.blocks, self.total, 1, None,
                    lambda b: _pack_part(e, foreach, ld, panel, b, self.main_m, self.part, k_upper, width))


class _LaneTile:
    """One V x V tile of columns from `j0`, over every row panel of the nest."""

    def __init__(self, nest: _LaneNest, j0: SSAValue):
        self.nest, self.j0 = nest, j0
        e, width = nest.e, nest.width
        self.staged: dict[SSAValue, SSAValue] = {}
        self.first = j0 if nest.offset is None else e.emit(arith.AddiOp(j0, nest.offset)).result
        for w in nest.weights if nest.stage else []:
            t = MemRefType(w.type.element_type, [width, DYNAMIC_INDEX])
            self.staged[w] = e.emit(loop.AllocOp(loop.Level.DRAM, t, [nest.stride])).memref
            nest.foreach(e.const_index(0), e.const_index(width), 1, None,
                         lambda r, w=w: _copy_row(e, nest.foreach, w,
                                                  e.emit(arith.AddiOp(self.first, r)).result,
                                                  self.staged[w], r, nest.k_upper, width))
        self.prefetch = _next_rows(e, nest.weights, self.first, width) if nest.weights else None
        # Whole panels two at a time, for one half of the columns and then the other (2 x V
        # / 2 accumulators: per step 2 vectors of rows and V / 2 broadcasts, not 1 and V),
        # an odd last one alone; their sums gathered by column, then per panel transposed
        # and the epilogue run along the columns V wide.
        self.gathered = e.emit(loop.AllocOp(loop.Level.DRAM, MemRefType(nest.element, [width, DYNAMIC_INDEX]),
                                            [nest.main_m])).memref

    def run(self) -> None:
        n, e, foreach, width = self.nest, self.nest.e, self.nest.foreach, self.nest.width
        if constant_index(n.m) is None or constant_index(n.m) >= 2 * width:
            for c0 in (0, width // 2):
                foreach(e.const_index(0), n.pairs, 1, None, lambda q, c0=c0: self.pair(q, c0))
        foreach(n.paired, n.blocks, 1, None, lambda b: self.gather([b]))
        foreach(e.const_index(0), n.blocks, 1, None, self.whole)
        if n.part is not None:
            foreach(n.blocks, n.total, 1, None, self.partial)

    def rows(self, bs: list[SSAValue], c0: int = 0, cols: int | None = None) \
            -> tuple[list[SSAValue], list[list[SSAValue]]]:
        """The sums of the tile's columns [c0, c0 + cols) (default: all V) for the row
        panels `bs` (one panel and all V columns, or two panels and V / 2 of them): the
        panels' first rows, and per panel, per column, a vector along its rows."""
        n, e, width = self.nest, self.nest.e, self.nest.width
        cols = width if cols is None else cols
        outer, inner, red = n.outer, n.inner, n.red
        starts = [e.emit(arith.MuliOp(b, e.const_index(width))).result for b in bs]
        for ld in n.loads:  # (a second panel's copies read theirs: `bs[0]` stands for it)
            e.packs[ld] = (n.panels[(ld.memref, tuple(ld.indices[:-2]))], red.iv, (bs[0],))
        if n.stage:  # staged row r is W's row j + c: j stands for r - c
            columns = [e.const_index(r) if n.offset is None
                       else e.emit(arith.SubiOp(e.const_index(r), n.offset)).result for r in range(c0, c0 + cols)]
        else:
            columns = offsets(e, self.j0, width)[c0:c0 + cols]
        along_i = []  # (both panels' copies read the same columns of W: one load, one broadcast)
        for b, i0 in zip(bs, starts):
            other = {} if b is bs[0] else {bs[0]: b}
            staged = self.staged if n.stage else {}
            along_i += [Copy({inner.iv: j, outer.iv: i0, **staged, **other}, outer.iv, width, 0) for j in columns]
        Tile(e, [*n.before, red], along_i, outer.iv, each_step=self.prefetch).run()
        e.packs.clear()
        sums = [c.subst[red.results[0]] for c in along_i]
        return starts, [sums[p * cols:(p + 1) * cols] for p in range(len(bs))]

    def epilogue(self, copies: list[Copy]) -> None:
        tile = Tile(self.nest.e, self.nest.rest, copies, self.nest.inner.iv)
        tile.varying = varying_values(self.nest.body, self.nest.inner.iv)
        tile.after_reductions = True
        tile.run()

    def partial(self, b: SSAValue) -> None:
        """The rows' results through a register block, row by row."""
        n, e, width = self.nest, self.nest.e, self.nest.width
        (i0,), (sums,) = self.rows([b])
        sums = transpose_block(e, sums)
        block = e.emit(loop.AllocOp(loop.Level.REG, MemRefType(n.element, [width, width]))).memref
        for r, v in enumerate(sums):
            e.emit(vector.StoreOp(v, block, [e.const_index(r), e.const_index(0)]))

        def row(r: SSAValue) -> None:
            v = e.emit(vector.LoadOp(block, [r, e.const_index(0)], sums[0].type)).result
            self.epilogue([Copy({n.outer.iv: e.emit(arith.AddiOp(i0, r)).result, n.inner.iv: self.j0,
                                 n.red.results[0]: v}, n.inner.iv, width)])

        n.foreach(e.const_index(0), n.part, 1, None, row)

    def gather(self, bs: list[SSAValue], c0: int = 0) -> None:
        e = self.nest.e
        starts, sums = self.rows(bs, c0, self.nest.width // len(bs))
        for i0, panel in zip(starts, sums):
            for c, v in enumerate(panel, c0):
                e.emit(vector.StoreOp(v, self.gathered, [e.const_index(c), i0]))

    def pair(self, q: SSAValue, c0: int) -> None:
        e = self.nest.e
        b = e.emit(arith.MuliOp(q, e.const_index(2))).result
        self.gather([b, e.emit(arith.AddiOp(b, e.const_index(1))).result], c0)

    def whole(self, b: SSAValue) -> None:
        n, e, width = self.nest, self.nest.e, self.nest.width
        t = loop.vector_type(n.element, (width,))
        i0 = e.emit(arith.MuliOp(b, e.const_index(width))).result
        sums = transpose_block(e, [e.emit(vector.LoadOp(self.gathered, [e.const_index(c), i0], t)).result
                                   for c in range(width)])
        self.epilogue([Copy({n.outer.iv: i, n.inner.iv: self.j0, n.red.results[0]: s}, n.inner.iv, width)
                       for i, s in zip(offsets(e, i0, width), sums)])


def leftovers(e: Emitter, foreach: Foreach, outer: loop.ForeachOp, inner: loop.ForeachOp, body: Sequence[Operation],
              parallel: bool, main_m: SSAValue, main_n: SSAValue) -> None:
    """The rows and columns whole V x V tiles left (`main_m`, `main_n` where they end),
    one element at a time."""
    m, n = outer.upper, inner.upper

    def one_by_one(i_lo: SSAValue, i_hi: SSAValue, j_lo: SSAValue, j_hi: SSAValue) -> None:
        def row(i: SSAValue) -> None:
            foreach(j_lo, j_hi, 1, None,
                    lambda j: Tile(e, body, [Copy({outer.iv: i, inner.iv: j}, None, 1)], None).run())

        foreach(i_lo, i_hi, 1, loop.Schedule(parallel=parallel), row)

    if main_n is not n:
        one_by_one(e.const_index(0), main_m, main_n, n)
    if main_m is not m:
        one_by_one(main_m, m, e.const_index(0), n)


def _feeding(ops: list[Operation], red: loop.ReduceOp) -> list[Operation]:
    """The ops of `ops` whose results the reduction uses, directly or through others."""
    used = {v for o in red.walk() for v in o.operands}
    feeding = []
    for op in reversed(ops):
        if any(r in used for r in op.results):
            feeding.append(op)
            used.update(op.operands)
    return feeding[::-1]


def row_operands(inner: loop.ForeachOp, ops: Sequence[Operation]) -> tuple[list[SSAValue], SSAValue | None]:
    """The 2-D buffers the reduction reads as `W[j + c, k]` (j the columns' iv, used for
    nothing else; `c` fixed for the nest, the same for all, or none), to stage per tile
    of V rows; and `c`."""
    inside = {r for o in inner.body.walk() for r in o.results} | {inner.iv}
    walked = [o for top in ops for o in top.walk()]
    rows = {}
    for op in walked:
        reads, offset = column_read(op.result, inner.iv, inside) if isinstance(op, arith.AddiOp) else (False, None)
        if reads:
            rows[op.result] = offset
    rows[inner.iv] = None
    weights, offsets_read = [], set()
    for op in walked:
        if isinstance(op, arith.AddiOp) and op.result in rows:
            continue  # j + c itself
        for row in (v for v in op.operands if v in rows):
            if not isinstance(op, memref.LoadOp) or len(op.indices) != 2 or op.indices[0] is not row \
                    or op.indices[1] in rows:
                raise NotVectorizable("the columns' iv used other than as W[j + c, k] in the reduction")
            offsets_read.add(rows[row])
            if op.memref not in weights:
                weights.append(op.memref)
    if len(offsets_read) > 1:
        raise NotVectorizable("rows of W read from different columns on")
    return weights, next(iter(offsets_read), None)


PREFETCH_LOCALITY = 3
"""LLVM's locality hint for the next tile's rows. Measured with caches flushed between
calls (2 threads, min us, no prefetch / locality 3, 2, 0): x @ W^T for 32 rows, W 768 x
3072 staged 1108 / 965 / 980 / 946, W 1024 x 1024 546 / 469 / 473 / 468; the hint does
not matter, the prefetch does."""


def _next_rows(e: Emitter, weights: list[SSAValue], first: SSAValue, width: int) -> Callable[[SSAValue], None]:
    """`each_step` for a tile's reductions that read (or stage) their rows of `weights`
    from row `first`: step k prefetches line k // V of row k % V of the next tile's V
    rows (the last V rows of `W` for the last tile), so that the next tile's staging
    copy or first panel finds them in cache instead of waiting on memory."""
    after = e.emit(arith.AddiOp(first, e.const_index(width))).result
    starts = []
    for w in weights:
        static = w.type.get_shape()[0]
        rows = e.const_index(static) if static >= 0 else \
            e.emit(memref.DimOp(w, e.const_index(0))).result
        starts.append(e.emit(arith.MinSIOp(after, e.emit(arith.SubiOp(rows, e.const_index(width))).result)).result)

    def at(k: SSAValue) -> None:
        row = e.emit(arith.AndIOp(k, e.const_index(width - 1))).result
        column = e.emit(arith.SubiOp(k, row)).result
        for w, start in zip(weights, starts):
            e.emit(loop.PrefetchOp(w, [e.emit(arith.AddiOp(start, row)).result, column], PREFETCH_LOCALITY))

    return at


def _pack_part(e: Emitter, foreach: Foreach, ld: memref.LoadOp, panel: SSAValue, b: SSAValue, first: SSAValue,
               count: SSAValue, k_upper: SSAValue, width: int) -> None:
    """panel[b, k, l] = X[..., first + l, k] for the `count` rows left (l < count), 0 for
    the lanes past them (element by element: fewer than V rows)."""
    lead = list(ld.indices[:-2])
    element = ld.res.type
    zero = e.emit(arith.ConstantOp(FloatAttr(0.0, element) if isinstance(element, AnyFloat)
                                   else IntegerAttr(0, element))).result

    def row(l: SSAValue) -> None:
        i = e.emit(arith.AddiOp(first, l)).result
        foreach(e.const_index(0), k_upper, 1, None, lambda k: e.emit(memref.StoreOp.get(
            e.emit(memref.LoadOp.get(ld.memref, [*lead, i, k])).res, panel, [b, k, l])))

    foreach(e.const_index(0), count, 1, None, row)
    foreach(count, e.const_index(width), 1, None, lambda l: foreach(
        e.const_index(0), k_upper, 1, None, lambda k: e.emit(memref.StoreOp.get(zero, panel, [b, k, l]))))


def _copy_row(e: Emitter, foreach: Foreach, w: SSAValue, j: SSAValue, staged: SSAValue, r: SSAValue,
              k_upper: SSAValue, width: int) -> None:
    """staged[r, :K] = w[j, :K]: whole vectors, then element by element."""
    t = loop.vector_type(w.type.element_type, (width,))
    whole = split_at(e, k_upper, width)
    foreach(e.const_index(0), whole, width, None,
            lambda k: e.emit(vector.StoreOp(e.emit(vector.LoadOp(w, [j, k], t)).result, staged, [r, k])))
    if whole is not k_upper:
        foreach(whole, k_upper, 1, None,
                lambda k: e.emit(memref.StoreOp.get(e.emit(memref.LoadOp.get(w, [j, k])).res, staged, [r, k])))
