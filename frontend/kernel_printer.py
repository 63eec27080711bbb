"""Print a loop-level kernel (a `loop.kernel`) as a `.nb` `kernel`.

One statement per op (`let %v = %a * %b`, `%out[%i] = %v`, `foreach`, `reduce`,
`let %t = sram f32[..]`); `?` dims of the parameters become named dims (`n0`, `n1`,
...) and the `memref.dim` ops reading them their `%n0` values. Vector ops and anything
else the kernel syntax cannot say raise `PrintError` (`tile-vectorize` output stays MLIR).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import math as xmath
from xdsl.dialects import memref
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, MemRefType, f32
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects import arith, loop
from nimble.dialects.shape_functions import constant_index

INFIX: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.DivSIOp: "/",
}
COMPARE: dict[str, str] = {"olt": "<", "ogt": ">", "oeq": "==", "slt": "<", "sgt": ">", "eq": "=="}
FUNCTIONS: dict[type[Operation], str] = {
    xmath.ExpOp: "exp", xmath.LogOp: "log", xmath.SqrtOp: "sqrt", xmath.TanhOp: "tanh", xmath.AbsFOp: "abs",
    xmath.ErfOp: "erf", arith.MaximumfOp: "max", arith.MinimumfOp: "min", arith.SelectOp: "select",
}


class KernelPrinter:
    """Writes one kernel through `line(text)` with `indent` managed here."""

    def __init__(self, line: Callable[[str], None], error: type[Exception], dtype_name: Callable):
        self.out = line
        self.dtype_name = dtype_name
        self.error = error
        self.depth = 0
        self.names: dict[SSAValue, str] = {}
        self.skip: set[Operation] = set()
        self.counter = 0

    def line(self, text: str) -> None:
        self.out("  " * self.depth + text)

    def name(self, value: SSAValue) -> str:
        if value not in self.names:
            hint = value.name_hint
            taken = set(self.names.values())
            if hint and f"%{hint}" not in taken:
                base = hint
            else:
                base, self.counter = f"v{self.counter}", self.counter + 1
            candidate, n = f"%{base}", 0
            while candidate in taken:
                n += 1
                candidate = f"%{base}_{n}"
            self.names[value] = candidate
        return self.names[value]

    # -- the kernel ------------------------------------------------------------------------
    def kernel(self, f: loop.KernelOp) -> None:
        params = []
        dim_names: dict[tuple[int, int], str] = {}
        for i, arg in enumerate(f.body.block.args):
            if not isinstance(arg.type, MemRefType):
                raise self.error(f"kernel @{f.sym_name.data}: parameter {i} is not a buffer")
            shape = arg.type.get_shape()
            dims = []
            for axis, d in enumerate(shape):
                if d < 0:
                    dim_names[(i, axis)] = f"n{len(dim_names)}"
                    dims.append(dim_names[(i, axis)])
                else:
                    dims.append(str(d))
            params.append(f"{self.name(arg)}: {self.dtype_name(arg.type.get_element_type())}[{', '.join(dims)}]")
        args = list(f.body.block.args)
        for op in f.body.block.ops:  # dims of parameters are the named dims' values
            if isinstance(op, memref.DimOp) and op.source in args and constant_index(op.index) is not None:
                key = (args.index(op.source), constant_index(op.index))
                if key in dim_names:
                    self.names[op.result] = f"%{dim_names[key]}"
                    self.skip.add(op)
        for op in f.body.block.ops:  # the axis constants of those dims
            if isinstance(op, arith.ConstantOp) and op.result.uses and all(u.operation in self.skip
                                                                            for u in op.result.uses):
                self.skip.add(op)
        self.line(f"kernel @{f.sym_name.data}({', '.join(params)}) {{")
        self.body(f.body.block)
        self.line("}")

    def body(self, block: Block) -> None:
        self.depth += 1
        for op in block.ops:
            if op in self.skip or isinstance(op, loop.ReturnOp | loop.YieldOp) or self.implicit(op):
                continue
            self.statement(op)
        self.depth -= 1

    @staticmethod
    def implicit(op: Operation) -> bool:
        """Constants nobody reads, or read only as the unit step the text leaves out."""
        if not isinstance(op, arith.ConstantOp):
            return False
        return all(isinstance(u.operation, loop._LoopOp) and u.operation.step is op.result
                   and constant_index(op.result) == 1 for u in op.result.uses)

    def statement(self, op: Operation) -> None:
        if isinstance(op, memref.StoreOp):
            self.line(f"{self.name(op.memref)}[{self.indices(op.indices)}] = {self.name(op.value)}")
        elif isinstance(op, loop.ForeachOp):
            self.line(f"foreach {self.loop_header(op)} {{")
            self.body(op.body.block)
            self.line("}")
        elif isinstance(op, loop.ReduceOp):
            self.reduce(op)
        elif isinstance(op, loop.AllocOp):
            sizes = iter(op.dynamic_sizes)
            dims = [self.name(next(sizes)) if d < 0 else str(d) for d in op.memref.type.get_shape()]
            element = self.dtype_name(op.memref.type.get_element_type())
            self.line(f"let {self.name(op.memref)} = {op.level.data} {element}[{', '.join(dims)}]")
        elif isinstance(op, arith.IndexCastOp) and all(isinstance(u.operation, arith.SIToFPOp) for u in op.result.uses):
            return  # printed as f32(%i) by the conversion that uses it
        else:
            self.line(f"let {self.name(op.results[0]) if len(op.results) == 1 else self.fail(op)} = {self.expression(op)}")

    def fail(self, op: Operation) -> str:
        raise self.error(f"'{op.name}' has no kernel text form")

    def loop_header(self, op: loop._LoopOp) -> str:
        text = f"{self.name(op.iv)} = {self.name(op.lower)} to {self.name(op.upper)}"
        if constant_index(op.step) != 1:
            text += f" step {self.name(op.step)}"
        if op.schedule is not None:
            entries = [n.data if n.data in loop.FLAG_FIELDS else f"{n.data}={v.data}"
                       for n, v in zip(op.schedule.entries, op.schedule.values)]
            text += f" schedule({', '.join(entries)})"
        return text

    def reduce(self, op: loop.ReduceOp) -> None:
        if len(op.results) != 1:
            raise self.error("a reduce with several accumulators has no kernel text form")
        header = self.loop_header(op)
        kind = op.kinds[0]
        # `reduce(add) %k = a to b [step s] init(x) [schedule(..)] { .. }`
        before, _, sched = header.partition(" schedule(")
        sched = f" schedule({sched}" if sched else ""
        self.line(f"let {self.name(op.results[0])} = reduce({kind}) {before} init({self.name(op.inits[0])}){sched} {{")
        self.depth += 1
        body = op.body.block
        for inner in body.ops:
            if self.implicit(inner):
                continue
            if isinstance(inner, loop.YieldOp):
                self.line(self.name(inner.values[0]))
            elif isinstance(inner, memref.StoreOp | loop.ForeachOp | loop.ReduceOp | loop.AllocOp):
                raise self.error(f"'{inner.name}' inside a reduce has no kernel text form")
            else:
                self.statement(inner)
        self.depth -= 1
        self.line("}")

    def indices(self, values) -> str:
        return ", ".join(self.name(v) for v in values)

    def expression(self, op: Operation) -> str:
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, IntegerAttr) and isinstance(op.result.type, IndexType):
                return str(value.value.data)
            if isinstance(value, FloatAttr) and op.result.type == f32 and math.isfinite(value.value.data):
                text = repr(float(value.value.data))
                return text if "." in text or "e" in text else f"{text}.0"
            raise self.error(f"constant {value} has no kernel text form (index or f32 only)")
        if type(op) in INFIX:
            return f"{self.name(op.operands[0])} {INFIX[type(op)]} {self.name(op.operands[1])}"
        if isinstance(op, arith.CmpfOp | arith.CmpiOp):
            table = arith.CMPF_COMPARISON_OPERATIONS if isinstance(op, arith.CmpfOp) else arith.CMPI_COMPARISON_OPERATIONS
            symbol = COMPARE.get(table[op.predicate.value.data])
            if symbol is None:
                raise self.error(f"comparison '{table[op.predicate.value.data]}' has no kernel text form")
            return f"{self.name(op.lhs)} {symbol} {self.name(op.rhs)}"
        if isinstance(op, arith.NegfOp):
            return f"-{self.name(op.operand)}"
        if type(op) in FUNCTIONS:
            return f"{FUNCTIONS[type(op)]}({self.indices(op.operands)})"
        if isinstance(op, memref.LoadOp):
            return f"{self.name(op.memref)}[{self.indices(op.indices)}]"
        if isinstance(op, arith.SIToFPOp) and isinstance(op.input.owner, arith.IndexCastOp) \
                and op.result.type == f32 and isinstance(op.input.owner.input.type, IndexType):
            return f"f32({self.name(op.input.owner.input)})"
        raise self.error(f"'{op.name}' has no kernel text form")
