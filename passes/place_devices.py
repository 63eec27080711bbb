"""`place-devices`: each fusion group gets a device; copies appear only at real boundaries.

**Which device** (recorded as `device.placement` on the `graph.fused` op):
1. ops the user pinned (`let %y = ... on cpu`) go where they are pinned;
2. a group that only views its input (a slice of leading rows, a reshape: no kernel) goes
   where its input lives (decided with the domains below);
3. a group whose kernel the device backend cannot express (an op without a device
   lowering, an unsupported type, f16 or bf16 values on a device that does not compute
   on halves: `half`) stays on the CPU, and says why in `nimble.fallback`;
   so do groups whose estimated work is below `min_work`: output elements (a `?` dim
   counted as `ASSUMED_DIM`) times reduction steps per element, where a launch and its
   copies would cost more than the device saves — unless every use of their results is
   a kernel on the device (then they follow their consumers);
4. every other group goes to `default`.
Ops outside groups (shape code, control flow, calls, ADTs, CPU fallbacks such as nms)
run on the host.

**Domains** (Nimble's device-domain analysis): a value and the values it must share
memory with — a loop's initial, carried, yielded and result values; a branch's yielded
values and results; a call's arguments and the callee's parameters, the callee's returned
values and the call's results; a view and the tensor it views — form one domain
(union-find). A domain lives on the device most of its kernel-produced values are made
on (the CPU if none). A `device.copy` is inserted, once per value and device, right after
the value is defined, wherever a use needs the value on another device: a kernel on
another device, a host op (which needs the CPU), or a boundary of a domain that lives
elsewhere. Entry functions (called by no function) take and return host tensors.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.dialects import device, dynshape, kernel_analysis
from nimble.dialects.device import Device
from nimble.dialects.discardable import FALLBACK_ATTR
from nimble.dialects.graph import FusedOp
from nimble.dialects.graph.adt import MatchOp
from nimble.dialects.graph.control import IfOp, WhileOp, YieldOp
from nimble.dialects.graph.vision import NmsOp
from nimble.lowering.graph_to_loops import kernel_groups, kernel_options
from nimble.lowering.kernels.kernel_builder import KernelBuilder, NoLoopLowering
from nimble.lowering.opencl.c_emitter import emit_kernel
from nimble.lowering.opencl.c_source import NoDeviceLowering
from nimble.lowering.opencl.to_opencl import OPENCL
from nimble.passes.manifest_alloc import is_view_group

_SMALL_WORK = "estimated work"
DEVICE_OPS: dict[type[Operation], tuple[str, ...]] = {NmsOp: (Device.OPENCL,)}
"""Ops outside fusion groups that a device runs by an implementation of its own
(`runtime.opencl_vision`), and the devices that have one."""
ASSUMED_DIM = 64
FLAVORS = {Device.OPENCL: OPENCL}
"""The device backends a group can be placed on (beside the CPU)."""


def group_name(group: FusedOp) -> str:
    """A name for a group in messages: its ops."""
    return "_".join(o.name.split(".")[-1] for o in group.body.block.ops if o is not group.body.block.last_op)


def probe(group: FusedOp, where: str) -> tuple[str | None, int]:
    """Why the group's kernel cannot run on `where` (None if it can: the kernel is built
    and, for a device, emitted), and its estimated work: output elements (a `?` dim
    counted as `ASSUMED_DIM`) times reduction steps per element."""
    try:
        kernel = KernelBuilder(group, group_name(group), **kernel_options(group, where)).build()
    except NoLoopLowering as e:
        return str(e), 0
    elements = 0
    for v in group.outputs:
        n = 1
        for d in v.type.get_shape():
            n *= ASSUMED_DIM if d < 0 else d
        elements += n
    work = elements * max(1, kernel_analysis.reduction_work(kernel))
    if where == Device.CPU:
        return None, work
    try:
        emit_kernel(FLAVORS[where], kernel)
    except NoDeviceLowering as e:
        return str(e), work
    return None, work


def _holds_halves(group: FusedOp) -> bool:
    """Whether a value the group reads or makes is an f16 or bf16 tensor."""
    values = [*group.operands, *(r for o in group.body.block.ops for r in o.results)]
    return any(isinstance(v.type, TensorType) and isinstance(v.type.element_type, Float16Type | BFloat16Type)
               for v in values)


class _Domains:
    """Union-find over tensor values."""

    def __init__(self) -> None:
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        root = v
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        while v is not root:
            v, self.parent[v] = self.parent.get(v, v), root
        return root

    def union(self, *values: SSAValue) -> None:
        tensors = [v for v in values if isinstance(v.type, TensorType)]
        for v in tensors[1:]:
            a, b = self.find(tensors[0]), self.find(v)
            if a is not b:
                self.parent[b] = a


def _yields(region_block: Block) -> list[SSAValue]:
    last = region_block.last_op
    return list(last.operands) if isinstance(last, YieldOp) else []


@dataclass(frozen=True)
class PlaceDevicesPass(ModulePass):
    """Assign every fusion group a device and insert device copies at domain boundaries."""

    name = "place-devices"
    default: str = Device.CPU
    min_work: int = 0
    half: bool = False
    """Whether the device computes on f16 (OpenCL's `cl_khr_fp16`; `nimble.compile` asks
    the device): without it a group with f16 or bf16 values, whose kernel would not
    build there, stays on the CPU."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.default not in (Device.CPU, *FLAVORS):
            raise ValueError(f"place-devices: unknown device '{self.default}' (known: cpu, {', '.join(FLAVORS)})")
        functions = {f.sym_name.data: f for f in op.body.block.ops
                     if isinstance(f, func.FuncOp) and f.body.blocks}
        groups = [g for f in functions.values() for g in kernel_groups(f)]
        views = [g for g in groups if is_view_group(g)]
        for g in groups:
            if g not in views:
                g.attributes[device.PLACEMENT] = StringAttr(self.choose(g))
        self.follow_consumers([g for g in groups if g not in views])
        for f in functions.values():
            for o in f.walk():
                if type(o) in DEVICE_OPS and device.PLACEMENT not in o.attributes and self.wants_device_op(o):
                    o.attributes[device.PLACEMENT] = StringAttr(self.default)
        domains = self.domains(functions, views)
        home = self.homes(functions, groups, views, domains)
        for g in views:
            g.attributes[device.PLACEMENT] = StringAttr(home[domains.find(g.outputs[0])])
        _Copies(domains, home, self.entries(functions)).insert(functions.values())

    def choose(self, group: FusedOp) -> str:
        pinned = device.pinned_devices(group.body.block.ops)
        if len(pinned) > 1:
            raise ValueError("a group holds ops pinned to different devices")
        where = pinned.pop() if pinned else self.default
        if where != Device.CPU and not self.half and _holds_halves(group):
            reason = f"f16 or bf16 values: {where} device without half arithmetic"
            group.attributes[FALLBACK_ATTR] = StringAttr(reason)
            return Device.CPU
        problem, work = probe(group, where)
        if problem is None and not pinned and where != Device.CPU and work < self.min_work:
            problem = f"{_SMALL_WORK} {work} below {self.min_work}"
        if problem is not None:
            group.attributes[FALLBACK_ATTR] = StringAttr(problem)
            return Device.CPU
        return where

    def follow_consumers(self, kernels: list[FusedOp]) -> None:
        """A group kept on the CPU only for its small work goes to the device when
        everything that uses its results runs there: the copy of its output would cost
        more than running it where its consumers are (the LSTM's concat before the
        cell's dense). Repeated until nothing moves, so chains of small groups follow."""
        moved = True
        while moved:
            moved = False
            for g in kernels:
                reason = g.attributes.get(FALLBACK_ATTR)
                if not (isinstance(reason, StringAttr) and reason.data.startswith(_SMALL_WORK)):
                    continue
                users = [u.operation for v in g.outputs for u in v.uses]
                if users and all(isinstance(u, FusedOp) and device.placement_of(u) == self.default
                                 for u in users):
                    g.attributes[device.PLACEMENT] = StringAttr(self.default)
                    del g.attributes[FALLBACK_ATTR]
                    moved = True

    def wants_device_op(self, op: Operation) -> bool:
        """A `DEVICE_OPS` op goes to the default device when it has an implementation
        there and, under a work threshold (`hetero`), only when the kernels making its
        operands run there too (else the copies would cost more than it saves)."""
        if self.default not in DEVICE_OPS[type(op)]:
            return False
        if self.min_work == 0:
            return True
        owners = [v.owner for v in op.operands]
        return all(isinstance(o, FusedOp) and device.placement_of(o) == self.default for o in owners)

    @staticmethod
    def entries(functions: dict[str, func.FuncOp]) -> set[func.FuncOp]:
        called = {c.callee.root_reference.data for f in functions.values() for c in f.walk() if isinstance(c, func.CallOp)}
        return {f for name, f in functions.items() if name not in called}

    @staticmethod
    def domains(functions: dict[str, func.FuncOp], views: list[FusedOp]) -> _Domains:
        d = _Domains()
        for f in functions.values():
            for o in f.walk():
                if isinstance(o, WhileOp):
                    body = o.body_region.block
                    for k in range(len(o.outputs)):
                        d.union(o.inits[k], o.cond_region.block.args[k], body.args[k], _yields(body)[k], o.outputs[k])
                elif isinstance(o, IfOp | MatchOp):
                    for k, out in enumerate(o.outputs):
                        d.union(out, *(_yields(r.block)[k] for r in o.regions))
                elif isinstance(o, func.CallOp) and o.callee.root_reference.data in functions:
                    callee = functions[o.callee.root_reference.data]
                    for arg, param in zip(o.arguments, callee.args):
                        d.union(arg, param)
                    for ret in (r for r in callee.walk() if isinstance(r, func.ReturnOp)):
                        for res, v in zip(o.res, ret.operands):
                            d.union(res, v)
        for g in views:
            d.union(g.inputs[0], g.outputs[0])
        return d

    @staticmethod
    def homes(functions, groups, views, domains: _Domains) -> dict[SSAValue, str]:
        """The device each domain lives on: where most of the kernels that make or use
        its values run, host ops that read its data counting for the CPU."""
        votes: dict[SSAValue, Counter] = {}

        def vote(v: SSAValue, where: str) -> None:
            if isinstance(v.type, TensorType):
                votes.setdefault(domains.find(v), Counter())[where] += 1

        kernels = [g for g in groups if g not in views]
        for g in kernels:
            for v in (*g.outputs, *g.inputs):
                vote(v, device.placement_of(g))
        for f in functions.values():
            for user in f.walk():
                if not isinstance(user, _NEUTRAL) and not isinstance(user.parent_op(), FusedOp):
                    where = _placed(user) or Device.CPU
                    for v in (*user.operands, *(user.results if where != Device.CPU else ())):
                        vote(v, where)
        home: dict[SSAValue, str] = {}
        for root, counts in votes.items():
            best = max(counts.values())
            home[root] = Device.CPU if counts[Device.CPU] == best else max(counts, key=lambda k: (counts[k], k))
        return _DefaultDict(home)


