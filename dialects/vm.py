"""The `vm` dialect: one op per bytecode instruction of the Nimble VM.

A `vm.function` holds a flat list of instructions over numbered registers (`r0`, `r1`,
...; the parameters come first); jumps name instruction indices (`L4`). Functions,
kernels, host functions and constants are referred to by symbol and numbered when the
bytecode is written. Every instruction is one row of `INSTRUCTIONS`: its mnemonic, its
fields and their kinds. The same table drives the op classes, their text format, the
bytecode encoding and the loader's validation (`runtime/bytecode.py`).

```
vm.function @main(r0, r1) regs 5 {
  vm.dim r2, r0, 0
  vm.load_consti r3, 4
  vm.mul r4, r2, r3
  vm.ret (r4)
}
```
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum, IntEnum
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, region_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import arith
from nimble.dialects.device import Device
from nimble.dialects.discardable import declare


class Kind(Enum):
    """What an instruction field holds, and so how it is printed, encoded and checked."""

    REG = "register"  # r3
    REGS = "registers"  # (r1, r2)
    IMM = "immediate"  # -4
    IMMS = "immediates"  # [1, -1, 64]
    TARGET = "jump target"  # L7: an instruction index in the same function
    FUNC = "function"  # @cell
    KERNEL = "kernel"  # @cell_dense_0 (a device.kernel)
    HOST = "host function"  # @host_0 (a func.func run through its reference semantics)
    CONST = "constant"  # @c0 (a vm.constant)
    CTOR = "constructor"  # @Node
    STR = "string"  # "message"
    DTYPE = "dtype"  # f32
    DEVICE = "device"  # cpu


SIGNATURE = declare("vm.signature", FunctionType)
"""On a `vm.function` lowered from a host function: its source `FunctionType`."""
ARG_NAMES = declare("vm.arg_names", ArrayAttr)
"""On a `vm.function`: its parameters' source names (for argument errors)."""
DIM_NAMES = declare("vm.dim_names", DictionaryAttr)
"""On a `vm.function`: names of parameter dims, `{"<param>.<axis>" = "n"}`."""
RESULT_NAMES = declare("vm.result_names", ArrayAttr)
"""On a source `func.func` (an ONNX graph's outputs) and its `vm.function`: its results'
names (`Executable.outputs`, `nimble-run --output-dir`); without it `result_<i>`."""
SIGNATURE_OF = declare("vm.signature_of", StringAttr)
"""On a declaration in a module's host functions: the VM function it gives the types of."""
SYMBOL_KINDS = (Kind.FUNC, Kind.KERNEL, Kind.HOST, Kind.CONST, Kind.CTOR)
DTYPES = ("f32", "f64", "f16", "i64", "i32", "i8", "i1", "index")
"""Element types a VM tensor may have; a dtype's code is its position here."""
VM_DEVICES = (Device.CPU, Device.OPENCL)


def _reg(v: int) -> str:
    return f"r{v}"


BINARY_OPS: dict[str, type[Operation]] = {
    "add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "div": arith.DivSIOp,
    "floordiv": arith.FloorDivSIOp, "ceildiv": arith.CeilDivSIOp, "rem": arith.RemSIOp,
    "max": arith.MaxSIOp, "min": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp,
}
"""Scalar integer (index) arithmetic, one instruction each (`vm.add r3, r1, r2`): the
`arith` op each mnemonic computes (`dialects/index_semantics.py` says how)."""
BINARY = tuple(BINARY_OPS)
CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
"""`vm.cmp` predicates (signed), by immediate."""

R, RS, I, IS, T = Kind.REG, Kind.REGS, Kind.IMM, Kind.IMMS, Kind.TARGET

