"""Kernel queries: what the compiler's passes and the runtime ask of a kernel made of
`loop` ops (launch metadata): its work per output element, the buffers an op reads and
writes, whether a cooperative kernel's chunks can share its work, whether a launch may
be split into chunks."""

from __future__ import annotations

from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import arith
from nimble.dialects.loop import (
    COOPERATIVE_MARK,
    SHARED_BUFFERS,
    WORK_MARK,
    AllocOp,
    ForeachOp,
    Level,
    ReduceOp,
)

DYNAMIC_TRIPS = 512
"""What a reduction whose length is known only at run time counts in `reduction_work`
(a conv over `?` channels reduces channels x taps: 576 to 4608 in ResNet-18)."""


def _trips(op: ReduceOp) -> int:
    """A reduction's trip count when its upper bound is a constant, else DYNAMIC_TRIPS."""
    owner = op.upper.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return max(owner.value.value.data, 1)
    return DYNAMIC_TRIPS


def reduction_work(kernel: Operation) -> int:
    """Reduction steps per output element of a kernel (dynamic trip counts count
    DYNAMIC_TRIPS): with the output size, what decides whether splitting it over threads
    pays. The reductions of one body add up (an element takes them all); sibling loops
    count their most (they cover different elements: tiles, their remainders, the packed
    and unpacked parts of a product). A reduction unrolled into a chain of multiply-adds
    (a depthwise conv's taps: `_unrolled`) counts its steps like a loop's."""

    def work(block: Block) -> int:
        total = nested = 0
        for op in block.ops:
            if isinstance(op, ReduceOp):
                total += _trips(op) * max(1, work(op.body.block))
            elif isinstance(op, ForeachOp | scf.ForOp):  # (a time loop: the work of a step)
                nested = max(nested, work(op.body.block))
        return total + max(nested, _unrolled(block))

    return max(1, work(kernel.regions[0].block))


def _unrolled(block: Block) -> int:
    """The products added up by the largest sum of multiply-adds in `block` that has a
    chain of them (an unrolled reduction, in one chain or in several summed at the end:
    `sum_of_products`; not `a * b + c * d`)."""
    depth: dict[SSAValue, int] = {}
    count: dict[SSAValue, int] = {}
    largest = 0
    for op in block.ops:
        if isinstance(op, arith.AddfOp):
            step = int(any(isinstance(v.owner, arith.MulfOp) for v in (op.lhs, op.rhs)))
            depth[op.result] = step + max(depth.get(op.lhs, 0), depth.get(op.rhs, 0))
            count[op.result] = sum(1 if isinstance(v.owner, arith.MulfOp) else count.get(v, 0) for v in (op.lhs, op.rhs))
            if depth[op.result] > 1:
                largest = max(largest, count[op.result])
    return largest


def kernel_work(kernel: Operation) -> int:
    """Reduction steps per output element of a kernel: its `WORK_MARK`, else `reduction_work`."""
    mark = kernel.attributes.get(WORK_MARK)
    return mark.value.data if isinstance(mark, IntegerAttr) else reduction_work(kernel)


def _parallel(op: Operation) -> bool:
    return isinstance(op, ForeachOp) and op.schedule is not None and op.schedule.schedule.parallel


def cooperative_regions(kernel: Operation) -> list[Block]:
    """The blocks every chunk of a cooperative kernel runs in full, in step: its body and
    the bodies of its sequential (`scf.for`) loops."""
    body = kernel.regions[0].block
    return [body, *(op.body.block for op in body.ops if isinstance(op, scf.ForOp))]


def viewed_buffer(value: SSAValue) -> SSAValue:
    """The buffer `value` views (through `memref.collapse_shape`s), or `value` itself."""
    while isinstance(value.owner, memref.CollapseShapeOp):
        value = value.owner.src
    return value


STORES = (memref.StoreOp, vector.StoreOp, vector.MaskedStoreOp)


def writes_memory(op: Operation) -> bool:
    """Whether `op` or an op inside it stores to a buffer."""
    return any(isinstance(o, STORES) for o in op.walk())


def accessed_buffers(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """The buffers (through views) `op` and the ops inside it read, and write."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for o in op.walk():
        if isinstance(o, memref.LoadOp | memref.StoreOp):
            buffer = o.memref
        elif isinstance(o, vector.LoadOp | vector.MaskedLoadOp | vector.StoreOp | vector.MaskedStoreOp):
            buffer = o.base
        else:
            continue
        (writes if isinstance(o, STORES) else reads).add(viewed_buffer(buffer))
    return reads, writes


def can_cooperate(kernel: Operation) -> bool:
    """Whether a cooperative kernel's chunks can share its work: its regions hold loop
    nests (each split between the chunks, at its outer loop or the loops right inside
    it, with barriers between nests that share buffers), pure ops and reductions (every chunk
    computes them), buffers (top level only: shared) and the sequential loops; a loop
    nest with loops inside its outer loop writes only in those (the outer loop, run
    whole by every chunk when it has fewer iterations than chunks, may not)."""
    if COOPERATIVE_MARK not in kernel.attributes:
        return False
    regions = cooperative_regions(kernel)
    shared = 0
    for block in regions:
        for op in block.ops:
            if isinstance(op, AllocOp):
                if op.level.data != Level.REG:
                    shared += 1
                    if block is not regions[0]:
                        return False
            elif isinstance(op, ForeachOp):
                inner = [o for o in op.body.block.ops if isinstance(o, ForeachOp)]
                if inner and any(writes_memory(o) for o in op.body.block.ops if not isinstance(o, ForeachOp)):
                    return False
            elif isinstance(op, scf.ForOp):
                if block is not regions[0]:
                    return False
            elif writes_memory(op):
                return False
    return shared <= SHARED_BUFFERS


def splits_profitably(kernel: Operation) -> bool:
    """Whether launches of the kernel may be split into chunks: a cooperative kernel that
    can cooperate, or a loop is `parallel` and every loop nest outside the parallel ones
    only fills a buffer of the chunk's own that a parallel nest reads (the rows' panels
    of row lanes, passes/loop_transforms/row_lanes.py: small, packed again by every chunk). A staged
    im2col buffer's fill, large, makes its kernel cooperative instead (schedule-loops)."""
    if COOPERATIVE_MARK in kernel.attributes:
        return can_cooperate(kernel)
    body = kernel.regions[0].block
    top = [op for op in body.ops if isinstance(op, ForeachOp | ReduceOp)]
    return any(_parallel(o) for o in kernel.walk()) and all(
        _parallel(op) or any(_parallel(inner) for inner in op.walk()) or _fills_scratch(op, body) for op in top)


def _fills_scratch(nest: Operation, body: Block) -> bool:
    """Whether `nest` stores only into buffers allocated in `body` (the kernel's)."""
    return all(isinstance(b.owner, AllocOp) and b.owner.parent_block() is body for b in accessed_buffers(nest)[1])
