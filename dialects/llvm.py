"""`llvm` as MLIR specifies it: xdsl's llvm dialect, with `llvm.fcmp` and `llvm.select`
re-declared to take vectors as LLVM does, and the casts xdsl 0.75 lacks (`llvm.fptosi`,
`llvm.fptoui`, `llvm.uitofp`).

xdsl 0.75 types `llvm.fcmp`'s result as a scalar i1 (its parser builds one whatever the
operands) and `llvm.select`'s condition as a scalar i1, while LLVM compares vectors
elementwise into `<16 x i1>` and selects lane by lane, which `lower-loops-to-llvm` emits
for every vectorised comparison. As in `nimble.dialects.arith`, the ops keep xdsl's
classes as bases (xdsl's llvmlite converter matches them by class) and their names;
`nimble.registry` registers this dialect as `llvm` in place of xdsl's. The two casts are
declared like xdsl's own and added to its converter's cast table, so `xdsl.backend.llvm`
translates them like any other cast (drop them when the xdsl pin moves to a version that
has them).

    %m = llvm.fcmp "olt" %a, %b : vector<16xf32>
    %s = llvm.select %m, %a, %b : vector<16xi1>, vector<16xf32>
"""

from __future__ import annotations

from typing import Any, ClassVar

from xdsl.backend.llvm import convert_op
from xdsl.dialects import llvm as _xdsl
from xdsl.dialects.builtin import I1, AnyFloatConstr, IntegerAttr, VectorType, i1, i64
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import AnyAttr, IRDLOperation, VarConstraint, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.irdl.operations import ParsePropInAttrDict
from xdsl.utils.exceptions import VerifyException

from nimble.dialects.arith import verify_same_shape, with_element

BOOL_LIKE = I1 | VectorType.constr(I1)
FLOAT_LIKE = AnyFloatConstr | VectorType.constr(AnyFloatConstr)


@irdl_op_definition
class FCmpOp(_xdsl.FCmpOp):
    """Float comparison, elementwise on vectors (the result i1 of the operands' shape).

    Example: `%m = llvm.fcmp "olt" %a, %b : vector<16xf32>`
    """

    name = "llvm.fcmp"
    T: ClassVar = VarConstraint("T", FLOAT_LIKE)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(BOOL_LIKE)
    predicate = prop_def(IntegerAttr[i64])
    fastmathFlags = prop_def(_xdsl.FastMathAttr, default_value=_xdsl.FastMathAttr(None))
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, lhs: Operation | SSAValue, rhs: Operation | SSAValue, predicate: str | IntegerAttr,
                 attributes: dict[str, Attribute] | None = None):
        if isinstance(predicate, str):
            predicate = IntegerAttr(_xdsl.FCmpPredicateFlag(predicate).to_int(), i64)
        lhs = SSAValue.get(lhs)
        IRDLOperation.__init__(self, operands=[lhs, rhs], result_types=[with_element(lhs.type, i1)],
                               attributes=attributes or {}, properties={"predicate": predicate})

    def verify_(self) -> None:
        if self.res.type != with_element(self.lhs.type, i1):
            raise VerifyException(f"'{self.name}' op result must be i1 of the operands' shape, got {self.res.type}")


@irdl_op_definition
class SelectOp(_xdsl.SelectOp):
    """Chooses `lhs` where `cond` holds, else `rhs`; a vector condition chooses lane by lane.

    Example: `%s = llvm.select %m, %a, %b : vector<16xi1>, vector<16xf32>`
    """

    name = "llvm.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(BOOL_LIKE)
    lhs = operand_def(T)
    rhs = operand_def(T)
    res = result_def(T)
    fastmathFlags = prop_def(_xdsl.FastMathAttr, default_value=_xdsl.FastMathAttr(None))
    irdl_options = (ParsePropInAttrDict(),)
    # The base class's format-built printer and parser give way to this class's format.
    parse = Operation.__dict__["parse"]
    print = Operation.print

    def verify_(self) -> None:
        if self.cond.type != i1:
            verify_same_shape(self, self.cond.type, self.res.type, "a vector condition and the result")


@irdl_op_definition
class FPToSIOp(_xdsl.GenericCastOp):
    """Float to signed integer, rounding toward zero (elementwise on vectors).

    Example: `%i = llvm.fptosi %x : vector<16xf32> to vector<16xi32>`
    """

    name = "llvm.fptosi"


@irdl_op_definition
class FPToUIOp(_xdsl.GenericCastOp):
    """Float to unsigned integer, rounding toward zero (elementwise on vectors).

    Example: `%i = llvm.fptoui %x : vector<16xf32> to vector<16xi32>`
    """

    name = "llvm.fptoui"


@irdl_op_definition
class UIToFPOp(_xdsl.GenericCastOp):
    """Unsigned integer to float (elementwise on vectors).

    Example: `%x = llvm.uitofp %i : i64 to f64`
    """

    name = "llvm.uitofp"


for _cast, _instruction in ((FPToSIOp, "fptosi"), (FPToUIOp, "fptoui"), (UIToFPOp, "uitofp")):
    convert_op._CAST_OP_NAMES.setdefault(_cast, _instruction)

REDECLARED: tuple[type[Operation], ...] = (FCmpOp, SelectOp)
"""The ops declared here in place of xdsl's."""
ADDED: tuple[type[Operation], ...] = (FPToSIOp, FPToUIOp, UIToFPOp)
"""The ops declared here that xdsl's dialect lacks."""

_BY_NAME = {op.name: op for op in REDECLARED}
LLVM = Dialect("llvm", [*(_BY_NAME.get(op.name, op) for op in _xdsl.LLVM.operations), *ADDED],
               list(_xdsl.LLVM.attributes))


def __getattr__(name: str) -> Any:
    """Every other name is xdsl's (`llvm.FuncOp`, `llvm.LLVMPointerType`, ...)."""
    return getattr(_xdsl, name)