# mnemonic, summary, fields. The opcode of an instruction is its position in this table.
INSTRUCTIONS: tuple[tuple[str, str, tuple[tuple[str, Kind], ...]], ...] = (
    ("move", "dst = src", (("dst", R), ("src", R))),
    ("ret", "return the registers to the caller", (("values", RS),)),
    ("invoke", "dsts = callee(args), a VM function", (("dsts", RS), ("callee", Kind.FUNC), ("args", RS))),
    ("invoke_closure", "dsts = closure(args)", (("dsts", RS), ("closure", R), ("args", RS))),
    ("invoke_kernel", "run a compiled kernel on inputs, writing outputs", (("kernel", Kind.KERNEL), ("inputs", RS), ("outputs", RS))),
    ("invoke_host", "dsts = host function(args), by its reference semantics (CPU fallback)",
     (("dsts", RS), ("host", Kind.HOST), ("args", RS))),
    ("alloc_storage", "dst = size bytes on a device", (("dst", R), ("size", R), ("alignment", I), ("device", Kind.DEVICE))),
    ("alloc_tensor", "dst = a tensor of static shape in storage at a static byte offset",
     (("dst", R), ("storage", R), ("offset", I), ("dtype", Kind.DTYPE), ("shape", IS))),
    ("alloc_tensor_reg", "dst = a tensor whose offset and dims are registers",
     (("dst", R), ("storage", R), ("offset", R), ("dtype", Kind.DTYPE), ("dims", RS))),
    ("alloc_adt", "dst = constructor(fields)", (("dst", R), ("constructor", Kind.CTOR), ("fields", RS))),
    ("alloc_tuple", "dst = (fields)", (("dst", R), ("fields", RS))),
    ("alloc_closure", "dst = callee with captured values bound first", (("dst", R), ("callee", Kind.FUNC), ("captured", RS))),
    ("get_field", "dst = field index of an ADT value or tuple", (("dst", R), ("src", R), ("index", I))),
    ("get_tag", "dst = the constructor's position in its ADT", (("dst", R), ("src", R))),
    ("if", "jump to then if cond is true, else to else", (("cond", R), ("then", T), ("else", T))),
    ("goto", "jump", (("target", T),)),
    ("load_const", "dst = a constant tensor", (("dst", R), ("constant", Kind.CONST))),
    ("load_consti", "dst = an integer", (("dst", R), ("value", I))),
    ("shape_of", "dst = the shape of a tensor (a tuple of dims)", (("dst", R), ("src", R))),
    ("dim", "dst = one dim of a tensor", (("dst", R), ("src", R), ("axis", I))),
    ("make_shape", "dst = a shape from dims", (("dst", R), ("dims", RS))),
    ("reshape_tensor", "dst = src viewed with another shape of as many elements", (("dst", R), ("src", R), ("shape", R))),
    ("device_copy", "dst = src copied to another device",
     (("dst", R), ("src", R), ("src_device", Kind.DEVICE), ("dst_device", Kind.DEVICE))),
    ("fatal", "stop with an error message, showing the values of some registers", (("message", Kind.STR), ("values", RS))),
    ("kill", "the last use of a register: its storage may be reused", (("src", R),)),
    ("cmp", "dst = lhs <predicate> rhs (eq, ne, lt, le, gt, ge)", (("dst", R), ("predicate", I), ("lhs", R), ("rhs", R))),
    ("select", "dst = cond ? a : b", (("dst", R), ("cond", R), ("a", R), ("b", R))),
    ("not", "dst = not src", (("dst", R), ("src", R))),
    *((name, f"dst = lhs {name} rhs (index)", (("dst", R), ("lhs", R), ("rhs", R))) for name in BINARY),
)
Opcode = IntEnum("Opcode", {m.upper(): i for i, (m, _, _) in enumerate(INSTRUCTIONS)})
"""The instructions' opcodes, `Opcode.INVOKE_KERNEL` for `invoke_kernel`: each is its
mnemonic's position in `INSTRUCTIONS` (an int in the bytecode's code arrays)."""
JUMPS = ("if", "goto")
TERMINATORS = ("ret", "goto", "if", "fatal")
"""Instructions after which control does not fall through."""


def _constraint(kind: Kind) -> type[Attribute]:
    if kind in (Kind.REGS, Kind.IMMS):
        return ArrayAttr
    if kind in SYMBOL_KINDS:
        return SymbolRefAttr
    if kind in (Kind.STR, Kind.DTYPE, Kind.DEVICE):
        return StringAttr
    return IntegerAttr


def to_attr(kind: Kind, value: Any) -> Attribute:
    """The property attribute of a field value (ints, int lists, names)."""
    if kind in (Kind.REGS, Kind.IMMS):
        return ArrayAttr([IntegerAttr(int(v), i64) for v in value])
    if kind in SYMBOL_KINDS:
        return SymbolRefAttr(value)
    if kind in (Kind.STR, Kind.DTYPE, Kind.DEVICE):
        return StringAttr(value)
    return IntegerAttr(int(value), i64)


def from_attr(kind: Kind, attr: Attribute) -> Any:
    """The Python value of a field's property (the inverse of `to_attr`)."""
    if kind in (Kind.REGS, Kind.IMMS):
        return [a.value.data for a in attr.data]
    if kind in SYMBOL_KINDS:
        return attr.root_reference.data
    if kind in (Kind.STR, Kind.DTYPE, Kind.DEVICE):
        return attr.data
    return attr.value.data


