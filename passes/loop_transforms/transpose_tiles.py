"""Copies that transpose: V x V blocks through registers (16 x 16 with AVX-512).

For `foreach i { foreach j { v = X[..j.., i]; rest(v); store out[.., i, j] } }` (BERT's
keys split into heads and transposed, `out[h, d, s] = X[s, h * 64 + d]`) lanes along `j`
would read `X` a row apart per lane, and lanes along `i` would store a row apart. With
`vector = V` on `i` and `unroll = V` on `j` and no reduction in the body, the nest runs in
V x V blocks instead:

- the loads read along `i` (their last index contiguous in `i`, `j` among the others):
  V vector loads, one per `j` of the block;
- those V vectors transposed in registers (`pack_panels.transpose_block`);
- the rest of the body (the loads read along `j`, arithmetic, the store) with lanes along
  `j`, one copy per `i` of the block, each taking its column of the transposed block.

Rows and columns left over by whole blocks run one element at a time. Measured in one
process, ONNX BERT 4 x 256 at S = 128, 2 threads, min per launch: the key split and
transpose 30.6-31.7 us element by element, 9.5-10.7 us in blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import f32
from xdsl.ir import Operation, SSAValue

from nimble.dialects import loop
from nimble.passes.loop_transforms.pack_panels import BLOCK, transpose_block
from nimble.passes.loop_transforms.register_tile import Tile
from nimble.passes.loop_transforms.row_lanes import Foreach, leftovers
from nimble.passes.loop_transforms.tile_emitter import (
    Copy,
    Emitter,
    NotVectorizable,
    offsets,
    schedule_of,
    split_at,
    varying_values,
)


def _feeding(ops: Sequence[Operation], loads: Sequence[memref.LoadOp]) -> list[Operation]:
    """The ops of `ops` computing the loads' indices (directly or through others)."""
    used = {v for ld in loads for v in ld.indices}
    feeding = []
    for op in reversed(ops):
        if any(r in used for r in op.results):
            feeding.append(op)
            used.update(op.operands)
    return feeding[::-1]


def _row_loads(body: Sequence[Operation], outer: loop.ForeachOp, inner: loop.ForeachOp) -> list[memref.LoadOp]:
    """The loads that vary with `j` but not in their last index: read along `i`."""
    along_j = varying_values(body, inner.iv)
    loads = [o for o in body if isinstance(o, memref.LoadOp) and any(i in along_j for i in o.indices)
             and o.indices[-1] not in along_j]
    if not loads:
        raise NotVectorizable("no load to read along the rows")
    if any(ld.res.type != f32 for ld in loads):
        raise NotVectorizable("transposed blocks of f32 only")
    along_i = varying_values(body, outer.iv)
    if any(ld.indices[-1] not in along_i for ld in loads):
        # (the same element for every i, as a broadcast size-1 dim reads: no vector to
        # transpose; a block of such scalars is not a vector register)
        raise NotVectorizable("a load read along the rows does not move along them")
    return loads


def transpose_tiles(e: Emitter, outer: loop.ForeachOp, inner: loop.ForeachOp, body: Sequence[Operation],
                    foreach: Foreach) -> None:
    """Emit the nest in transposed blocks; raises NotVectorizable (nothing usable emitted)
    if it cannot (a load read along the rows not contiguous in them, say)."""
    width = schedule_of(outer).vector
    if width < 4 or width > BLOCK or width & (width - 1) or schedule_of(inner).unroll != width:
        raise NotVectorizable(f"transposed blocks are V x V, V a power of two from 4 to {BLOCK}")
    body = [o for o in body if not isinstance(o, loop.YieldOp)]
    if any(o.regions for o in body):
        raise NotVectorizable("a reduction or a loop in a transposed copy")
    loads = _row_loads(body, outer, inner)
    before = _feeding(body, loads)
    rest = [o for o in body if o not in loads]
    along_j = varying_values(body, inner.iv)
    parallel = schedule_of(outer).parallel or schedule_of(inner).parallel
    main_m, main_n = split_at(e, outer.upper, width), split_at(e, inner.upper, width)

    def block(i0: SSAValue, j0: SSAValue) -> None:
        rows = [Copy({outer.iv: i0, inner.iv: j}, outer.iv, width, aligned=True) for j in offsets(e, j0, width)]
        Tile(e, [*before, *loads], rows, outer.iv).run()
        columns = [transpose_block(e, [c.subst[ld.res] for c in rows]) for ld in loads]
        copies = [Copy({outer.iv: i, inner.iv: j0, **{ld.res: col[t] for ld, col in zip(loads, columns)}},
                       inner.iv, width, aligned=True) for t, i in enumerate(offsets(e, i0, width))]
        tile = Tile(e, rest, copies, inner.iv)
        tile.varying = set(along_j)
        tile.run()

    foreach(e.const_index(0), main_m, width, loop.Schedule(parallel=parallel),
            lambda i0: foreach(e.const_index(0), main_n, width, None, lambda j0: block(i0, j0)))
    leftovers(e, foreach, outer, inner, body, parallel, main_m, main_n)
