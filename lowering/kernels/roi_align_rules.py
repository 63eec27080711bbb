"""The index rule of roi_align: per output bin, the average of bilinear samples of the
feature map over the box's grid of the bin, with the sample rows and columns of every box
staged in tables read by every channel (a device kernel's tables hold
`DEVICE_TABLE_GRID` samples a bin; larger boxes sample inline). Joins
`index_rules.INDEX_RULES`, like the window rules (`window_rules.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float64Type, IndexType, IntegerType, UnitAttr
from xdsl.ir import Operation, SSAValue

from nimble.dialects import arith, graph, loop
from nimble.lowering.kernels.kernel_parts import Dim
from nimble.lowering.kernels.scalar import const, convert
from nimble.lowering.kernels.window_rules import dram_buffer

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder


DEVICE_TABLE_GRID = 16
"""Samples per bin along an axis that a device kernel's tables hold with
`sampling_ratio` 0 (its emitter sizes buffers on the host, so not by the largest box):
a box with more (over 16 feature pixels a bin: 112 for 7 bins, twice the box an FPN
level is chosen for) samples inline. 1000 boxes of 7 x 7 bins take 9 MB of tables.
Measured on pocl, nimble-run's detection example (its random boxes span ~10 samples
a bin): roi_align 3.8-4.4 ms with 8, 1.1-2.0 with 16, 1.6-1.8 with 32."""


def roi_align(kb: KernelBuilder, op: graph.RoiAlignOp, r: int, idx: list[Dim]) -> SSAValue:
    """Average of bilinear samples over a bin (ROIAlign, half-pixel), coordinates in f64
    like the reference. A sample's row (two source rows, their weights, whether it lies
    outside) depends on (box, output row, sample row) only, its column likewise: both
    are staged per box in tables (`_roi_tables`) that the output nest reads for every
    channel instead of computing them again (a device kernel's tables hold
    `DEVICE_TABLE_GRID` samples a bin). Measured, 50 boxes of 16-64 pixels at scale
    1/4, 64 channels, 7 x 7 bins, best of 30: LLVM 2.31 -> 0.74-0.76 ms, pocl 4.67 ->
    0.91 ms; with `sampling_ratio` 2, LLVM 1.69 -> 0.56, pocl 0.81."""
    k, c, ph, pw = idx
    n_, _c, h_, w_ = kb.dims(op.input)
    e = kb.emit
    f64, t = Float64Type(), op.result.type.get_element_type()
    box = _roi_box(kb, op, k)
    capacity = DEVICE_TABLE_GRID if kb.device and op.sampling_ratio.value.data == 0 else None
    rows, columns = kb.staged(("roi_align", op), lambda: _roi_tables(kb, op, capacity))
    batch = e(arith.IndexCastOp(kb.at(op.batch_indices, [k]), IndexType()))
    batch = kb.ibinary("min", kb.ibinary("max", batch, 0), kb.ibinary("sub", n_, 1))  # never read outside

    def samples(axes: tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]) -> SSAValue:
        (y0, y1, hy, ly, y_out), (x0, x1, hx, lx, x_out) = axes

        def tap(yi, xi, wy, wx) -> SSAValue:
            value = convert(e, kb.at(op.input, [batch, c, yi, xi]), f64)
            return e(arith.MulfOp(e(arith.MulfOp(wy, wx)), value))

        value = e(arith.AddfOp(e(arith.AddfOp(tap(y0, x0, hy, hx), tap(y0, x1, hy, lx))),
                               e(arith.AddfOp(tap(y1, x0, ly, hx), tap(y1, x1, ly, lx)))))
        return e(arith.SelectOp(e(arith.OrIOp(y_out, x_out)), const(e, 0.0, f64), value))

    def from_tables(ivs: list[SSAValue]) -> SSAValue:
        return samples((rows.at(kb, k, ph, ivs[0]), columns.at(kb, k, pw, ivs[1])))

    def inline(ivs: list[SSAValue]) -> SSAValue:
        return samples((_bilinear_axis(kb, box.coordinate(kb, 0, ph, ivs[0]), h_),
                        _bilinear_axis(kb, box.coordinate(kb, 1, pw, ivs[1]), w_)))

    gh, gw = box.grid
    zero = const(e, 0.0, f64)
    # The tables' own bounds: never read past them.
    in_tables = [kb.ibinary("min", gh, rows.grid), kb.ibinary("min", gw, columns.grid)]
    add = loop.Combiner.ADD
    if capacity is None:
        total = kb.reduce_nest(in_tables, zero, add, from_tables)
    else:  # boxes over the tables' grid sample inline (one of the two nests runs no step)
        fits = e(arith.AndIOp(*(e(arith.CmpiOp(kb.index(g), kb.index(capacity), "sle")) for g in box.grid)))
        none = kb.index(0)
        tabled = kb.reduce_nest([e(arith.SelectOp(fits, kb.index(in_tables[0]), none)), in_tables[1]], zero, add,
                                from_tables)
        total = e(arith.AddfOp(tabled, kb.reduce_nest([e(arith.SelectOp(fits, none, kb.index(gh))), gw], zero, add,
                                                      inline)))
    count = e(arith.MulfOp(_to_f64(kb, gh), _to_f64(kb, gw)))
    return convert(e, e(arith.DivfOp(total, count)), t)


def _exact(op: Operation) -> Operation:
    """`op` marked not to be contracted into a fused multiply-add (`loop.EXACT_MARK`): a
    sample position's rounding decides whether it lies inside the map, as in the reference."""
    op.attributes[loop.EXACT_MARK] = UnitAttr()
    return op


