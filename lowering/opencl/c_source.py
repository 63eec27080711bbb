"""What the C-family emitter shares with its users: the target `Flavor` table, the
emitted kernel's `Param`s and `Phase`s, and the scalar expression tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import is_side_effect_free

from nimble.dialects import arith, loop


class NoDeviceLowering(Exception):
    """A kernel uses something this backend cannot express (the message says what)."""


@dataclass(frozen=True)
class Flavor:
    """What one C-family target spells differently."""

    name: str
    kernel: str  # qualifier before `void` on a launchable function
    global_space: str  # address-space qualifier of buffer pointers
    restrict: str
    grid_id: str  # the thread's position along grid axis {0}
    grid_size: str  # the grid's extent along axis {0}
    grid_dims: int
    types: dict[str, str]  # element type (as printed by xdsl) -> C type
    functions: dict[type[Operation], str]  # math op -> function name
    int_max: str  # integer max/min builtins
    int_min: str
    tile: tuple[int, int] | None = None
    """Register tile (rows, lanes) per thread for the two innermost grid loops, where
    the body allows it (`c_tiles`); None: one element per thread. The lanes are vectors
    of the widest `vector_widths` entry that divides them."""
    vector_widths: tuple[int, ...] = (2, 4, 8, 16)
    group_id: str | None = None
    """The work-group's position along grid axis {0}; None: no work-group phases."""
    group_count: str = ""  # the number of work-groups along axis {0}
    local_id: str = ""  # the work-item's place in its (one-dimensional) work-group
    local_size: str = ""  # the work-group's number of work-items
    local_space: str = ""  # address-space qualifier of work-group memory
    barrier: str = ""  # statement: every work-item of the group waits, memory then agrees
    no_contract: str = ""
    """A pragma opening a compound statement whose float ops are not contracted into
    fused multiply-adds (`loop.EXACT_MARK` ops are emitted in one); empty: none needed."""

    def __post_init__(self) -> None:
        if self.tile is not None and (self.tile[0] < 1 or not any(self.tile[1] % w == 0 for w in self.vector_widths)):
            raise ValueError(f"{self.name}: a register tile needs rows >= 1 and lanes a multiple of one of "
                             f"{self.vector_widths}")

    @property
    def tile_vector(self) -> int:
        """The vector width of the register tile's lanes."""
        return max(w for w in self.vector_widths if self.tile[1] % w == 0)


@dataclass(frozen=True)
class Param:
    """One argument of the emitted function, in order: `kind` is `buffer` (pointer,
    offset, then `dims`: the axes that are `?`), `index`, or `scratch` (a pointer to
    device memory the host provides for a staging buffer of the kernel, `alloc`: one
    after the kernel function's own arguments)."""

    kind: str
    name: str
    ctype: str = ""
    dims: tuple[int, ...] = ()
    alloc: loop.AllocOp | None = None
    per_group: bool = False
    """A `scratch` buffer of a work-group phase: one copy per work-group (`c_groups`)."""

    def arguments(self, f: Flavor) -> list[tuple[str, bool]]:
        """The function arguments this parameter takes, in order: (declaration, whether
        it is a pointer; the others are 64-bit ints)."""
        if self.kind == "index":
            return [(f"long {self.name}", False)]
        pointer = [(f"{f.global_space} {self.ctype} *{f.restrict} {self.name}", True)]
        if self.kind == "scratch":
            return pointer
        return pointer + [(f"long {self.name}_off", False)] + [(f"long {self.name}_d{k}", False) for k in self.dims]


@dataclass
class Phase:
    name: str
    grid: list[tuple[SSAValue, SSAValue, SSAValue]]
    """(lower, upper, step) of each mapped loop, innermost (grid axis 0) first."""
    tile: tuple[int, ...] = ()
    """Iterations per thread along each grid axis (a register tile), 1 where absent."""
    body: list[str] = field(default_factory=list)
    group: bool = False
    """A work-group phase: `grid` counts work-groups, not threads (`c_groups`)."""
    allocs: tuple[loop.AllocOp, ...] = ()
    """The buffers of a work-group phase held in scratch memory, one copy per group."""
    split: bool = False
    """A work-group phase whose groups along the grid axis after `grid`'s may split an
    iteration's register tiles between them (`c_groups.split_axis`)."""


@dataclass
class KernelSource:
    name: str
    params: list[Param]
    phases: list[Phase]
    text: str
    kernel: loop.KernelOp


# ---------------------------------------------------------------------------------------
# Scalar expression tables


INFIX: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/",
    arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.DivSIOp: "/", arith.RemSIOp: "%",
    arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
}
UNSIGNED_INFIX: dict[type[Operation], str] = {arith.DivUIOp: "/", arith.RemUIOp: "%"}
HELPERS: dict[type[Operation], str] = {arith.FloorDivSIOp: "nb_floordiv", arith.CeilDivSIOp: "nb_ceildiv"}
CASTS = (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.FPToSIOp, arith.IndexCastOp, arith.ExtSIOp,
          arith.TruncIOp)
UNSIGNED_CASTS = (arith.ExtUIOp, arith.UIToFPOp)
CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
         "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}
