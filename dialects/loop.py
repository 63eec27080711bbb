"""The `loop` dialect: loop nests over buffers, with schedules and memory levels.

The level between graph operators and machine code, in the spirit of the Spatial
language: `loop.foreach` (independent iterations, Spatial's `Foreach`), `loop.reduce`
(iterations combined by an associative operator, Spatial's `Reduce`), and `loop.alloc`
(a memory at an explicit level: DRAM, on-chip SRAM, registers). Bodies use xdsl's
`arith`, `math`, `memref` and `vector` ops on `memref` buffers.

A loop's `#loop.schedule<...>` says how to run it (tile, vectorize, unroll, parallel,
pipeline, `par`): schedules are data that `schedule-loops` (or a tuner) writes and the
backends read; they never change what a loop computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from functools import cache

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from nimble.dialects.device import Device
from nimble.dialects.discardable import (  # noqa: F401 (the kernels' marks, read as loop.DEVICE_MARK ...)
    COOPERATIVE_MARK,
    DEVICE_MARK,
    EXACT_MARK,
    NO_STRETCH_MARK,
    WORK_MARK,
)
from nimble.dialects.loop_kernel import KernelOp, ReturnOp

SHARED_BUFFERS = 56
"""Most buffers a cooperative kernel's chunks can share (the mailbox's words for them)."""


@cache
def vector_type(element: Attribute, shape: tuple[int, ...]) -> VectorType:
    """`vector<shape x element>`, built once per (element, shape): building a VectorType
    makes and verifies the attributes of its shape, and vectorising asks for the same
    few types over and over (an imported 4-layer BERT encoder, 52 kernels: 126,000 times;
    its nimble-compile took 58.0 -> 54.4 s with the types shared)."""
    return VectorType(element, shape)


def is_kernel(op: Operation) -> bool:
    """Whether `op` is a loop-level kernel (a `loop.kernel`)."""
    return isinstance(op, KernelOp)


def kernels_of(module: Operation, device: str | None = None) -> list[KernelOp]:
    """The kernel functions of a module (those compiled for `device`, if given)."""
    return [f for f in module.regions[0].block.ops if is_kernel(f)
            and (device is None or kernel_device(f) == device)]


def defined_inside(value: SSAValue, scope: Operation) -> bool:
    """Whether `value` is defined inside `scope` (a result of an op nested in it, or an
    argument of one of its blocks or of a nested op's blocks)."""
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is not None and scope.is_ancestor(op)


def in_sequential_loop(op: Operation) -> bool:
    """Whether `op` is nested in an `scf.for` (a recurrence's time loop)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, scf.ForOp):
        parent = parent.parent_op()
    return parent is not None


def kernel_device(kernel: Operation) -> str:
    """The device a kernel function is compiled for (`cpu` unless marked)."""
    mark = kernel.attributes.get(DEVICE_MARK)
    return mark.data if isinstance(mark, StringAttr) else Device.CPU


def _error(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}' op {message}")


# ---------------------------------------------------------------------------------------
# Attributes


class Level(StrEnum):
    """A memory level, as `#loop.level<...>` spells it (members compare equal to the strings)."""

    DRAM = "dram"
    """Main memory (the CPU's heap or stack, a device's global memory)."""
    SRAM = "sram"
    """On-chip scratchpad: the spatial accelerator's PMUs, an OpenCL work-group's local memory."""
    REG = "reg"
    """Registers: a small buffer of static size (a stack slot on the CPU)."""


LEVELS = tuple(Level)


@irdl_attr_definition
class LevelAttr(ParametrizedAttribute):
    """A memory level: `#loop.level<dram>`, `<sram>` (on-chip scratchpad), `<reg>`."""

    name = "loop.level"
    level: StringAttr = param_def()

    def __init__(self, level: str):
        super().__init__(StringAttr(level))

    @property
    def data(self) -> Level:
        return Level(self.level.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            word = parser.parse_identifier()
            if word not in LEVELS:
                parser.raise_error(f"expected a memory level ({', '.join(LEVELS)})", pos, parser.pos)
        return (StringAttr(word),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    def verify(self) -> None:
        if self.level.data not in LEVELS:
            raise VerifyException(f"unknown memory level '{self.level.data}'")


@dataclass(frozen=True)
class Schedule:
    """How to run one loop. Every field has a neutral default (run it as written)."""

    tile: int = 0  # strip-mine by this many iterations (0: no tiling)
    vector: int = 0  # vectorize with this many lanes (0: scalar)
    unroll: int = 0  # unroll (and jam into inner loops) by this factor
    par: int = 0  # spatial: copies of the body working in parallel (the paper's `par`)
    parallel: bool = False  # iterations spread over CPU threads / the NDRange
    pipeline: bool = False  # spatial: overlap iterations as a coarse-grained pipeline
    pack: bool = False  # copy the operand read along the vector lanes into a contiguous panel first
    panel: int = 0  # with `pack`: columns per panel, several register tiles (0: one tile's)
    mask: bool = False  # leftover iterations as one masked vector step instead of a scalar loop
    dots: bool = False  # a register tile's leftover columns as dot products along its reduction, after the rows
    grain: int = 0  # with `parallel`: split here only with this many iterations per chunk (or whole
    # steps splitting evenly), else inside


INT_FIELDS = tuple(f.name for f in fields(Schedule) if f.type == "int")
FLAG_FIELDS = tuple(f.name for f in fields(Schedule) if f.type == "bool")


@irdl_attr_definition
class ScheduleAttr(ParametrizedAttribute):
    """A loop's schedule: `#loop.schedule<tile = 32, vector = 16, parallel>`."""

    name = "loop.schedule"
    entries: ArrayAttr[StringAttr] = param_def()
    values: ArrayAttr[IntAttr] = param_def()

    def __init__(self, schedule: Schedule):
        names, values = [], []
        for f in fields(Schedule):
            value = int(getattr(schedule, f.name))
            if value:
                names.append(StringAttr(f.name))
                values.append(IntAttr(value))
        super().__init__(ArrayAttr(names), ArrayAttr(values))

    @property
    def schedule(self) -> Schedule:
        kwargs = {n.data: v.data for n, v in zip(self.entries, self.values)}
        for flag in FLAG_FIELDS:
            if flag in kwargs:
                kwargs[flag] = bool(kwargs[flag])
        return Schedule(**kwargs)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values: dict[str, int] = {}

        def entry() -> None:
            pos = parser.pos
            key = parser.parse_identifier()
            if key in values:
                parser.raise_error(f"'{key}' given twice", pos, parser.pos)
            if key in FLAG_FIELDS:
                values[key] = 1
            elif key in INT_FIELDS:
                parser.parse_punctuation("=")
                vpos = parser.pos
                values[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
                if values[key] < 1:
                    parser.raise_error(f"'{key}' must be at least 1", vpos, parser.pos)
            else:
                known = ", ".join((*INT_FIELDS, *FLAG_FIELDS))
                parser.raise_error(f"unknown schedule entry '{key}' (known: {known})", pos, parser.pos)

        parser.parse_punctuation("<")
        if parser.parse_optional_punctuation(">") is None:
            parser.parse_comma_separated_list(parser.Delimiter.NONE, entry)
            parser.parse_punctuation(">")
        order = [f.name for f in fields(Schedule)]
        names = sorted(values, key=order.index)
        return (ArrayAttr([StringAttr(n) for n in names]), ArrayAttr([IntAttr(values[n]) for n in names]))

    def print_parameters(self, printer: Printer) -> None:
        parts = [n.data if n.data in FLAG_FIELDS else f"{n.data} = {v.data}" for n, v in zip(self.entries, self.values)]
        printer.print_string(f"<{', '.join(parts)}>")

    def verify(self) -> None:
        if len(self.entries) != len(self.values):
            raise VerifyException("schedule entries and values differ in length")
        for n, v in zip(self.entries, self.values):
            if n.data not in INT_FIELDS + FLAG_FIELDS:
                raise VerifyException(f"unknown schedule entry '{n.data}'")
            if v.data < 1:
                raise VerifyException(f"schedule entry '{n.data}' must be at least 1")


# ---------------------------------------------------------------------------------------
# Loops


class Combiner(StrEnum):
    """How a `loop.reduce` combines its iterations' values (`combine(add, max)`): the one
    definition of the names (members compare equal to the strings)."""

    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"

    def identity(self, t: Attribute) -> int | float:
        """The value combining leaves unchanged, for elements of type `t`: for floats 0,
        1, -inf and inf; for integers the type's extremes for max and min; for bools (i1:
        add and max are `or`, mul and min `and`) 0 or 1."""
        if isinstance(t, IntegerType) and t.width.data == 1:
            return int(self in (Combiner.MUL, Combiner.MIN))
        if isinstance(t, IntegerType | IndexType):
            bits = t.width.data if isinstance(t, IntegerType) else 64
            return {Combiner.ADD: 0, Combiner.MUL: 1, Combiner.MAX: -(2 ** (bits - 1)),
                    Combiner.MIN: 2 ** (bits - 1) - 1}[self]
        return {Combiner.ADD: 0.0, Combiner.MUL: 1.0, Combiner.MAX: float("-inf"), Combiner.MIN: float("inf")}[self]


COMBINERS = tuple(c.value for c in Combiner)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a loop body; in `loop.reduce`, yields this iteration's contributions.

    Example: `loop.yield %v : f32`
    """

    name = "loop.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(ForeachOp, ReduceOp), Pure()))

    def __init__(self, values: Sequence[SSAValue | Operation] = ()):
        super().__init__(operands=[values])

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_operand)
            printer.print_string(" : ")
            printer.print_list([v.type for v in self.values], printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        ) or []
        if not operands:
            return cls()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(operands):
            parser.raise_error(f"expected {len(operands)} types, got {len(types)}")
        return cls(parser.resolve_operands(operands, types, parser.pos))


class _LoopOp(IRDLOperation):
    """Shared shape of foreach and reduce: `%iv = %lb to %ub step %step`, a body."""

    lower = operand_def(IndexType)
    upper = operand_def(IndexType)
    step = operand_def(IndexType)
    body = region_def("single_block")
    schedule = opt_prop_def(ScheduleAttr)

    @property
    def iv(self) -> SSAValue:
        return self.body.block.args[0]

    def verify_(self) -> None:
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise _error(self, "body must take exactly one index argument (the induction variable)")
        if not isinstance(block.last_op, YieldOp):
            raise _error(self, "body must end with loop.yield")

    def _print_header(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.iv)
        printer.print_string(" = ")
        printer.print_operand(self.lower)
        printer.print_string(" to ")
        printer.print_operand(self.upper)
        printer.print_string(" step ")
        printer.print_operand(self.step)

    def _print_tail(self, printer: Printer) -> None:
        if self.schedule is not None:
            printer.print_string(" schedule ")
            printer.print_attribute(self.schedule)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @staticmethod
    def _parse_header(parser: Parser) -> tuple[Parser.Argument, list[SSAValue]]:
        iv = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        index = IndexType()
        bounds = [parser.parse_operand(index)]
        parser.parse_keyword("to")
        bounds.append(parser.parse_operand(index))
        parser.parse_keyword("step")
        bounds.append(parser.parse_operand(index))
        return iv.resolve(index), bounds

    @staticmethod
    def _parse_tail(parser: Parser, iv: Parser.Argument) -> tuple[ScheduleAttr | None, Region, dict]:
        schedule = None
        if parser.parse_optional_keyword("schedule") is not None:
            pos = parser.pos
            schedule = parser.parse_attribute()
            if not isinstance(schedule, ScheduleAttr):
                parser.raise_error("expected a #loop.schedule<...> attribute", pos, parser.pos)
        body = parser.parse_region([iv])
        attrs = parser.parse_optional_attr_dict_with_keyword()
        return schedule, body, (attrs.data if attrs else {})


@irdl_op_definition
class ForeachOp(_LoopOp):
    """A loop whose iterations are independent (Spatial's `Foreach`).

    Example:
    ```
    loop.foreach %i = %c0 to %n step %c1 schedule #loop.schedule<vector = 16, parallel> {
      %x = memref.load %a[%i] : memref<?xf32>
      memref.store %x, %b[%i] : memref<?xf32>
      loop.yield
    }
    ```
    """

    name = "loop.foreach"
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, lower: SSAValue, upper: SSAValue, step: SSAValue, body: Region | Block,
                 schedule: ScheduleAttr | None = None):
        if isinstance(body, Block):
            body = Region(body)
        super().__init__(operands=[lower, upper, step], regions=[body], properties={"schedule": schedule})

    def verify_(self) -> None:
        super().verify_()
        if self.body.block.last_op.values:
            raise _error(self, "body of loop.foreach yields no values")

    def print(self, printer: Printer) -> None:
        self._print_header(printer)
        self._print_tail(printer)

    @classmethod
    def parse(cls, parser: Parser) -> ForeachOp:
        iv, (lb, ub, step) = cls._parse_header(parser)
        schedule, body, attrs = cls._parse_tail(parser, iv)
        if not isinstance(body.block.last_op, YieldOp):
            body.block.add_op(YieldOp())
        op = cls(lb, ub, step, body, schedule)
        op.attributes |= attrs
        return op


@irdl_op_definition
class ReduceOp(_LoopOp):
    """Iterations whose yielded values are combined by associative operators (Spatial's
    `Reduce`): result k = inits[k] combined with every iteration's k-th yielded value.

    Combiners: add, mul, max, min. Values may be scalars or vectors (lanewise).
    Example:
    ```
    %s = loop.reduce %k = %c0 to %n step %c1 combine(add) init(%zero) : f32 {
      %x = memref.load %a[%k] : memref<?xf32>
      loop.yield %x : f32
    }
    ```
    """

    name = "loop.reduce"
    inits = var_operand_def()
    combiners = prop_def(ArrayAttr[StringAttr])
    outs = var_result_def()
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, lower: SSAValue, upper: SSAValue, step: SSAValue, inits: Sequence[SSAValue],
                 combiners: Sequence[str], body: Region | Block, schedule: ScheduleAttr | None = None):
        if isinstance(body, Block):
            body = Region(body)
        super().__init__(
            operands=[inits, lower, upper, step],  # IRDL puts a subclass's own fields first
            result_types=[[SSAValue.get(v).type for v in inits]],
            regions=[body],
            properties={"schedule": schedule, "combiners": ArrayAttr([StringAttr(c) for c in combiners])},
        )

    @property
    def kinds(self) -> list[Combiner]:
        return [Combiner(c.data) for c in self.combiners]

    def verify_(self) -> None:
        super().verify_()
        if not self.inits:
            raise _error(self, "needs at least one accumulator")
        if len(self.combiners) != len(self.inits):
            raise _error(self, f"has {len(self.inits)} accumulators but {len(self.combiners)} combiners")
        for kind in (c.data for c in self.combiners):
            if kind not in COMBINERS:
                raise _error(self, f"unknown combiner '{kind}' (expected one of {', '.join(COMBINERS)})")
        yielded = [v.type for v in self.body.block.last_op.values]
        expected = [v.type for v in self.inits]
        if yielded != expected:
            raise _error(self, f"body yields ({', '.join(map(str, yielded))}) but the accumulators are "
                               f"({', '.join(map(str, expected))})")

    def print(self, printer: Printer) -> None:
        self._print_header(printer)
        printer.print_string(f" combine({', '.join(c.data for c in self.combiners)}) init(")
        printer.print_list(self.inits, printer.print_operand)
        printer.print_string(") : ")
        printer.print_list([v.type for v in self.inits], printer.print_attribute)
        self._print_tail(printer)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        iv, (lb, ub, step) = cls._parse_header(parser)
        parser.parse_keyword("combine")
        kinds = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_identifier)
        parser.parse_keyword("init")
        unresolved: list[UnresolvedOperand] = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != len(unresolved):
            parser.raise_error(f"expected {len(unresolved)} accumulator types, got {len(types)}")
        inits = parser.resolve_operands(unresolved, types, parser.pos)
        schedule, body, attrs = cls._parse_tail(parser, iv)
        op = cls(lb, ub, step, inits, kinds, body, schedule)
        op.attributes |= attrs
        return op


# ---------------------------------------------------------------------------------------
# Memories


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A buffer at an explicit memory level, alive until the end of the enclosing block.

    `reg` buffers must have a static shape (they live in registers or on the stack);
    `sram` and `dram` buffers take one index operand per `?` dim.
    Example: `%t = loop.alloc sram (%n) : memref<?x32xf32>`
    """

    name = "loop.alloc"
    dynamic_sizes = var_operand_def(IndexType)
    level = prop_def(LevelAttr)
    memref = result_def(MemRefType)

    def __init__(self, level: str, memref_type: MemRefType, dynamic_sizes: Sequence[SSAValue] = ()):
        super().__init__(operands=[dynamic_sizes], result_types=[memref_type],
                         properties={"level": LevelAttr(level)})

    def verify_(self) -> None:
        shape = self.memref.type.get_shape()
        unknown = sum(1 for d in shape if d < 0)
        if unknown != len(self.dynamic_sizes):
            raise _error(self, f"expected {unknown} dynamic size operands (one per '?'), "
                               f"got {len(self.dynamic_sizes)}")
        if self.level.data == Level.REG and unknown:
            raise _error(self, "a reg-level buffer must have a static shape")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.level.data}")
        if self.dynamic_sizes:
            printer.print_string(" (")
            printer.print_list(self.dynamic_sizes, printer.print_operand)
            printer.print_string(")")
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)

    @classmethod
    def parse(cls, parser: Parser) -> AllocOp:
        pos = parser.pos
        level = parser.parse_identifier()
        if level not in LEVELS:
            parser.raise_error(f"expected a memory level ({', '.join(LEVELS)})", pos, parser.pos)
        sizes = parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        tpos = parser.pos
        memref_type = parser.parse_type()
        if not isinstance(memref_type, MemRefType):
            parser.raise_error(f"expected a memref type, got {memref_type}", tpos, parser.pos)
        resolved = parser.resolve_operands(sizes or [], [IndexType()] * len(sizes or []), parser.pos)
        return cls(level, memref_type, resolved)


PREFETCH_LEVELS = (0, 1, 2, 3)
"""LLVM's locality hints: 0 (none: streamed, not kept) to 3 (kept in every cache level)."""


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that the element `memref[indices]` will be read soon: fetch its cache line.

    It changes no value, and may be dropped; the indices must be in bounds (they are an
    address). `locality` is LLVM's (0 to 3, 3: keep it in every cache level).
    Example: `loop.prefetch %w[%j, %k] {locality = 2 : i64} : memref<768x3072xf32>`
    """

    name = "loop.prefetch"
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    locality = prop_def(IntegerAttr)
    assembly_format = "$memref `[` $indices `]` attr-dict `:` type($memref)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, memref: SSAValue, indices: Sequence[SSAValue], locality: int = 3):
        super().__init__(operands=[memref, indices],
                         properties={"locality": IntegerAttr(locality, 64)})

    def verify_(self) -> None:
        if len(self.indices) != self.memref.type.get_num_dims():
            raise _error(self, f"expected {self.memref.type.get_num_dims()} indices (one per dim), "
                               f"got {len(self.indices)}")
        if self.locality.value.data not in PREFETCH_LEVELS:
            raise _error(self, f"locality must be 0 to 3, got {self.locality.value.data}")


Loop = Dialect("loop", [KernelOp, ReturnOp, ForeachOp, ReduceOp, YieldOp, AllocOp, PrefetchOp],
               [ScheduleAttr, LevelAttr])
