"""`lower-to-vm`: host functions become `vm.function`s, one instruction per op.

Input: the host functions after `manifest-alloc` (graph control flow, calls, ADTs,
shape IR on `index` values, `device` allocation and launches). Each SSA value gets a
register (parameters first); structured control flow becomes jumps:

- `graph.if`: `if c, Lthen, Lelse`, each branch moving its yielded values into the
  result registers and jumping to the end;
- `graph.while`: the carried values live in fixed registers; the condition region runs
  at the loop head (`if c, Lbody, Lexit`), the body ends with moves and `goto head`;
- `graph.match`: `get_tag`, then one compare-and-branch per case; case arguments are
  `get_field`s of the subject;
- `dynshape.assert`: `if ok, Lnext, Lfail` with `fatal` naming the check.

Tensor constants become `vm.constant`s. An op the VM has no instruction for (a CPU
fallback group, an opaque operator such as nms, a shape op on tensors) is outlined
into a host function (`nimble.host_function`) that `invoke_host` runs by its reference
semantics. Each kernel keeps its fusion group as a host function (`nimble.group_of`),
which the VM uses to check every launch's shapes and to run launches whose inputs are
empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nimble.diagnostics import OpError
from nimble.dialects import arith, device, dynshape, vm
from nimble.dialects.device import HOST_FUNCTION
from nimble.dialects.graph import ConstantOp, ExternalConstantOp, FusedOp
from nimble.dialects.graph.adt import ConstructOp, MatchOp, find_adt
from nimble.dialects.graph.control import ConditionOp, GetItemOp, IfOp, MakeTupleOp, WhileOp, YieldOp
from nimble.dialects.graph.types import numpy_dtype
from nimble.frontend.printer import named_dim_checks
from nimble.lowering.vm import native_kernels
from nimble.passes.plan_memory import PLAN_ATTR
from nimble.reference import INDEX_COMPARISONS, where

_BINARY: dict[type[Operation], str] = {op: name for name, op in vm.BINARY_OPS.items()}


def dtype_name(element_type: Any) -> str:
    """The VM dtype name of an element type (`f32`, `i64`, ...)."""
    name = str(element_type)
    if name not in vm.DTYPES:
        raise ValueError(f"the VM has no dtype for {element_type}")
    numpy_dtype(element_type)
    return name


@dataclass
class FunctionEmitter:
    """Emits the instructions of one host function."""

    lowering: VmLowering
    function: func.FuncOp
    regs: dict[SSAValue, int] = field(default_factory=dict)
    code: list[vm.Instruction] = field(default_factory=list)
    count: int = 0
    constants: dict[int, int] = field(default_factory=dict)
    """Integer constant -> the register holding it, loaded once at the function's entry."""

    def reg(self, value: SSAValue) -> int:
        if value not in self.regs:
            self.regs[value] = self.fresh()
        return self.regs[value]

    def const(self, value: int) -> int:
        """The register holding integer `value` (loaded at entry: never in a loop)."""
        if value not in self.constants:
            self.constants[value] = self.fresh()
        return self.constants[value]

    def fresh(self) -> int:
        self.count += 1
        return self.count - 1

    def emit(self, mnemonic: str, **fields: Any) -> vm.Instruction:
        op = vm.OPS[mnemonic].make(**fields)
        self.code.append(op)
        return op

    @property
    def pc(self) -> int:
        return len(self.code)

    @staticmethod
    def patch(op: vm.Instruction, name: str, target: int) -> None:
        op.properties[name] = vm.to_attr(vm.Kind.TARGET, target)

    # -- blocks ---------------------------------------------------------------------
    def lower(self) -> vm.FunctionOp:
        params = [self.reg(a) for a in self.function.body.block.args]
        self.block(self.function.body.block)
        self.prepend_constants()
        function = vm.FunctionOp(self.function.sym_name.data, params, max(self.count, 1), self.code)
        # The source signature: the VM checks a caller's arguments against it.
        function.attributes[vm.SIGNATURE] = self.function.function_type
        function.attributes[vm.ARG_NAMES] = ArrayAttr([StringAttr(a.name_hint or "") for a in self.function.args])
        if vm.RESULT_NAMES in self.function.attributes:
            function.attributes[vm.RESULT_NAMES] = self.function.attributes[vm.RESULT_NAMES]
        if PLAN_ATTR in self.function.attributes:
            function.attributes[PLAN_ATTR] = self.function.attributes[PLAN_ATTR]
        named, _ = named_dim_checks(self.function)
        once = self.function.attributes.get(vm.DIM_NAMES)  # (the `.nb` names used once: nothing checks them)
        function.attributes[vm.DIM_NAMES] = DictionaryAttr(
            {**(once.data if isinstance(once, DictionaryAttr) else {}),
             **{f"{param}.{axis}": StringAttr(name) for param, axes in named.items() for axis, name in axes.items()}})
        return function

    def prepend_constants(self) -> None:
        """Load the pooled constants first, shifting every jump target past them."""
        loads = [vm.OPS["load_consti"].make(dst=r, value=v) for v, r in self.constants.items()]
        for op in self.code:
            for name, kind in op.FIELDS:
                if kind == vm.Kind.TARGET:
                    self.patch(op, name, op.field_value(name) + len(loads))
        self.code[:0] = loads

    def block(self, block: Block) -> Operation | None:
        """Emit the ops of a block; returns its terminator (not emitted) if any."""
        for op in block.ops:
            if isinstance(op, YieldOp | ConditionOp):
                return op
            if isinstance(op, func.ReturnOp):
                self.emit("ret", values=[self.reg(v) for v in op.operands])
                return op
            self.op(op)
        return None

    def moves(self, sources: Sequence[SSAValue], targets: Sequence[int]) -> None:
        """Parallel move of values into registers (through temporaries when a source
        is one of the targets at another position)."""
        src = [self.reg(v) for v in sources]
        clash = any(s in targets and s != t for s, t in zip(src, targets))
        if clash:
            temps = [self.fresh() for _ in src]
            for s, t in zip(src, temps):
                self.emit("move", dst=t, src=s)
            src = temps
        for s, t in zip(src, targets):
            if s != t:
                self.emit("move", dst=t, src=s)

    # -- ops ---------------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
        elif type(op) in _BINARY:
            self.emit(_BINARY[type(op)], dst=self.reg(op.results[0]), lhs=self.reg(op.operands[0]),
                      rhs=self.reg(op.operands[1]))
        elif isinstance(op, ConstantOp | ExternalConstantOp):
            name = self.lowering.constant(op)
            self.emit("load_const", dst=self.reg(op.results[0]), constant=name)
        elif op.regions and not isinstance(op, FusedOp):
            raise OpError(op, "has no VM lowering")
        else:
            self.host(op)

    def host(self, op: Operation) -> None:
        name = self.lowering.host_function(op)
        self.emit("invoke_host", dsts=[self.reg(r) for r in op.results], host=name,
                  args=[self.reg(v) for v in op.operands])

    def constant(self, op: arith.ConstantOp) -> None:
        value = op.value
        if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType | IntegerType):
            self.regs[op.result] = self.const(value.value.data)
        elif isinstance(value, FloatAttr):
            self.host(op)
        else:
            raise OpError(op, "has no VM lowering")

    def cmpi(self, op: arith.CmpiOp) -> None:
        predicate = op.predicate.value.data
        if predicate not in INDEX_COMPARISONS:  # vm.cmp takes arith.cmpi's signed predicates as they are
            raise OpError(op, "unsigned comparisons have no VM lowering")
        self.emit("cmp", dst=self.reg(op.result), predicate=predicate, lhs=self.reg(op.lhs), rhs=self.reg(op.rhs))

    def select(self, op: arith.SelectOp) -> None:
        self.emit("select", dst=self.reg(op.result), cond=self.reg(op.cond), a=self.reg(op.lhs), b=self.reg(op.rhs))

    def check(self, op: dynshape.AssertOp) -> None:
        branch = self.emit("if", cond=self.reg(op.condition), then=self.pc + 2, **{"else": self.pc + 1})
        self.emit("fatal", message=f"{where(op)}'dynshape.assert' op failed at run time: {op.message.data}",
                  values=[self.reg(v) for v in op.values])
        self.patch(branch, "then", self.pc)

    def if_(self, op: IfOp) -> None:
        results = [self.reg(r) for r in op.outputs]
        branch = self.emit("if", cond=self.reg(op.condition), then=0, **{"else": 0})
        ends = []
        for name, region in (("then", op.then_region), ("else", op.else_region)):
            self.patch(branch, name, self.pc)
            terminator = self.block(region.block)
            self.moves(terminator.operands, results)
            ends.append(self.emit("goto", target=0))
        for end in ends:
            self.patch(end, "target", self.pc)

    def while_(self, op: WhileOp) -> None:
        carried = [self.reg(r) for r in op.outputs]
        self.moves(op.inits, carried)
        for region in (op.cond_region, op.body_region):
            for arg, r in zip(region.block.args, carried):
                self.regs[arg] = r
        head = self.pc
        condition = self.block(op.cond_region.block)
        branch = self.emit("if", cond=self.reg(condition.operands[0]), then=self.pc + 1, **{"else": 0})
        yielded = self.block(op.body_region.block)
        self.moves(yielded.operands, carried)
        self.emit("goto", target=head)
        self.patch(branch, "else", self.pc)

    def match(self, op: MatchOp) -> None:
        adt = find_adt(op, op.subject.type.adt_name)
        tags = {c.sym_name.data: i for i, c in enumerate(adt.constructors)}
        subject = self.reg(op.subject)
        results = [self.reg(r) for r in op.outputs]
        tag = self.fresh()
        self.emit("get_tag", dst=tag, src=subject)
        ends = []
        names = op.case_names()
        for i, (name, region) in enumerate(zip(names, op.case_regions)):
            branch = None
            if i + 1 < len(names):
                same = self.fresh()
                self.emit("cmp", dst=same, predicate=0, lhs=tag, rhs=self.const(tags[name]))
                branch = self.emit("if", cond=same, then=self.pc + 1, **{"else": 0})
            for j, arg in enumerate(region.block.args):
                self.emit("get_field", dst=self.reg(arg), src=subject, index=j)
            terminator = self.block(region.block)
            self.moves(terminator.operands, results)
            ends.append(self.emit("goto", target=0))
            if branch is not None:
                self.patch(branch, "else", self.pc)
        for end in ends:
            self.patch(end, "target", self.pc)

    def view(self, op: device.ViewOp) -> None:
        """`alloc_tensor_reg` with a tensor where the storage goes: a view of its memory."""
        self.alloc_tensor(op, op.source)

    def alloc_tensor(self, op: device.AllocTensorOp | device.ViewOp, base: SSAValue | None = None) -> None:
        dtype = dtype_name(op.result.type.get_element_type())
        dst, storage = self.reg(op.result), self.reg(op.storage if base is None else base)
        offset = op.offset.owner
        static = isinstance(offset, arith.ConstantOp) and not op.dynamic_dims and base is None
        if static:
            self.emit("alloc_tensor", dst=dst, storage=storage, offset=offset.value.value.data, dtype=dtype,
                      shape=list(op.result.type.get_shape()))
            return
        dims, dynamic = [], iter(op.dynamic_dims)
        for d in op.result.type.get_shape():
            if d >= 0:
                dims.append(self.const(d))
            else:
                dims.append(self.reg(next(dynamic)))
        self.emit("alloc_tensor_reg", dst=dst, storage=storage, offset=self.reg(op.offset), dtype=dtype, dims=dims)

    def launch(self, op: device.LaunchOp) -> None:
        kernel = op.kernel.root_reference.data
        inputs = [self.reg(v) for v in op.inputs]
        outputs = [self.reg(v) for v in op.outputs]
        ends = []
        for variant, condition in op.choices:  # the first variant whose condition holds
            branch = self.emit("if", cond=self.reg(condition), then=self.pc + 1, **{"else": 0})
            self.emit("invoke_kernel", kernel=variant, inputs=inputs, outputs=outputs)
            ends.append(self.emit("goto", target=0))
            self.patch(branch, "else", self.pc)
        self.emit("invoke_kernel", kernel=kernel, inputs=inputs, outputs=outputs)
        for end in ends:
            self.patch(end, "target", self.pc)


