"""Algebraic data types: declarations with constructors, `graph.construct` and
`graph.match` (one region per constructor, binding its fields). Recursive types such as
lists and trees are written by naming the type inside its own constructors.

```
graph.adt @Tree {
  graph.constructor @Leaf(tensor<1x150xf32>)
  graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)
}
```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    lazy_traits_def,
    operand_def,
    irdl_attr_definition,
    irdl_op_definition,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, NoTerminator, Pure, RecursiveMemoryEffect, SymbolOpInterface

from nimble.dialects.graph.base import op_error
from nimble.dialects.graph.control import YieldOp, check_terminator, check_yielded
from nimble.dialects.graph.types import types_compatible
from nimble.dialects.interfaces import EvalContext, HasReference


@dataclass(frozen=True)
class AdtValue:
    """A run-time value of an algebraic data type: its constructor and fields."""

    constructor: str
    fields: tuple[Any, ...]


@irdl_attr_definition
class AdtType(ParametrizedAttribute, TypeAttribute):
    """The type of values of a declared ADT: `!graph.adt<@Tree>`."""

    name = "graph.adt"
    adt: SymbolRefAttr = param_def()

    def __init__(self, adt: str | SymbolRefAttr):
        super().__init__(SymbolRefAttr(adt) if isinstance(adt, str) else adt)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (SymbolRefAttr(parser.parse_symbol_name()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_symbol_name(self.adt.root_reference.data)
        printer.print_string(">")

    @property
    def adt_name(self) -> str:
        return self.adt.root_reference.data


@irdl_op_definition
class ConstructorOp(IRDLOperation):
    """One constructor of an ADT and the types of its fields.

    Example: `graph.constructor @Node(!graph.adt<@Tree>, !graph.adt<@Tree>)`
    """

    name = "graph.constructor"
    sym_name = prop_def(StringAttr)
    fields = prop_def(ArrayAttr[Attribute])
    traits = lazy_traits_def(lambda: (HasParent(AdtOp),))

    def __init__(self, name: str, fields: Sequence[Attribute]):
        super().__init__(properties={"sym_name": StringAttr(name), "fields": ArrayAttr(fields)})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.fields.data, printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstructorOp:
        name = parser.parse_symbol_name().data
        fields = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        op = cls(name, fields)
        op.attributes |= parser.parse_optional_attr_dict()
        return op


@irdl_op_definition
class AdtOp(IRDLOperation):
    """Declares an algebraic data type by its constructors (module level).

    Example:
    ```
    graph.adt @List {
      graph.constructor @Nil()
      graph.constructor @Cons(tensor<?xf32>, !graph.adt<@List>)
    }
    ```
    """

    name = "graph.adt"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), SymbolOpInterface(), HasParent(ModuleOp))

    def __init__(self, name: str, constructors: Sequence[ConstructorOp]):
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[Region(Block(constructors))])

    @property
    def constructors(self) -> list[ConstructorOp]:
        return [op for op in self.body.block.ops if isinstance(op, ConstructorOp)]

    def verify_(self) -> None:
        names = [c.sym_name.data for c in self.constructors]
        if not names:
            raise op_error(self, "needs at least one constructor")
        if len(names) != len(self.body.block.ops):
            raise op_error(self, "may only hold 'graph.constructor' ops")
        if len(set(names)) != len(names):
            raise op_error(self, f"declares a constructor twice in {names}")
        module = self.parent_op()
        if isinstance(module, ModuleOp):
            for other in module.ops:
                if isinstance(other, AdtOp) and other is not self:
                    clash = set(names) & {c.sym_name.data for c in other.constructors}
                    if clash:
                        raise op_error(self, f"constructor @{sorted(clash)[0]} is also declared by @{other.sym_name.data}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> AdtOp:
        name = parser.parse_symbol_name().data
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        op = cls.create(properties={"sym_name": StringAttr(name)}, regions=[region])
        if attrs is not None:
            op.attributes |= attrs.data
        return op


def _declared_adts(op: Operation) -> list[AdtOp]:
    """The ADTs declared in the (top-level) module enclosing `op`."""
    module = op
    while module is not None and not isinstance(module, ModuleOp):
        module = module.parent_op()
    return [] if module is None else [a for a in module.ops if isinstance(a, AdtOp)]


def find_constructor(op: Operation, name: str) -> tuple[AdtOp, ConstructorOp] | None:
    """The ADT declaring constructor `name`, and the constructor, seen from `op`."""
    for adt in _declared_adts(op):
        for ctor in adt.constructors:
            if ctor.sym_name.data == name:
                return adt, ctor
    return None


def find_adt(op: Operation, name: str) -> AdtOp | None:
    """The ADT named `name`, seen from `op`."""
    return next((a for a in _declared_adts(op) if a.sym_name.data == name), None)


@irdl_op_definition
class ConstructOp(IRDLOperation, HasReference):
    """Build an ADT value with a constructor and its fields.

    Example: `%t = graph.construct @Node(%l, %r) : (!graph.adt<@Tree>, !graph.adt<@Tree>) -> !graph.adt<@Tree>`
    """

    name = "graph.construct"
    constructor = prop_def(SymbolRefAttr)
    fields = var_operand_def()
    result = result_def(AdtType)
    assembly_format = "$constructor `(` $fields `)` attr-dict `:` functional-type($fields, $result)"
    traits = traits_def(Pure())

    def __init__(self, constructor: str, fields: Sequence[SSAValue], adt: str):
        super().__init__(
            operands=[fields],
            result_types=[AdtType(adt)],
            properties={"constructor": SymbolRefAttr(constructor)},
        )

    def verify_(self) -> None:
        name = self.constructor.root_reference.data
        found = find_constructor(self, name)
        if found is None:
            raise op_error(self, f"unknown constructor @{name}")
        adt, ctor = found
        if self.result.type.adt_name != adt.sym_name.data:
            raise op_error(self, f"@{name} builds !graph.adt<@{adt.sym_name.data}>, not {self.result.type}")
        check_yielded(self, self.fields, list(ctor.fields.data), f"@{name}:")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        return [AdtValue(self.constructor.root_reference.data, tuple(args))]


@irdl_op_definition
class MatchOp(IRDLOperation, HasReference):
    """Branch on the constructor of an ADT value; each case binds the fields as block
    arguments and yields the results. Cases must cover every constructor once.

    Example:
    ```
    %h = graph.match %t : !graph.adt<@Tree> -> (tensor<1x150xf32>)
      case @Leaf(%x: tensor<1x150xf32>) {
        graph.yield %x : tensor<1x150xf32>
      }
      case @Node(%l: !graph.adt<@Tree>, %r: !graph.adt<@Tree>) {
        ...
      }
    ```
    """

    name = "graph.match"
    subject = operand_def(AdtType)
    outputs = var_result_def()
    cases = prop_def(ArrayAttr[SymbolRefAttr])
    case_regions = var_region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(self, subject: SSAValue, result_types: Sequence[Attribute], cases: Sequence[tuple[str, Region]]):
        super().__init__(
            operands=[subject],
            result_types=[result_types],
            properties={"cases": ArrayAttr([SymbolRefAttr(n) for n, _ in cases])},
            regions=[[r for _, r in cases]],
        )

    def case_names(self) -> list[str]:
        return [c.root_reference.data for c in self.cases.data]

    def verify_(self) -> None:
        adt = find_adt(self, self.subject.type.adt_name)
        if adt is None:
            raise op_error(self, f"unknown ADT @{self.subject.type.adt_name}")
        names = self.case_names()
        if len(names) != len(self.case_regions):
            raise op_error(self, "needs one region per case")
        declared = {c.sym_name.data: c for c in adt.constructors}
        for name in names:
            if name not in declared:
                raise op_error(self, f"@{name} is not a constructor of @{adt.sym_name.data}")
        if len(set(names)) != len(names):
            raise op_error(self, "matches a constructor twice")
        missing = [n for n in declared if n not in names]
        if missing:
            raise op_error(self, f"does not cover constructor @{missing[0]}")
        types = [r.type for r in self.outputs]
        for name, region in zip(names, self.case_regions):
            fields = list(declared[name].fields.data)
            args = [a.type for a in region.block.args]
            if len(args) != len(fields) or not all(types_compatible(a, f) for a, f in zip(args, fields)):
                raise op_error(self, f"case @{name} must bind its {len(fields)} fields with their types")
            yielded = check_terminator(self, region, YieldOp, f"case @{name}")
            check_yielded(self, yielded.operands, types, f"case @{name}")

    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        value = args[0]
        region = self.case_regions[self.case_names().index(value.constructor)]
        return ctx.run_region(region, list(value.fields))

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.subject)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_attribute(self.subject.type)
        printer.print_string(" -> (")
        printer.print_list([r.type for r in self.outputs], printer.print_attribute)
        printer.print_string(")")
        with printer.indented():
            for name, region in zip(self.case_names(), self.case_regions):
                printer.print_string("\ncase ")
                printer.print_symbol_name(name)
                printer.print_string("(")
                printer.print_list(region.block.args, printer.print_block_argument)
                printer.print_string(") ")
                printer.print_region(region, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> MatchOp:
        subject = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        subject_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        cases: list[tuple[str, Region]] = []
        while parser.parse_optional_keyword("case") is not None:
            name = parser.parse_symbol_name().data
            args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
            cases.append((name, parser.parse_region(args)))
        op = cls(parser.resolve_operand(subject, subject_type), result_types, cases)
        if attrs is not None:
            op.attributes |= attrs.data
        return op
