"""Depthwise and narrow grouped convs (each output channel reads at most a few input
channels: `GROUP_TAPS`) row by row: per output channel the taps' weights read once, the
input copied with its padding written out as zeros, every tap a load and a multiply-add
along a vector of pixels. Other convs, wider groups included, take `window_rules.conv2d`
(im2col rows and a product with each output channel's group of them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.dialects import memref
from xdsl.ir import SSAValue

from nimble.dialects import arith, graph
from nimble.lowering.kernels import wide_rows, window_rules, winograd
from nimble.lowering.kernels.kernel_parts import Dim, sum_of_products
from nimble.lowering.kernels.scalar import const, is_float
from nimble.lowering.kernels.window_rules import dram_buffer

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder

GROUP_TAPS = 144
"""Most taps (input channels of a group x window cells) a grouped conv's pixel takes
unrolled (`_grouped_rows`): RegNetY-400MF's 8 x 3 x 3, ResNeXt's up to 16 x 3 x 3."""
IN_PLACE_WINDOWS = 4
"""Windows across a map from which `_grouped_rows` reads it in place. Same process, 2
threads, against the padded copy for every map (2026-12-06): MobileNetV2 batch 3
10.58 -> 9.44 ms, batch 1 2.83 -> 2.38; EfficientNet-B0 23.03 -> 21.85, 4.05 -> 3.74;
MNASNet 10.44 -> 9.72, 3.48 -> 3.37. In place for every map: MobileNetV2 15.01 ->
13.54 but EfficientNet-B0 21.76 -> 24.74 and MNASNet 10.25 -> 11.66 (their 5 x 5 windows
on 7 x 7 and 14 x 14 maps are mostly edge); from 8 windows: 15.13 -> 13.84, 23.2 -> 21.33."""
IN_PLACE_TAPS = 25
"""Most window cells of a depthwise conv read in place (5 x 5). In place, ConvNeXt-tiny's
7 x 7 convs made it 3% slower (batch 1 and 3); grouped convs of 4 to 16 channels made
ResNeXt-50 32x4d 23.5 -> 28.9 ms at batch 1 (`benchmarks/zoo.py`, best of its calls)."""


def narrow_groups(kb: KernelBuilder, op: graph.Conv2dOp) -> bool:
    """Whether `op` is a depthwise or narrow grouped conv (each output channel reads a few
    input channels: `GROUP_TAPS`) of a kernel input, with a window of known size:
    `_grouped_rows` computes it."""
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    return op.groups.value.data > 1 and all(isinstance(d, int) for d in (cg, kh_, kw_)) and \
        cg * kh_ * kw_ <= GROUP_TAPS and op.input in kb.buffers and is_float(op.result.type.get_element_type())


def _in_place(kb: KernelBuilder, op: graph.Conv2dOp) -> bool:
    """Whether `_grouped_rows` reads a depthwise conv's input in place (see there)."""
    _n, _c, h_, w_ = kb.dims(op.input)
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    return cg == 1 and kh_ * kw_ <= IN_PLACE_TAPS and isinstance(w_, int) and isinstance(h_, int) and \
        w_ >= IN_PLACE_WINDOWS * kw_ and h_ >= IN_PLACE_WINDOWS * kh_


def _grouped_rows(kb: KernelBuilder, op: graph.Conv2dOp, out: SSAValue | None = None) -> SSAValue:
    """The staged result `out[n, o, oh, ow]` of a depthwise or narrow grouped conv (a new
    buffer, or `out`: the kernel's output buffer): per output channel its taps' weights
    (and bias) read once, then every tap (each input channel of its group, each window
    cell) in one loop along `ow` (a vector of pixels, the weights broadcast). Measured, 2
    threads, batch 1, same process: EfficientNet-B0 24.2 -> 5.2 ms, RegNetY-400MF 26.2
    -> 4.8, ResNeXt-50 32x4d 92.6 -> 33.4 (its 32-channel groups take the im2col form,
    `window_rules.conv2d`: as fast as this one for its 8- and 16-channel groups too).

    A depthwise conv's input is read in place where it is at least `IN_PLACE_WINDOWS`
    windows wide and high (static) and its window at most `IN_PLACE_TAPS` cells: the rows
    and columns whose windows lie inside it read it directly, the few whose windows
    overhang the padding through a clamped load and a select per tap. Other maps are
    first copied with their padding written out (`_grouped_rows_padded`): on small maps
    most pixels would take the selects, and on wide windows or groups (ConvNeXt's 7 x 7,
    ResNeXt's and RegNetY's 4- to 16-channel groups) an edge pixel's selects cost more
    than the copy saves. A depthwise conv whose rows are short for the CPU's vectors is
    copied and computed in wide rows (`wide_rows`)."""
    if not _in_place(kb, op) or wide_rows.pays(kb, op, copied=False):
        return _grouped_rows_padded(kb, op, out)
    _n, _c, h_, w_ = kb.dims(op.input)
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    (s0, s1), (top, left, _bottom, _right), (d0, d1) = op.window()
    x = kb.buffers[op.input]
    n_, o_, oh_, ow_ = kb.dims(op.result)
    per_group = kb.ibinary("div", o_, op.groups.value.data)
    t = op.result.type.get_element_type()
    if out is None:
        out = dram_buffer(kb, [n_, o_, oh_, ow_], t)
    taps = [(ci, kh, kw) for ci in range(cg) for kh in range(kh_) for kw in range(kw_)]
    zero = const(kb.emit, 0.0, t)

    def pixel(n: SSAValue, o: SSAValue, first: Dim, weights: list[SSAValue], oh: Dim, ow: Dim, edge: bool) -> None:
        def tap(ci: int, kh: int, kw: int) -> SSAValue:
            if edge:  # (a window overhanging the padding: clamped, zero outside)
                (ih, iw), inside = window_rules.window_source(kb, op, [oh, ow], [kh, kw], [h_, w_])
                x_ = kb.load_buffer(x, [n, kb.iadd(first, ci), ih, iw])
                return kb.emit(arith.SelectOp(inside, x_, zero)) if inside is not None else x_
            return kb.load_buffer(x, [n, kb.iadd(first, ci), kb.iadd(kb.imul(oh, s0), kh * d0 - top),
                                      kb.iadd(kb.imul(ow, s1), kw * d1 - left)])

        acc = sum_of_products(kb, kb.at(op.bias, [o]) if op.bias is not None else zero,
                              [(tap(*cell), w) for cell, w in zip(taps, weights)])
        kb.emit(memref.StoreOp.get(acc, out, [kb.index(i) for i in (n, o, oh, ow)]))

    def span(a: Dim, b: Dim, body: Callable[[Dim], None]) -> None:
        kb.foreach(kb.ibinary("sub", b, a), lambda i: body(kb.iadd(a, i)))

    def channel(n: SSAValue, o: SSAValue) -> None:
        first = kb.imul(kb.ibinary("div", o, per_group), cg)  # (the group's first input channel)
        weights = [kb.at(op.weight, [o, ci, kh, kw]) for ci, kh, kw in taps]
        lo, hi = window_rules.inside_range(kb, -left, (kw_ - 1) * d1 - left, s1, w_, ow_)
        top_rows, bottom_rows = window_rules.inside_range(kb, -top, (kh_ - 1) * d0 - top, s0, h_, oh_)

        def edge_row(oh: Dim) -> None:
            span(0, ow_, lambda ow: pixel(n, o, first, weights, oh, ow, True))

        def row(oh: Dim) -> None:
            span(0, lo, lambda ow: pixel(n, o, first, weights, oh, ow, True))
            span(lo, hi, lambda ow: pixel(n, o, first, weights, oh, ow, False))
            span(hi, ow_, lambda ow: pixel(n, o, first, weights, oh, ow, True))

        span(0, top_rows, edge_row)
        span(top_rows, bottom_rows, row)
        span(bottom_rows, oh_, edge_row)

    kb.foreach(n_, lambda n: kb.foreach(o_, lambda o: channel(n, o)))
    return out


