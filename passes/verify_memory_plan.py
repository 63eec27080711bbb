"""`verify-memory-plan`: check what `plan-memory` made, independently of how it made it.

In every block of every host function, each `device.alloc_tensor` of a static offset
and size takes bytes `[offset, offset + size)` of its storage: those are what plan-memory
places (its arena). A tensor of a dynamic offset or size is compared with none: such
tensors share a storage by design (a recurrence's state written in place into the first
rows of the output that stacks every step's), not by the planner's choice.
A tensor is live from its allocation to the last use, in the block, of it or of any
value that may alias it (conservatively: every result of an op using it that can hold a
tensor; a use inside a nested region counts at the op holding the region; returned or
yielded: to the end of the block). Two tensors of one storage whose bytes overlap must
never be live at once, and no tensor may be used after its storage's `device.kill`.
A violation is an `OpError` (at the later tensor's allocation) naming both tensors: a
bug in the planner, caught at compile time instead of as wrong numbers at run time. The `memory` stage runs it
last, on every model compiled (the examples, the tests, every fuzzed program).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from nimble.dialects import arith, device
from nimble.dialects.graph.types import numpy_dtype
from nimble.dialects.dynshape import ShapeType
from nimble.diagnostics import OpError
from nimble.passes.plan_memory import fresh_results

WHOLE = 1 << 62


@dataclass
class _Tensor:
    op: device.AllocTensorOp
    start: int  # position of the allocation in the block
    end: int  # last position it (or an alias) is used at
    low: int  # bytes of the storage it takes
    high: int


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _may_alias(value: SSAValue) -> bool:
    return not isinstance(value.type, IndexType | IntegerType | ShapeType)


def _aliases(op: Operation, fresh: set[str]) -> list[SSAValue]:
    """Results of `op` that may hold its operands' memory (a call of a function that
    returns only what it allocated holds none: `plan_memory.fresh_results`)."""
    if isinstance(op, func.CallOp) and op.callee.root_reference.data in fresh:
        return []
    return [r for r in op.results if _may_alias(r)]


def _last_use(block: Block, value: SSAValue, position: dict[Operation, int], fresh: set[str]) -> int:
    """The last position in `block` at which `value` or a possible alias is used."""
    end = position[value.owner]
    seen, work = set(), [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.operation
            holder = user
            while holder is not None and holder not in position:
                holder = holder.parent_op()
            if holder is None:
                return WHOLE
            if holder is user and (user.has_trait(IsTerminator) or isinstance(user, func.ReturnOp)):
                return WHOLE  # (it outlives the block)
            end = max(end, position[holder])
            if isinstance(user, device.KillOp | device.LaunchOp):
                continue
            work += _aliases(holder, fresh) + _aliases(user, fresh)
    return end


def check_block(block: Block, fresh: set[str]) -> None:
    for op in block.ops:
        for region in op.regions:
            for inner in region.blocks:
                check_block(inner, fresh)
    position = {op: i for i, op in enumerate(block.ops)}
    by_storage: dict[SSAValue, list[_Tensor]] = {}
    for op in block.ops:
        if not isinstance(op, device.AllocTensorOp) or not isinstance(op.storage.owner, device.AllocStorageOp):
            continue
        offset = _constant(op.offset)
        shape = op.result.type.get_shape()
        size = None if any(d < 0 for d in shape) or offset is None else \
            int(numpy_dtype(op.result.type.get_element_type()).itemsize) * _product(shape)
        low, high = (offset, offset + size) if size is not None else (0, WHOLE)
        by_storage.setdefault(op.storage, []).append(
            _Tensor(op, position[op], _last_use(block, op.result, position, fresh), low, high))
    for storage, tensors in by_storage.items():
        kill = next((position[u.operation] for u in storage.uses if isinstance(u.operation, device.KillOp)
                     and u.operation in position), None)
        for i, a in enumerate(tensors):
            if kill is not None and a.end >= kill:
                raise OpError(a.op, f"memory plan: {_name(a)} is used after its storage is killed")
            for b in tensors[i + 1:]:
                if a.high == WHOLE or b.high == WHOLE:
                    continue  # (see the module docstring: only placed bytes are compared)
                if a.low < b.high and b.low < a.high and a.start <= b.end and b.start <= a.end:
                    raise OpError(b.op, f"memory plan: {_name(a)} ({_extent(a)}) and {_name(b)} ({_extent(b)}) "
                                              "share memory while both are live")


def _product(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _extent(t: _Tensor) -> str:
    end = "the block's end" if t.end == WHOLE else str(t.end)
    high = "the storage's end" if t.high == WHOLE else str(t.high)
    return f"bytes {t.low}-{high}, live {t.start}-{end}"


def _name(t: _Tensor) -> str:
    hint = t.op.result.name_hint
    return f"the {t.op.result.type} tensor{f' %{hint}' if hint else ''} allocated at {t.start}"


@dataclass(frozen=True)
class VerifyMemoryPlanPass(ModulePass):
    """Check that no two tensors sharing storage are live at once (see the module docstring)."""

    name = "verify-memory-plan"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fresh = fresh_results(op)
        for f in op.ops:
            if isinstance(f, func.FuncOp) and f.body.blocks:
                check_block(f.body.block, fresh)
