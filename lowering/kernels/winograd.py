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

The nest (`KernelBuilder._pair_panel_nest`) runs over panels of `PANEL_PIXELS` columns
of the *pair-flattened* map (pair r, output column ow) -> r * OW + ow, so a panel spans
parts of several pairs as a pixel panel spans rows. Per panel the input transform
stages `V[i, (c, kw), column]` (`PANEL_PIXELS` columns: read in place by the register
tile, like im2col rows), the four products stage `M[i, o, column]`, and the output nest
(per channel, pair, row of the pair, column) combines its pixel's `M` values.
`U[i, o, (c, kw)]` is made once per call, before the panels (the kernel is then
cooperative: its chunks share U), or, for a constant weight, once when compiling
(`fold_weights`: an imported model's weights).

Measured against the im2col form in one process (conv + bias + relu, `?` height and
width, min ms), 1 thread: 64 channels 56 x 56 0.773 vs 1.022 (PyTorch 1.067), 128 at
28 x 28 0.780 vs 1.020, 32 at 56 x 56 0.314 vs 0.369, 256 at 28 x 28 3.39 vs 4.37;
2 threads: 0.433 vs 0.570 (PyTorch 0.578), 0.443 vs 0.550, 0.175 vs 0.193.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, TensorType, i64
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import arith, graph, loop
from nimble.dialects.discardable import FOLDED_ATTR
from nimble.dialects.graph.folding import array_to_dense, dense_to_array
from nimble.dialects.shape_functions import ReifyDims
from nimble.lowering.kernels.kernel_parts import Dim
from nimble.lowering.kernels.scalar import const
from nimble.lowering.kernels.window_rules import PANEL_PIXELS, at_panel, dram_buffer, inside_range, panel_rows

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder

T = TypeVar("T")

MIN_CHANNELS = 32
"""Input and output channels from which a conv takes the Winograd form (fewer: the
transforms' share of the work grows, the products' tiles shrink)."""

MIN_PIXELS = 576
"""Output pixels from which a conv takes the Winograd form. The weights' transform per
call costs ~2-8 ns per (output, input) channel pair (memory-bound: 0.5 ms at 256 x 256,
whose U is 3 MB) and the products save ~0.02 ns per pair and pixel. Measured, min ms,
Winograd vs im2col: 256 channels 14 x 14 (196 pixels) 1.23-1.36 vs 0.95-1.13; 400
pixels (20 x 20) gain at 1 thread (64 channels 0.166 vs 0.176, 128 0.445 vs 0.562) and
lose at 2 (0.150 vs 0.117, 0.377 vs 0.352: 4 panels of 64, 64, 64 and 8 columns split
2 + 2, and a panel's rows are not split); 28 x 28 gains at both."""

MIN_PIXELS_FOLDED = 196
"""`MIN_PIXELS` for a conv whose U is made at compile time (`fold_weights`)."""


def shaped_for(op: Operation) -> bool:
    """A conv with the Winograd form's shape: 3 x 3 taps, stride and dilation 1, one group."""
    if not isinstance(op, graph.Conv2dOp) or op.groups.value.data != 1:
        return False
    strides, _pads, dilations = op.window()
    return (tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and tuple(op.weight.type.get_shape()[2:]) == (3, 3))


def applies(kb: KernelBuilder, op: Operation) -> bool:
    """Whether the Winograd form computes `op`: a conv `shaped_for` it on the CPU, its
    input and weights kernel inputs."""
    return not kb.device and shaped_for(op) and op.input in kb.buffers and op.weight in kb.buffers


def _sizes(op: graph.Conv2dOp, dims: Callable[[SSAValue], list[T]], mul: Callable[[T, T], T],
           folded: bool) -> list[tuple[T, int]]:
    """(size, least) for the sizes `wanted` and `host_condition` test: output and input
    channels, output pixels."""
    o_, c_ = dims(op.weight)[:2]
    oh_, ow_ = dims(op.result)[2:]
    return [(o_, MIN_CHANNELS), (c_, MIN_CHANNELS), (mul(oh_, ow_), MIN_PIXELS_FOLDED if folded else MIN_PIXELS)]


def wanted(op: graph.Conv2dOp, folded: bool | None = None) -> bool | None:
    """Whether a conv the Winograd form `applies` to takes it: at least `MIN_CHANNELS`
    channels in and out and `MIN_PIXELS` output pixels (`MIN_PIXELS_FOLDED` with its
    weights folded: `folded`, by default whether they are). True or False when the sizes
    known at compile time decide; None when sizes known only at run time do: the group
    then gets a kernel of each form and the host launches the Winograd one where
    `host_condition` holds."""
    def known(value: SSAValue) -> list[int | None]:
        return [d if d >= 0 else None for d in value.type.get_shape()]

    folded = FOLDED_ATTR in op.attributes if folded is None else folded
    tests = _sizes(op, known, lambda a, b: None if a is None or b is None else a * b, folded)
    if any(size is not None and size < least for size, least in tests):
        return False
    return True if all(size is not None for size, _ in tests) else None


def decided_at_run_time(ops: Iterable[Operation]) -> list[graph.Conv2dOp]:
    """The convs among `ops` whose form sizes known only at run time decide."""
    return [op for op in ops if shaped_for(op) and wanted(op) is None]


def host_condition(k: ReifyDims, op: graph.Conv2dOp) -> SSAValue | bool:
    """The run-time test of `wanted` (an `i1` the host computes from the conv's dims,
    reified by `k`), or True when the sizes known now pass it."""
    sizes = _sizes(op, k.dims, lambda a, b: k.binary("mul", a, b), FOLDED_ATTR in op.attributes)
    if any(isinstance(size, int) and size < least for size, least in sizes):
        return False
    return k.all_of([k.compare("sge", size, least) for size, least in sizes if not isinstance(size, int)])


def transformed(w: np.ndarray) -> np.ndarray:
    """`U[i, o, 3c + kw] = (G g)_i` for `g = w[o, c, :, kw]`, in `w`'s type and with the
    kernel's operations (`_weights`), so a folded U equals the one made per call."""
    g0, g1, g2 = w[:, :, 0, :], w[:, :, 1, :], w[:, :, 2, :]
    ends = g0 + g2
    half = w.dtype.type(0.5)
    u = np.stack([g0, (ends + g1) * half, (ends - g1) * half, g2])  # [4, K, C, 3]
    return np.ascontiguousarray(u.reshape(4, w.shape[0], 3 * w.shape[1]))


def fold_weights(fused: graph.FusedOp, folded: dict[graph.ConstantOp, graph.ConstantOp]) -> None:
    """Pass `fused` the transform U of the constant 3 x 3 weight of its one conv when the
    conv could take the Winograd form (one group, stride and dilation 1, `MIN_CHANNELS`
    channels, `MIN_PIXELS_FOLDED` output pixels or a size known only at run time), made
    once here (one per constant, in `folded`) instead of once per call: a new argument
    of the group, named on the conv by `FOLDED_ATTR`. (U is 4/3 the weight's size; the
    weight stays, for the im2col form.)"""
    block = fused.body.block
    convs = [op for op in block.ops if isinstance(op, graph.Conv2dOp)]
    if len(convs) != 1:
        return
    (conv,) = convs
    weight = conv.weight
    if not shaped_for(conv) or wanted(conv, folded=True) is False \
            or not isinstance(weight, BlockArgument) or weight.block is not block:
        return
    value = fused.operands[weight.index]
    const = value.owner
    if not isinstance(const, graph.ConstantOp) or not isinstance(value.type.get_element_type(), AnyFloat):
        return
    if const not in folded:
        u = transformed(dense_to_array(const.value))
        folded[const] = graph.ConstantOp(array_to_dense(u, TensorType(value.type.get_element_type(), u.shape)))
        folded[const].result.name_hint = f"{value.name_hint or 'w'}_winograd"
        Rewriter.insert_op(folded[const], InsertPoint.after(const))
    u_value = folded[const].result
    fused.operands = [*fused.operands, u_value]
    arg = block.insert_arg(u_value.type, len(block.args))
    conv.attributes[FOLDED_ATTR] = IntegerAttr(arg.index, i64)


def _weights(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """`U[i, o, (c, kw)] = (G g)_i` for `g = w[o, c, :, kw]`: the group's argument when
    folded (`fold_weights`), else made once per call."""
    if FOLDED_ATTR in op.attributes:
        return kb.buffers[kb.block.args[op.attributes[FOLDED_ATTR].value.data]]

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

    kb.foreach(o_, lambda o: kb.foreach(c_, lambda c: [column(o, c, kw) for kw in range(3)]))
    return u


def _inputs(kb: KernelBuilder, op: graph.Conv2dOp) -> SSAValue:
    """The panel's `V[i, (c, kw), column] = (B^T d)_i` for `d` the four input rows of the
    column's pair at its tap kw (zeros outside the input)."""
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
    """The panel's `M[i, o, column]`: four matrix products over (c, kw), which
    `schedule-loops` tiles like a conv's im2col product (V read in place)."""
    o_, c_, _kh, _kw = kb.dims(op.weight)
    t = op.result.type.get_element_type()
    u = kb.staged(("winograd_weights", op), lambda: _weights(kb, op))
    v = _inputs(kb, op)
    rows = kb.imul(c_, 3)
    m = dram_buffer(kb, [4, o_, PANEL_PIXELS], t)

    def product(i: SSAValue) -> None:
        def channel(o: SSAValue) -> None:
            def column(col: SSAValue) -> None:
                add = loop.Combiner.ADD
                acc = kb.reduce_nest([rows], kb.identity(add, t), add, lambda k: kb.emit(arith.MulfOp(
                    kb.load_buffer(u, [i, o, k[0]]), kb.load_buffer(v, [i, k[0], col]))))
                kb.store_buffer(acc, m, [i, o, col])

            kb.foreach(kb.panel.count, column)

        kb.foreach(o_, channel)

    kb.foreach(4, product)
    return m


def at_pair_panel(kb: KernelBuilder, op: graph.Conv2dOp, idx: list[Dim]) -> bool:
    """Whether the conv is computed here in the Winograd form: an ungrouped conv of
    staged weights wanted at its panel's own pixels, the panel one of pairs of rows."""
    return (op.groups.value.data == 1 and op.weight in kb.buffers and at_panel(kb, op, idx)
            and kb.panel.pairs)


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
