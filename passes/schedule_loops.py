"""`schedule-loops`: give each kernel's innermost loop nests a schedule for the target.

Schedules are data (`#loop.schedule<...>` on loops), chosen here from a table of
*strategies* sized for the module's CPU (`#nimble.cpu`: lanes from its vector width,
register tiles from its vector registers) and realised by `tile-vectorize`; a tuner can
write them instead. Sizes below are for AVX-512 (16 f32 lanes, 32 registers). For
each innermost nest `foreach i { foreach j { ... } }` the first strategy of the table
that `tile-vectorize` can apply to it wins (tried on a copy):

- `lanes_j` (matmul-like: the operand read along j is contiguous, or a dense layer's
  `W[j, k]`, packed transposed): a 6 x 64 register tile (24 vector accumulators of 16 f32
  lanes; 6 x 16 with AVX2's 8 lanes and 16 registers: `tile_vectors`), the reduction
  jammed across the tile and run 4 steps per trip, and that operand packed per 64-column
  panel (contiguous, reused by every row tile; several narrower tiles per panel:
  `PANEL_COLUMNS`). Packing pays from PACK_MIN_ROWS rows;
  when the rows are known only at run time the nest is split at a column `cut` (whole
  panels with enough rows, else none) and the rest takes the next strategy unpacked
  (columns that are whole panels: all packed or none, the unpacked copy with its
  columns static, run once when the cut is none: `_otherwise`).
  An operand already staged in panels by an enclosing loop (a conv's im2col rows per
  panel of pixels) is read in place, the rows parallel too (`PANEL_GRAIN`). Under
  `remainder=auto` the columns whole vectors leave are dot products along k after the
  rows (`dots`: a conv's 7 x 7 map is 3 vectors and one pixel);
- `lanes_k` (dense-like: both operands contiguous along the reduction): 4 x 4 dot
  products with 16-lane vector accumulators along k;
- a nest that would pack transposed panels (a dense layer's `W[j, k]`) with 16 to 511
  rows takes lanes along the rows instead (`ROW_LANES`, passes/loop_transforms/row_lanes.py): whole
  panels of 16 rows and, when `partial_rows` or more are left, one more panel for
  them; split at run time when the rows are, the rest as above; its tiles stage their
  rows of `W` when W's rows are a multiple of `STAGE_ROWS` long (K, when only known at
  run time);
- `elementwise`: j in 16-lane vectors, rows finished by one masked vector step
  (`remainder=auto`).

A float reduction outside the innermost nests (a softmax's row max, hoisted above the
loop over the row) runs along k in vector lanes.

The outermost loop of each nest is also marked `parallel`. A loop that already has a
schedule keeps it (and its nest is left to it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from nimble.dialects import arith, kernel_analysis, loop
from nimble.dialects.device import Device
from nimble.dialects.loop import Schedule
from nimble.dialects.shape_functions import constant_index
from nimble.dialects.target import target_of
from nimble.passes.loop_transforms.nest_splits import index_constant, split_nest, whole_cut
from nimble.passes.loop_transforms.pack_panels import transposed
from nimble.passes.loop_transforms.row_lanes import row_operands
from nimble.passes.loop_transforms.tile_emitter import NotVectorizable
from nimble.passes.tile_vectorize import packable_loads, realize_nest, transform_nest
from nimble.runtime.cpu_target import CpuTarget


@dataclass(frozen=True)
class Strategy:
    name: str
    outer: Schedule
    inner: Schedule
    reduce: Schedule | None = None
    needs_reduce: bool = False
    masks: bool = False
    """With `remainder=auto`, leftover columns are one masked vector step (a copy's short
    rows: an im2col row of 7 to 56 elements), else a scalar loop. (A register tile's
    leftover columns are dot products under `auto` where its reduction allows: `dots`.)"""


TILE_ROWS = 6
"""Rows of a `lanes_j` register tile."""


def tile_vectors(registers: int) -> int:
    """Vectors of columns per row of a `lanes_j` register tile: the accumulators
    (`TILE_ROWS` x this) take three quarters of the vector registers, the rest hold the
    row of columns loaded at each step, the broadcast element and the spills LLVM keeps.
    32 registers (AVX-512): 6 x 4 vectors, the best of 8x2, 8x3, 6x3, 7x3, 5x4, 4x4, 6x4,
    4x5 measured; 16 (AVX2, SSE): 6 x 2. Measured, AVX2 code on the AVX-512 host, 1
    thread, GEMM 256^3 / 1024^3 GF/s (OpenBLAS Haswell kernels 116 / 117): 6x2 124 / 109,
    5x2 119 / 102, 4x3 116 / 94, 3x4 107 / 104, 8x1 103 / 77, 6x4 (AVX-512's, spilled)
    73 / 65."""
    return max(1, registers * 3 // 4 // TILE_ROWS)


PANEL_COLUMNS = 64
"""Columns per packed panel: AVX-512's register tile (16 lanes x 4). A narrower tile
(AVX2's 8 x 2) runs several per panel (`panel`), one after the other for each row tile:
its rows of the other operand are then read from L1 by all of them, not once per tile
from L2 or L3. Measured, AVX2 code on the AVX-512 host, 1 thread, GEMM GF/s with one
tile per panel vs four (OpenBLAS Haswell kernels in the same runs 115-118): 1024^3
99-104 vs 115-118, 1000 x 777 x 513 109-116 vs 120, 256^3 124 vs 124-127, 128 x 768 x
3072 103-106 vs 105-107. Not for a dense layer's transposed panels, whose rows (tokens)
are few and stay in L2 whatever the panel: x @ W^T + b, ms, one tile vs four: 32 x 256
-> 1024 0.162-0.165 vs 0.172-0.176, 64 x 768 -> 768 0.673-0.687 vs 0.710-0.713, 128 x
3072 -> 768 5.18-5.28 vs 5.33-5.54."""


def _strategies(lanes: int, registers: int, masks: bool) -> list[Strategy]:
    """The strategies, tried in order; `masks`: the CPU has mask registers (remainders
    under `auto` are masked vector steps with them, scalar loops without)."""
    cols = tile_vectors(registers)
    panel = PANEL_COLUMNS if lanes * cols < PANEL_COLUMNS else 0
    return [
        Strategy("lanes_j", Schedule(unroll=TILE_ROWS), Schedule(vector=lanes, unroll=cols, pack=True, panel=panel),
                 needs_reduce=True),
        Strategy("lanes_k", Schedule(unroll=4), Schedule(unroll=4), Schedule(vector=lanes), needs_reduce=True),
        Strategy("elementwise", Schedule(), Schedule(vector=lanes), masks=masks),
        Strategy("elementwise", Schedule(), Schedule(vector=lanes)),  # bodies that cannot mask (bools)
    ]


def _outermost_buffer(store: Operation, nest: loop.ForeachOp) -> SSAValue | None:
    """The buffer a store writes, unless it is allocated inside `nest` (private to an
    iteration, like a packed panel): then None."""
    buffer = store.memref if isinstance(store, memref.StoreOp) else store.base
    buffer = kernel_analysis.viewed_buffer(buffer)
    owner = buffer.owner
    if isinstance(owner, loop.AllocOp) and nest.is_ancestor(owner):
        return None
    return buffer


def _innermost_nests(kernel: Operation) -> list[tuple[loop.ForeachOp | None, loop.ForeachOp]]:
    """Every innermost loop of `kernel` (or of one op) with the loop around it, if any."""
    nests = []
    for op in kernel.walk():
        if isinstance(op, loop.ForeachOp) and not any(isinstance(o, loop.ForeachOp) for o in op.body.walk()):
            parent = op.parent_op()
            nests.append((parent if isinstance(parent, loop.ForeachOp) else None, op))
    return nests


PACK_MIN_ROWS = {False: 4, True: 20}
"""Rows from which a nest packs its panels, for plain and for transposed panels: the copy
reads the whole operand once, whatever the rows. (When the rows are known only at run
time, the nest is split and both forms are compiled.) Measured per call, 1 thread, packed
against unpacked (`lanes_j` reading in place for a matmul, `lanes_k` for a dense layer)
at 4 to 32 rows for 256 x 256 to 768 x 3072 operands: a matmul's plain panel pays from
4 rows (768 x 3072 at 4 rows: 1.36 ms packed, 3.40 unpacked; at 1 row 0.19 against
0.10), a dense layer's transposed panel from 16 to 24 (768 x 768: 16 rows 0.64 / 0.49 ms,
24 rows 0.60 / 0.73)."""

REMAINDERS = ("auto", "peeled", "masked")

# A register tile's reduction is not unrolled: its step holds 4 to 24 independent FMAs,
# enough to hide the loop's overhead. Measured 2026-12-06, Zen 5, unrolled 4 (each copy,
# with its remainder loop, code that LLVM optimises) against not: ResNet-18's kernels
# 5.28 -> 3.97 s to JIT (LLVM instructions 43,457 -> 29,046), run time within 1% on
# ResNet-18 (224 and 57 pixels, 1 and 2 threads), ResNet-50, EfficientNet-B0,
# DenseNet-121 (batch 1 and 3), BERT, LSTM and GRU (benchmarks/compile_time.py,
# models.py).

STRIP = 64
"""Columns per strip when a body has several dot products (see passes/loop_transforms/reduction_strips.py)."""

MAX_JAMMED = 24
"""Tile copies x accumulators in the body: beyond this, tiles shrink (code size, compile
time and registers grow with it; the LSTM cell has 8 reductions per element)."""


DOT_STREAMS = 4
"""Rows of the other operand a dot-product tile reads side by side (columns x results:
an LSTM step's 4 gates per hidden unit). More streams from L3 ran slower: LSTM h1024,
100 steps, 2 threads, 4 units x 4 gates per tile 29.0 ms against 17.6 with 1 unit
(same process)."""


def _accumulators(inner: loop.ForeachOp) -> list[int]:
    """The number of results of each reduction in the body."""
    return [len(o.results) for o in inner.body.block.ops if isinstance(o, loop.ReduceOp)]


def _strips(strategy: Strategy, inner: loop.ForeachOp) -> bool:
    """Dot-product bodies with several reductions (or one with several results: gates
    merged) run in strips, one reduction at a time, the rest of the body vectorised after."""
    return strategy.reduce is not None and strategy.reduce.vector > 1 and sum(_accumulators(inner)) > 1


def _fit(strategy: Strategy, inner: loop.ForeachOp) -> tuple[int, int]:
    """The strategy's tile (rows, columns), halved until the jammed body is small enough:
    tile copies x accumulators (a reduction with several results, gates merged, jams one
    per result; in strips, each reduction has a loop of its own: the largest counts)."""
    counts = _accumulators(inner) or [1]
    reduces = max(counts) if _strips(strategy, inner) else sum(counts)
    rows, cols = max(strategy.outer.unroll, 1), max(strategy.inner.unroll, 1)
    if strategy.reduce is not None and strategy.reduce.vector > 1:  # dot products: a row of the
        while cols * reduces > DOT_STREAMS and cols > 1:  # other operand per column and result
            cols //= 2
    while rows * cols * reduces > MAX_JAMMED and rows * cols > 1:
        if rows > 1:  # rows pay off only with several rows (batch); columns always do
            rows //= 2
        else:
            cols //= 2
    return rows, cols


def _apply(strategy: Strategy, outer: loop.ForeachOp | None, inner: loop.ForeachOp, parallel: bool,
           remainder: str = "peeled") -> None:
    rows, cols = _fit(strategy, inner)
    masked = remainder == "masked" or (remainder == "auto" and strategy.masks)
    dots = remainder == "auto" and strategy.needs_reduce and strategy.inner.vector > 1
    if outer is not None and (rows > 1 or parallel):
        outer.schedule = loop.ScheduleAttr(Schedule(unroll=rows if rows > 1 else 0, parallel=parallel))
    strip = STRIP if _strips(strategy, inner) else 0
    # A nest inside a sequential loop (a recurrence's step) would pack its panels again
    # at every step, for the few rows (the batch) that read them: it reads in place.
    pack = strategy.inner.pack and not loop.in_sequential_loop(inner)
    # Strips stay inside the untiled outer loop: parallel too, a batch of 1 splits them.
    width = max(strategy.inner.vector, 1) * cols
    panel = strategy.inner.panel if pack and strategy.inner.panel % width == 0 else 0
    inner.schedule = loop.ScheduleAttr(Schedule(tile=strip, vector=strategy.inner.vector, unroll=cols if cols > 1 else 0,
                                                parallel=parallel and (outer is None or strip > 0), pack=pack,
                                                panel=panel, mask=masked and strategy.inner.vector > 1, dots=dots))
    for op in inner.body.block.ops:
        if isinstance(op, loop.ReduceOp) and strategy.reduce is not None:
            op.schedule = loop.ScheduleAttr(strategy.reduce)


def _first(strategies: list[Strategy], outer: loop.ForeachOp | None, inner: loop.ForeachOp,
           remainder: str) -> Strategy | None:
    """The first strategy tile-vectorize can apply to the nest. (One for reductions is
    not tried on a nest without one: the copy was most of the trial's cost, ~0.05 s for
    each of a 256-op elementwise chain's kernels, expanded to ~3,000 ops.)"""
    reduces = any(isinstance(o, loop.ReduceOp) for o in inner.body.block.ops)
    return next((s for s in strategies if (reduces or not s.needs_reduce)
                 and _on_copy(inner, lambda o, i, s=s: _works(s, o, i, remainder))), None)


def _on_copy(inner: loop.ForeachOp,
             attempt: Callable[[loop.ForeachOp | None, loop.ForeachOp], bool]) -> bool:
    """`attempt(outer, inner)` on the nest's counterpart in a copy of the nest (placed
    after it, reading the same values), then dropped: what tile-vectorize would make of
    a schedule, leaving the kernel as it is. (Copying the whole kernel for each of a
    model's ~260 trials took 0.8 s of ResNet-18's compile; copying the kernel's top-level
    op holding the nest, 0.4 s of a Winograd conv's 1.6.)"""
    parent = inner.parent_op()
    top: Operation = parent if isinstance(parent, loop.ForeachOp) else inner
    index = next(n for n, (o, i) in enumerate(_innermost_nests(top)) if i is inner)
    after = top.next_op  # (a yield or the kernel's return at least)
    trial = top.clone()
    top.parent_block().insert_op_after(trial, top)
    try:
        return attempt(*_innermost_nests(trial)[index])
    finally:
        made = []  # the trial, or what replaced it (a rewritten nest's ops)
        op = top.next_op
        while op is not after:
            made.append(op)
            op = op.next_op
        for op in reversed(made):
            op.detach()
            op.erase(safe_erase=False)


def _packs(strategy: Strategy, outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> bool | None:
    """None if the strategy packs no panel for the nest, else whether one is transposed."""
    packable = packable_loads(outer, inner) if strategy.inner.pack and not loop.in_sequential_loop(inner) else None
    if packable is None:
        return None
    red, loads = packable
    return any(transposed(ld, red.iv) for ld in loads)


def _sole_loops(nest: loop.ForeachOp) -> Iterator[loop.ForeachOp]:
    """The loops nested in `nest` one inside the other, each the only op of its parent's
    body that writes memory (no staging beside it): with a split over `nest` they may
    take it (`bounds` in lowering/llvm/function.py passes a split on when `nest` has fewer
    iterations than chunks: a batch of 1)."""
    while True:
        loops = [o for o in nest.body.block.ops if isinstance(o, loop.ForeachOp)]
        others = [o for o in nest.body.block.ops if o not in loops]
        if len(loops) != 1 or any(kernel_analysis.writes_memory(o) or isinstance(o, loop.AllocOp) for o in others):
            return
        nest = loops[0]
        yield nest


def _writes_staged(nest: loop.ForeachOp, panels: loop.ForeachOp) -> bool:
    """Whether the nest stores into a buffer allocated inside an iteration of `panels`."""
    return any(_outermost_buffer(s, panels) is None for s in nest.walk() if isinstance(s, memref.StoreOp | vector.StoreOp))


def _panel_loop(outer: loop.ForeachOp | None, inner: loop.ForeachOp) -> loop.ForeachOp | None:
    """The loop whose iterations stage the panels a register tile reads along its lanes
    (a conv's im2col rows for a panel of pixels, `window_rules`), read as `X[k, j]`:
    already what packing would make of them. None if the operands are not such panels."""
    packable = packable_loads(outer, inner)
    if packable is None:
        return None
    red, loads = packable
    loops = set()
    for ld in loads:
        owner = kernel_analysis.viewed_buffer(ld.memref).owner
        if not isinstance(owner, loop.AllocOp) or transposed(ld, red.iv):
            return None
        loops.add(owner.parent_op())
    (staging,) = loops if len(loops) == 1 else (None,)
    return staging if isinstance(staging, loop.ForeachOp) else None


def _row_panels(n: SSAValue, width: int) -> Callable[[Builder, SSAValue], SSAValue]:
    """`cut_of` for `split_nest`: the rows lanes along the rows take (`ROW_LANES`): whole
    panels, and the rows they leave when there are `partial_rows` of them or more."""
    def cut_of(b: Builder, rows: SSAValue) -> SSAValue:
        left = b.insert(arith.RemSIOp(n, index_constant(b, width))).result
        whole = b.insert(arith.SubiOp(n, left)).result
        many = b.insert(arith.CmpiOp(left, index_constant(b, partial_rows(width)), "sge")).result
        taken = b.insert(arith.SelectOp(many, n, whole)).result
        enough = b.insert(arith.CmpiOp(rows, index_constant(b, ROW_LANES[0]), "sge")).result
        few = b.insert(arith.CmpiOp(rows, index_constant(b, ROW_LANES[1]), "slt")).result
        return b.insert(arith.SelectOp(b.insert(arith.AndIOp(enough, few)).result, taken, index_constant(b, 0))).result

    return cut_of


def partial_rows(lanes: int) -> int:
    """Rows left by whole panels of lanes along the rows from which they run as one more
    panel (its other lanes zero), not with the next strategy: three quarters of a panel
    (12 of AVX-512's 16). Measured, x @ W^T + b, as one more panel vs the next strategy
    (min us, same process): 2 threads, W 1024 x 256: 25 rows 92.6 vs 86.5, 26 93.0 vs
    88.5, 28 93.0 vs 109.4, 30 93.7 vs 113.8, 127 318.9 vs 343.8; W 256 x 1024: 26 134.3
    vs 116.0, 28 129.2 vs 137.3, 30 133.4 vs 144.0. On 1 thread it does not pay for every
    shape: W 1024 x 256 28 rows 163.4 vs 164.3, 30 162.4 vs 177.1, but W 256 x 1024 28
    213.8 vs 194.5, 30 215.4 vs 208.7 (the choice is made for 2 threads, this machine's
    cores)."""
    return lanes * 3 // 4


ROW_LANES = (16, 512)
"""Rows [least, most) for which a nest reading a transposed panel (a dense layer's
`W[j, k]`) runs with lanes along the rows instead (passes/loop_transforms/row_lanes.py: `W` read in
place, the rows' operand packed transposed). Measured against packed transposed panels,
1 thread (2 threads), x @ W^T + b with W 768 x 768, 3072 x 768, 768 x 3072, 1024 x 256:
64 rows 1.08-1.25x faster (1.10-1.36x), 128 rows 1.02-1.13x (1.04-1.18x), 256 rows
1.01-1.07x (1.01-1.10x), 512 rows 0.95-1.04x (1.02-1.07x), 1024 rows 0.95-1.01x."""


STAGE_ROWS = 512
"""Row lanes read `W[j0 + r, k]` for 16 rows at each step (8 for a pair of panels of
rows, then the other 8): with rows a multiple of 2 KiB apart (W's rows a multiple of 512
floats long, whatever K the reduction runs over; a constant's rows are padded at compile
time instead, passes/pad_weight_rows.py) 8 or more of them fall in one L1 set (4 KiB
apart, 8 ways) and evict each other, so each tile first copies its rows to a buffer with
a padded stride (`pack` on the columns). Measured (1 thread, 32 / 128 rows, GF/s, one
panel at a time): K = 3072 read in place 50 / 50, staged 73 / 93; K = 1024 43 / 44,
staged 89 / 93; but K = 768 in place 88 / 98, staged 75 / 96, K = 3056 108 / 104, staged
69 / 92 (the copy streams W from memory before the tile instead of beside its FMAs)."""


def _reduction_upper(inner: loop.ForeachOp) -> SSAValue | None:
    reduces = [o for o in inner.body.block.ops if isinstance(o, loop.ReduceOp)]
    return reduces[0].upper if len(reduces) == 1 else None


def _weight_rows(inner: loop.ForeachOp) -> list[int] | None:
    """The row lengths of the matrices the nest's reduction reads as `W[j + c, k]` (the
    rows a tile of lanes along the rows reads together), when all are known here."""
    try:
        weights, _ = row_operands(inner, [o for o in inner.body.block.ops if isinstance(o, loop.ReduceOp)])
    except NotVectorizable:
        return None
    rows = [w.type.get_shape()[-1] for w in weights]
    return rows if rows and all(r >= 0 for r in rows) else None


def _row_lanes(outer: loop.ForeachOp, inner: loop.ForeachOp, parallel: bool, lanes: int) -> None:
    """Lanes along the rows for the nest, its tiles staging W's rows where they alias (a
    static row length decides here, a padded constant's not aliasing whatever K is; a
    dynamic one splits the columns by K: all staged or none)."""
    rows = _weight_rows(inner)
    if rows is not None:
        _apply_row_lanes(outer, inner, parallel, lanes, any(r % STAGE_ROWS == 0 for r in rows))
        return
    k = _reduction_upper(inner)
    static = constant_index(k)
    if static is not None or (isinstance(k.owner, Operation) and outer.is_ancestor(k.owner)):
        _apply_row_lanes(outer, inner, parallel, lanes, static is not None and static % STAGE_ROWS == 0)
        return

    def cut_of(b: Builder, rows: SSAValue) -> SSAValue:
        aliased = b.insert(arith.CmpiOp(b.insert(arith.RemSIOp(k, index_constant(b, STAGE_ROWS))).result, index_constant(b, 0), "eq"))
        return b.insert(arith.SelectOp(aliased.result, inner.upper, index_constant(b, 0))).result

    rest = split_nest(outer, inner, False, cut_of)
    _apply_row_lanes(outer, inner, parallel, lanes, rest is not None)
    if rest is not None:
        _apply_row_lanes(*rest, parallel, lanes, False)


def _apply_row_lanes(outer: loop.ForeachOp, inner: loop.ForeachOp, parallel: bool, lanes: int,
                     stage: bool = False) -> None:
    outer.schedule = loop.ScheduleAttr(Schedule(vector=lanes, parallel=parallel))
    inner.schedule = loop.ScheduleAttr(Schedule(unroll=lanes, pack=stage))


def _transposes(outer: loop.ForeachOp, inner: loop.ForeachOp, parallel: bool, lanes: int) -> bool:
    """Schedule a copy that no lanes fit (lanes along `j` read a row apart, along `i`
    store one apart) as blocks transposed in registers (passes/loop_transforms/transpose_tiles.py); on a
    trial copy, whether tile-vectorize realises them."""
    if any(isinstance(o, loop.ReduceOp) for o in inner.body.block.ops):
        return False
    outer.schedule = loop.ScheduleAttr(Schedule(vector=lanes, parallel=parallel))
    inner.schedule = loop.ScheduleAttr(Schedule(unroll=lanes))
    return transform_nest(outer, inner)  # (realize_nest would fall back to the inner loop alone)


def _row_lanes_work(inner: loop.ForeachOp, lanes: int) -> bool:
    """Does tile-vectorize apply lanes along the rows to the nest? (Tried on a copy.)"""
    def attempt(outer: loop.ForeachOp, inner: loop.ForeachOp) -> bool:
        _apply_row_lanes(outer, inner, False, lanes)
        return transform_nest(outer, inner)

    return _on_copy(inner, attempt)


PANEL_GRAIN = 4
"""Panels per chunk from which a panel loop is split by panels rather than by rows (each
chunk then stages every panel itself); fewer split by panels too when they are whole and
divide evenly among the chunks (`loop.Schedule.grain`). Measured at 2 threads, 3 x 3
convs, split by panels vs by rows: 128 channels at 28 x 28 (13 panels) 1.15 vs 1.29 ms;
256 channels at 14 x 14 (4 panels, the last of 4 pixels) 1.45 vs 1.36 ms; whole panels,
min us, alternating processes: 32 -> 64 channels at 16 x 16 (4 panels) 34.5-35.0 vs
44.8-46.6, 256 channels at 16 x 16 671-710 vs 745-746."""


def _standalone(red: loop.ReduceOp) -> bool:
    """A float reduction with a loop-free body that no nest strategy covers: not in the
    body of an innermost loop (a softmax's row max, hoisted above the loop over the row)."""
    parent = red.parent_op()
    if isinstance(parent, loop.ForeachOp) and not any(isinstance(o, loop.ForeachOp) for o in parent.body.walk()):
        return False
    return all(isinstance(r.type, AnyFloat) for r in red.results) and not any(o.regions for o in red.body.block.ops)


def _works(strategy: Strategy, outer: loop.ForeachOp | None, inner: loop.ForeachOp, remainder: str) -> bool:
    """Does tile-vectorize apply `strategy` to the nest (of a copy: `_on_copy`)? Tried
    with a 1 x 1 tile: what can fail (lanes, contiguity, packing) does not depend on the
    tile's size, and the copy stays small."""
    probe = replace(strategy, outer=Schedule(), inner=replace(strategy.inner, unroll=0, panel=0))
    _apply(probe, outer, inner, False, remainder)
    if strategy.outer.unroll > 1 and not _strips(strategy, inner):
        return transform_nest(outer, inner)  # a register tile needs its rows
    return realize_nest(outer, inner)


@dataclass(frozen=True)
class ScheduleLoopsPass(ModulePass):
    """Default schedules: register tiles, vector lanes, outermost loops parallel."""

    name = "schedule-loops"

    parallel: bool = True
    remainder: str = "auto"
    """Columns left over by full vectors: `peeled` (a scalar loop), `masked` (one masked
    vector step; in a register tile from 2 columns, `tile_vectorize.MASK_MIN_COLUMNS`)
    or `auto` (register tiles: dot products along the reduction after the rows, `dots`,
    else peeled, or masked for a conv's panels of pixels; masked for copies and
    elementwise nests). benchmarks/kernels.py --remainder measures them."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.remainder not in REMAINDERS:
            raise ValueError(f"remainder must be one of {', '.join(REMAINDERS)}, not '{self.remainder}'")
        cpu = target_of(op)
        for kernel in op.body.block.ops:
            if not loop.is_kernel(kernel) or loop.kernel_device(kernel) != Device.CPU:
                continue  # device kernels keep their loops for the device emitter
            self._schedule_kernel(kernel, cpu)

    def _schedule_nest(self, kernel: loop.KernelOp, outer: loop.ForeachOp | None, inner: loop.ForeachOp,
                       parallel: bool, strategies: list[Strategy], lanes: int) -> None:
        remainder = self.remainder
        unpacked = [replace(s, inner=replace(s.inner, pack=False)) for s in strategies]
        strategy = _first(strategies, outer, inner, remainder)
        packs = _packs(strategy, outer, inner) if strategy is not None else None
        panels = _panel_loop(outer, inner) if packs is not None else None
        if panels is not None:
            # Already panels: read in place. Split by panels when there are enough of
            # them, else by rows, each chunk staging the panels itself (`bounds`).
            strategy, packs = _first(unpacked, outer, inner, remainder), None
            # Rows split between chunks only when they are the kernel's: a product into a
            # panel's own buffer (a Winograd conv's, lowering/kernels/winograd.py), read whole by
            # the nest after it, is the chunk's entire panel (split by panels only).
            rows = not _writes_staged(outer or inner, panels)
            parallel = self.parallel and rows
            if self.parallel:
                panels.schedule = loop.ScheduleAttr(Schedule(parallel=True, grain=PANEL_GRAIN if rows else 0))
            if remainder == "auto" and strategy is not None:  # a panel's pixels left by whole
                strategy = replace(strategy, masks=strategies[-2].masks)  # vectors: masked where not dots
        if packs and _row_lanes_work(inner, lanes):
            # A transposed panel for few rows: lanes along the rows instead (whole panels
            # of them, and the 12 to 15 rows they leave as one more), the rest (or all,
            # out of range) as usual.
            rows = constant_index(outer.upper)
            if rows is None or ROW_LANES[0] <= rows < ROW_LANES[1]:
                rest = None if rows is not None and rows % lanes in (0, *range(partial_rows(lanes), lanes)) else \
                    split_nest(outer, inner, True, _row_panels(outer.upper, lanes))
                if rest is not None or rows is not None:  # (run-time rows need the split)
                    _row_lanes(outer, inner, parallel, lanes)
                    if rest is not None:
                        self._schedule_nest(kernel, *rest, parallel, strategies, lanes)
                    return
        if packs is not None:
            if packs:  # a dense layer's transposed panel: one tile wide (`PANEL_COLUMNS`)
                strategy = replace(strategy, inner=replace(strategy.inner, panel=0))
            rows, least = constant_index(outer.upper), PACK_MIN_ROWS[packs]
            panel = lanes * _fit(strategy, inner)[1]
            if (rows is not None and rows < least) or (constant_index(inner.upper) or panel) < panel:
                strategy = _first(unpacked, outer, inner, remainder)
            elif rows is None:  # known at run time: the packed nest takes whole panels
                fallback = _first(unpacked, outer, inner, remainder)
                rest = split_nest(outer, inner, False, whole_cut(inner.upper, panel, least)) if fallback else None
                if rest is not None:
                    _apply(fallback, *rest, parallel, remainder)
        if strategy is not None:
            _apply(strategy, outer, inner, parallel, remainder)
        elif outer is not None and _on_copy(inner, lambda o, i: _transposes(o, i, False, lanes)):
            _transposes(outer, inner, parallel, lanes)
        elif parallel:
            (outer or inner).schedule = loop.ScheduleAttr(Schedule(parallel=True))

    def _schedule_kernel(self, kernel: loop.KernelOp, cpu: CpuTarget) -> None:
        lanes = cpu.lanes(32)
        kernel.attributes[loop.WORK_MARK] = IntegerAttr(kernel_analysis.reduction_work(kernel), i64)
        # Chunks of a kernel run independently (no barrier), each with its own local
        # buffers: only nests that write nothing but the kernel's outputs may be split.
        # A kernel that stages a buffer (a conv's im2col) before its parallel nest is
        # cooperative instead: its chunks share the buffer, each fills its share and
        # waits for the others before the product (`kernel_analysis.can_cooperate`).
        outputs = set(kernel.args)
        sequential = any(not isinstance(o, loop.ForeachOp) and kernel_analysis.writes_memory(o) for o in kernel.body.block.ops)
        top = {o for o in kernel.body.block.ops if isinstance(o, loop.ForeachOp) and not sequential
               and all(_outermost_buffer(s, o) in outputs for s in o.walk()
                       if isinstance(s, memref.StoreOp | vector.StoreOp) and _outermost_buffer(s, o) is not None)}
        top |= {inner for nest in top for inner in _sole_loops(nest)}
        strategies = _strategies(lanes, cpu.vector_registers, cpu.masks)
        for outer, inner in _innermost_nests(kernel):
            if (outer is not None and outer.schedule is not None) or inner.schedule is not None:
                continue
            parallel = self.parallel and (outer in top or (outer is None and inner in top))
            self._schedule_nest(kernel, outer, inner, parallel, strategies, lanes)
        for red in kernel.walk():  # reductions outside nests (hoisted): along k in lanes,
            # the steps whole vectors leave one masked step (unless `remainder=peeled`)
            if isinstance(red, loop.ReduceOp) and red.schedule is None and _standalone(red):
                masked = self.remainder == "masked" or (self.remainder == "auto" and cpu.masks)
                red.schedule = loop.ScheduleAttr(Schedule(vector=lanes, mask=masked))
        for nest in top:  # loops holding deeper nests: the outermost one runs in parallel
            if nest.schedule is None and self.parallel:
                nest.schedule = loop.ScheduleAttr(Schedule(parallel=True))
        staged = any(isinstance(o, loop.AllocOp) and o.level.data != loop.Level.REG for o in kernel.body.block.ops)
        if self.parallel and staged and not sequential and top:
            kernel.attributes[loop.COOPERATIVE_MARK] = UnitAttr()
