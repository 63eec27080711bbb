"""The records the kernel builder keeps (`kernel_builder.py`): dims as index IR emitted at
the kernel's entry (`KernelDims`), the pixels and the panel of pixels of the current nest,
an elementwise op's scalar being made; and the index of a broadcast operand, which every
family of rules needs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    i64,
)
from xdsl.ir import SSAValue

from nimble.dialects import arith
from nimble.dialects.shape_functions import ReifyDims, ShapeError

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder

Dim = int | SSAValue


class KernelDims(ReifyDims):
    """Dims as index IR emitted at a kernel's entry; checks are the caller's job."""

    def __init__(self, builder: Builder, known: dict[SSAValue, list[Dim]], scalars: dict[SSAValue, SSAValue],
                 shapes: dict[SSAValue, list[SSAValue]], no_stretch: bool = False):
        self.no_stretch = no_stretch
        self.builder = builder
        self.known = known
        self.scalars = scalars
        self.shapes = shapes
        self._dim_cache = {}
        self._const_cache = {}
        self._same: dict[SSAValue, Dim] = {}
        """Dims the no-stretch assumption makes equal: a broadcast's `?` dim -> the dim it meets."""

    def canonical(self, d: Dim) -> Dim:
        """The dim `d` is equal to under the no-stretch assumption (itself otherwise)."""
        while isinstance(d, SSAValue) and d in self._same:
            d = self._same[d]
        return d

    def same_dim(self, a: Dim, b: Dim) -> bool:
        a, b = self.canonical(a), self.canonical(b)
        return a is b or (isinstance(a, int) and a == b)

    def index(self, value: SSAValue) -> Dim:
        known = super().index(value)
        return self.scalars.get(known, known) if isinstance(known, SSAValue) else known

    def shape(self, value: SSAValue) -> list[Dim]:
        if value in self.shapes:
            return list(self.shapes[value])
        return super().shape(value)

    def equal(self, a: Dim, b: Dim, message: str) -> Dim:
        if isinstance(a, int) and isinstance(b, int) and a != b:
            raise ShapeError(f"{message} ({a} vs {b})")
        return a if isinstance(a, int) else b

    def broadcast(self, a: Dim, b: Dim, message: str) -> Dim:
        if a == 1 or a is b:
            return b
        if b == 1 or isinstance(b, int) and isinstance(a, int):
            return a
        if isinstance(a, int):
            return a
        if isinstance(b, int):
            return b
        if self.no_stretch:  # equal by the variant's assumption (checked before it runs)
            if self.canonical(b) is not self.canonical(a):
                self._same[self.canonical(b)] = a
            return a
        a_is_1 = self._emit(arith.CmpiOp(a, self.value(1), "eq"))
        return self._emit(arith.SelectOp(a_is_1, b, a))


def memref_of(t: TensorType) -> MemRefType:
    return MemRefType(t.get_element_type(), t.get_shape())



class NoLoopLowering(Exception):
    """A group member has no loop lowering (it stays on the host, run by the reference)."""


@dataclass
class Pixels:
    """The flattened pixel iv of the current nest and the (oh, ow) it stands for; in a
    nest over panels, also the pixel's column in its panel."""

    p: SSAValue
    oh: Dim
    ow: Dim
    h: Dim
    w: Dim
    column: SSAValue | None = None


@dataclass
class Frame:
    """An elementwise op's scalar being made (`KernelBuilder._elementwise`): the value, its
    index, its dims, and its operands' scalars so far."""

    value: SSAValue
    idx: list[Dim]
    dims: list[Dim]
    args: list[SSAValue] = field(default_factory=list)


@dataclass
class Panel:
    """The block of flattened pixels [start, start + count) of image `n` that the current
    nest computes (see `KernelBuilder.pixel_panels`)."""

    n: SSAValue
    start: Dim
    count: Dim
    pairs: bool = False
    """Columns of the pair-flattened map (pairs of output rows: `winograd`), not pixels."""


