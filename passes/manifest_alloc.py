"""`manifest-alloc`: every kernel output gets explicit storage; groups become launches.

Each `graph.fused` op that has a kernel (after `lower-graph-to-loops`) is replaced, in
the host function, by:

1. the shape IR of its members' shape functions, run on the group's input dims
   (`dynshape.dim` of the inputs, `arith` on index, `dynshape.assert` for checks that could
   not be decided statically: a call with shapes the kernel cannot handle fails here,
   naming the op, before the kernel runs);
2. per output, `device.alloc_storage` of `product(dims) * element size` bytes and a
   `device.alloc_tensor` view of it;
3. `device.launch @kernel(inputs) outs(outputs)`, with the group's variant kernels and
   the conditions that select them (`_choices`): the no-stretch variant where every `?`
   dim that numpy broadcasting could stretch is equal to the result dim, the Winograd
   form of a conv where its sizes ask for it.

Groups without a kernel (CPU fallbacks) and opaque ops (nms, whose output size is
known only after it runs) stay as they are: the VM runs them through their reference
semantics and allocates what they return.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, FunctionType, ModuleOp, StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from nimble.diagnostics import OpError
from nimble.dialects import arith, device, dynshape
from nimble.dialects.device import Device
from nimble.dialects.discardable import KERNEL_ATTR, VARIANT_ATTR, WINOGRAD_ATTR, WINOGRAD_VARIANT_ATTR
from nimble.dialects.graph import (
    CastOp,
    DynamicReshapeOp,
    FusedOp,
    GraphOp,
    ReshapeOp,
    SliceOp,
    SqueezeOp,
    UnsqueezeOp,
    WhileOp,
    YieldOp,
)
from nimble.dialects.graph.broadcasting import broadcast_sites
from nimble.dialects.graph.slice import END as SLICE_END
from nimble.dialects.graph.types import join_types, numpy_dtype
from nimble.dialects.shape_functions import ReifyDims, ShapeError
from nimble.lowering.kernels import winograd
from nimble.lowering.rnn_to_kernels import RECURRENCE_ATTR


class GroupDims(ReifyDims):
    """Reified dims of a group's values, emitted before the group in the host: the
    region's arguments stand for the group's operands; `outputs` holds the dims of
    earlier groups' outputs (the operands of their allocations), so that shape IR
    chains back to them instead of reading them again."""

    def __init__(self, group: FusedOp, outputs: dict[SSAValue, list[int | SSAValue]]):
        super().__init__(group, dict(outputs))
        self.outer: dict[SSAValue, SSAValue] = dict(zip(group.body.block.args, group.inputs))
        for arg, value in self.outer.items():
            if isinstance(value.type, TensorType):
                self.known[arg] = self.dims(value)

    def index(self, value: SSAValue) -> int | SSAValue:
        return super().index(self.outer.get(value, value))

    def shape(self, value: SSAValue) -> list[int | SSAValue]:
        return super().shape(self.outer.get(value, value))


def _product(k: ReifyDims, dims: list[int | SSAValue], start: int) -> int | SSAValue:
    total: int | SSAValue = start
    for d in dims:
        total = k.binary("mul", total, d)
    return total


def _specialize(k: GroupDims, group: FusedOp) -> SSAValue | bool:
    """i1: no `?` dim is stretched from 1 by broadcasting (the variant's assumption);
    True when that holds whatever the shapes."""
    checks: list[SSAValue] = []
    for op in group.body.block.ops:
        for operand, axis, result, result_axis in broadcast_sites(op):
            a, r = k.known[operand][axis], k.known[result][result_axis]
            if a is r or (isinstance(a, int) and a == r):
                continue
            checks.append(k.compare("eq", a, r))
    return k.all_of(checks)


def _kernels_of(group: FusedOp) -> list[SymbolRefAttr]:
    """Every kernel `lower-graph-to-loops` built for the group, the general one first."""
    return [group.attributes[a] for a in (KERNEL_ATTR, VARIANT_ATTR, WINOGRAD_ATTR, WINOGRAD_VARIANT_ATTR)
            if a in group.attributes]


def _choices(k: GroupDims, group: FusedOp) -> tuple[str, list[tuple[str, SSAValue]]]:
    """The kernel a launch runs unless one of the variants (each with its condition,
    tried in order) does: the group's general kernel and, when it has them, its
    no-stretch variant (where `_specialize` holds) and its Winograd kernels (where the
    convs' sizes pass `winograd.host_condition`; the no-stretch one where both hold). A
    condition that holds whatever the shapes makes its kernel the one launched when no
    variant before it is."""
    def name(attr: str) -> str | None:
        kernel = group.attributes.get(attr)
        return kernel.root_reference.data if isinstance(kernel, SymbolRefAttr) else None

    specialize = _specialize(k, group) if name(VARIANT_ATTR) else False
    wanted = [winograd.host_condition(k, op) for op in winograd.decided_at_run_time(group.body.block.ops)] \
        if name(WINOGRAD_ATTR) or name(WINOGRAD_VARIANT_ATTR) else []
    options = [(name(WINOGRAD_VARIANT_ATTR), [*wanted, specialize]), (name(WINOGRAD_ATTR), wanted),
               (name(VARIANT_ATTR), [specialize])]
    choices: list[tuple[str, SSAValue]] = []
    seen: set[tuple[SSAValue, ...]] = set()
    for kernel, conditions in options:
        tests = tuple(c for c in conditions if c is not True)
        if kernel is None or any(c is False for c in tests) or tests in seen:  # never, or never after an earlier one
            continue
        if not tests:
            return kernel, choices
        seen.add(tests)
        choices.append((kernel, k.all_of(tests)))
    return name(KERNEL_ATTR), choices


def group_device(group: FusedOp) -> str:
    """The device a group runs on: as `place-devices` decided, else where its ops are
    pinned (`let ... on cpu`), else the CPU."""
    placed = device.placement_of(group)
    if placed is not None:
        return placed
    pinned = device.pinned_devices(group.body.block.ops)
    where = pinned.pop() if len(pinned) == 1 else Device.CPU
    if pinned or where not in COMPILED_FOR:
        first = next(o for o in group.body.block.ops if device.placement_of(o) is not None)
        raise OpError(first, f"'{first.name}' op is pinned to '{where}', but kernels are compiled only for "
                             f"{', '.join(COMPILED_FOR)} without placement (compile with target 'opencl' or "
                             f"'hetero')")
    return where


COMPILED_FOR = (Device.CPU,)
"""Devices with a kernel backend."""


VIEW_OPS = (SliceOp, SqueezeOp, UnsqueezeOp, ReshapeOp, DynamicReshapeOp, CastOp)
"""Ops whose result can be a view of a contiguous input (given `_is_view`)."""


def _is_view(op: GraphOp) -> bool:
    """A slice of consecutive rows, a squeeze, unsqueeze or reshape, or a cast that only
    changes which dims are static."""
    if isinstance(op, SliceOp):
        return _leading_slice(op)
    if isinstance(op, CastOp):
        return op.input.type.get_element_type() == op.result.type.get_element_type()
    return isinstance(op, VIEW_OPS)


def _leading_slice(op: SliceOp) -> bool:
    """A slice of consecutive rows: steps 1, every axis after the first whole."""
    starts, ends = op.static_starts.get_values(), op.static_ends.get_values()
    return all(s == 1 for s in op.steps.get_values()) and all(
        st == 0 and en == SLICE_END for st, en in list(zip(starts, ends))[1:])


def is_view_group(group: FusedOp) -> bool:
    """Whether a group is a chain of view ops on its first input (`_as_view` makes it a
    `device.view`: no kernel, no copy of the data)."""
    members = [o for o in group.body.block.ops if isinstance(o, GraphOp)]
    block = group.body.block
    if not members or not block.args or len(block.last_op.operands) != 1 or not all(_is_view(o) for o in members):
        return False
    chain = block.args[0]
    for op in members:
        if op.operands[0] is not chain:
            return False
        chain = op.results[0]
    return chain is block.last_op.operands[0]


def _as_view(group: FusedOp, k: GroupDims) -> SSAValue | None:
    """A `device.view` computing the group's one output, when the group is a chain of
    view ops on one tensor; None otherwise."""
    members = [o for o in group.body.block.ops if isinstance(o, GraphOp)]
    block = group.body.block
    if not members or len(block.last_op.operands) != 1 or not all(_is_view(o) for o in members):
        return None
    chain = block.args[0] if block.args else None
    offset: int | SSAValue = 0
    for op in members:
        if op.operands[0] is not chain:
            return None
        if isinstance(op, SliceOp) and not op.bounds():
            pass  # (a slice of a 0-d tensor is the tensor)
        elif isinstance(op, SliceOp):
            dims = k.known[op.input]
            start = op.bounds()[0][0]
            start = k.normalize_index(start if isinstance(start, int) else k.index(start), dims[0])
            row = _product(k, dims[1:], numpy_dtype(op.input.type.get_element_type()).itemsize)
            offset = k.binary("add", offset, k.binary("mul", start, row))
        chain = op.results[0]
    if chain is not block.last_op.operands[0]:
        return None
    dims = k.known[chain]
    dynamic = [k.value(d) for d, static in zip(dims, chain.type.get_shape()) if static < 0]
    view = device.ViewOp(group.inputs[0], k.value(offset), dynamic, chain.type)
    return k.builder.insert(view).result


def _recurrence_dims(k: GroupDims, op: WhileOp) -> None:
    """A recurrence's kernel keeps each state's shape (its launch checks that a step
    does), except that a stacked state grows by its rows at each of `max(bound, 0)` steps."""
    stacked = op.stacked()
    bound = op.cond_region.block.last_op.operands[0].owner.rhs  # `counter < bound` (lower-rnn-to-kernels)
    steps = k.binary("max", k.index(bound), 0)
    for i, (result, init) in enumerate(zip(op.results, op.inits)):
        if not isinstance(init.type, TensorType):
            continue
        dims = list(k.known[init])
        if i in stacked:
            dims[0] = k.binary("add", dims[0], k.binary("mul", steps, stacked[i][0].type.get_shape()[0]))
        k.known[result] = dims


def manifest_group(group: FusedOp, outputs_dims: dict[SSAValue, list[int | SSAValue]]) -> None:
    """Replace one kernel group by shape IR, allocations and a launch (recording the
    dims of its outputs in `outputs_dims`); a group that only views its input (`xs[i]`)
    becomes a `device.view` instead."""
    where = group_device(group)
    k = GroupDims(group, outputs_dims)
    for op in group.body.block.ops:
        if isinstance(op, WhileOp) and RECURRENCE_ATTR in group.attributes:
            _recurrence_dims(k, op)
        if not isinstance(op, GraphOp):
            continue
        try:
            shapes = op.shape_function(k)
        except ShapeError as e:
            raise OpError(op, str(e)) from None
        for result, dims in zip(op.results, shapes):
            k.known[result] = list(dims)
    view = _as_view(group, k)
    if view is not None:
        group.outputs[0].replace_all_uses_with(view)
        outputs_dims[view] = [d if isinstance(d, int) else k.value(d) for d in k.known[group.body.block.last_op.operands[0]]]
        Rewriter.erase_op(group)
        return
    yielded = group.body.block.last_op
    assert isinstance(yielded, YieldOp)
    outputs: list[SSAValue] = []
    for value in yielded.operands:
        dims = k.known[value]
        itemsize = numpy_dtype(value.type.get_element_type()).itemsize
        size = k.value(_product(k, dims, itemsize))
        storage = k.builder.insert(device.AllocStorageOp(size, where)).result
        dynamic = [k.value(d) for d, static in zip(dims, value.type.get_shape()) if static < 0]
        tensor = k.builder.insert(device.AllocTensorOp(storage, k.value(0), dynamic, value.type)).result
        outputs.append(tensor)
        outputs_dims[tensor] = [d if isinstance(d, int) else k.value(d) for d in dims]
    kernel, choices = _choices(k, group)
    launch = device.LaunchOp(kernel, list(group.inputs), outputs, where, choices)
    launch.location = group.location
    k.builder.insert(launch)
    for result, tensor in zip(group.outputs, outputs):
        result.replace_all_uses_with(tensor)
    _keep_group(group, _kernels_of(group))


def _keep_group(group: FusedOp, kernels: list[SymbolRefAttr]) -> None:
    """Move the group into a host function `<kernel>_group`: the VM checks every launch
    against its ops' shape functions and runs it by reference on empty inputs. Groups
    sharing a kernel (`lower-graph-to-loops` builds one for identical groups) keep the
    first one's."""
    name = f"{kernels[0].root_reference.data}_group"
    module = group.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    kept = SymbolTable.lookup_symbol(module, name)
    if kept is not None:
        assert isinstance(kept, func.FuncOp)
        _widen(kept, group)
        Rewriter.erase_op(group)
        return
    block = group.body.block
    group.body.detach_block(block)
    yielded = block.last_op
    Rewriter.replace_op(yielded, func.ReturnOp(*yielded.operands))
    function = func.FuncOp(name, FunctionType.from_lists([a.type for a in block.args], [r.type for r in group.outputs]),
                           Region(block), visibility="private")
    function.attributes[device.HOST_FUNCTION] = StringAttr("graph.fused")
    function.attributes[device.GROUP_OF] = ArrayAttr(kernels)
    Rewriter.erase_op(group)
    Rewriter.insert_op(function, InsertPoint.at_end(module.body.block))


def _widen(function: func.FuncOp, group: FusedOp) -> None:
    """Make a kept group's function describe `group` too, whose kernel it shares at other
    sizes (`lowering/kernels/shared_forms.py`): each parameter the join of both types (a `?`
    where they differ), the body's types inferred again from them."""
    block = function.body.block
    widened = False
    for arg, value in zip(list(block.args), group.inputs):
        joined = join_types(arg.type, value.type)
        if joined is not None and joined != arg.type:
            Rewriter.replace_value_with_new_type(arg, joined)
            widened = True
    if not widened:
        return
    for op in block.ops:
        if isinstance(op, GraphOp):
            for result, t in zip(list(op.results), op.infer_result_types()):
                if result.type != t:
                    Rewriter.replace_value_with_new_type(result, t)
    function.function_type = FunctionType.from_lists([a.type for a in block.args],
                                                     [v.type for v in block.last_op.operands])


def entry_dims(function: func.FuncOp) -> dict[SSAValue, list[int | SSAValue]]:
    """Dims of the parameters already read at the function's entry (before any group),
    with dims that entry checks (`dynshape.assert` of `cmpi eq`) proved equal given one
    value: broadcast checks between them then fold away, and the no-stretch variant is
    chosen at compile time when nothing else could stretch."""
    block = function.body.block
    same: dict[SSAValue, SSAValue] = {}
    found: dict[SSAValue, dict[int, SSAValue]] = {}
    for op in block.ops:
        if isinstance(op, FusedOp):
            break
        cmp = op.condition.owner if isinstance(op, dynshape.AssertOp) else None
        if isinstance(cmp, arith.CmpiOp) and cmp.predicate.value.data == 0:
            same[cmp.rhs] = same.get(cmp.lhs, cmp.lhs)
        if isinstance(op, dynshape.DimOp) and op.source in block.args:
            found.setdefault(op.source, {})[op.index.value.data] = op.result
    known: dict[SSAValue, list[int | SSAValue]] = {}
    for arg, axes in found.items():
        static = arg.type.get_shape()
        if all(d >= 0 or i in axes for i, d in enumerate(static)):
            known[arg] = [d if d >= 0 else same.get(axes[i], axes[i]) for i, d in enumerate(static)]
    return known


def _kernel_groups(block: Block) -> list[FusedOp]:
    groups = []
    for op in block.ops:
        if isinstance(op, FusedOp):
            if KERNEL_ATTR in op.attributes:
                groups.append(op)
            continue
        for region in op.regions:
            for inner in region.blocks:
                groups += _kernel_groups(inner)
    return groups


@dataclass(frozen=True)
class ManifestAllocPass(ModulePass):
    """Replace kernel groups by explicit allocation (sizes from shape IR) and launches."""

    name = "manifest-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.ops):
            if isinstance(function, func.FuncOp) and function.body.blocks \
                    and device.HOST_FUNCTION not in function.attributes:
                outputs_dims = entry_dims(function)
                for group in _kernel_groups(function.body.block):
                    manifest_group(group, outputs_dims)
