"""Index rules of the ops that address elements through index tensors. `gather_nd`
reads its index row and the element it names (clamped into range, as `gather`);
`one_hot` compares its index with the position along the new axis.

The scatters (`graph.scatter_elements`, `graph.scatter_nd`): each
output element is the data's, combined with the updates that land on it, found by a
`loop.reduce` over the updates that could: along the scatter axis for
`scatter_elements` (the update at the same position off the axis), over the index rows
for `scatter_nd`. With `reduction = none` the reduce finds the last update that lands
(the max of its position, -1 for none), otherwise it combines them into the data's
element. An output element costs the length of the axis or the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from nimble.dialects import arith, graph, loop
from nimble.dialects.graph.base import normalize_axis
from nimble.lowering.kernels.kernel_parts import Dim, clamped_index, wrapped_index

if TYPE_CHECKING:
    from nimble.lowering.kernels.kernel_builder import KernelBuilder

def _lands(kb: KernelBuilder, index: SSAValue, n: Dim, at: Dim) -> SSAValue:
    """Whether an index read from a tensor (negative from the end of a dim of `n`) is `at`."""
    return kb.emit(arith.CmpiOp(wrapped_index(kb, index, n), kb.index(at), "eq"))


def _scatter(kb: KernelBuilder, op: graph.ScatterElementsOp | graph.ScatterNDOp, idx: list[Dim], upper: Dim,
             hit: Callable[[SSAValue], SSAValue], update_at: Callable[[SSAValue], list[Dim]]) -> SSAValue:
    """The output element at `idx`: the data's, combined with `updates[update_at(k)]`
    for each `k < upper` where `hit(k)`."""
    old = kb.at(op.data, idx)
    kind = op.reduction.data
    if kind != "none":
        combiner = loop.Combiner(kind)  # (the reductions but none are the combiners' names)
        nothing = kb.identity(combiner, old.type)

        def term(k: SSAValue) -> list[SSAValue]:
            return [kb.emit(arith.SelectOp(hit(k), kb.at(op.updates, update_at(k)), nothing))]

        return kb.reduce(upper, [old], [combiner], term)[0]
    none = kb.index(-1)

    def position(k: SSAValue) -> list[SSAValue]:
        return [kb.emit(arith.SelectOp(hit(k), k, none))]

    last = kb.reduce(upper, [none], [loop.Combiner.MAX], position)[0]
    found = kb.emit(arith.CmpiOp(last, kb.index(0), "sge"))
    safe = kb.ibinary("max", last, 0)
    return kb.emit(arith.SelectOp(found, kb.at(op.updates, update_at(safe)), old))


def scatter_elements(kb: KernelBuilder, op: graph.ScatterElementsOp, r: int, idx: list[Dim]) -> SSAValue:
    dims, counts = kb.dims(op.data), kb.dims(op.indices)
    axis = normalize_axis(op.axis.value.data, len(dims))
    inside: SSAValue | None = None  # (the updates may cover less of the data off the axis)
    for a, (d, c) in enumerate(zip(dims, counts)):
        if a != axis and not (isinstance(d, int) and d == c):
            below = kb.emit(arith.CmpiOp(kb.index(idx[a]), kb.index(c), "slt"))
            inside = below if inside is None else kb.emit(arith.AndIOp(inside, below))
    upper = counts[axis] if inside is None else \
        kb.emit(arith.SelectOp(inside, kb.index(counts[axis]), kb.index(0)))

    def at(k: SSAValue) -> list[Dim]:
        return [*idx[:axis], k, *idx[axis + 1:]]

    return _scatter(kb, op, idx, upper, lambda k: _lands(kb, kb.at(op.indices, at(k)), dims[axis], idx[axis]), at)


def scatter_nd(kb: KernelBuilder, op: graph.ScatterNDOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.data)
    rows = kb.dims(op.indices)[0]
    depth = op.depth()

    def hit(m: SSAValue) -> SSAValue:
        all_equal: SSAValue | None = None
        for j in range(depth):
            equal = _lands(kb, kb.at(op.indices, [m, j]), dims[j], idx[j])
            all_equal = equal if all_equal is None else kb.emit(arith.AndIOp(all_equal, equal))
        return all_equal

    return _scatter(kb, op, idx, rows, hit, lambda m: [m, *idx[depth:]])


def gather_nd(kb: KernelBuilder, op: graph.GatherNDOp, r: int, idx: list[Dim]) -> SSAValue:
    dims = kb.dims(op.data)
    batch, depth = op.batch_dims.value.data, op.depth()
    lead = len(kb.dims(op.indices)) - 1
    at: list[Dim] = list(idx[:batch])
    for j in range(depth):
        at.append(clamped_index(kb, kb.at(op.indices, [*idx[:lead], j]), dims[batch + j]))
    return kb.at(op.data, [*at, *idx[lead:]])


def one_hot(kb: KernelBuilder, op: graph.OneHotOp, r: int, idx: list[Dim]) -> SSAValue:
    axis = op.new_axis()
    hit = _lands(kb, kb.at(op.indices, [*idx[:axis], *idx[axis + 1:]]), op.depth.value.data, idx[axis])
    return kb.emit(arith.SelectOp(hit, kb.at(op.values, [1]), kb.at(op.values, [0])))


INDEXED_RULES: dict[type, Callable[..., SSAValue]] = {
    graph.ScatterElementsOp: scatter_elements,
    graph.ScatterNDOp: scatter_nd,
    graph.GatherNDOp: gather_nd,
    graph.OneHotOp: one_hot,
}
