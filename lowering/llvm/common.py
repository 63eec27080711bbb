"""What the LLVM lowering's modules share: pointer and fast-math constants, types, the
buffer record, and how a function is declared."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    VectorType,
    i16,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Region, SSAValue

from nimble.dialects import arith, llvm, loop
from nimble.errors import CompileError

PTR = llvm.LLVMPointerType()
FAST = llvm.FastMathAttr([FastMathFlag.ALLOW_CONTRACT])
REASSOC = llvm.FastMathAttr([FastMathFlag.ALLOW_CONTRACT, FastMathFlag.REASSOC])
EXACT = llvm.FastMathAttr(None)  # `loop.EXACT_MARK`


class LLVMLoweringError(CompileError):
    """An op in a kernel that this lowering does not handle."""


def llvm_type(t: Attribute) -> Attribute:
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, BFloat16Type):  # stored and carried as its bits; only converted (extf/truncf)
        return i16
    return t


def type_suffix(t: Attribute) -> str:
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{type_suffix(t.get_element_type())}"
    if isinstance(t, AnyFloat):
        return f"f{t.bitwidth}"
    return f"i{t.width.data}"


@dataclass
class Buffer:
    ptr: SSAValue
    dims: list[SSAValue]  # i64 values (constants for static dims)
    code: int = 0  # what a checked access out of bounds reports (`runtime.bounds`)


SOME_LANES = object()
"""A masked access whose mask is not a lane count (`MemoryLowering.lanes_taken`)."""


@dataclass
class LazyBuffer:
    """A hoisted heap buffer to free: the slot that holds its address (0 if never made)."""

    slot: SSAValue


def llvm_function(name: str, t: llvm.LLVMFunctionType, linkage: str, body: Region | None = None) -> llvm.FuncOp:
    """An `llvm.func` with the properties xdsl's parser gives one (`unnamed_addr` 0, which
    its printer leaves out), so that the printed IR parses back to the same module."""
    return llvm.FuncOp(name, t, linkage=llvm.LinkageAttr(linkage), body=body,
                       other_props={"unnamed_addr": IntegerAttr(0, 64)})


def bytes_of(t: VectorType) -> VectorType:
    return loop.vector_type(IntegerType(8), tuple(t.get_shape()))


def byte_size(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    return max(1, t.width.data // 8)


def product(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def is_constant(value: SSAValue) -> bool:
    """A constant, or a vector of one constant."""
    owner = value.owner
    if isinstance(owner, vector.BroadcastOp):
        owner = owner.source.owner
    return isinstance(owner, arith.ConstantOp)