class Instruction(IRDLOperation):
    """Base of the generated instruction ops: fields as properties, one text format."""

    MNEMONIC: ClassVar[str]
    FIELDS: ClassVar[tuple[tuple[str, Kind], ...]]

    @classmethod
    def make(cls, **values: Any) -> Instruction:
        return cls.create(properties={n: to_attr(k, values[n]) for n, k in cls.FIELDS})

    def field_value(self, name: str) -> Any:
        kind = dict(self.FIELDS)[name]
        return from_attr(kind, self.properties[name])

    def decoded(self) -> list[Any]:
        return [from_attr(k, self.properties[n]) for n, k in self.FIELDS]

    def verify_(self) -> None:
        for name, kind in self.FIELDS:
            value = from_attr(kind, self.properties[name])
            if kind == Kind.REG and value < 0 or kind == Kind.REGS and any(v < 0 for v in value):
                raise VerifyException(f"'{self.name}' op field '{name}': registers are numbered from 0")
            if kind == Kind.DTYPE and value not in DTYPES:
                raise VerifyException(f"'{self.name}' op unknown dtype '{value}'")
            if kind == Kind.DEVICE and value not in VM_DEVICES:
                raise VerifyException(f"'{self.name}' op unknown device '{value}'")
        if self.MNEMONIC == "cmp" and not 0 <= self.field_value("predicate") < len(CMP_PREDICATES):
            raise VerifyException(f"'{self.name}' op predicate must be 0..{len(CMP_PREDICATES) - 1}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" " if self.FIELDS else "")
        printer.print_string(", ".join(format_field(k, v) for (_, k), v in zip(self.FIELDS, self.decoded())))

    @classmethod
    def parse(cls, parser: Parser) -> Instruction:
        values = {}
        for i, (name, kind) in enumerate(cls.FIELDS):
            if i:
                parser.parse_punctuation(",")
            values[name] = _parse_field(parser, kind)
        return cls.make(**values)


def format_field(kind: Kind, value: Any) -> str:
    """A field as it is written in the text format and the `vm-asm` listing."""
    if kind == Kind.REG:
        return _reg(value)
    if kind == Kind.REGS:
        return "(" + ", ".join(_reg(v) for v in value) + ")"
    if kind == Kind.IMMS:
        return "[" + ", ".join(str(v) for v in value) + "]"
    if kind == Kind.TARGET:
        return f"L{value}"
    if kind in SYMBOL_KINDS:
        return f"@{value}"
    if kind == Kind.STR:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(value)


def _parse_prefixed(parser: Parser, prefix: str, what: str) -> int:
    pos = parser.pos
    word = parser.parse_identifier()
    if not (word.startswith(prefix) and word[len(prefix):].isdigit()):
        parser.raise_error(f"expected a {what} like '{prefix}3'", pos, parser.pos)
    return int(word[len(prefix):])


def _parse_field(parser: Parser, kind: Kind) -> Any:
    if kind == Kind.REG:
        return _parse_prefixed(parser, "r", "register")
    if kind == Kind.REGS:
        return parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: _parse_prefixed(parser, "r", "register"))
    if kind == Kind.IMMS:
        return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
    if kind == Kind.TARGET:
        return _parse_prefixed(parser, "L", "jump target")
    if kind == Kind.IMM:
        return parser.parse_integer()
    if kind in SYMBOL_KINDS:
        return parser.parse_symbol_name().data
    if kind == Kind.STR:
        return parser.parse_str_literal()
    return parser.parse_identifier()


_EXAMPLE: dict[Kind, Any] = {
    Kind.REG: 1, Kind.REGS: [1, 2], Kind.IMM: 0, Kind.IMMS: [1, -1], Kind.TARGET: 4, Kind.FUNC: "f",
    Kind.KERNEL: "k", Kind.HOST: "h", Kind.CONST: "c0", Kind.CTOR: "Node", Kind.STR: "message",
    Kind.DTYPE: "f32", Kind.DEVICE: Device.CPU,
}


def _camel(mnemonic: str) -> str:
    return "".join(p.capitalize() for p in mnemonic.split("_")) + "Op"


def _instruction_class(mnemonic: str, summary: str, fields: tuple[tuple[str, Kind], ...]) -> type[Instruction]:
    example = ", ".join(format_field(k, _EXAMPLE[k]) for _, k in fields)
    namespace: dict[str, Any] = {
        "name": f"vm.{mnemonic}",
        "__doc__": f"{summary}.\n\n    Example: `vm.{mnemonic} {example}`",
        "__qualname__": _camel(mnemonic),
        "__module__": __name__,
        "__annotations__": {"MNEMONIC": ClassVar[str], "FIELDS": ClassVar[tuple]},
        "MNEMONIC": mnemonic,
        "FIELDS": fields,
        **{name: prop_def(_constraint(kind), prop_name=name) for name, kind in fields},
    }
    return irdl_op_definition(type(_camel(mnemonic), (Instruction,), namespace))


