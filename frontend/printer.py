"""Print a module back in the `.nb` text format (`nimble-opt -t nb`).

The printer covers what the text format can say: functions, ADTs, every op that can be
built from operands and properties (graph ops by short name, other dialects as
`dialect.op(...)`), index arithmetic, scalar constants, casts, slices, tuples, calls,
`if`, `while` and `match`. It refuses, with a clear error, what the format cannot say
(non-scalar inline constants, `dynshape.assert`, unnamed block structure): those modules
stay in MLIR syntax.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    TupleType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from nimble.dialects import arith, dynshape, graph, loop, vm
from nimble.dialects.device import PLACEMENT
from nimble.dialects.discardable import NAMED_DIM_ATTR
from nimble.dialects.graph.base import GraphOp
from nimble.dialects.graph.folding import dense_to_array
from nimble.dialects.graph.slice import END
from nimble.dialects.graph.types import dims
from nimble.dialects.interfaces import InfersResultTypes
from nimble.errors import NimbleError
from nimble.frontend.expressions import INDEX_ARITH, INDEX_COMPARE, SYMBOLS
from nimble.frontend.expressions import INFIX as TENSOR_INFIX
from nimble.frontend.kernel_printer import KernelPrinter
from nimble.frontend.types import ELEMENT_TYPES

# The frontend's tables, read backwards: op class (or cmpi predicate) -> spelling.
INFIX = {op: SYMBOLS[rule] for table in (TENSOR_INFIX, INDEX_ARITH) for rule, op in table.items()}
CMPI = {arith.CMPI_COMPARISON_OPERATIONS.index(p): SYMBOLS[rule] for rule, p in INDEX_COMPARE.items()}
DTYPE_NAMES = {t: name for name, t in ELEMENT_TYPES.items() if name != "bool"}


class PrintError(NimbleError):
    """The module uses something the text format cannot express."""


def dtype_name(element: Attribute) -> str:
    if isinstance(element, IndexType):
        return "index"
    if element not in DTYPE_NAMES:
        raise PrintError(f"element type {element} has no text form")
    return DTYPE_NAMES[element]


def type_text(t: Attribute, names: dict[int, str] | None = None) -> str:
    """A type in the text format; `names` gives named dims (index -> name)."""
    names = names or {}
    if isinstance(t, TensorType):
        if isinstance(t.element_type, IndexType):
            raise PrintError(f"{t} has no text form (tensors of index)")
        shape_dims = ", ".join(names.get(i, "?" if d is None else str(d)) for i, d in enumerate(dims(t)))
        return f"{dtype_name(t.element_type)}[{shape_dims}]"
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, dynshape.ShapeType):
        return f"shape<{t.rank.data}>"
    if isinstance(t, TupleType):
        return "tuple<" + ", ".join(type_text(e) for e in t.types.data) + ">"
    if isinstance(t, graph.AdtType):
        return t.adt_name
    raise PrintError(f"type {t} has no text form")


def float_text(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise PrintError(f"{value} has no literal in the text format")
    return repr(float(value))


def literal_text(attr: Attribute) -> str:
    if isinstance(attr, IntegerAttr):
        if attr.type == IntegerType(1):
            return "true" if attr.value.data else "false"
        return str(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float_text(attr.value.data)
    if isinstance(attr, DenseArrayBase):
        return "[" + ", ".join(str(v) for v in attr.get_values()) + "]"
    if isinstance(attr, StringAttr):
        return '"' + attr.data.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise PrintError(f"attribute {attr} has no text form")


class NbPrinter:
    def __init__(self) -> None:
        self.out = io.StringIO()
        self.names: dict[SSAValue, str] = {}
        self.used: set[str] = set()
        self.indent = 0
        self.skipped: set[Operation] = set()

    def name(self, value: SSAValue) -> str:
        if value not in self.names:
            hint = re.sub(r"[^A-Za-z0-9_$]", "_", value.name_hint or "v")
            candidate, n = hint, 0
            while candidate in self.used:
                n += 1
                candidate = f"{hint}_{n}"
            self.used.add(candidate)
            self.names[value] = candidate
        return "%" + self.names[value]

    def line(self, text: str) -> None:
        self.out.write("  " * self.indent + text + "\n")

    # -- module ---------------------------------------------------------------------------
    def module(self, module: ModuleOp) -> str:
        for op in module.ops:
            if isinstance(op, graph.AdtOp):
                ctors = " | ".join(
                    c.sym_name.data + (f"({', '.join(type_text(t) for t in c.fields.data)})" if c.fields.data else "")
                    for c in op.constructors
                )
                self.line(f"type {op.sym_name.data} = {ctors}")
            elif loop.is_kernel(op):
                KernelPrinter(self.line, PrintError, dtype_name).kernel(op)
            elif isinstance(op, func.FuncOp):
                self.function(op)
            else:
                raise PrintError(f"'{op.name}' at module level has no text form")
        return self.out.getvalue()

    def function(self, f: func.FuncOp) -> None:
        if f.is_declaration:
            raise PrintError(f"@{f.sym_name.data} is a declaration; the text format has only definitions")
        self.names, self.used = {}, set()
        named, self.skipped = named_dim_checks(f)
        once = f.attributes.get(vm.DIM_NAMES)  # (names used once: `Builder.function_body`)
        for key, name in (once.data.items() if isinstance(once, DictionaryAttr) else ()):
            param, axis = map(int, key.split("."))
            named.setdefault(param, {})[axis] = name.data
        params = ", ".join(f"{self.name(a)}: {type_text(a.type, named.get(i, {}))}"
                           for i, a in enumerate(f.body.block.args))
        results = [type_text(t) for t in f.function_type.outputs.data]
        signature = "" if not results else f" -> {results[0]}" if len(results) == 1 else f" -> ({', '.join(results)})"
        self.line(f"def @{f.sym_name.data}({params}){signature} {{")
        self.block_body(f.body.block)
        self.line("}")

    def block_body(self, block: Block) -> None:
        """Statements, then the terminator's operands as the block's value."""
        self.indent += 1
        for op in block.ops:
            if op in self.skipped:
                continue
            if op is block.last_op and isinstance(op, func.ReturnOp | graph.YieldOp | graph.ConditionOp):
                if op.operands:
                    self.line(self.values(op.operands))
            else:
                self.statement(op)
        self.indent -= 1

    def values(self, values: Sequence[SSAValue]) -> str:
        names = [self.name(v) for v in values]
        return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"

    def statement(self, op: Operation) -> None:
        expr = self.expression(op)
        if not op.results:
            raise PrintError(f"'{op.name}' has no results and no statement form")
        targets = ", ".join(self.name(r) for r in op.results)
        if isinstance(op, graph.IfOp | graph.WhileOp | graph.MatchOp):
            self.control(op, targets)
        else:
            placement = op.attributes.get(PLACEMENT)
            self.line(f"let {targets} = {expr}" + (f" on {placement.data}" if placement is not None else ""))

    # -- expressions ------------------------------------------------------------------------
    def expression(self, op: Operation) -> str:
        if type(op) in INFIX:
            lhs, rhs = op.operands
            return f"{self.name(lhs)} {INFIX[type(op)]} {self.name(rhs)}"
        if isinstance(op, arith.CmpiOp) and op.predicate.value.data in CMPI:
            lhs, rhs = op.operands
            return f"{self.name(lhs)} {CMPI[op.predicate.value.data]} {self.name(rhs)}"
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and isinstance(op.value.type, IndexType):
            return f"index({op.value.value.data})"
        if isinstance(op, graph.ConstantOp):
            return self.constant(op)
        if isinstance(op, graph.SliceOp):
            return self.slice(op)
        if isinstance(op, graph.MakeTupleOp):
            return "(" + ", ".join(self.name(v) for v in op.elements) + ("," if len(op.elements) == 1 else "") + ")"
        if isinstance(op, graph.GetItemOp):
            return f"{self.name(op.tuple)}.{op.index.value.data}"
        if isinstance(op, graph.ConstructOp):
            fields = ", ".join(self.name(v) for v in op.fields)
            return op.constructor.root_reference.data + (f"({fields})" if op.fields else "")
        if isinstance(op, func.CallOp):
            return f"@{op.callee.root_reference.data}(" + ", ".join(self.name(v) for v in op.operands) + ")"
        if isinstance(op, graph.IfOp | graph.WhileOp | graph.MatchOp):
            return ""
        if isinstance(op, InfersResultTypes) and not isinstance(op, dynshape.AssertOp | dynshape.BindOp):
            return self.call(op)
        raise PrintError(f"'{op.name}' has no text form")

    def constant(self, op: graph.ConstantOp) -> str:
        if op.result.type.get_shape():
            raise PrintError("only scalar constants have a text form; keep tensors in MLIR or .npz files")
        value = dense_to_array(op.value).item()
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, float):
            value = float_text(value)
        return f"{dtype_name(op.result.type.element_type)}({value})"

    def call(self, op: Operation) -> str:
        name = op.name.removeprefix("graph.") if isinstance(op, GraphOp) else op.name
        args = [self.name(v) for v in op.operands]
        args += [f"{k}={literal_text(v)}" for k, v in op.properties.items()]
        if isinstance(op, GraphOp) and op.ELEMENT_TYPE_FROM_RESULT:
            args.append(f"type={type_text(op.results[0].type)}")
        return f"{name}({', '.join(args)})"

    def slice(self, op: graph.SliceOp) -> str:
        items = []
        for (start, end), step in zip(op.bounds(), op.steps.get_values()):
            s = "" if start == 0 else self.name(start) if isinstance(start, SSAValue) else str(start)
            e = "" if end == END else self.name(end) if isinstance(end, SSAValue) else str(end)
            items.append(f"{s}:{e}" + (f":{step}" if step != 1 else ""))
        return f"{self.name(op.input)}[{', '.join(items)}]"

    # -- control flow -------------------------------------------------------------------------
    def control(self, op: Operation, targets: str) -> None:
        if isinstance(op, graph.IfOp):
            self.line(f"let {targets} = if {self.name(op.condition)} {{")
            self.block_body(op.then_region.block)
            self.line("} else {")
            self.block_body(op.else_region.block)
            self.line("}")
        elif isinstance(op, graph.WhileOp):
            cond, body = op.cond_region.block, op.body_region.block
            for a, b in zip(cond.args, body.args):
                self.names[b] = self.name(a)[1:]  # both regions bind the same names
            inits = ", ".join(f"{self.name(a)} = {self.name(i)}" for a, i in zip(cond.args, op.inits))
            self.line(f"let {targets} = while ({inits}) cond {{")
            self.block_body(cond)
            self.line("} do {")
            self.block_body(body)
            self.line("}")
        else:
            assert isinstance(op, graph.MatchOp)
            self.line(f"let {targets} = match {self.name(op.subject)} {{")
            self.indent += 1
            for ctor, region in zip(op.case_names(), op.case_regions):
                binders = ", ".join(self.name(a) for a in region.block.args)
                self.line(f"{ctor}{f'({binders})' if binders else ''} => {{")
                self.block_body(region.block)
                self.line("}")
            self.indent -= 1
            self.line("}")


def named_dim_checks(f: func.FuncOp) -> tuple[dict[int, dict[int, str]], set[Operation]]:
    """Recognise the checks the frontend emits for named dims (`dynshape.dim` of two
    parameters, `arith.cmpi eq`, and a `dynshape.assert` carrying the dim's name in
    NAMED_DIM_ATTR) so that they print as names in the signature again.
    Returns {param: {dim: name}} and the ops they cover."""
    named: dict[int, dict[int, str]] = {}
    covered: set[Operation] = set()
    args = list(f.body.block.args)
    for op in f.body.block.ops:
        dim_name = op.attributes.get(NAMED_DIM_ATTR) if isinstance(op, dynshape.AssertOp) else None
        cmp = op.condition.owner if dim_name is not None else None
        if not isinstance(dim_name, StringAttr) or not isinstance(cmp, arith.CmpiOp) or cmp.predicate.value.data != 0:
            continue
        dim_ops = [v.owner for v in cmp.operands]
        if not all(isinstance(d, dynshape.DimOp) and d.source in args for d in dim_ops):
            continue
        for d in dim_ops:
            named.setdefault(args.index(d.source), {})[d.index.value.data] = dim_name.data
            covered.add(d)
        covered.update((cmp, op))
    # Only drop dims whose every use is a covered check.
    covered = {op for op in covered if all(u.operation in covered for r in op.results for u in r.uses)}
    return named, covered


def print_nb(module: ModuleOp) -> str:
    """The module in the `.nb` text format; PrintError if it uses what the format lacks."""
    return NbPrinter().module(module)
