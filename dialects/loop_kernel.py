"""`loop.kernel` and `loop.return`: a loop-level kernel is an op of its own.

A kernel is a function over buffers (`memref` arguments, no results: it writes its
outputs) whose body holds `loop.foreach` / `loop.reduce` / `loop.alloc` nests; the
backends compile it (LLVM, OpenCL, the spatial target) and the VM launches it by its
symbol. Being an op rather than a `func.func` with a mark, it is found by its class
(`loop.is_kernel`, `loop.kernels_of`), its verifier says what a kernel may be, and a host
function can never be taken for one. The text form is `func.func`'s with the other
keyword: `loop.kernel @k(%x: memref<?xf32>, %out: memref<?xf32>) { ... loop.return }`;
the marks later stages leave (`nimble.device`, `nimble.cooperative`, ...) stay in its
attribute dictionary.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, StringAttr, SymbolNameConstraint
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.ir import Attribute, Block, BlockArgument, Region
from xdsl.irdl import IRDLOperation, irdl_op_definition, lazy_traits_def, prop_def, region_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

_RESERVED = ("sym_name", "function_type")


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A loop-level kernel: buffers in, buffers written, loop nests inside.

    Example: `loop.kernel @relu(%x: memref<?xf32>, %y: memref<?xf32>) { ... loop.return }`
    """

    name = "loop.kernel"
    body = region_def()
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, inputs: Sequence[Attribute], region: Region | None = None):
        if region is None:
            region = Region(Block(arg_types=inputs))
        super().__init__(properties={"sym_name": StringAttr(name),
                                     "function_type": FunctionType.from_lists(list(inputs), [])},
                         regions=[region])

    @property
    def args(self) -> tuple[BlockArgument, ...]:
        """The kernel's buffers, in order."""
        return self.body.block.args

    def update_function_type(self) -> None:
        """Take the input types from the entry block (after a pass changed its arguments)."""
        self.function_type = FunctionType.from_lists([a.type for a in self.args], [])

    def verify_(self) -> None:
        if self.function_type.outputs.data:
            raise VerifyException(f"'{self.name}' op returns nothing (it writes its output buffers), "
                                  f"not {', '.join(map(str, self.function_type.outputs.data))}")
        if not self.body.blocks:
            raise VerifyException(f"'{self.name}' op must have a body")
        if self.function_type.inputs.data != tuple(self.body.block.arg_types):
            raise VerifyException(f"'{self.name}' op entry block arguments must have the kernel's input types")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        start = parser.pos
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=_RESERVED)[:7]
        if outputs or arg_attrs is not None or res_attrs is not None:
            parser.raise_error(f"'{cls.name}' op has no results (it writes its output buffers) and no argument "
                               "or result attributes", at_position=start, end_position=start + len(name) + 1)
        kernel = cls(name, inputs, region)
        if extra is not None:
            kernel.attributes |= extra.data
        return kernel

    def print(self, printer: Printer) -> None:
        print_func_op_like(printer, self.sym_name, self.function_type, self.body, self.attributes,
                           reserved_attr_names=_RESERVED)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends a kernel's body.

    Example: `loop.return`
    """

    name = "loop.return"
    assembly_format = "attr-dict"
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(KernelOp)))