def _grouped_rows_padded(kb: KernelBuilder, op: graph.Conv2dOp, out: SSAValue | None = None) -> SSAValue:
    """`_grouped_rows` from a copy of the input with its padding written out (no bounds
    checks; `wide_rows.padded`), or in wide rows where they take fewer steps (`wide_rows`)."""
    if wide_rows.pays(kb, op, copied=True):
        return wide_rows.conv(kb, op, out)
    (s0, s1), pads, (d0, d1) = op.window()
    x = kb.staged(("padded", op), lambda: wide_rows.padded(kb, op)) if any(pads) else kb.buffers[op.input]
    n_, o_, oh_, ow_ = kb.dims(op.result)
    _o, cg, kh_, kw_ = kb.dims(op.weight)
    per_group = kb.ibinary("div", o_, op.groups.value.data)
    t = op.result.type.get_element_type()
    dims = [n_, o_, oh_, ow_]
    if out is None:
        out = dram_buffer(kb, dims, t)
    taps = [(ci, kh, kw) for ci in range(cg) for kh in range(kh_) for kw in range(kw_)]

    def pixel(n: SSAValue, o: SSAValue, first: Dim, weights: list[SSAValue], oh: Dim, ow: Dim) -> None:
        acc = sum_of_products(kb, kb.at(op.bias, [o]) if op.bias is not None else const(kb.emit, 0.0, t), [
            (kb.load_buffer(x, [n, kb.iadd(first, ci), kb.iadd(kb.imul(oh, s0), kh * d0),
                                kb.iadd(kb.imul(ow, s1), kw * d1)]), w) for (ci, kh, kw), w in zip(taps, weights)])
        kb.emit(memref.StoreOp.get(acc, out, [kb.index(i) for i in (n, o, oh, ow)]))

    def channel(n: SSAValue, o: SSAValue) -> None:
        first = kb.imul(kb.ibinary("div", o, per_group), cg)  # (the group's first input channel)
        weights = [kb.at(op.weight, [o, ci, kh, kw]) for ci, kh, kw in taps]
        kb.foreach(oh_, lambda oh: kb.foreach(ow_, lambda ow: pixel(n, o, first, weights, oh, ow)))

    kb.foreach(n_, lambda n: kb.foreach(o_, lambda o: channel(n, o)))
    return out


def conv2d_into(kb: KernelBuilder, op: graph.Conv2dOp, buffer: SSAValue) -> bool:
    """A narrow grouped conv that is a kernel output, computed in the output buffer (`index_rules.INTO_OUTPUT`)."""
    if not narrow_groups(kb, op):
        return False
    kb.staged(("grouped", op), lambda: _grouped_rows(kb, op, buffer))
    return True


def conv2d(kb: KernelBuilder, op: graph.Conv2dOp, r: int, idx: list[Dim]) -> SSAValue:
    """The conv2d index rule: a narrow grouped conv from its staged rows, one in the
    Winograd form as `winograd.conv2d` computes it, any other as `window_rules.conv2d`
    does."""
    if narrow_groups(kb, op):
        return kb.load_buffer(kb.staged(("grouped", op), lambda: _grouped_rows(kb, op)), idx)
    if winograd.at_pair_panel(kb, op, idx):
        return winograd.conv2d(kb, op, idx)
    return window_rules.conv2d(kb, op, r, idx)
