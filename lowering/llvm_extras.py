"""LLVM casts that xdsl 0.75's `llvm` dialect lacks (`fptosi`, `uitofp`).

They are declared like xdsl's own casts and added to its llvmlite converter's cast
table, so `xdsl.backend.llvm` translates them like any other cast. Remove this module
when the xdsl pin moves to a version that has them.
"""

from __future__ import annotations

from xdsl.backend.llvm import convert_op
from xdsl.dialects.llvm import GenericCastOp
from xdsl.irdl import irdl_op_definition


@irdl_op_definition
class FPToSIOp(GenericCastOp):
    name = "llvm.fptosi"


@irdl_op_definition
class UIToFPOp(GenericCastOp):
    name = "llvm.uitofp"


convert_op._CAST_OP_NAMES.setdefault(FPToSIOp, "fptosi")
convert_op._CAST_OP_NAMES.setdefault(UIToFPOp, "uitofp")
