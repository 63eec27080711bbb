"""Index rules of the window ops: conv2d (im2col staging and a matrix product over
flattened pixels, or a direct reduction for grouped convs) and pooling (roi_align's is
in `roi_align_rules.py`); a max pool over a kernel input is staged: every tap at once
where the window lies inside the input, the taps inside the window at the edges. They join
`index_rules.INDEX_RULES`; same signature.

In a nest over panels of pixels (`KernelBuilder.pixel_panels`, CPU kernels) a conv
stages the im2col rows of one panel at a time, `col[(c, kh, kw), column]` with
`PANEL_PIXELS` columns: the panel is the matrix product's right operand already in the
layout a register tile reads (no packing copy), it stays in cache for every output
channel, and panels are independent (split between threads with no barrier). Measured
per call, 1 thread, 64 channels 3 x 3 at 56 x 56: the image-wide im2col buffer (7.2 MB)
cost ~0.25 ms to write and ~0.15 ms to pack again per 64 columns, of ~2.5 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Attribute, Operation, SSAValue

from nimble.dialects import arith, graph, loop
from nimble.lowering.kernels.kernel_parts import Dim
from nimble.lowering.kernels.scalar import const, is_float

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder


def window_source(kb: KernelBuilder, op: Operation, out_hw: Sequence[Dim], k_hw: Sequence[SSAValue],
                   in_hw: Sequence[Dim]) -> tuple[list[Dim], SSAValue]:
    """Input (h, w) of a window tap, clamped into range, and whether it is inside."""
    strides, pads, dilations = op.window()
    coords: list[Dim] = []
    inside: SSAValue | None = None
    for axis in range(2):
        pos = kb.ibinary("sub", kb.iadd(kb.imul(out_hw[axis], strides[axis]), kb.imul(k_hw[axis], dilations[axis])),
                         pads[axis])
        if pads[axis] or pads[axis + 2]:
            ok_lo = kb.emit(arith.CmpiOp(kb.index(pos), kb.index(0), "sge"))
            ok_hi = kb.emit(arith.CmpiOp(kb.index(pos), kb.index(in_hw[axis]), "slt"))
            ok = kb.emit(arith.AndIOp(ok_lo, ok_hi))
            inside = ok if inside is None else kb.emit(arith.AndIOp(inside, ok))
            pos = kb.ibinary("min", kb.ibinary("max", pos, 0), kb.ibinary("sub", in_hw[axis], 1))
        coords.append(pos)
    return coords, inside


def _tap_span(kb: KernelBuilder, op: Operation, oh: Dim, kh: Dim, kw: Dim, h_: Dim, w_: Dim,
              ow_: Dim) -> tuple[Dim, Dim, Dim, Dim]:
    """For output row `oh` and tap (kh, kw): the input row (clamped into range), and the
    output columns [lo, hi) whose input column `iw = ow * stride + off` lies inside the
    input (none when the row is outside), with `base`, the input column of `lo`."""
    (s0, s1), pads, (d0, d1) = op.window()
    ih = kb.ibinary("sub", kb.iadd(kb.imul(oh, s0), kb.imul(kh, d0)), pads[0])
    row_ok = kb.emit(arith.AndIOp(kb.emit(arith.CmpiOp(kb.index(ih), kb.index(0), "sge")),
                                  kb.emit(arith.CmpiOp(kb.index(ih), kb.index(h_), "slt"))))
    ih_safe = kb.ibinary("min", kb.ibinary("max", ih, 0), kb.ibinary("sub", h_, 1))
    off = kb.ibinary("sub", kb.imul(kw, d1), pads[1])
    lo, hi = inside_range(kb, off, off, s1, w_, ow_)
    lo = kb.emit(arith.SelectOp(row_ok, kb.index(lo), kb.index(0)))
    hi = kb.emit(arith.SelectOp(row_ok, kb.index(hi), kb.index(0)))
    return ih_safe, lo, hi, kb.iadd(kb.imul(lo, s1), off)


def _span_column(kb: KernelBuilder, t: SSAValue, lo: Dim, base: Dim, stride: int) -> tuple[SSAValue, Dim]:
    """Step `t` of a tap's span: the output column `lo + t` and its input column
    `base + t * stride`."""
    iw = kb.iadd(kb.imul(t, stride), base) if stride != 1 else kb.emit(arith.AddiOp(t, kb.index(base)))
    return kb.emit(arith.AddiOp(t, kb.index(lo))), iw


def _im2col_segment(kb: KernelBuilder, span: tuple[Dim, Dim, Dim, Dim], base: Dim, stride: int,
                    put: Callable[[Dim, SSAValue | None], None]) -> None:
    """Output columns [a, b) of one im2col row, `span = (a, lo, hi, b)`: zeros before `lo`,
    the input from `lo` to `hi` (input column `base` at `lo`, then every `stride`th),
    zeros from `hi`. `put(ow, iw)` writes column `ow`: zero when `iw` is None, else the
    input at input column `iw`."""
    a, lo, hi, b = span
    kb.foreach(kb.ibinary("sub", lo, a), lambda t_: put(kb.iadd(a, t_), None))

    def copy(t_: SSAValue) -> None:
        ow, iw = _span_column(kb, t_, lo, base, stride)
        put(ow, iw)

    kb.foreach(kb.ibinary("sub", hi, lo), copy)
    kb.foreach(kb.ibinary("sub", b, hi), lambda t_: put(kb.iadd(hi, t_), None))


def inside_range(kb: KernelBuilder, first: Dim, last: Dim, stride: int, size: Dim, out: Dim) -> tuple[Dim, Dim]:
    """The outputs [lo, hi) (of `out`) whose taps `o * stride + offset`, offsets `first`
    to `last`, all lie in [0, size)."""
    lo = kb.emit(arith.CeilDivSIOp(kb.index(kb.ibinary("sub", 0, first)), kb.index(stride)))
    hi = kb.iadd(kb.emit(arith.FloorDivSIOp(kb.index(kb.ibinary("sub", kb.ibinary("sub", size, 1), last)),
                                            kb.index(stride))), 1)
    lo = kb.ibinary("min", kb.ibinary("max", lo, 0), out)
    return lo, kb.ibinary("min", kb.ibinary("max", hi, lo), out)


def _pool_rows(kb: KernelBuilder, op: graph.MaxPool2dOp | graph.AvgPool2dOp, out: SSAValue | None = None) -> SSAValue:
    """The staged result `out[n, c, oh, ow]` of a max or average pool (a new buffer, or
    `out`: the kernel's output buffer, see `index_rules.INTO_OUTPUT`). Where the whole
    window lies inside the input (all but the outputs next to the padding), all taps in
    one loop along `ow`, the maximum or sum in a register (stride-2 windows read every
    other element: still vector loads); the outputs next to the padding take the taps
    inside their window (an average that excludes the padding divides by their count).
    Measured, 1 thread, max pool 64 channels 112 x 112 -> 56 x 56 (3 x 3, stride 2, pad
    1): 423 us tap by tap over whole rows (a row buffer loaded and stored per tap), 267
    us (of which ~40 the copy out of the staged buffer, ~20 the outputs at the edges).
    Inception-v3's average pools (3 x 3, stride 1, pad 1), 1 thread, as a reduction per
    output pixel before: 768 channels at 17 x 17 2.78 ms a call."""
    n_, c_, h_, w_ = kb.dims(op.input)
    _n, _c, oh_, ow_ = kb.dims(op.result)
    (s0, s1), pads, (d0, d1) = op.window()
    kh_, kw_ = list(op.kernel.get_values())
    t = op.result.type.get_element_type()
    dims = [n_, c_, oh_, ow_]
    if out is None:
        out = dram_buffer(kb, dims, t)
    is_max = isinstance(op, graph.MaxPool2dOp)
    combine = arith.MaximumfOp if is_max else arith.AddfOp
    low = const(kb.emit, float("-inf") if is_max else 0.0, t)
    cells = const(kb.emit, float(kh_ * kw_), t)
    counted = not is_max and not op.count_include_pad.value.data  # (the cells inside the input)
    rows = [kh * d0 - pads[0] for kh in range(kh_)]
    columns = [kw * d1 - pads[1] for kw in range(kw_)]
    top, bottom = inside_range(kb, min(rows), max(rows), s0, h_, oh_)
    left, right = inside_range(kb, min(columns), max(columns), s1, w_, ow_)

    def store(value: SSAValue, n: SSAValue, c: SSAValue, oh: Dim, ow: Dim) -> None:
        kb.emit(memref.StoreOp.get(value, out, [kb.index(i) for i in (n, c, oh, ow)]))

    def edge(n: SSAValue, c: SSAValue, oh: Dim, ow: Dim) -> None:
        acc, count = low, const(kb.emit, 0.0, t)
        for kh in range(kh_):
            for kw in range(kw_):
                (h, w), inside = window_source(kb, op, [oh, ow], [kh, kw], [h_, w_])
                x = kb.at(op.input, [n, c, h, w])
                acc = kb.emit(combine(acc, x if inside is None else kb.emit(arith.SelectOp(inside, x, low))))
                if counted:
                    one = const(kb.emit, 1.0, t)
                    count = kb.emit(arith.AddfOp(count, one if inside is None else kb.emit(arith.SelectOp(
                        inside, one, const(kb.emit, 0.0, t)))))
        store(acc if is_max else kb.emit(arith.DivfOp(acc, count if counted else cells)), n, c, oh, ow)

    def inside(n: SSAValue, c: SSAValue, oh: Dim, ow: Dim) -> None:
        taps = [kb.at(op.input, [n, c, kb.iadd(kb.imul(oh, s0), r), kb.iadd(kb.imul(ow, s1), q)])
                for r in rows for q in columns]
        while len(taps) > 1:  # a tree: the maxima (sums) of pairs, then of their pairs, ...
            taps = [kb.emit(combine(a, b)) for a, b in zip(taps[::2], taps[1::2])] + taps[len(taps) & ~1:]
        store(taps[0] if is_max else kb.emit(arith.DivfOp(taps[0], cells)), n, c, oh, ow)

    def edge_row(n: SSAValue, c: SSAValue, oh: Dim) -> None:
        kb.foreach(ow_, lambda ow: edge(n, c, oh, ow))

    def row(n: SSAValue, c: SSAValue, oh: Dim) -> None:
        kb.foreach(left, lambda ow: edge(n, c, oh, ow))
        kb.foreach(kb.ibinary("sub", right, left), lambda t_: inside(n, c, oh, kb.iadd(t_, left)))
        kb.foreach(kb.ibinary("sub", ow_, right), lambda t_: edge(n, c, oh, kb.iadd(t_, right)))

    def channel(n: SSAValue, c: SSAValue) -> None:
        kb.foreach(top, lambda oh: edge_row(n, c, oh))
        kb.foreach(kb.ibinary("sub", bottom, top), lambda t_: row(n, c, kb.iadd(t_, top)))
        kb.foreach(kb.ibinary("sub", oh_, bottom), lambda t_: edge_row(n, c, kb.iadd(t_, bottom)))

    kb.foreach(n_, lambda n: kb.foreach(c_, lambda c: channel(n, c)))
    return out


def _rows_pool(kb: KernelBuilder, op: graph.MaxPool2dOp | graph.AvgPool2dOp) -> bool:
    """Whether `_pool_rows` computes the pool: a window of float cells on a kernel input."""
    return op.input in kb.buffers and is_float(op.result.type.get_element_type())


def pool_into(kb: KernelBuilder, op: graph.MaxPool2dOp | graph.AvgPool2dOp, buffer: SSAValue) -> bool:
    if not _rows_pool(kb, op):
        return False
    kb.staged(("pool", op), lambda: _pool_rows(kb, op, buffer))
    return True


PANEL_PIXELS = 64
"""Pixels per panel: the columns of `schedule-loops`' CPU register tile (16 lanes x 4);
64 channels x 3 x 3 taps make a 147 KB panel (L2 holds it)."""


FEW_CHANNELS = 4
"""Input channels up to which a panel's im2col row segments of one tap are filled for
every channel in the same loops (an image's 3 channels: the segment's bounds, its zero
fill and its masked tail computed once, not per channel)."""


def _im2col_panel(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The staged im2col rows of the current panel, `col[k, column]` for k = (c, kh, kw)
    and the panel's pixels (columns past the panel's count are left unwritten: nothing
    reads them). A stride-1 conv whose output is as wide as its input reads each row as
    one shifted run of the flat input plane (`_shifted_rows`); any other conv fills it
    per output row the panel spans, zeros / a copy / zeros like `_im2col`'s rows."""
    panel = kb.panel
    _n, c_, h_, w_ = kb.dims(op.input)
    _o, _c, kh_, kw_ = kb.dims(op.weight)
    _n2, _o2, _oh, ow_ = kb.dims(op.result)
    s1 = op.window()[0][1]
    t = op.result.type.get_element_type()
    taps = kb.imul(kh_, kw_)
    # Rows of PANEL_PIXELS even when the map has fewer pixels: a row stride known when
    # compiling (with `min(pixels, 64)`, LLVM spilled the register tile's accumulators:
    # 64 channels at 56 x 56, `?` channels, 2.34 -> 2.71 ms, measured).
    col = dram_buffer(kb, [kb.imul(c_, taps), PANEL_PIXELS], t)
    zero = const(kb.emit, 0.0, t)

    def store(k: Dim, column: Dim, value: SSAValue) -> None:
        kb.emit(memref.StoreOp.get(value, col, [kb.index(k), kb.index(column)]))

    if _shifted_rows(kb, op, store, zero):
        return col

    def row(oh: Dim, a: Dim, b: Dim, dest: Dim) -> None:
        kb.foreach(kh_, lambda kh: kb.foreach(kw_, lambda kw: tap(oh, a, b, dest, kh, kw)))

    def tap(oh: Dim, a: Dim, b: Dim, dest: Dim, kh: SSAValue, kw: SSAValue) -> None:
        ih, lo, hi, base = _tap_span(kb, op, oh, kh, kw, h_, w_, ow_)
        lo2 = kb.ibinary("min", kb.ibinary("max", lo, a), b)
        hi2 = kb.ibinary("max", kb.ibinary("min", hi, b), lo2)
        base2 = kb.iadd(base, kb.imul(kb.ibinary("sub", lo2, lo), s1))
        first_k = kb.iadd(kb.imul(kh, kw_), kw)

        def segment(channels: Sequence[Dim]) -> None:
            ks = [kb.iadd(kb.imul(c, taps), first_k) for c in channels]

            def put(ow: Dim, iw: Dim | None) -> None:
                column = kb.iadd(dest, ow)
                for c, k in zip(channels, ks):
                    store(k, column, zero if iw is None else kb.at(op.input, [panel.n, c, ih, iw]))

            _im2col_segment(kb, (a, lo2, hi2, b), base2, s1, put)

        if isinstance(c_, int) and c_ <= FEW_CHANNELS:  # every channel in the same loops
            segment(range(c_))
        else:
            kb.foreach(c_, lambda c: segment([c]))

    panel_rows(kb, ow_, row)
    return col


def dram_buffer(kb: KernelBuilder, dims: list[Dim], t: Attribute) -> SSAValue:
    """A `dram` buffer of `dims` (its dims known to the builder), allocated here."""
    col_type = MemRefType(t, [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims])
    buf = kb.emit(loop.AllocOp(loop.Level.DRAM, col_type, [kb.index(d) for d in dims if not isinstance(d, int)]))
    kb.buffer_dims[buf] = dims
    return buf


def panel_rows(kb: KernelBuilder, ow_: Dim, body: Callable[[Dim, Dim, Dim, Dim], None]) -> None:
    """`body(oh, a, b, dest)` for each output row the current panel spans: its pixels
    `ow` in [a, b) sit at panel columns `dest + ow`."""
    panel = kb.panel
    end = kb.iadd(panel.start, panel.count)
    first_row = kb.ibinary("div", panel.start, ow_)
    rows = kb.iadd(kb.ibinary("sub", kb.ibinary("div", kb.ibinary("sub", end, 1), ow_), first_row), 1)

    def row(r: SSAValue) -> None:
        oh = kb.iadd(first_row, r)
        row_start = kb.imul(oh, ow_)
        a = kb.ibinary("sub", kb.ibinary("max", panel.start, row_start), row_start)
        b = kb.ibinary("sub", kb.ibinary("min", end, kb.iadd(row_start, ow_)), row_start)
        body(oh, a, b, kb.ibinary("sub", row_start, panel.start))

    kb.foreach(rows, row)


def _shifted_rows(kb: KernelBuilder, op: graph.Conv2dOp, store: Callable[[Dim, Dim, SSAValue], None],
                  zero: SSAValue) -> bool:
    """Fill the panel's im2col rows of a stride-1 conv whose output rows are as long as its
    input rows (`same` padding along w; ResNet's 3 x 3 convs): pixel p's tap (kh, kw) is
    the flat input plane at `p + shift(kh, kw)`, so a row is one contiguous run of the
    plane, zero where the tap falls above or below the image (a prefix and a suffix of
    the panel) or past the left or right edge (`edge[kw, column]`, set per panel: a
    wrapped tap would read the neighbouring row). Returns False, filling nothing, for any
    other conv. Measured against the per-row fill (3 x 3 conv + relu, min ms, A/B in one
    process): 1 thread, 64ch 56 x 56 2.30 -> 2.22, 128ch 28 x 28 2.31 -> 2.19, 256ch
    14 x 14 2.20 -> 2.09, 512ch 7 x 7 2.75 -> 2.67; 2 threads 1.28 -> 1.22, 1.20 -> 1.13,
    1.34 -> 1.18, 1.74 -> 1.63. (A separate static-length copy for panels wholly inside
    the image measured no faster.)"""
    (s0, s1), pads, (d0, d1) = op.window()
    _n, c_, h_, w_ = kb.dims(op.input)
    _o, _c, kh_, kw_ = kb.dims(op.weight)
    ow_ = kb.dims(op.result)[3]
    if ((s0, s1) != (1, 1) or not isinstance(kw_, int) or pads[1] + pads[3] != d1 * (kw_ - 1)
            or op.input not in kb.buffers):
        return False
    panel = kb.panel
    t = op.result.type.get_element_type()
    flat = kb.collapsed(op.input, [[0], [1], [2, 3]])
    plane = kb.imul(h_, w_)
    taps = kb.imul(kh_, kw_)
    one = const(kb.emit, 1.0, t)
    edge = dram_buffer(kb, [kw_, PANEL_PIXELS], t)

    def edges(oh: Dim, a: Dim, b: Dim, dest: Dim) -> None:
        def column(t_: SSAValue) -> None:
            ow = kb.emit(arith.AddiOp(t_, kb.index(a)))
            at = kb.index(kb.iadd(dest, ow))
            for kw in range(kw_):
                iw = kb.index(kb.iadd(ow, kw * d1 - pads[1]))
                inside = kb.emit(arith.AndIOp(kb.emit(arith.CmpiOp(iw, kb.index(0), "sge")),
                                              kb.emit(arith.CmpiOp(iw, kb.index(w_), "slt"))))
                kb.emit(memref.StoreOp.get(kb.emit(arith.SelectOp(inside, one, zero)), edge, [kb.index(kw), at]))

        kb.foreach(kb.ibinary("sub", b, a), column)

    panel_rows(kb, ow_, edges)

    def tap(kh: SSAValue, kw: SSAValue) -> None:
        shift = kb.ibinary("sub", kb.iadd(kb.imul(kb.ibinary("sub", kb.imul(kh, d0), pads[0]), w_), kb.imul(kw, d1)),
                           pads[1])
        start = kb.iadd(panel.start, shift)  # the flat input index of the panel's column 0
        lo = kb.ibinary("min", kb.ibinary("max", kb.ibinary("sub", 0, start), 0), panel.count)
        hi = kb.ibinary("max", kb.ibinary("min", kb.ibinary("sub", plane, start), panel.count), lo)
        first_k = kb.iadd(kb.imul(kh, kw_), kw)

        def copy(c: SSAValue, k: Dim, j: Dim) -> None:
            x = kb.emit(memref.LoadOp.get(flat, [kb.index(panel.n), c, kb.index(kb.iadd(start, j))]))
            inside = kb.emit(arith.CmpfOp(kb.emit(memref.LoadOp.get(edge, [kw, kb.index(j)])), zero, "one"))
            store(k, j, kb.emit(arith.SelectOp(inside, x, zero)))

        def channel(c: SSAValue) -> None:
            k = kb.iadd(kb.imul(c, taps), first_k)
            kb.foreach(lo, lambda j: store(k, j, zero))
            kb.foreach(kb.ibinary("sub", hi, lo), lambda t_: copy(c, k, kb.emit(arith.AddiOp(t_, kb.index(lo)))))
            kb.foreach(kb.ibinary("sub", panel.count, hi), lambda t_: store(k, kb.iadd(hi, t_), zero))

        kb.foreach(c_, channel)

    kb.foreach(kh_, lambda kh: kb.foreach(kw_, lambda kw: tap(kh, kw)))
    return True


def at_panel(kb: KernelBuilder, op: graph.Conv2dOp, idx: list[Dim]) -> bool:
    """Whether the conv is wanted at the current panel's own pixels (then it reads a
    panel of im2col rows; a consumer reading it elsewhere, a transpose, gets the
    image-wide buffer)."""
    px, panel = kb.pixels, kb.panel
    return (panel is not None and px is not None and px.column is not None
            and (idx[0] is panel.n or kb.dims(op.result)[0] == 1)  # a batch of 1 is indexed by 0
            and idx[-2] is px.oh and idx[-1] is px.ow
            and all(kb.k.same_dim(a, b) for a, b in zip(kb.dims(op.result)[2:], (px.h, px.w))))


def _im2col(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The staged patch buffer `col[n, (c, kh, kw), oh, ow]` (zeros where the window
    overhangs the padding). Each row is split into zeros / a copy / zeros, so the copy
    is contiguous along `ow` for stride 1 (it vectorises)."""
    n_, c_, h_, w_ = kb.dims(op.input)
    _o, _c, kh_, kw_ = kb.dims(op.weight)
    _n, _o2, oh_, ow_ = kb.dims(op.result)
    s1 = op.window()[0][1]
    t = op.result.type.get_element_type()
    taps = kb.imul(kh_, kw_)
    ckk = kb.imul(c_, taps)
    dims = [n_, ckk, oh_, ow_]
    col_type = MemRefType(t, [d if isinstance(d, int) else DYNAMIC_INDEX for d in dims])
    col = kb.emit(loop.AllocOp(loop.Level.DRAM, col_type, [kb.index(d) for d in dims if not isinstance(d, int)]))
    zero = const(kb.emit, 0.0, t)

    kb.buffer_dims[col] = dims

    def store(n, oh, k, ow, value):
        kb.emit(memref.StoreOp.get(value, col, [kb.index(i) for i in (n, k, oh, ow)]))

    def row(n: SSAValue, oh: SSAValue, k: SSAValue) -> None:
        c = kb.ibinary("div", k, taps)
        tap = kb.ibinary("rem", k, taps)
        kh = kb.ibinary("div", tap, kw_)
        kw = kb.ibinary("rem", tap, kw_)
        ih, lo, hi, base = _tap_span(kb, op, oh, kh, kw, h_, w_, ow_)
        _im2col_segment(kb, (0, lo, hi, ow_), base, s1,
                        lambda ow, iw: store(n, oh, k, ow, zero if iw is None else kb.at(op.input, [n, c, ih, iw])))

    kb.foreach(n_, lambda n: kb.foreach(ckk, lambda k: kb.foreach(oh_, lambda oh: row(n, oh, k))))
    return col


def conv2d(kb: KernelBuilder, op: graph.Conv2dOp, r: int, idx: list[Dim]) -> SSAValue:
    groups = op.groups.value.data
    if op.weight in kb.buffers:
        # im2col: a staged patch buffer, then a matrix product over (c, kh, kw), which
        # `schedule-loops` tiles like a matmul (pixels as lanes, channels as rows). A
        # grouped conv's output channel reads the rows of its group's input channels
        # (depthwise and narrow groups take `grouped_conv` before this).
        in_panel = groups == 1 and at_panel(kb, op, idx)
        assert not (in_panel and kb.panel.pairs), "a panel of pairs of rows takes winograd.conv2d"
        n, o, oh, ow = idx
        weights = kb.collapsed(op.weight, [[0], [1, 2, 3]])
        o_, c_, kh_, kw_ = kb.dims(op.weight)
        ckk = kb.imul(c_, kb.imul(kh_, kw_))
        first = kb.imul(kb.ibinary("div", o, kb.ibinary("div", o_, groups)), ckk) if groups > 1 else 0
        t = op.result.type.get_element_type()
        if in_panel:
            col = kb.staged(("im2col", op), lambda: _im2col_panel(kb, op), per_panel=True)
            column = kb.pixels.column
            patch = lambda k: kb.load_buffer(col, [k, column])  # noqa: E731
        else:
            col = kb.staged(("im2col", op), lambda: _im2col(kb, op))
            patch = lambda k: kb.load_buffer(col, [n, kb.iadd(first, k), oh, ow])  # noqa: E731
        add = loop.Combiner.ADD
        acc = kb.reduce_nest([ckk], kb.identity(add, t), add, lambda k: kb.emit(arith.MulfOp(
            kb.load_buffer(weights, [o, k[0]]), patch(k[0]))))
        if op.bias is not None:
            acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [o])))
        return acc
    n, o, oh, ow = idx
    x_dims, w_dims = kb.dims(op.input), kb.dims(op.weight)
    t = op.result.type.get_element_type()
    cg = w_dims[1]
    per_group = kb.ibinary("div", w_dims[0], groups) if groups > 1 else w_dims[0]
    base_c = kb.imul(kb.ibinary("div", o, per_group), cg) if groups > 1 else 0

    def tap(ivs: list[SSAValue]) -> SSAValue:
        c, kh, kw = ivs
        (h, w), inside = window_source(kb, op, [oh, ow], [kh, kw], x_dims[2:])
        x = kb.at(op.input, [n, kb.iadd(base_c, c), h, w])
        if inside is not None:
            x = kb.emit(arith.SelectOp(inside, x, const(kb.emit, 0.0, t)))
        return kb.emit(arith.MulfOp(x, kb.at(op.weight, [o, c, kh, kw])))

    add = loop.Combiner.ADD
    acc = kb.reduce_nest([cg, w_dims[2], w_dims[3]], kb.identity(add, t), add, tap)
    if op.bias is not None:
        acc = kb.emit(arith.AddfOp(acc, kb.at(op.bias, [o])))
    return acc


def pool(kb: KernelBuilder, op: graph.MaxPool2dOp | graph.AvgPool2dOp, r: int, idx: list[Dim]) -> SSAValue:
    n, c, oh, ow = idx
    if _rows_pool(kb, op):
        return kb.load_buffer(kb.staged(("pool", op), lambda: _pool_rows(kb, op)), idx)
    x_dims = kb.dims(op.input)
    t = op.result.type.get_element_type()
    kh_, kw_ = list(op.kernel.get_values())
    is_max = isinstance(op, graph.MaxPool2dOp)
    pad_value = float("-inf") if is_max else 0.0
    # Averages that exclude padded cells count the cells inside; nothing else needs a count.
    counted = not is_max and not op.count_include_pad.value.data

    def tap(ivs: list[SSAValue]) -> list[SSAValue]:
        (h, w), inside = window_source(kb, op, [oh, ow], ivs, x_dims[2:])
        x = kb.at(op.input, [n, c, h, w])
        if inside is not None:
            x = kb.emit(arith.SelectOp(inside, x, const(kb.emit, pad_value, t)))
        if not counted:
            return [x]
        if inside is None:
            return [x, const(kb.emit, 1.0, t)]
        return [x, kb.emit(arith.SelectOp(inside, const(kb.emit, 1.0, t), const(kb.emit, 0.0, t)))]

    kinds = [loop.Combiner.MAX if is_max else loop.Combiner.ADD] + ([loop.Combiner.ADD] if counted else [])
    identities = [kb.identity(k, t) for k in kinds]

    def level_h(h: SSAValue) -> list[SSAValue]:
        return kb.reduce(kw_, identities, kinds, lambda w: tap([h, w]))

    results = kb.reduce(kh_, identities, kinds, level_h)
    if is_max:
        return results[0]
    count = results[1] if counted else const(kb.emit, float(kh_ * kw_), t)
    return kb.emit(arith.DivfOp(results[0], count))
