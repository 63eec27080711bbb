"""Panel packing for register tiles: the copy loops `tile-vectorize` emits before a panel's rows.

A register tile over `j` reads its lane operand as 16-lane vectors of consecutive `j`.
Per panel of `width * cols` columns the operand is copied into a contiguous buffer
`panel[k, c]` (k the reduction step), so every row tile of the panel reads it in order:

- `X[..., k, j]` (a matmul's right operand): row k of the panel is a slice of row k of X;
- `X[..., j, k]` (a dense layer's weights, `W[out, in]`): the panel is a transpose. It
  is copied in 16 x 16 blocks: 16 contiguous loads along k, a transpose in registers
  (4 rounds of 16 two-vector shuffles, each swapping one bit of the row index with the
  same bit of the lane index), 16 contiguous stores; the last `K % 16` steps (all of
  them for a panel narrower than 16 or not a multiple of it) element by element.
  (Element by element throughout, a 768 x 768 transpose took ~0.4 ms; a plain panel copy
  of the same matrix ~0.1 ms.)
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import SSAValue

from nimble.dialects import arith
from nimble.dialects.loop import vector_type
from nimble.passes.loop_transforms.tile_emitter import Emitter, split_at

Loop = Callable[[SSAValue, SSAValue, int, Callable[[SSAValue], None]], None]
"""`loop(lower, upper, step, body)`: emits a sequential loop calling `body(iv)`."""

BLOCK = 16
"""Side of the blocks of a transposed panel (16 f32 lanes)."""


def transposed(load: memref.LoadOp, k_iv: SSAValue) -> bool:
    """Whether a packed operand is read as `X[..., j, k]` (a dense layer's weights)."""
    return load.indices[-1] is k_iv


def column_read(index: SSAValue, j_iv: SSAValue, inside: Container[SSAValue]) -> tuple[bool, SSAValue | None]:
    """Whether a packed operand's lane index reads the columns' iv `j`, and from which
    column on: `j` itself (True, None) or `j + c` with `c` fixed for the nest (True, c:
    one output of several sliced from a product, a dense layer's rows `c` on)."""
    if index is j_iv:
        return True, None
    op = index.owner
    if isinstance(op, arith.AddiOp):
        for a, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if a is j_iv and c not in inside:
                return True, c
    return False, None


def lane_index(load: memref.LoadOp, k_iv: SSAValue) -> SSAValue:
    """The index a packed operand's lanes run along (the other of the last two is `k`)."""
    return load.indices[-2] if transposed(load, k_iv) else load.indices[-1]


def copy_panel(e: Emitter, loop: Loop, load: memref.LoadOp, k_iv: SSAValue, panel: SSAValue, j0: SSAValue,
               k_upper: SSAValue, width: int, cols: int, at: Sequence[SSAValue] = (),
               offset: SSAValue | None = None) -> None:
    """Copy columns [j0, j0 + width * cols) of the operand `load` reads (from column
    `offset` on, if given) into `panel` (`panel[*at, k, c]`: `at` picks one panel of a
    buffer holding several)."""
    if offset is not None:
        j0 = e.emit(arith.AddiOp(j0, offset)).result
    lead = list(load.indices[:-2])
    at = list(at)
    element = load.res.type
    if not transposed(load, k_iv):
        def row(k: SSAValue) -> None:
            for c in range(cols):
                j = e.emit(arith.AddiOp(j0, e.const_index(c * width))).result if c else j0
                v = e.emit(vector.LoadOp(load.memref, [*lead, k, j], vector_type(element, (width,)))).result
                e.emit(vector.StoreOp(v, panel, [*at, k, e.const_index(c * width)]))

        loop(e.const_index(0), k_upper, 1, row)
        return
    columns = width * cols

    def block(k0: SSAValue) -> None:
        def square(c0: SSAValue) -> None:
            first = e.emit(arith.AddiOp(j0, c0)).result
            rows = []
            for r in range(BLOCK):
                j = e.emit(arith.AddiOp(first, e.const_index(r))).result if r else first
                rows.append(e.emit(vector.LoadOp(load.memref, [*lead, j, k0], vector_type(element, (BLOCK,)))).result)
            for t, v in enumerate(transpose_block(e, rows)):
                k = e.emit(arith.AddiOp(k0, e.const_index(t))).result if t else k0
                e.emit(vector.StoreOp(v, panel, [*at, k, c0]))

        loop(e.const_index(0), e.const_index(columns), BLOCK, square)

    def rest(k: SSAValue) -> None:
        def one(c: SSAValue) -> None:
            j = e.emit(arith.AddiOp(j0, c)).result
            v = e.emit(memref.LoadOp.get(load.memref, [*lead, j, k])).res
            e.emit(memref.StoreOp.get(v, panel, [*at, k, c]))

        loop(e.const_index(0), e.const_index(columns), 1, one)

    if columns % BLOCK:  # a panel narrower than a block, or uneven: element by element
        loop(e.const_index(0), k_upper, 1, rest)
        return
    blocks = split_at(e, k_upper, BLOCK)
    loop(e.const_index(0), blocks, BLOCK, block)
    if blocks is not k_upper:
        loop(blocks, k_upper, 1, rest)


def transpose_block(e: Emitter, rows: list[SSAValue]) -> list[SSAValue]:
    """The columns of a square block held as row vectors (a power of two of them). Round
    `d` (8, 4, 2, 1 for 16 rows) swaps bit `d` of the row index with bit `d` of the lane
    index, pairing row r with row r + d."""
    n = len(rows)
    t = rows[0].type
    assert n & (n - 1) == 0, n
    for d in reversed([1 << b for b in range(n.bit_length() - 1)]):
        low = [c if not c & d else n + c - d for c in range(n)]  # row r: lanes with bit d set from r + d
        high = [c + d if not c & d else n + c for c in range(n)]  # row r + d: lanes without it from r
        out = list(rows)
        for r in range(n):
            if r & d:
                continue
            a, b = rows[r], rows[r + d]
            out[r] = e.emit(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, low), result_type=t)).result
            out[r + d] = e.emit(vector.ShuffleOp(a, b, DenseArrayBase.from_list(i64, high), result_type=t)).result
        rows = out
    return rows
