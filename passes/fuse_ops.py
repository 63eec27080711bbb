"""`fuse-ops`: group graph operators into `graph.fused` regions, one kernel each.

Which ops may join is decided by their `FusionKind` alone (a table, no op names):
elementwise and injective consumers join their producer's group (dense/matmul/conv +
bias + activation; chains of elementwise ops), elementwise prologues and epilogues join
a reduction (softmax, layer_norm), a small elementwise prologue joins a heavy op, and an
elementwise op consuming several groups of heavy ops merges them (the LSTM/GRU cell:
matmuls, bias, gate activations and the cell update in one group, so gate
intermediates never reach memory). A heavy op's group takes no injective op that would
copy other large tensors into its output (a concat with feature maps made elsewhere).
Opaque ops (constants, nms, control flow, calls) stay outside. A group must stay
convex: no op outside it may lie on a path between two of its ops.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects.device import placement_of
from nimble.dialects.graph import FusedOp, GraphOp, YieldOp
from nimble.dialects.graph.fusion import fused_region
from nimble.dialects.interfaces import FusionKind as K

# (kind of the group so far, kind of the joining consumer) -> kind of the merged group.
# A pair missing from the table does not fuse.
JOIN: dict[tuple[K, K], K] = {
    (K.ELEMENTWISE, K.ELEMENTWISE): K.ELEMENTWISE,
    (K.ELEMENTWISE, K.INJECTIVE): K.INJECTIVE,
    (K.INJECTIVE, K.ELEMENTWISE): K.INJECTIVE,
    (K.INJECTIVE, K.INJECTIVE): K.INJECTIVE,
    (K.OUT_FUSABLE, K.ELEMENTWISE): K.OUT_FUSABLE,
    (K.OUT_FUSABLE, K.INJECTIVE): K.OUT_FUSABLE,
    (K.ELEMENTWISE, K.REDUCTION): K.REDUCTION,
    (K.INJECTIVE, K.REDUCTION): K.REDUCTION,
    (K.REDUCTION, K.ELEMENTWISE): K.REDUCTION,
}
# Transposes and views join like injective ops, but not a heavy op's output (no
# (OUT_FUSABLE, PERMUTE | VIEW) entry): the heavy op keeps its own contiguous output nest
# (and a view of that output needs no kernel at all).
_LAYOUT = (K.PERMUTE, K.VIEW)
JOIN.update({(k, layout): K.INJECTIVE for layout in _LAYOUT for k in (K.ELEMENTWISE, K.INJECTIVE, *_LAYOUT)})
JOIN.update({(layout, k): K.INJECTIVE for layout in _LAYOUT for k in (K.ELEMENTWISE, K.INJECTIVE)})
JOIN.update({(layout, K.REDUCTION): K.REDUCTION for layout in _LAYOUT})

# An elementwise prologue joins a heavy op (dense/matmul/conv) only when its values are
# small (static shapes, at most PROLOGUE_ELEMENTS each): the heavy op recomputes it for
# every output column it feeds, which costs no more than reading it then, and the
# kernel launch it saves (a Tree-LSTM's `dense(hl + hr, u)`) costs far more.
PROLOGUE: dict[tuple[K, K], K] = {(K.ELEMENTWISE, K.OUT_FUSABLE): K.OUT_FUSABLE}
PROLOGUE_ELEMENTS = 4096

MAX_GROUP_OPS = 256
"""A group this large takes no more ops: a kernel's passes, its LLVM compile and the
fusion itself (a merged group's members are listed again) grow with its size, so an
unbounded group made a 10,000-op elementwise chain one kernel that took minutes to
compile. Real models' groups are far smaller; a longer chain is cut into kernels of
this size (one intermediate tensor each)."""

# Groups that may merge with each other through one elementwise consumer.
MERGE: dict[tuple[K, K], K] = {
    (K.OUT_FUSABLE, K.OUT_FUSABLE): K.OUT_FUSABLE,
    (K.OUT_FUSABLE, K.ELEMENTWISE): K.OUT_FUSABLE,
    (K.ELEMENTWISE, K.OUT_FUSABLE): K.OUT_FUSABLE,
    (K.ELEMENTWISE, K.ELEMENTWISE): K.ELEMENTWISE,
}


@dataclass
class _Group:
    ops: list[Operation]
    kind: K


def _small(group: _Group) -> bool:
    """Every value the group computes is small (`_small_value`)."""
    return all(_small_value(r) for o in group.ops for r in o.results)


def _copies_in(op: Operation, members: set[Operation]) -> bool:
    """Whether `op`, joining the heavy op's group `members`, would copy values from outside
    it into the group's output: a tensor operand not made in the group and not small
    (a concat of the heavy op's output with other tensors). The heavy op's kernel would
    then carry a copy nest per such operand and be unlike every other (DenseNet-121: each
    3x3 conv took the next layer's concat of all earlier features, 58 kernels each its
    own, where 4 serve once the concat stands apart)."""
    return any(not (isinstance(v.owner, Operation) and v.owner in members) and not _small_value(v)
               for v in op.operands)


def _small_value(value: SSAValue) -> bool:
    """A tensor of static shape with at most PROLOGUE_ELEMENTS elements."""
    t = value.type
    return isinstance(t, TensorType) and all(d >= 0 for d in t.get_shape()) and \
        prod(t.get_shape()) <= PROLOGUE_ELEMENTS


def _fusable(op: Operation) -> bool:
    return isinstance(op, GraphOp) and op.FUSION is not K.OPAQUE


class _BlockFuser:
    def __init__(self, block: Block):
        self.block = block
        self.order = {op: i for i, op in enumerate(block.ops)}
        self.group_of: dict[Operation, _Group] = {}

    def producer_groups(self, op: Operation) -> list[_Group]:
        groups: list[_Group] = []
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, Operation) and owner in self.group_of and self.group_of[owner] not in groups:
                groups.append(self.group_of[owner])
        return groups

    def in_block(self, op: Operation) -> Operation | None:
        """The op of this block that is or holds `op` (a use inside an if/while region
        is a use by the op holding the region)."""
        while op is not None and op not in self.order:
            op = op.parent_op()
        return op

    def fed_by(self, op: Operation, group: _Group) -> bool:
        """Whether every operand of `op` made by an op is made in `group`: then `op` (after
        all of them) and the group (convex) are convex together, without `convex`'s walk
        over every member (which made fusing a chain of n ops take n^2 steps)."""
        return all(not isinstance(v.owner, Operation) or self.group_of.get(v.owner) is group for v in op.operands)

    def convex(self, members: set[Operation]) -> bool:
        """No op outside `members` is reachable from them and reaches back into them.
        Another group runs as one unit: reaching one of its ops reaches all of them (a
        group holding both a user of `members` and an operand of theirs is a cycle)."""
        last = max(self.order[o] for o in members)
        outside_reached: set[Operation] = set()
        work = [u.operation for o in members for r in o.results for u in r.uses]
        while work:
            user = self.in_block(work.pop())
            if user is None or user in members or user in outside_reached or self.order[user] > last:
                continue
            outside_reached.add(user)
            work.extend(u.operation for r in user.results for u in r.uses)
            group = self.group_of.get(user)
            if group is not None:
                work.extend(o for o in group.ops if o not in members)
        return not any(
            isinstance(v.owner, Operation) and v.owner in outside_reached for o in members for v in o.operands
        )

    def place(self, op: Operation) -> None:
        """Put `op` in a new group, or merge it with the producer groups it may join."""
        kind = op.FUSION
        joined: list[_Group] = []
        producers_kind: K | None = None
        for group in self.producer_groups(op):
            if len(group.ops) + sum(len(g.ops) for g in joined) >= MAX_GROUP_OPS:
                continue
            merged = group.kind if producers_kind is None else MERGE.get((producers_kind, group.kind))
            if merged is None or placement_of(group.ops[0]) != placement_of(op):
                continue
            if (merged, kind) not in JOIN and not ((merged, kind) in PROLOGUE and _small(group)):
                continue
            if merged is K.OUT_FUSABLE and kind is not K.ELEMENTWISE and \
                    _copies_in(op, {*group.ops, *(o for g in joined for o in g.ops)}):
                continue
            if joined and not all(o.SHARES_GROUP for g in (group, *joined) for o in g.ops if isinstance(o, GraphOp)):
                continue
            if not (not joined and self.fed_by(op, group)) \
                    and not self.convex({op, *group.ops, *(o for g in joined for o in g.ops)}):
                continue
            joined.append(group)
            producers_kind = merged
        if producers_kind is None:
            self.group_of[op] = _Group([op], kind)
            return
        group = _Group(sorted([op, *(o for g in joined for o in g.ops)], key=self.order.__getitem__),
                       JOIN.get((producers_kind, kind)) or PROLOGUE[(producers_kind, kind)])
        for o in group.ops:
            self.group_of[o] = group

    def run(self) -> None:
        for op in list(self.block.ops):
            if _fusable(op):
                self.place(op)
        groups = {id(g): g for g in self.group_of.values() if len(g.ops) > 1}
        for group in sorted(groups.values(), key=lambda g: self.order[g.ops[-1]]):
            outline(group.ops)


def outline(ops: list[Operation]) -> None:
    """Replace `ops` (in block order, convex) by one graph.fused op computing them."""
    members = set(ops)
    inputs: list[SSAValue] = []
    for o in ops:
        for v in o.operands:
            if not (isinstance(v.owner, Operation) and v.owner in members) and v not in inputs:
                inputs.append(v)
    outputs = [r for o in ops for r in o.results if any(u.operation not in members for u in r.uses)]
    region = fused_region([v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, region.block.args))
    for arg, value in zip(region.block.args, inputs):
        arg.name_hint = value.name_hint
    for o in ops:
        region.block.add_op(o.clone(value_mapper=mapping))
    region.block.add_op(YieldOp([mapping[r] for r in outputs]))
    fused = FusedOp(inputs, [r.type for r in outputs], region)
    fused.location = ops[-1].location
    last = ops[-1]
    Rewriter.insert_op(fused, InsertPoint.after(last))
    # Users placed before the group's last op (they do not feed the group: it is convex)
    # move after the fused op, with whatever uses them in turn, in their order.
    _move_users_after(fused, outputs, members)
    for old, new in zip(outputs, fused.results):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for o in reversed(ops):
        o.detach()
        o.erase()


def _move_users_after(fused: FusedOp, outputs: list[SSAValue], members: set[Operation]) -> None:
    block = fused.parent_block()
    assert block is not None
    position = {op: i for i, op in enumerate(block.ops)}
    limit = position[fused]
    early: set[Operation] = set()
    work = [u.operation for r in outputs for u in r.uses if u.operation not in members]
    while work:
        user = work.pop()
        while user.parent_block() is not block and user.parent_op() is not None:
            user = user.parent_op()  # a use inside a region: move the op holding it
        if user in early or user in members or position.get(user, limit + 1) > limit:
            continue
        early.add(user)
        work.extend(u.operation for r in user.results for u in r.uses)
    anchor: Operation = fused
    for user in sorted(early, key=position.__getitem__):
        user.detach()
        Rewriter.insert_op(user, InsertPoint.after(anchor))
        anchor = user


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Group graph ops into graph.fused regions by their fusion kinds."""

    name = "fuse-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [b for o in op.walk() for r in o.regions for b in r.blocks]
        for block in blocks:
            if not isinstance(block.parent_op(), FusedOp):
                _BlockFuser(block).run()