def _to_f64(kb: KernelBuilder, v: Dim | SSAValue) -> SSAValue:
    e = kb.emit
    if isinstance(v, int) or isinstance(v.type, IndexType):
        v = e(arith.IndexCastOp(kb.index(v), IntegerType(64)))
    return e(arith.SIToFPOp(v, Float64Type())) if isinstance(v.type, IntegerType) else convert(e, v, Float64Type())


@dataclass
class _RoiBox:
    """A box in feature coordinates: its start and bin size per axis (y, x) and its
    sample grid (`sampling_ratio`, or the bins' size rounded up, at least 1)."""

    start: tuple[SSAValue, SSAValue]
    bin: tuple[SSAValue, SSAValue]
    grid: tuple[Dim, Dim]

    def coordinate(self, kb: KernelBuilder, axis: int, b: SSAValue, i: SSAValue) -> SSAValue:
        """Sample `i` of bin `b` along `axis`: start + (b + (i + 0.5) / grid) * bin."""
        e = kb.emit
        offset = e(arith.DivfOp(e(arith.AddfOp(_to_f64(kb, i), const(e, 0.5, Float64Type()))),
                                _to_f64(kb, self.grid[axis])))
        step = e(_exact(arith.MulfOp(e(arith.AddfOp(_to_f64(kb, b), offset)), self.bin[axis])))
        return e(_exact(arith.AddfOp(self.start[axis], step)))


def _roi_box(kb: KernelBuilder, op: graph.RoiAlignOp, k: SSAValue) -> _RoiBox:
    e = kb.emit

    def f(x: float) -> SSAValue:
        return const(e, x, Float64Type())

    scale = op.spatial_scale.value.data
    x1, y1, x2, y2 = [e(_exact(arith.SubfOp(e(_exact(arith.MulfOp(_to_f64(kb, kb.at(op.rois, [k, i])), f(scale)))),
                                             f(0.5)))) for i in range(4)]
    sizes = e(arith.SubfOp(y2, y1)), e(arith.SubfOp(x2, x1))
    bins = op.output_height.value.data, op.output_width.value.data
    ratio = op.sampling_ratio.value.data

    def grid(size: SSAValue, n: int) -> Dim:
        if ratio > 0:
            return ratio
        g = e(xmath.CeilOp(e(arith.DivfOp(size, f(n)))))
        g = e(arith.IndexCastOp(e(arith.FPToSIOp(g, IntegerType(64))), IndexType()))
        return kb.ibinary("max", g, 1)

    return _RoiBox((y1, x1), tuple(e(arith.DivfOp(s, f(n))) for s, n in zip(sizes, bins)),
                   (grid(sizes[0], bins[0]), grid(sizes[1], bins[1])))