def _simple(mnemonic: str, **fields: Callable[[Operation], Any]) -> Callable[[FunctionEmitter, Operation], None]:
    """A handler emitting one instruction whose fields are read off the op."""

    def handler(e: FunctionEmitter, op: Operation) -> None:
        values = {}
        for name, read in fields.items():
            v = read(op)
            values[name] = e.reg(v) if isinstance(v, SSAValue) else [e.reg(x) for x in v] if isinstance(v, list) else v
        e.emit(mnemonic, **values)

    return handler


def _move(e: FunctionEmitter, op: Operation) -> None:
    e.emit("move", dst=e.reg(op.results[0]), src=e.reg(op.operands[0]))


_HANDLERS: dict[type[Operation], Callable[[FunctionEmitter, Any], None]] = {
    arith.ConstantOp: FunctionEmitter.constant,
    arith.CmpiOp: FunctionEmitter.cmpi,
    arith.SelectOp: FunctionEmitter.select,
    arith.IndexCastOp: _move,
    dynshape.AssertOp: FunctionEmitter.check,
    dynshape.DimOp: _simple("dim", dst=lambda o: o.result, src=lambda o: o.source, axis=lambda o: o.index.value.data),
    dynshape.OfOp: _simple("shape_of", dst=lambda o: o.result, src=lambda o: o.source),
    dynshape.FromDimsOp: _simple("make_shape", dst=lambda o: o.result, dims=lambda o: list(o.dims)),
    dynshape.GetOp: _simple("get_field", dst=lambda o: o.result, src=lambda o: o.source, index=lambda o: o.index.value.data),
    IfOp: FunctionEmitter.if_,
    WhileOp: FunctionEmitter.while_,
    MatchOp: FunctionEmitter.match,
    ConstructOp: _simple("alloc_adt", dst=lambda o: o.result, constructor=lambda o: o.constructor.root_reference.data,
                         fields=lambda o: list(o.fields)),
    MakeTupleOp: _simple("alloc_tuple", dst=lambda o: o.results[0], fields=lambda o: list(o.operands)),
    GetItemOp: _simple("get_field", dst=lambda o: o.results[0], src=lambda o: o.operands[0],
                       index=lambda o: o.index.value.data),
    func.CallOp: _simple("invoke", dsts=lambda o: list(o.results), callee=lambda o: o.callee.root_reference.data,
                         args=lambda o: list(o.operands)),
    device.AllocStorageOp: _simple("alloc_storage", dst=lambda o: o.result, size=lambda o: o.size,
                                   alignment=lambda o: o.alignment.value.data, device=lambda o: o.device.data),
    device.AllocTensorOp: FunctionEmitter.alloc_tensor,
    device.ViewOp: FunctionEmitter.view,
    device.LaunchOp: FunctionEmitter.launch,
    device.KillOp: _simple("kill", src=lambda o: o.value),
    device.CopyOp: _simple("device_copy", dst=lambda o: o.result, src=lambda o: o.source,
                           src_device=lambda o: o.src_device.data, dst_device=lambda o: o.dst_device.data),
}


