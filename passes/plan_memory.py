"""`plan-memory`: share storage between tensors whose lifetimes do not overlap.

Works on the `device.alloc_storage` ops of each block of a host function (the body of a
function, a loop, a branch, a match case: each planned on its own, since it runs as a
unit):

1. **Liveness.** A storage is live from its allocation to the last use of any value
   that may alias it: the tensors viewing it, and conservatively every result of an op
   taking such a value (a call, a branch, a host function may return its argument;
   results of type index, i1 or shape hold no tensor; a call of a function whose
   results are all freshly allocated does not alias its arguments). A use inside a nested region
   counts at the op holding the region, so a value used in a loop is live through the
   whole loop. A storage whose aliases reach the block's terminator (returned, yielded)
   escapes and is left alone.
2. **Static sizes** go into one arena: offsets by greedy first fit in decreasing size
   (no two storages live at once overlap), 64-byte aligned; one `alloc_storage` of the
   arena's size, the tensors rebased into it.
3. **Dynamic sizes** given by the same SSA value (the same expression of the same dims,
   after `cse`) share one storage when their lifetimes do not overlap.
4. `device.kill` after the last use of the arena and of every remaining non-escaping
   storage: the VM's pooling allocator reuses it (the next loop iteration, the next
   call).

Each function gets a `device.memory_plan` attribute: the static bytes before and after
planning and the dynamic storages before and after sharing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IndexType, IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from nimble.dialects import arith, device
from nimble.dialects.device import MEMORY_PLAN as PLAN_ATTR
from nimble.dialects.dynshape import ShapeType

ALIGN = device.ALIGNMENT


@dataclass
class _Storage:
    op: device.AllocStorageOp
    start: int
    end: int
    size: int | None  # static size, or None
    offset: int = 0


@dataclass
class _Report:
    static_naive: int = 0
    static_planned: int = 0
    dynamic_naive: int = 0
    dynamic_planned: int = 0
    killed: int = 0

    def add(self, other: _Report) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))


def _holds_no_tensor(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, IndexType | IntegerType | ShapeType)


def _position(block: Block, op: Operation, index: dict[Operation, int]) -> int | None:
    """Position in `block` of `op` or of its ancestor in `block` (None: not inside)."""
    while op is not None and op not in index:
        op = op.parent_op()
    return index.get(op) if op is not None else None


def fresh_results(module: ModuleOp) -> set[str]:
    """Functions whose results never alias their arguments: every returned value is a
    tensor allocated in the function (or by a call of such a function) or holds no
    tensor. Recursion is assumed to alias (conservative)."""
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks}
    fresh: dict[str, bool] = {}

    def is_fresh(name: str) -> bool:
        if name not in fresh:
            fresh[name] = False  # in progress: a recursive call may alias
            body = functions.get(name)
            ret = body.body.block.last_op if body is not None else None
            fresh[name] = isinstance(ret, func.ReturnOp) and all(_fresh_value(v, is_fresh) for v in ret.operands)
        return fresh[name]

    return {name for name in functions if is_fresh(name)}


def _fresh_value(value: SSAValue, is_fresh) -> bool:
    owner = value.owner
    if _holds_no_tensor(value) or isinstance(owner, device.AllocTensorOp):
        return True
    return isinstance(owner, func.CallOp) and is_fresh(owner.callee.root_reference.data)


def _aliases(op: Operation, fresh: set[str]) -> list[SSAValue]:
    """The results of `op` that may alias its operands."""
    if isinstance(op, func.CallOp) and op.callee.root_reference.data in fresh:
        return []
    return [r for r in op.results if not _holds_no_tensor(r)]


def _liveness(block: Block, storage: device.AllocStorageOp, index: dict[Operation, int],
              fresh: set[str]) -> int | None:
    """The last position at which the storage may be used, or None if it escapes."""
    ops = list(index)
    end = index[storage]
    seen: set[SSAValue] = set()
    work = [storage.result]
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            user = use.operation
            at = _position(block, user, index)
            if at is None:
                return None
            if user.parent_block() is block and _is_terminator(user):
                return None  # returned or yielded: it outlives the block
            end = max(end, at)
            if isinstance(user, device.KillOp | device.LaunchOp):
                continue
            work += _aliases(user, fresh)
            if user.parent_block() is not block:
                # Used inside a region: what the holding op returns may alias it.
                work += _aliases(ops[at], fresh)
    return end


def _is_terminator(op: Operation) -> bool:
    return op.has_trait(IsTerminator) or isinstance(op, func.ReturnOp)


def _static_size(op: device.AllocStorageOp) -> int | None:
    owner = op.size.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _first_fit(storages: list[_Storage]) -> int:
    """Assign offsets (greedy by decreasing size, lowest free offset); the arena size."""
    placed: list[_Storage] = []
    total = 0
    for s in sorted(storages, key=lambda s: (-(s.size or 0), s.start)):
        busy = sorted((p.offset, p.offset + p.size) for p in placed if not (p.end < s.start or s.end < p.start))
        offset = 0
        for lo, hi in busy:
            if offset + s.size <= lo:
                break
            offset = max(offset, -(-hi // ALIGN) * ALIGN)
        s.offset = offset
        placed.append(s)
        total = max(total, offset + s.size)
    return total


def plan_block(block: Block, fresh: set[str]) -> _Report:
    report = _Report()
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                report.add(plan_block(inner, fresh))
    ops = list(block.ops)
    index = {op: i for i, op in enumerate(ops)}
    planned: list[_Storage] = []
    for op in ops:
        if not isinstance(op, device.AllocStorageOp):
            continue
        end = _liveness(block, op, index, fresh)
        size = _static_size(op)
        if size is not None:
            report.static_naive += size
        else:
            report.dynamic_naive += 1
        if end is None:
            if size is not None:
                report.static_planned += size
            else:
                report.dynamic_planned += 1
            continue
        planned.append(_Storage(op, index[op], end, size))
    kills: list[tuple[Operation, SSAValue]] = []
    static = [s for s in planned if s.size is not None and s.op.result.uses and all(
        isinstance(u.operation, device.AllocTensorOp) for u in s.op.result.uses)]
    for where in sorted({s.op.device.data for s in static}):
        on_device = [s for s in static if s.op.device.data == where]
        if len(on_device) > 1:
            arena = _arena(on_device)
            report.static_planned += _static_size(arena)
            kills.append((ops[max(s.end for s in on_device)], arena.result))
        else:
            report.static_planned += on_device[0].size
            kills += [(ops[s.end], s.op.result) for s in on_device if s.end > s.start]
    dynamic = [s for s in planned if s not in static]
    report.static_planned += sum(s.size for s in dynamic if s.size is not None)
    slots: list[list[_Storage]] = []
    for s in sorted(dynamic, key=lambda s: s.start):
        slot = next((group for group in slots if group[0].size is None and group[0].op.size is s.op.size
                     and group[0].op.properties == s.op.properties and group[-1].end < s.start), None)
        if slot is None:
            slots.append([s])
            continue
        s.op.result.replace_all_uses_with(slot[0].op.result)
        Rewriter.erase_op(s.op)
        slot.append(s)
    report.dynamic_planned += sum(1 for group in slots if group[0].size is None)
    kills += [(ops[group[-1].end], group[0].op.result) for group in slots if group[-1].end > group[0].start]
    for anchor, value in kills:
        if _is_terminator(anchor):
            Rewriter.insert_op(device.KillOp(value), InsertPoint.before(anchor))
        else:
            Rewriter.insert_op(device.KillOp(value), InsertPoint.after(anchor))
        report.killed += 1
    return report


def _arena(storages: list[_Storage]) -> device.AllocStorageOp:
    """One storage holding `storages` at first-fit offsets, allocated before the first."""
    total = _first_fit(storages)
    first = min(storages, key=lambda s: s.start)
    arena = device.AllocStorageOp(_const(first.op, total), first.op.device.data)
    Rewriter.insert_op(arena, InsertPoint.before(first.op))
    for s in storages:
        for use in list(s.op.result.uses):
            _rebase(use.operation, arena.result, s.offset)
        Rewriter.erase_op(s.op)
    return arena


def _rebase(tensor: Operation, arena: SSAValue, offset: int) -> None:
    """Point an `alloc_tensor` at the arena, `offset` bytes further on."""
    assert isinstance(tensor, device.AllocTensorOp)
    old = tensor.offset.owner
    if isinstance(old, arith.ConstantOp):
        tensor.operands[1] = _const(tensor, old.value.value.data + offset)
    else:
        shifted = arith.AddiOp(tensor.offset, _const(tensor, offset))
        Rewriter.insert_op(shifted, InsertPoint.before(tensor))
        tensor.operands[1] = shifted.result
    tensor.operands[0] = arena


def _const(anchor: Operation, value: int) -> SSAValue:
    c = arith.ConstantOp(IntegerAttr(value, IndexType()))
    Rewriter.insert_op(c, InsertPoint.before(anchor))
    return c.result


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Arena offsets for static storage, sharing of dynamic storage, kills at last use."""

    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fresh = fresh_results(op)
        for function in op.ops:
            if not isinstance(function, func.FuncOp) or not function.body.blocks \
                    or device.HOST_FUNCTION in function.attributes:
                continue
            report = plan_block(function.body.block, fresh)
            function.attributes[PLAN_ATTR] = DictionaryAttr({
                name: IntegerAttr(getattr(report, name), i64) for name in report.__dataclass_fields__})