_NEUTRAL = (FusedOp, WhileOp, IfOp, MatchOp, func.CallOp, func.ReturnOp, YieldOp, dynshape.DimOp, dynshape.OfOp)
"""Uses that do not read a tensor's data on the host (kernels vote for their own device;
control flow passes values on; shape ops read only the dims)."""


def _placed(op: Operation) -> str | None:
    """The device an op outside a group was placed on (`DEVICE_OPS`), if any."""
    return device.placement_of(op) if type(op) in DEVICE_OPS else None


class _DefaultDict(dict):
    def __missing__(self, key: SSAValue) -> str:
        return Device.CPU


class _Copies:
    """Where each value is and where each use needs it; one copy per (value, device)."""

    def __init__(self, domains: _Domains, home: dict[SSAValue, str], entries: set[func.FuncOp]):
        self.domains = domains
        self.home = home
        self.entries = entries
        self.copies: dict[tuple[SSAValue, str], SSAValue] = {}

    def domain_device(self, v: SSAValue) -> str:
        return self.home[self.domains.find(v)]

    def where(self, v: SSAValue) -> str:
        """The device value `v` is on where it is defined."""
        owner = v.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            if isinstance(parent, func.FuncOp):
                return Device.CPU if parent in self.entries else self.domain_device(v)
            if isinstance(parent, WhileOp):
                return self.domain_device(v)
            return Device.CPU  # match case fields: ADT fields live on the host
        if isinstance(owner, FusedOp):
            return device.placement_of(owner)
        if isinstance(owner, WhileOp | IfOp | MatchOp | func.CallOp):
            return self.domain_device(v)
        if isinstance(owner, device.CopyOp):
            return owner.dst_device.data
        return _placed(owner) or Device.CPU

    def needs(self, user: Operation, index: int, v: SSAValue) -> str | None:
        """The device the use of `v` as operand `index` of `user` needs it on (None:
        any, the use reads only its dims)."""
        if isinstance(user, dynshape.DimOp | dynshape.OfOp):
            return None
        if isinstance(user, FusedOp):
            return device.placement_of(user)
        if isinstance(user, WhileOp | func.CallOp | YieldOp):  # (a group's own yield is never visited)
            return self.domain_device(v)
        if isinstance(user, func.ReturnOp):
            function = user.parent_op()
            return Device.CPU if function in self.entries else self.domain_device(v)
        return _placed(user) or Device.CPU

    def insert(self, functions) -> None:
        for f in functions:
            for user in list(f.walk()):
                if isinstance(user, device.CopyOp) or isinstance(user.parent_op(), FusedOp):
                    continue
                for index, v in enumerate(list(user.operands)):
                    if not isinstance(v.type, TensorType):
                        continue
                    have, need = self.where(v), self.needs(user, index, v)
                    if need is not None and have != need:
                        operands = list(user.operands)
                        operands[index] = self.copy(v, have, need)
                        user.operands = operands

    def copy(self, v: SSAValue, have: str, need: str) -> SSAValue:
        key = (v, need)
        if key not in self.copies:
            op = device.CopyOp(v, have, need)
            owner = v.owner
            point = InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner)
            Rewriter.insert_op(op, point)
            self.copies[key] = op.result
        return self.copies[key]