OPS: dict[str, type[Instruction]] = {m: _instruction_class(m, s, f) for m, s, f in INSTRUCTIONS}
"""The instruction op class of each mnemonic."""


@irdl_op_definition
class FunctionOp(IRDLOperation):
    """A VM function: parameters (registers), the register count, the instructions.

    Example: `vm.function @main(r0, r1) regs 4 { ... }`
    """

    name = "vm.function"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr)
    num_regs = prop_def(IntegerAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface())

    def __init__(self, name: str, params: Sequence[int], num_regs: int, instructions: Sequence[Instruction]):
        region = Region(Block(instructions))
        super().__init__(regions=[region], properties={
            "sym_name": StringAttr(name), "params": to_attr(Kind.REGS, params), "num_regs": IntegerAttr(num_regs, i64)})

    @property
    def instructions(self) -> list[Instruction]:
        return list(self.body.block.ops)

    def param_regs(self) -> list[int]:
        return from_attr(Kind.REGS, self.params)

    def verify_(self) -> None:
        n = self.num_regs.value.data
        ops = self.instructions
        for pc, op in enumerate(ops):
            if not isinstance(op, Instruction):
                raise VerifyException(f"'{self.name}' op @{self.sym_name.data} holds a non-instruction '{op.name}'")
            for (field, kind), value in zip(op.FIELDS, op.decoded()):
                regs = [value] if kind == Kind.REG else value if kind == Kind.REGS else []
                if any(r >= n for r in regs):
                    raise VerifyException(f"'{op.name}' op at L{pc}: register out of range (function has {n})")
                if kind == Kind.TARGET and not 0 <= value < len(ops):
                    raise VerifyException(f"'{op.name}' op at L{pc}: jump target L{value} outside the function")
        if any(p >= n for p in self.param_regs()):
            raise VerifyException(f"'{self.name}' op @{self.sym_name.data}: a parameter register is out of range")
        if ops and ops[-1].MNEMONIC not in TERMINATORS:
            raise VerifyException(f"'{self.name}' op @{self.sym_name.data}: the last instruction must not fall through")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data}(")
        printer.print_string(", ".join(_reg(p) for p in self.param_regs()))
        printer.print_string(f") regs {self.num_regs.value.data}")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> FunctionOp:
        name = parser.parse_symbol_name().data
        params = _parse_field(parser, Kind.REGS)
        parser.parse_keyword("regs")
        num_regs = parser.parse_integer()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        instructions = []
        for block in region.blocks:
            for inner in list(block.ops):
                block.detach_op(inner)
                instructions.append(inner)
        op = cls(name, params, num_regs, instructions)
        if attrs is not None:
            op.attributes |= attrs.data
        return op


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A constant tensor of the module, defined by the one constant op in its region
    (a `graph.constant` or `graph.external_constant`).

    Example: `vm.constant @c0 { %0 = graph.constant dense<1.0> : tensor<f32> }`"""

    name = "vm.constant"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface())

    def __init__(self, name: str, body: Region):
        super().__init__(regions=[body], properties={"sym_name": StringAttr(name)})

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        name = parser.parse_symbol_name().data
        return cls(name, parser.parse_region())


Vm = Dialect("vm", [FunctionOp, ConstantOp, *OPS.values()], [])


def listing(module: Any) -> str:
    """A readable listing of a VM module (`nimble-opt -t vm-asm`): constants, then each
    function with its instructions numbered (jump targets name these numbers)."""
    lines: list[str] = []
    for op in module.ops:
        if isinstance(op, ConstantOp):
            value = op.body.block.first_op
            lines.append(f"const @{op.sym_name.data} : {value.results[0].type}" if value else f"const @{op.sym_name.data}")
    for op in module.ops:
        if not isinstance(op, FunctionOp):
            continue
        params = ", ".join(_reg(p) for p in op.param_regs())
        lines.append(f"\nfunc @{op.sym_name.data}({params}) regs {op.num_regs.value.data}")
        width = len(str(len(op.instructions)))
        for pc, inst in enumerate(op.instructions):
            fields = ", ".join(format_field(k, v) for (_, k), v in zip(inst.FIELDS, inst.decoded()))
            lines.append(f"  {pc:>{width}}: {inst.MNEMONIC} {fields}".rstrip())
    return "\n".join(lines).lstrip("\n") + "\n"