@dataclass
class VmLowering:
    """Module-level state: constants and host functions made while lowering."""

    module: ModuleOp
    new_ops: list[Operation] = field(default_factory=list)
    host_count: int = 0
    constant_count: int = 0

    def constant(self, op: Operation) -> str:
        name = f"c{self.constant_count}"
        self.constant_count += 1
        self.new_ops.append(vm.ConstantOp(name, Region(Block([op.clone()]))))
        return name

    def host_function(self, op: Operation) -> str:
        """Outline `op` into a host function taking its operands, returning its results
        (with its CPU kernel, where it has one: `native_kernels.attach`)."""
        name = f"host_{self.host_count}"
        self.host_count += 1
        block = Block(arg_types=[v.type for v in op.operands])
        clone = op.clone(value_mapper=dict(zip(op.operands, block.args)))
        block.add_ops([clone, func.ReturnOp(*clone.results)])
        function = func.FuncOp(name, FunctionType.from_lists([v.type for v in op.operands], [r.type for r in op.results]),
                               Region(block), visibility="private")
        function.attributes[HOST_FUNCTION] = StringAttr(op.name)
        native_kernels.attach(self.module, function, clone)
        self.new_ops.append(function)
        return name


@dataclass(frozen=True)
class LowerToVmPass(ModulePass):
    """Lower host functions to `vm.function`s (kernels and host functions stay)."""

    name = "lower-to-vm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = VmLowering(op)
        hosts = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks and HOST_FUNCTION not in f.attributes]
        for host in hosts:
            function = FunctionEmitter(lowering, host).lower()
            Rewriter.replace_op(host, function)
        for new in lowering.new_ops:
            Rewriter.insert_op(new, InsertPoint.at_end(op.body.block))
