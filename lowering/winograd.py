"""Winograd F(2, 3) along the rows for 3 x 3 stride-1 convs on the CPU.

Output rows come in pairs: rows 2r and 2r + 1 of a 3-tap column filter `g` over four
input rows `d` are `A^T [(G g) * (B^T d)]`, four products for six (F(2, 3)):

    B^T d = (d0 - d2, d1 + d2, d2 - d1, d1 - d3)
    G g   = (g0, (g0 + g1 + g2) / 2, (g0 - g1 + g2) / 2, g2)
    A^T m = (m0 + m1 + m2, m1 - m2 - m3)

Along the columns the conv stays direct: the three taps of a row join the channels in
the reduction. Per pair of output rows the conv is then four matrix products,
`M_i[o, column] = sum over (c, kw) of U_i[o, (c, kw)] * V_i[(c, kw), column]`, of
reduction 3C instead of 9C per output row: 2/3 of the multiplies. (The 2-D form,
F(2 x 2, 3 x 3), saves more but its tiles interleave columns: its outputs would be
stride-2 stores, which the tile emitter does not make.)

The nest (`KernelBuilder.pair_panels`) runs over panels of `PANEL_PIXELS` columns of
the *pair-flattened* map (pair r, output column ow) -> r * OW + ow, so a panel spans
parts of several pairs as a pixel panel spans rows. Per panel the input transform
stages `V[(i, c, kw), column]` (`PANEL_PIXELS` columns: read in place by the register
tile, like im2col rows), the four products stage `M[(i, o), column]`, and the output
nest reads its pixel's two or three `M` rows. `U[(i, o), (c, kw)]` is computed once per
call, before the panels.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, memref
from xdsl.ir import Operation, SSAValue

from nimble.dialects import graph
from nimble.lowering.kernel_builder import Dim, KernelBuilder
from nimble.lowering.scalar import const

MIN_CHANNELS = 32
"""Input and output channels from which a conv takes the Winograd form (fewer: the
transforms' share of the work grows, the products' tiles shrink)."""

MIN_PIXELS = 576
"""Output pixels from which a conv takes the Winograd form (decided at run time when the
map's size is only known then: both forms are built). Its weights' transform is made
per call, ~2-8 ns per (output, input) channel pair, and repays ~0.02 ns per pair and pixel:"""


def applies(kb: KernelBuilder, op: Operation) -> bool:
    """Whether the Winograd form computes `op`: a conv on the CPU with 3 x 3 taps, stride
    and dilation 1, one group, its input and weights kernel inputs."""
    if not isinstance(op, graph.Conv2dOp) or kb.device or op.groups.value.data != 1:
        return False
    strides, _pads, dilations = op.window()
    return (tuple(strides) == (1, 1) and tuple(dilations) == (1, 1) and tuple(kb.dims(op.weight)[2:]) == (3, 3)
            and op.input in kb.buffers and op.weight in kb.buffers)


def wanted(kb: KernelBuilder, op: Operation) -> bool | SSAValue:
    """Whether the conv takes the Winograd form: where it `applies`, with at least
    `MIN_CHANNELS` channels in and out and `MIN_PIXELS` output pixels. Decided now for
    the sizes known now; when any is known only at run time, the flag (an `i1` in the
    kernel's prologue) that decides then (both forms built)."""
    if not applies(kb, op):
        return False
    o_, c_ = kb.dims(op.weight)[:2]
    oh_, ow_ = kb.dims(op.result)[2:]
    pixels = kb.imul(oh_, ow_) if isinstance(oh_, int) and isinstance(ow_, int) else None
    if pixels is None:
        pixels = kb.entry.insert(arith.MuliOp(kb.index(oh_), kb.index(ow_))).result
    tests = [(o_, MIN_CHANNELS), (c_, MIN_CHANNELS), (pixels, MIN_PIXELS)]
    if any(isinstance(size, int) and size < least for size, least in tests):
        return False
    flag: SSAValue | None = None
    for size, least in tests:
        if isinstance(size, int):
            continue
        test = kb.entry.insert(arith.CmpiOp(size, kb.index(least), "sge")).result
        flag = test if flag is None else kb.entry.insert(arith.AndIOp(flag, test)).result
    return True if flag is None else flag


def _weights(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """`U[(i, o), (c, kw)] = (G g)_i` for `g = w[o, c, :, kw]`, once per call."""
    from nimble.lowering.window_rules import dram_buffer

    o_, c_, _kh, _kw = kb.dims(op.weight)
    t = op.result.type.get_element_type()
    u = dram_buffer(kb, [4, o_, kb.imul(c_, 3)], t)
    half = const(kb.emit, 0.5, t)
    e = kb.emit

    def column(o: SSAValue, c: SSAValue, kw: int) -> None:
        g0, g1, g2 = (kb.at(op.weight, [o, c, kh, kw]) for kh in range(3))
        ends = e(arith.AddfOp(g0, g2))
        values = [g0, e(arith.MulfOp(e(arith.AddfOp(ends, g1)), half)),
                  e(arith.MulfOp(e(arith.SubfOp(ends, g1)), half)), g2]
        at = kb.iadd(kb.imul(c, 3), kw)
        for i, v in enumerate(values):
            kb.store_buffer(v, u, [i, o, at])

    outer = o_ if kb.pairs_when is None else kb.emit(arith.SelectOp(kb.pairs_when, kb.index(o_), kb.index(0)))
    kb.foreach(outer, lambda o: kb.foreach(c_, lambda c: [column(o, c, kw) for kw in range(3)]))
    return u


def _inputs(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The panel's `V[(i, c, kw), column] = (B^T d)_i` for `d` the four input rows of the
    column's pair at its tap kw (zeros outside the input)."""
    from nimble.lowering.window_rules import PANEL_PIXELS, dram_buffer, inside_range, panel_rows

    panel = kb.panel
    _n, c_, h_, w_ = kb.dims(op.input)
    ow_ = kb.dims(op.result)[3]
    _strides, pads, _dilations = op.window()
    t = op.result.type.get_element_type()
    rows = kb.imul(c_, 3)
    v = dram_buffer(kb, [4, rows, PANEL_PIXELS], t)
    zero = const(kb.emit, 0.0, t)
    e = kb.emit

    def pair(r: Dim, a: Dim, b: Dim, dest: Dim) -> None:
        top = kb.ibinary("sub", kb.imul(r, 2), pads[0])
        sources: list[tuple[Dim, SSAValue]] = []  # each input row, clamped, and whether inside
        for j in range(4):
            ih = kb.iadd(top, j)
            inside = e(arith.AndIOp(e(arith.CmpiOp(kb.index(ih), kb.index(0), "sge")),
                                    e(arith.CmpiOp(kb.index(ih), kb.index(h_), "slt"))))
            sources.append((kb.ibinary("min", kb.ibinary("max", ih, 0), kb.ibinary("sub", h_, 1)), inside))

        def tap(kw: SSAValue) -> None:  # the columns whose tap kw lies inside the input: [lo, hi)
            off = kb.ibinary("sub", kw, pads[1])
            lo, hi = inside_range(kb, off, off, 1, w_, ow_)
            lo = kb.ibinary("min", kb.ibinary("max", lo, a), b)
            hi = kb.ibinary("max", kb.ibinary("min", hi, b), lo)

            def channel(c: SSAValue) -> None:
                put = _storer(kb, v, kb.iadd(kb.imul(c, 3), kw), dest)
                kb.foreach(kb.ibinary("sub", lo, a), lambda s: put(kb.iadd(a, s), [zero] * 4))
                kb.foreach(kb.ibinary("sub", hi, lo), lambda s: copy(c, kb.emit(arith.AddiOp(s, kb.index(lo))), off, put))
                kb.foreach(kb.ibinary("sub", b, hi), lambda s: put(kb.iadd(hi, s), [zero] * 4))

            kb.foreach(c_, channel)

        def copy(c: SSAValue, ow: SSAValue, off: Dim, put) -> None:
            iw = kb.iadd(ow, off)
            d = [e(arith.SelectOp(inside, kb.at(op.input, [panel.n, c, ih, iw]), zero)) for ih, inside in sources]
            put(ow, [e(arith.SubfOp(d[0], d[2])), e(arith.AddfOp(d[1], d[2])), e(arith.SubfOp(d[2], d[1])),
                     e(arith.SubfOp(d[1], d[3]))])

        kb.foreach(3, tap)

    panel_rows(kb, ow_, pair)
    return v


def _storer(kb: KernelBuilder, v: SSAValue, k: Dim, dest: Dim):
    """`put(ow, values)`: the four transformed values of column `ow` into `v[i, k]`."""
    def put(ow: Dim, values: Sequence[SSAValue]) -> None:
        column = kb.index(kb.iadd(dest, ow))
        for i, value in enumerate(values):
            kb.emit(memref.StoreOp.get(value, v, [kb.index(i), kb.index(k), column]))

    return put


def _products(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The panel's `M[(i, o), column]`: four matrix products over (c, kw), which
    `schedule-loops` tiles like a conv's im2col product (V read in place)."""
    from nimble.lowering.window_rules import PANEL_PIXELS, dram_buffer

    o_, c_, _kh, _kw = kb.dims(op.weight)
    t = op.result.type.get_element_type()
    u = kb.staged(("winograd_weights", op), lambda: _weights(kb, op))
    v = _inputs(kb, op)
    rows = kb.imul(c_, 3)
    m = dram_buffer(kb, [4, o_, PANEL_PIXELS], t)

    def product(i: SSAValue) -> None:
        def channel(o: SSAValue) -> None:
            def column(col: SSAValue) -> None:
                acc = kb.reduce_nest([rows], kb._identity("add", t), "add", lambda k: kb.emit(arith.MulfOp(
                    kb.load_buffer(u, [i, o, k[0]]), kb.load_buffer(v, [i, k[0], col]))))
                kb.store_buffer(acc, m, [i, o, col])

            kb.foreach(kb.panel.count, column)

        kb.foreach(o_, channel)

    kb.foreach(4, product)
    return m


def conv2d(kb: KernelBuilder, op: graph.Conv2dOp, idx: list[Dim]) -> SSAValue:
    """The conv at the current pixel of a pair panel: its pair's two outputs from the
    panel's staged products, the one of its row."""
    m = kb.staged(("winograd", op), lambda: _products(kb, op), per_panel=True)
    o, oh = idx[1], idx[2]
    column = kb.pixels.column
    e = kb.emit
    m0, m1, m2, m3 = (kb.load_buffer(m, [i, o, column]) for i in range(4))
    upper = e(arith.AddfOp(e(arith.AddfOp(m0, m1)), m2))
    lower = e(arith.SubfOp(e(arith.SubfOp(m1, m2)), m3))
    even = e(arith.CmpiOp(kb.index(kb.ibinary("rem", oh, 2)), kb.index(0), "eq"))
    acc = e(arith.SelectOp(even, upper, lower))
    if op.bias is not None:
        acc = e(arith.AddfOp(acc, kb.at(op.bias, [o])))
    return acc