def bcast_axis(kb: KernelBuilder, d: Dim, out: Dim, i: Dim) -> Dim:
    """The index into an axis of dim `d` broadcast to `out` at output index `i` (0 where
    `d` is 1; a `?` of 1 is tested at run time unless the kernel assumes no stretch)."""
    if d == 1:
        return 0
    if isinstance(d, int) or d is out or kb.no_stretch:
        return i
    is_one = kb.emit(arith.CmpiOp(d, kb.index(1), "eq"))
    return kb.emit(arith.SelectOp(is_one, kb.index(0), kb.index(i)))


def broadcast_axes(kb: KernelBuilder, dims: Sequence[Dim], out: Sequence[Dim], idx: Sequence[Dim]) -> list[Dim]:
    """numpy broadcasting: the index into `dims` (right-aligned with `out`) at `idx`."""
    lead = len(out) - len(dims)
    return [bcast_axis(kb, d, out[lead + j], idx[lead + j]) for j, d in enumerate(dims)]


def wrapped_index(kb: KernelBuilder, element: SSAValue, n: Dim) -> SSAValue:
    """An index read from a tensor element as an `index`, a negative one counted from
    the end of a dim of `n` (gathers, scatters, one_hot)."""
    i = kb.emit(arith.IndexCastOp(element, IndexType()))
    return kb.emit(arith.SelectOp(kb.emit(arith.CmpiOp(i, kb.index(0), "slt")), kb.emit(arith.AddiOp(i, kb.index(n))),
                                  i))


def clamped_index(kb: KernelBuilder, element: SSAValue, n: Dim) -> Dim:
    """`wrapped_index`, clamped into `[0, n)`: a gather never reads outside its input
    (the host checks the range before running when it can)."""
    return kb.ibinary("min", kb.ibinary("max", wrapped_index(kb, element, n), 0), kb.ibinary("sub", n, 1))


def collapse_view(buffer: SSAValue, groups: Sequence[Sequence[int]]) -> memref.CollapseShapeOp:
    """`buffer` viewed with each group of its dims merged into one (no copy: row-major;
    the caller places the op)."""
    shape = buffer.type.get_shape()
    merged = []
    for g in groups:
        size = 1
        for a in g:
            size *= shape[a]
        merged.append(DYNAMIC_INDEX if any(shape[a] < 0 for a in g) else size)
    reassociation = ArrayAttr([ArrayAttr([IntegerAttr(a, i64) for a in g]) for g in groups])
    t = MemRefType(buffer.type.get_element_type(), merged)
    return memref.CollapseShapeOp.create(operands=[buffer], result_types=[t], properties={"reassociation": reassociation})


PRODUCT_CHAINS = (16, 4)
"""An unrolled sum of products is added up in one chain per 16 products, at most 4
chains (`sum_of_products`)."""


def sum_of_products(kb: KernelBuilder, first: SSAValue, products: Sequence[tuple[SSAValue, SSAValue]]) -> SSAValue:
    """`first + a0 * b0 + a1 * b1 + ...`, long sums in chains taken in turn and summed at
    the end (`PRODUCT_CHAINS`). In one chain each addition waits for the one before (a
    multiply-add takes 4 cycles where 2 can start each cycle), and a long one fills the
    CPU's window of instructions, so that the next pixels' chains cannot overlap it: a
    3 x 3 conv over groups of 8 channels, 72 taps a pixel vector, ran at ~8 GMAC/s a core.
    A short one (a depthwise conv's 9 or 25 taps) overlaps the next pixels' and keeps
    its multiply-adds fused."""
    per, most = PRODUCT_CHAINS
    count = max(1, min(most, -(-len(products) // per)))
    chains: list[SSAValue] = [first]
    for i, (a, b) in enumerate(products):
        product = kb.emit(arith.MulfOp(a, b))
        if i < count - 1:
            chains.append(product)
        else:
            j = (i + 1) % count
            chains[j] = kb.emit(arith.AddfOp(chains[j], product))
    while len(chains) > 1:
        chains = [kb.emit(arith.AddfOp(a, b)) for a, b in zip(chains[::2], chains[1::2])] + chains[len(chains) & ~1:]
    return chains[0]
