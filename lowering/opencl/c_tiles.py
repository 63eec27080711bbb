"""Register tiles for C-family kernels: one thread computes `rows` x `lanes` outputs.

The tile is made by the register-tiling engine the LLVM backend uses
(`passes/register_tile.Tile` over `passes/tile_emitter.Emitter`): the two innermost
grid loops of a nest (`i` over rows, `j` over lanes) become `rows` x `vectors` copies
of their body, in a block whose two arguments are the tile's first row and first lane.
Values that depend on `j` are vectors of `width` elements (lanes = vectors x width;
width 1 is scalar code), values that depend on `i` have one copy per row, and a
reduction inside the body runs once for the whole tile with every copy's accumulators
(unroll-and-jam), so an operand loaded for one row or one lane is reused by the others
from registers: the register blocking of a hand-tuned GEMM, derived from the loop nest.
The C emitter prints the block (`vector.load` as `vloadN`, `vector.broadcast` as a
vector literal, vector accumulators, `CEmitter.print_tile`); the caller handles a thread
whose tile overhangs the iteration space (`CEmitter.tile_at`).

`tile_block` raises `NotTileable` for bodies the tile does not cover (a `j` index
outside the last position of an access, nested loops, buffers, reduction bounds that
vary over the tile) or whose vector form the flavour cannot print (integer, comparison
or `i1` code on vectors, strided or masked accesses); the caller then emits the scalar
form.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import vector
from xdsl.dialects.builtin import IndexType, IntegerType, VectorType
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint

from nimble.dialects import arith, loop
from nimble.lowering.opencl.c_source import Flavor
from nimble.passes.loop_transforms.register_tile import Tile
from nimble.passes.loop_transforms.tile_emitter import Copy, Emitter, NotVectorizable, discard, offsets


class NotTileable(Exception):
    pass


VECTOR_ARITH: tuple[type[Operation], ...] = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.NegfOp, arith.MaximumfOp, arith.MinimumfOp,
)
"""Ops a C flavour prints on vectors, besides its math functions."""
_MEMORY = (vector.LoadOp, vector.StoreOp, vector.BroadcastOp)
_STRUCTURE = (arith.ConstantOp, loop.ReduceOp, loop.YieldOp)


def tile_block(flavor: Flavor, outer: loop.ForeachOp, inner: loop.ForeachOp, rows: int, width: int,
               vectors: int) -> Block:
    """The tile's ops, `outer` over its rows and `inner` over its lanes, in a block whose
    arguments are the first row and the first lane (raises `NotTileable`)."""
    body = [op for op in (*outer.body.block.ops, *inner.body.block.ops)
            if op is not inner and not isinstance(op, loop.YieldOp)]
    for op in body:
        if isinstance(op, loop.ForeachOp | loop.AllocOp) or (op.regions and not isinstance(op, loop.ReduceOp)):
            raise NotTileable(op.name)
        if isinstance(op, loop.ReduceOp) and any(loop.defined_inside(v, outer) for v in (op.lower, op.upper, op.step)):
            raise NotTileable("reduction bounds vary over the tile")
    block = Block(arg_types=[IndexType(), IndexType()])
    vector_ops = (*VECTOR_ARITH, *flavor.functions)
    e = Emitter(Builder(InsertPoint.at_end(block)), vector_ops)
    lane = inner.iv if width > 1 else None
    try:
        i_values, j_values = offsets(e, block.args[0], rows), offsets(e, block.args[1], vectors, width)
        copies = [Copy({outer.iv: i, inner.iv: j}, lane, width) for i in i_values for j in j_values]
        tile = Tile(e, body, copies, lane, unroll=False)
        tile.epilogue_loops = False
        tile.run()
        for op in block.walk():
            _check_printable(op, vector_ops)
    except (NotVectorizable, NotTileable) as error:
        discard(block)
        raise NotTileable(str(error)) from None
    return block


def _check_printable(op: Operation, vector_ops: tuple[type[Operation], ...]) -> None:
    vectors = [v.type for v in (*op.operands, *op.results) if isinstance(v.type, VectorType)]
    if not vectors:
        return
    if any(t.element_type == IntegerType(1) or t.get_num_dims() != 1 for t in vectors):
        raise NotTileable(f"{op.name} on a vector of i1")
    if not isinstance(op, _MEMORY + _STRUCTURE + vector_ops):
        raise NotTileable(f"{op.name} on vectors")