CMPF: dict[str, str] = {
    "oeq": "({a} == {b})", "ogt": "({a} > {b})", "oge": "({a} >= {b})", "olt": "({a} < {b})",
    "ole": "({a} <= {b})", "one": "({a} < {b} || {a} > {b})", "ord": "(!isnan({a}) && !isnan({b}))",
    "ueq": "!({a} < {b} || {a} > {b})", "ugt": "!({a} <= {b})", "uge": "!({a} < {b})", "ult": "!({a} >= {b})",
    "ule": "!({a} > {b})", "une": "({a} != {b})", "uno": "(isnan({a}) || isnan({b}))",
    "false": "0", "true": "1",
}
NAN_MINMAX = {arith.MaximumfOp: ">", arith.MinimumfOp: "<"}
"""arith.maximumf/minimumf propagate NaN (like numpy), unlike C's fmax/fmin."""
VECTOR_TESTS = {arith.MaximumfOp: "isgreater", arith.MinimumfOp: "isless",
                loop.Combiner.MAX: "isgreater", loop.Combiner.MIN: "isless"}
"""The lane-wise comparison of a NaN-propagating max/min op or combiner on vectors."""


def vector_pick(test: str, a: str, b: str) -> str:
    """Vectors: `b` in the lanes where it is NaN or `test(b, a)` holds, else `a`."""
    return f"select({a}, {b}, isnan({b}) | {test}({b}, {a}))"

COMBINE: dict[loop.Combiner, Callable[[str, str, bool], str]] = {
    loop.Combiner.ADD: lambda a, b, _f: f"{a} + {b}",
    loop.Combiner.MUL: lambda a, b, _f: f"{a} * {b}",
    loop.Combiner.MAX: lambda a, b, f: f"(isnan({b}) || {b} > {a}) ? {b} : {a}" if f else f"{b} > {a} ? {b} : {a}",
    loop.Combiner.MIN: lambda a, b, f: f"(isnan({b}) || {b} < {a}) ? {b} : {a}" if f else f"{b} < {a} ? {b} : {a}",
}

C_PREAMBLE = """\
static inline long nb_floordiv(long a, long b) { long q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; }
static inline long nb_ceildiv(long a, long b) { long q = a / b; return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q; }
"""


def type_key(t: Attribute) -> str:
    if isinstance(t, IndexType):
        return "index"
    if isinstance(t, IntegerType | Float16Type | Float32Type | Float64Type | BFloat16Type):
        return str(t)
    raise NoDeviceLowering(f"element type {t}")


def unsigned_type(ctype: str) -> str:
    """The unsigned C type of an integer type (i1 is already `uchar`)."""
    return ctype if ctype.startswith("u") else f"u{ctype}"


def is_float(t: Attribute) -> bool:
    return isinstance(t, Float16Type | Float32Type | Float64Type | BFloat16Type)


def float_literal(value: float, t: Attribute) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    text = repr(float(value))
    if "e" not in text and "." not in text:
        text += ".0"
    return f"{text}f" if isinstance(t, Float32Type | Float16Type) else text


class CBuffer:
    """A buffer in scope: its pointer expression and the C expression of each dim."""

    def __init__(self, pointer: str, dims: list[str]):
        self.pointer = pointer
        self.dims = dims

    def offset(self, indices: Sequence[str]) -> str:
        if not indices:
            return "0"
        expr = indices[0]
        for dim, i in zip(self.dims[1:], indices[1:]):
            expr = f"({expr}) * {dim} + {i}"
        return expr


def is_pure_scalar(op: Operation) -> bool:
    """Scalar code with no effects and no regions, safe to repeat in every phase (a load
    repeated in a phase before the one that uses it reads a value nothing uses; loops,
    allocations, stores and prefetches have regions, a buffer or no result)."""
    if isinstance(op, memref.DimOp | memref.CollapseShapeOp | arith.ConstantOp | memref.LoadOp):
        return True
    return not op.regions and len(op.results) == 1 and not isinstance(op.results[0].type, MemRefType) \
        and is_side_effect_free(op)


def sole_inner(m: loop.ForeachOp) -> loop.ForeachOp | None:
    """The one loop in `m`'s body if the rest of it is pure scalar code, else None."""
    body = [op for op in m.body.block.ops if not isinstance(op, loop.YieldOp)]
    inner = [op for op in body if isinstance(op, loop.ForeachOp)]
    if len(inner) != 1 or any(op is not inner[0] and not is_pure_scalar(op) for op in body):
        return None
    return inner[0]


def stages_buffers(m: loop.ForeachOp) -> bool:
    """Whether each iteration of `m` allocates buffers (not registers) its nests share:
    a work-group phase (`c_groups`)."""
    return any(isinstance(op, loop.AllocOp) and op.level.data != loop.Level.REG for op in m.body.block.ops)


def is_one(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) and op.value.value.data == 1


def trip(loop_op: loop.ForeachOp) -> tuple[SSAValue, SSAValue, SSAValue]:
    return (loop_op.lower, loop_op.upper, loop_op.step)