@dataclass
class _RoiTable:
    """One axis's samples of every box, `[box, bin, sample]` (`grid` samples a bin at
    most): the two source indices (i64), their weights (f64) and whether the sample lies
    outside the map (as i64: 0 or 1)."""

    low: SSAValue
    high: SSAValue
    w_low: SSAValue
    w_high: SSAValue
    outside: SSAValue
    grid: Dim

    def at(self, kb: KernelBuilder, k: SSAValue, b: SSAValue, i: SSAValue) -> tuple[SSAValue, ...]:
        e = kb.emit
        where = [k, b, i]
        low, high = (e(arith.IndexCastOp(kb.load_buffer(v, where), IndexType())) for v in (self.low, self.high))
        outside = e(arith.CmpiOp(kb.load_buffer(self.outside, where), const(e, 0, IntegerType(64)), "ne"))
        return low, high, kb.load_buffer(self.w_low, where), kb.load_buffer(self.w_high, where), outside


def _roi_tables(kb: KernelBuilder, op: graph.RoiAlignOp, capacity: int | None) -> tuple[_RoiTable, _RoiTable]:
    """The row and column tables of every box (`_RoiTable`), sized for the largest grid,
    or `capacity` samples a bin (a larger grid's first ones)."""
    e = kb.emit
    count = kb.dims(op.rois)[0]
    _n, _c, h_, w_ = kb.dims(op.input)
    f64, i64 = Float64Type(), IntegerType(64)

    def largest(axis: int) -> Dim:
        if op.sampling_ratio.value.data > 0 or capacity is not None:
            return op.sampling_ratio.value.data or capacity
        [most] = kb.reduce(count, [const(e, 1, i64)], [loop.Combiner.MAX],
                           lambda k: [e(arith.IndexCastOp(kb.index(_roi_box(kb, op, k).grid[axis]), i64))])
        return e(arith.IndexCastOp(most, IndexType()))

    tables = []
    for axis, (bins, size) in enumerate([(op.output_height.value.data, h_), (op.output_width.value.data, w_)]):
        grid = largest(axis)
        dims = [count, bins, grid]
        buffers = [dram_buffer(kb, dims, t) for t in (i64, i64, f64, f64, i64)]
        tables.append(_RoiTable(*buffers, grid))

        def box(k: SSAValue, axis=axis, bins=bins, size=size, buffers=buffers, grid=grid) -> None:
            geometry = _roi_box(kb, op, k)

            def point(b: SSAValue, i: SSAValue) -> None:
                values = _bilinear_axis(kb, geometry.coordinate(kb, axis, b, i), size)
                for value, buf in zip(values, buffers):
                    if isinstance(value.type, IndexType):
                        value = e(arith.IndexCastOp(value, i64))
                    elif value.type == IntegerType(1):
                        value = e(arith.ExtUIOp(value, i64))
                    kb.store_buffer(value, buf, [k, b, i])

            g = kb.ibinary("min", geometry.grid[axis], grid)
            kb.foreach(bins, lambda b: kb.foreach(g, lambda i: point(b, i)))

        kb.foreach(count, box)
    return tables[0], tables[1]


def _bilinear_axis(kb: KernelBuilder, v: SSAValue, size: Dim) -> tuple[SSAValue, ...]:
    """The reference's `_bilinear` along one axis: the two source indices (clamped), their
    weights, and whether `v` lies outside [-1, size]."""
    e = kb.emit

    def f(x: float) -> SSAValue:
        return const(e, x, Float64Type())

    outside = e(arith.OrIOp(e(arith.CmpfOp(v, f(-1.0), "olt")), e(arith.CmpfOp(v, _to_f64(kb, size), "ogt"))))
    v = e(arith.MaximumfOp(v, f(0.0)))
    low = e(arith.IndexCastOp(e(arith.FPToSIOp(e(xmath.FloorOp(v)), IntegerType(64))), IndexType()))
    last = kb.ibinary("sub", size, 1)
    low = kb.ibinary("min", low, last)
    high = kb.ibinary("min", kb.iadd(low, 1), last)
    at_edge = e(arith.CmpiOp(kb.index(low), kb.index(last), "sge"))
    low_f = _to_f64(kb, low)
    v = e(arith.SelectOp(at_edge, low_f, v))
    frac = e(arith.SubfOp(v, low_f))
    return kb.index(low), kb.index(high), e(arith.SubfOp(f(1.0), frac)), frac, outside
