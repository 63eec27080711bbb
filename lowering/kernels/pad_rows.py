"""Copies of weight matrices laid out for a recurrence's reads (CPU recurrence kernels).

A recurrence kernel's reductions read several rows of a weight matrix at once (the four
gates of a hidden unit: `schedule_loops.DOT_STREAMS`; the measurements below read four
units, sixteen rows). The kernel copies a matrix once, before its loops, when the copy
reads better than the original (with one unit per tile, LSTM h1024, 100 steps, 2
threads: 20.6 ms against 24.3 reading in place, same process):

- *padded rows*: when a row is a multiple of 1 KB long (256 or 512 floats: most models),
  the rows read together start at addresses equal modulo 4 KB and fall into the same few
  sets of the L1 cache, which then evicts lines it is about to use; the copy's rows are
  one cache line longer, spread over the sets. Measured on an LSTM h256 (rows of 512
  floats), batch 1: 25 steps 1.40 -> 0.79 ms and 100 steps 5.08 -> 3.92 ms.
- *split columns*: when the reductions read disjoint column ranges of each row (the
  input part `W_x` of `[W_x | W_h]`, read once by the hoisted input projection, and the
  recurrent part `W_h`, read at every step), each range gets its own copy (padded as
  above when its rows alias): the steps then stream one compact matrix instead of every
  other kilobyte of a matrix twice as large (`MAX_BYTES` for large matrices). Measured
  on an LSTM h256, batch 1, against one padded copy of `[W_x | W_h]` (same process,
  alternating): 25 steps 0.64 -> 0.52 ms, 100 steps 2.39 -> 1.88 ms; on 2 threads 0.43
  -> 0.33 and 1.52 -> 1.09 ms.

A matrix the host passes as a constant (an ONNX model's weights) and that would be
padded whole is not copied at all: the parameter takes the padded type and
`lower-rnn-to-kernels` passes it a padded constant made at compile time. ONNX LSTM, 25
steps, 2 threads, median (same process): h256 0.342 -> 0.301 ms, h512 2.04-2.99 ->
1.27-1.55 ms (the per-call copy of 4 MB also paid for fresh pages).
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import FixedBitwidthType, IndexType, IntegerAttr, MemRefType, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith, loop
from nimble.dialects.graph import ConstantOp
from nimble.dialects.graph.folding import array_to_dense, dense_to_array
from nimble.dialects.shape_functions import constant_index

ALIASING_BYTES = 1024
"""Row lengths that are multiples of this put the rows read together in the same cache sets."""
PAD = 16
"""Elements added to each row (one 64-byte line of f32)."""
MIN_ROWS = 16
"""Matrices with fewer rows are read by fewer streams than a set has ways."""
MAX_BYTES = 4 << 20
"""Larger matrices stream from memory at every step anyway: a padded copy of the whole
matrix (64 MB of traffic for an LSTM h1024's 32 MB) cost more than the sets save (h1024,
25 steps: 29 -> 52 ms with the copy, measured). Of a larger matrix read over several
column ranges, only the ranges read inside the time loop are copied (the input part
stays in place for the projection, read once): LSTM h1024, batch 1, 1 thread, 25 steps
21.4 -> 13.9 ms, 100 steps 79.5 -> 63.3 ms; 2 threads 11.2 -> 10.7 and 38.8 -> 33.4 ms
(same process, alternating, median)."""


def padded_constant(value: SSAValue, shape: tuple[int, int]) -> ConstantOp:
    """A new constant of `shape` holding the 2-D constant `value` in its first columns,
    zeros after them (a weight passed padded, made once at compile time; not inserted)."""
    array = dense_to_array(value.owner.value)
    longer = np.zeros(shape, array.dtype)
    longer[:, :array.shape[1]] = array
    constant = ConstantOp(array_to_dense(longer, TensorType(value.type.get_element_type(), shape)))
    constant.result.name_hint = f"{value.name_hint or 'w'}_padded"
    return constant


def _element_bytes(t: MemRefType) -> int:
    element = t.get_element_type()
    return element.bitwidth // 8 if isinstance(element, FixedBitwidthType) else 0


def _aliases(rows: int, cols: int, width: int) -> bool:
    return rows >= MIN_ROWS and cols > 0 and width > 0 and (cols * width) % ALIASING_BYTES == 0


def _column_range(load: memref.LoadOp) -> tuple[int, int] | None:
    """The columns [lo, hi) a load reads: its last index is the iv of a loop with
    constant bounds and step 1 (a reduction over a slice of the row); else None."""
    iv = load.indices[-1]
    owner = iv.owner
    op = owner.parent_op() if isinstance(owner, Block) else None
    if not isinstance(op, loop._LoopOp) or op.iv is not iv or constant_index(op.step) != 1:
        return None
    lo, hi = constant_index(op.lower), constant_index(op.upper)
    return None if lo is None or hi is None else (lo, hi)


def _split(ranges: set[tuple[int, int] | None], cols: int) -> list[tuple[int, int]] | None:
    """Two or more disjoint column ranges inside the row, sorted; else None."""
    if None in ranges or len(ranges) < 2:
        return None
    ordered = sorted(ranges)
    if ordered[0][0] < 0 or ordered[-1][1] > cols or any(a[1] > b[0] for a, b in zip(ordered, ordered[1:])):
        return None
    return ordered


def _copy(block: Block, arg: SSAValue, rows: int, lo: int, width: int, pad: int, name: str) -> SSAValue:
    """Emit at the start of `block` a copy of columns [lo, lo + width) of `arg` into a new
    buffer with rows `width + pad` long; return the buffer."""
    copy = loop.AllocOp(loop.Level.DRAM, MemRefType(arg.type.get_element_type(), [rows, width + pad]))
    copy.memref.name_hint = name
    consts = {n: arith.ConstantOp(IntegerAttr(n, IndexType())) for n in sorted({0, 1, rows, width, lo})}
    inner = Block(arg_types=[IndexType()])
    outer = Block(arg_types=[IndexType()])
    column = arith.AddiOp(inner.args[0], consts[lo].result)
    value = memref.LoadOp.get(arg, [outer.args[0], column.result])
    inner.add_ops([column, value, memref.StoreOp.get(value.res, copy.memref, [outer.args[0], inner.args[0]]),
                   loop.YieldOp()])
    zero, one = consts[0].result, consts[1].result
    outer.add_ops([loop.ForeachOp(zero, consts[width].result, one, Region(inner)), loop.YieldOp()])
    nest = loop.ForeachOp(zero, consts[rows].result, one, Region(outer))
    Rewriter.insert_op([*consts.values(), copy, nest], InsertPoint.at_start(block))
    return copy.memref


def pad_aliasing_rows(program: loop.KernelOp, laid_out: Collection[SSAValue] = ()) -> int:
    """Read every weight matrix of `program` (a parameter it only loads from, in loops)
    through copies made at entry where they read better (module docstring); returns how
    many matrices are read through copies. A parameter of `laid_out` (one its caller
    passes a constant to) that would be padded whole is not copied: it takes the padded
    type instead, and the caller passes it a padded constant (made once, at compile time)."""
    block = program.body.block
    stored = {o.memref for o in program.walk() if isinstance(o, memref.StoreOp)}
    copied = 0
    for arg in block.args:
        t = arg.type
        loads = [u.operation for u in arg.uses if isinstance(u.operation, memref.LoadOp)]
        if not isinstance(t, MemRefType) or len(t.get_shape()) != 2 or arg in stored or not loads:
            continue
        rows, cols = t.get_shape()
        width = _element_bytes(t)
        if rows < 0 or cols < 0 or width == 0:
            continue
        big = rows * cols * width > MAX_BYTES
        name = arg.name_hint or "w"
        ranges = _split({_column_range(ld) for ld in loads}, cols)
        if ranges is not None:
            if big:  # only the ranges the steps read (the hoisted projection reads the rest once, in place)
                ranges = [r for r in ranges if all(loop.in_sequential_loop(ld) for ld in loads if _column_range(ld) == r)]
            for lo, hi in ranges:
                pad = PAD if _aliases(rows, hi - lo, width) else 0
                copy = _copy(block, arg, rows, lo, hi - lo, pad, f"{name}_cols{lo}")
                for load in loads:
                    if _column_range(load) == (lo, hi):
                        load.operands[0] = copy
                        if lo:
                            shift = arith.SubiOp(load.indices[-1], _constant(load, lo))
                            load.parent_block().insert_op_before(shift, load)
                            load.operands[len(load.operands) - 1] = shift.result
            copied += bool(ranges)
        elif not big and _aliases(rows, cols, width):
            if arg in laid_out:  # the caller passes it padded
                padded = Rewriter.replace_value_with_new_type(arg, MemRefType(t.get_element_type(), [rows, cols + PAD]))
                padded.name_hint = arg.name_hint
                program.update_function_type()
                continue
            copy = _copy(block, arg, rows, 0, cols, PAD, f"{name}_padded")
            for load in loads:
                load.operands[0] = copy
            copied += 1
    return copied


def _constant(before: memref.LoadOp, n: int) -> SSAValue:
    op = arith.ConstantOp(IntegerAttr(n, IndexType()))
    before.parent_block().insert_op_before(op, before)
    return op.result
