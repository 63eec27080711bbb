"""`lower-loops-to-llvm`: kernels (loop + arith + math + memref + vector) → xdsl `llvm`.

xdsl can print and JIT its `llvm` dialect (through llvmlite) but has no pure-Python
lowering into it; this is that lowering, for the kernels Nimble builds. Structured
loops become basic blocks with block arguments (phis): `loop.foreach` a counted loop,
`loop.reduce` a counted loop carrying its accumulators, combined with the body's values.

Calling convention of a kernel `@k`: `void k(i64* args)`, one 64-bit slot per memref
data pointer, per `?` dim of each memref, per index argument, then the chunks' mailbox
(used by cooperative kernels: `runtime/sync.py`) and two slots for the parallel chunk
(`chunk`, `nchunks`): the first loop marked `parallel` runs only its share of
iterations. The body is an internal function with `noalias` buffer pointers,
inlined into the wrapper. Buffers are dense row-major.

Scalar ops are one table (`_BINARY`, `_CASTS`, `_MATH`); functions without an LLVM
intrinsic (tanh, erf) call the C library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref, scf, vector
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
    f32,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass

from nimble.dialects import arith, llvm
from nimble.dialects import loop
from nimble.dialects.shape_functions import constant_index
from nimble.runtime import bounds
from nimble.runtime.llvm_jit import LIBM

PTR = llvm.LLVMPointerType()
_FAST = llvm.FastMathAttr([FastMathFlag.ALLOW_CONTRACT])
_REASSOC = llvm.FastMathAttr([FastMathFlag.ALLOW_CONTRACT, FastMathFlag.REASSOC])
_EXACT = llvm.FastMathAttr(None)  # `loop.EXACT_MARK`
_PROPERTIES: dict[tuple, dict[str, Attribute]] = {}  # (see `_FunctionLowering.made`)



class LLVMLoweringError(Exception):
    """An op in a kernel that this lowering does not handle."""


def llvm_type(t: Attribute) -> Attribute:
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, MemRefType):
        return PTR
    if isinstance(t, BFloat16Type):  # stored and carried as its bits; only converted (extf/truncf)
        return i16
    return t


STACK_LIMIT = 1 << 16
"""Static buffers up to this many bytes are stack slots; larger ones (an SRAM copy of
a weight matrix) come from the heap."""


_INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp, arith.SubiOp: llvm.SubOp, arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp, arith.RemSIOp: llvm.SRemOp, arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp, arith.XOrIOp: llvm.XOrOp, arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
}
_FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp, arith.SubfOp: llvm.FSubOp, arith.MulfOp: llvm.FMulOp, arith.DivfOp: llvm.FDivOp,
}
_CASTS: dict[type[Operation], type[Operation]] = {
    arith.SIToFPOp: llvm.SIToFPOp, arith.UIToFPOp: llvm.UIToFPOp, arith.FPToSIOp: llvm.FPToSIOp,
    arith.FPToUIOp: llvm.FPToUIOp,
    arith.ExtFOp: llvm.FPExtOp, arith.TruncFOp: llvm.FPTruncOp, arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp, arith.TruncIOp: llvm.TruncOp, arith.BitcastOp: llvm.BitcastOp,
}
# Float ops that are LLVM intrinsics, by name (suffixed with the type: llvm.exp.f32).
_INTRINSICS: dict[type[Operation], str] = {
    xmath.ExpOp: "llvm.exp", xmath.LogOp: "llvm.log", xmath.SqrtOp: "llvm.sqrt", xmath.AbsFOp: "llvm.fabs",
    xmath.PowFOp: "llvm.pow",
    xmath.FloorOp: "llvm.floor", xmath.CeilOp: "llvm.ceil", xmath.RoundEvenOp: "llvm.roundeven",
    xmath.SinOp: "llvm.sin", xmath.CosOp: "llvm.cos",
    vector.FMAOp: "llvm.fma",
}
# Float functions from the C library: name for f32, name for f64.
_LIBM: dict[type[Operation], tuple[str, str]] = {
    xmath.TanhOp: ("tanhf", "tanh"),
    xmath.ErfOp: ("erff", "erf"),
    **{op: (f"{op.name[5:]}f", op.name[5:]) for op in (xmath.TanOp, xmath.AsinOp, xmath.AcosOp, xmath.AtanOp,
                                                       xmath.SinhOp, xmath.CoshOp, xmath.AsinhOp, xmath.AcoshOp,
                                                       xmath.AtanhOp)},
}
assert all(name in LIBM for names in _LIBM.values() for name in names)  # (the runtime binds these)


def _suffix(t: Attribute) -> str:
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{_suffix(t.get_element_type())}"
    if isinstance(t, AnyFloat):
        return f"f{t.bitwidth}"
    return f"i{t.width.data}"


@dataclass
class _Buffer:
    ptr: SSAValue
    dims: list[SSAValue]  # i64 values (constants for static dims)
    code: int = 0  # what a checked access out of bounds reports (`runtime.bounds`)


_SOME_LANES = object()
"""A masked access whose mask is not a lane count (`_FunctionLowering.lanes_taken`)."""


@dataclass
class _Lazy:
    """A hoisted heap buffer to free: the slot that holds its address (0 if never made)."""

    slot: SSAValue


class _FunctionLowering:
    """Translates one kernel `func.func` into an `llvm.func` (with its CFG)."""

    def __init__(self, kernel: func.FuncOp, externals: dict[str, Operation], check_bounds: bool = False):
        self.kernel = kernel
        self.externals = externals
        self.check_bounds = check_bounds
        self.allocated = 0  # buffers allocated so far (their bounds codes)
        self.values: dict[SSAValue, SSAValue] = {}
        self.constants: dict[object, SSAValue] = {}  # (attribute, type), or a type (undef) -> value
        self.buffers: dict[SSAValue, _Buffer] = {}
        self.numbered: dict[tuple, SSAValue] = {}  # (block, key, operands) of a pure op -> its result
        arg_types: list[Attribute] = []
        for arg in kernel.args:
            arg_types.append(llvm_type(arg.type))
            if isinstance(arg.type, MemRefType):
                arg_types += [i64] * sum(1 for d in arg.type.get_shape() if d < 0)
        arg_types += [i64, i64, i64]  # the chunks' mailbox (`runtime.sync`), parallel chunk, number of chunks
        self.arg_types = arg_types
        # The entry block holds the stack slots (reg buffers) and jumps to `start`, where
        # the code begins: allocas stay out of loops however late they are met.
        self.entry = Block(arg_types=arg_types)
        self.blocks: list[Block] = [self.entry]
        self.block = self.entry
        self.split: SSAValue | None = None  # i1: are the enclosing iterations split into chunks
        args = iter(self.entry.args)
        for position, arg in enumerate(kernel.args):
            if isinstance(arg.type, MemRefType):
                ptr = next(args)
                dims = [next(args) if d < 0 else self.const(d, i64) for d in arg.type.get_shape()]
                self.buffers[arg] = _Buffer(ptr, dims, position + 1)
            else:
                self.values[arg] = next(args)
        mailbox = next(args)
        self.chunk, self.nchunks = next(args), next(args)
        self.split = self.const(0, IntegerType(1))
        self._cooperate(mailbox)

    def _cooperate(self, mailbox: SSAValue) -> None:
        """For a kernel whose chunks run together (`loop.can_cooperate`): the regions all
        chunks run in step (`region` puts a barrier where a nest there uses buffers the
        nests since the last barrier wrote, or writes buffers they read), the loops split
        between chunks (each nest's outer loop and the loops right inside it, unless an
        iteration allocates a buffer of its own), and this chunk's count of barriers
        passed."""
        self.regions: set[Block] = set()
        self.split_loops: set[Operation] = set()
        self.shared_buffers: list[SSAValue] = []
        self.lazy: dict[SSAValue, SSAValue] = {}
        """Hoisted heap buffers not made yet: the memref -> the slot for its address."""
        if not loop.can_cooperate(self.kernel):
            return
        self.mailbox = self.emit(llvm.IntToPtrOp(mailbox))
        self.regions = set(loop.cooperative_regions(self.kernel))
        for block in self.regions:
            for op in block.ops:
                if isinstance(op, loop.ForeachOp):
                    self.split_loops.add(op)
                    # Not into an iteration that fills a buffer of its own (a packed
                    # panel): each chunk would fill only its share, then read all of it.
                    if not any(isinstance(o, loop.AllocOp) for o in op.body.block.ops):
                        self.split_loops.update(o for o in op.body.block.ops if isinstance(o, loop.ForeachOp))
        slot = self.emit(llvm.AllocaOp(self.const(1, i64), i64, alignment=8))
        self.barriers = self.emit(llvm.IntToPtrOp(self.emit(llvm.PtrToIntOp(slot, i64))))  # (see `alloc`)
        self.emit(llvm.StoreOp(self.const(0, i64), self.barriers))

    def barrier(self) -> None:
        """Wait until every chunk gets here (`nimble_barrier`)."""
        name = self.external("nimble_barrier", llvm.LLVMVoidType(), [PTR, i64, PTR])
        self.emit(llvm.CallOp(name, self.mailbox, self.nchunks, self.barriers))

    # -- helpers -----------------------------------------------------------------------
    def emit(self, op: Operation) -> SSAValue | None:
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        """A constant of the function, made once in the entry block (a constant is no
        instruction in LLVM IR: the text is the same wherever it is made)."""
        attr = FloatAttr(value, t) if isinstance(t, AnyFloat) else IntegerAttr(value, t)
        return self.constant_value(attr, t)

    def constant_value(self, attr: Attribute, t: Attribute) -> SSAValue:
        key = (attr, t)  # (attributes compare by value: -0.0 is not 0.0)
        made = self.constants.get(key)
        if made is None:
            made = self.constants[key] = self.emit_at_entry(llvm.ConstantOp(attr, t))
        return made

    def undef(self, t: Attribute) -> SSAValue:
        made = self.constants.get(t)
        if made is None:
            made = self.constants[t] = self.emit_at_entry(llvm.UndefOp(t))
        return made

    def emit_at_entry(self, op: Operation) -> SSAValue:
        saved, self.block = self.block, self.entry
        try:
            return self.emit(op)
        finally:
            self.block = saved

    def made(self, key: tuple, operands: Sequence[SSAValue], result_types: Sequence[Attribute],
             build: Callable[[], Operation]) -> SSAValue | None:
        """Emit the op `build()` makes (`key[0]` its class; the rest of `key` all its
        properties depend on). After the first op of a key, the next are made by `create`
        with that op's properties: about 3x faster than the ops' own constructors, which
        check and convert their arguments each time (5 against 13-15 us for an add, 36
        for a GEP), and a large kernel lowers to ~10^4 ops."""
        properties = _PROPERTIES.get(key)
        if properties is None:
            op = build()
            _PROPERTIES[key] = dict(op.properties)
            return self.emit(op)
        op = key[0].create(operands=operands, result_types=result_types, properties=dict(properties))
        return self.emit(op)

    def pure(self, key: tuple, operands: Sequence[SSAValue], result_type: Attribute,
             build: Callable[[], Operation]) -> SSAValue:
        """`made`, for an op without side effects: one made before in this block from
        the same operands is its value (a register tile's loads each computed the
        address's row offset again: ResNet-18's kernels held 10% more LLVM instructions,
        parsed, verified and optimised by LLVM before its CSE removed them)."""
        number = (self.block, key, *operands)
        value = self.numbered.get(number)
        if value is None:
            value = self.numbered[number] = self.made(key, operands, (result_type,), build)
        return value

    def binary_op(self, cls: type[Operation], a: SSAValue, b: SSAValue,
                  flags: llvm.FastMathAttr | None = None) -> SSAValue:
        """`cls(a, b)` (a float op: `cls(a, b, flags)`), typed like `a`."""
        return self.pure((cls, flags), (a, b), a.type, lambda: cls(a, b) if flags is None else cls(a, b, flags))

    # Index arithmetic (i64).
    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_op(llvm.AddOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_op(llvm.SubOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_op(llvm.MulOp, a, b)

    def sdiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_op(llvm.SDivOp, a, b)

    def srem(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary_op(llvm.SRemOp, a, b)

    def new_block(self, arg_types: Sequence[Attribute] = ()) -> Block:
        block = Block(arg_types=arg_types)
        self.blocks.append(block)
        return block

    def v(self, value: SSAValue) -> SSAValue:
        return self.values[value]

    def external(self, name: str, result: Attribute, args: Sequence[Attribute]) -> str:
        if name not in self.externals:
            self.externals[name] = _function(name, llvm.LLVMFunctionType(args, result), "external")
        return name

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        return self.emit(llvm.CallIntrinsicOp(f"{name}.{_suffix(result)}", args, [result]))

    # -- the function ---------------------------------------------------------------------
    def run(self) -> llvm.FuncOp:
        start = self.new_block()
        self.block = start
        self.region(self.kernel.body.block)
        self.entry.add_op(llvm.BrOp(start))
        body = Region(self.blocks)
        name = f"{self.kernel.sym_name.data}_body"
        return _function(name, llvm.LLVMFunctionType(self.arg_types), "internal", body)

    def region(self, block: Block, after: Callable[[Operation], None] | None = None) -> None:
        """Lower the ops of `block`; `after(op)` is called after each."""
        frees: list[SSAValue | _Lazy] = []
        together = block in self.regions
        reads: set[SSAValue] = set()  # buffers read and written since the last barrier
        writes: set[SSAValue] = set()
        for op in block.ops:
            if isinstance(op, (loop.YieldOp, scf.YieldOp, func.ReturnOp)):
                continue
            if together:
                op_reads, op_writes = loop.accessed_buffers(op)
                if op_writes & (reads | writes) or op_reads & writes:
                    self.barrier()  # the other chunks' shares of the nests before may be in use
                    reads, writes = set(), set()
                reads |= op_reads
                writes |= op_writes
            if block is self.kernel.body.block and op.regions:
                self.hoist_allocs(op, frees)
            self.op(op, frees)
            if after is not None:
                after(op)
        looped = block is not self.kernel.body.block
        if together and (looped and (reads or writes) or self.shared_buffers and frees):
            self.barrier()  # before the next iteration (its nests may use these buffers) or the frees
        for ptr in frees:
            if isinstance(ptr, _Lazy):  # (0 if never made: free of null does nothing)
                ptr = self.emit(llvm.IntToPtrOp(self.emit(llvm.LoadOp(ptr.slot, i64))))
            if ptr in self.shared_buffers:
                name = self.external("nimble_shared_free", llvm.LLVMVoidType(), [i64, PTR])
                self.emit(llvm.CallOp(name, self.chunk, ptr))
            else:
                self.emit(llvm.CallOp(self.external("free", llvm.LLVMVoidType(), [PTR]), ptr))
        if isinstance(block.last_op, func.ReturnOp):
            self.emit(llvm.ReturnOp())

    def op(self, op: Operation, frees: list[SSAValue | _Lazy]) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if isinstance(op, loop.AllocOp):
            self.alloc(op, frees)
            return
        raise LLVMLoweringError(f"'{op.name}' has no lowering to LLVM (in kernel @{self.kernel.sym_name.data})")

    # -- loops ------------------------------------------------------------------------------
    def bounds(self, op: loop._LoopOp) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]:
        """Loop bounds, for a `parallel` loop restricted to this chunk's share when no
        enclosing loop was split already and the loop has at least one iteration per
        chunk, or its schedule's `grain` (or, with a grain, whole steps that split
        evenly: a conv's 4 full panels of pixels on 2 chunks); otherwise the split passes
        on to parallel loops inside, if any. The last value says, at run time, whether
        the iterations inside are already split."""
        lb, ub, step = self.v(op.lower), self.v(op.upper), self.v(op.step)
        if not _parallel(op) and op not in self.split_loops:
            return lb, ub, step, None
        chunk_lb, chunk_ub, trips = self.chunk_bounds(lb, ub, step)
        free = self.binary_op(llvm.XOrOp, self.split, self.const(1, IntegerType(1)))
        if any(isinstance(o, loop.ForeachOp) and (_parallel(o) or o in self.split_loops) for o in op.body.walk()):
            grain = op.schedule.schedule.grain if op.schedule is not None else 0
            least = self.mul(self.nchunks, self.const(grain, i64)) if grain > 1 else self.nchunks
            enough = self.emit(llvm.ICmpOp(trips, least, IntegerAttr(5, i64)))  # sge
            if grain > 1:  # or fewer, when they are whole steps that split evenly (no chunk gets more)
                zero = self.const(0, i64)
                whole = self.emit(llvm.ICmpOp(self.srem(self.sub(ub, lb), step), zero,
                                              IntegerAttr(0, i64)))  # eq
                even = self.emit(llvm.ICmpOp(self.srem(trips, self.nchunks), zero, IntegerAttr(0, i64)))
                enough = self.binary_op(llvm.OrOp, enough, self.binary_op(llvm.AndOp, whole, even))
            here = self.binary_op(llvm.AndOp, free, enough)
        else:  # no parallel loop inside to pass the split on to: split here, even if unevenly
            here = free
        lb = self.emit(llvm.SelectOp(here, chunk_lb, lb))
        ub = self.emit(llvm.SelectOp(here, chunk_ub, ub))
        return lb, ub, step, self.binary_op(llvm.OrOp, self.split, here)

    def chunk_bounds(self, lb: SSAValue, ub: SSAValue, step: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
        """This chunk's share [lb', ub') of the iterations (whole steps, balanced), and
        the trip count."""
        one = self.const(1, i64)
        span = self.sub(ub, lb)
        trips = self.sdiv(self.add(span, self.sub(step, one)), step)
        first = self.sdiv(self.mul(trips, self.chunk), self.nchunks)
        nxt = self.add(self.chunk, one)
        last = self.sdiv(self.mul(trips, nxt), self.nchunks)
        new_lb = self.add(lb, self.mul(first, step))
        new_ub = self.add(lb, self.mul(last, step))
        is_less = self.emit(llvm.ICmpOp(new_ub, ub, IntegerAttr(2, i64)))  # slt
        return new_lb, self.emit(llvm.SelectOp(is_less, new_ub, ub)), trips

    def counted_loop(self, op: loop._LoopOp, carried: Sequence[SSAValue],
                     body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
        return self.loop_blocks(*self.bounds(op), carried, body)

    def loop_blocks(self, lb: SSAValue, ub: SSAValue, step: SSAValue, split: SSAValue | None,
                    carried: Sequence[SSAValue],
                    body: Callable[[SSAValue, list[SSAValue]], list[SSAValue]]) -> list[SSAValue]:
        """header(iv, carried) -> body -> latch: the CFG of one counted loop."""
        types = [v.type for v in carried]
        header = self.new_block([i64, *types])
        inner = self.new_block()
        exit_ = self.new_block()
        self.emit(llvm.BrOp(header, lb, *carried))
        self.block = header
        iv, accs = header.args[0], list(header.args[1:])
        more = self.emit(llvm.ICmpOp(iv, ub, IntegerAttr(2, i64)))  # slt
        self.emit(llvm.CondBrOp(more, inner, [], exit_, []))
        self.block = inner
        outer_split = self.split
        if split is not None:
            self.split = split
        new_accs = body(iv, accs)
        self.split = outer_split
        self.emit(llvm.BrOp(header, self.add(iv, step), *new_accs))
        self.block = exit_
        return accs

    def foreach(self, op: loop.ForeachOp) -> None:
        def body(iv: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            self.values[op.iv] = iv
            self.region(op.body.block)
            return []

        self.counted_loop(op, [], body)

    def scf_for(self, op: scf.ForOp) -> None:
        """A sequential loop (the spatial programs' time loop), values carried as given."""
        block = op.body.block

        def body(iv: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            self.values[block.args[0]] = iv
            self.values.update(zip(block.args[1:], accs))
            self.region(block)
            return [self.v(v) for v in block.last_op.operands]

        accs = self.loop_blocks(self.v(op.lb), self.v(op.ub), self.v(op.step), None,
                                [self.v(v) for v in op.iter_args], body)
        self.values.update(zip(op.results, accs))

    def reduce(self, op: loop.ReduceOp) -> None:
        """The reduction loop; `unroll = U` runs U steps per trip (accumulators chained),
        then the leftover steps one by one."""
        inits = [self.v(v) for v in op.inits]
        unroll = op.schedule.schedule.unroll if op.schedule is not None else 0
        # A remainder shorter than a vector (the steps after whole vectors along k) sums in
        # order: LLVM's loop vectorizer then leaves it alone (it vectorised such loops of a
        # conv's dot products, code for a vector body that never runs).
        in_order = _fewer_steps_than(op, SHORT_REDUCTION)

        yielded = op.body.block.last_op.values
        positions: dict[Operation, list[int]] = {}  # body op -> the results it yields
        for r, v in enumerate(yielded):
            if isinstance(v, OpResult) and v.owner.parent_block() is op.body.block:
                positions.setdefault(v.owner, []).append(r)
        inside = {r for rs in positions.values() for r in rs}
        outside = [r for r in range(len(yielded)) if r not in inside]

        def step_body(iv: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
            # Each value is combined into its accumulator as soon as it is computed, not
            # all at the yield: a register tile's loads and products then die one by one
            # (at the yield, LLVM hoisted every row's broadcast above the FMAs, 34 live
            # vectors for 32 registers: spills and moves in the GEMM's inner loop).
            self.values[op.iv] = iv
            new = list(accs)

            def combine_ready(o: Operation) -> None:
                for r in positions.get(o, ()):
                    new[r] = self.combine(op.kinds[r], accs[r], self.v(yielded[r]), in_order)

            self.region(op.body.block, combine_ready)
            for r in outside:  # defined outside the body (or its iv)
                new[r] = self.combine(op.kinds[r], accs[r], self.v(yielded[r]), in_order)
            return new

        if unroll < 2:
            accs = self.counted_loop(op, inits, step_body)
        else:
            lb, ub, step, split = self.bounds(op)
            trips = self.sdiv(self.add(self.sub(ub, lb), self.sub(step, self.const(1, i64))), step)
            full = self.sub(trips, self.srem(trips, self.const(unroll, i64)))
            main_end = self.add(lb, self.mul(full, step))

            def unrolled(iv: SSAValue, accs: list[SSAValue]) -> list[SSAValue]:
                for u in range(unroll):
                    at = iv if u == 0 else self.add(iv, self.mul(step, self.const(u, i64)))
                    accs = step_body(at, accs)
                return accs

            stride = self.mul(step, self.const(unroll, i64))
            accs = self.loop_blocks(lb, main_end, stride, split, inits, unrolled)
            accs = self.loop_blocks(main_end, ub, step, split, accs, step_body)
        for result, value in zip(op.results, accs):
            self.values[result] = value

    def combine(self, kind: str, acc: SSAValue, value: SSAValue, in_order: bool = False) -> SSAValue:
        t = acc.type
        element = t.get_element_type() if isinstance(t, VectorType) else t
        if isinstance(element, AnyFloat):
            flags = _FAST if in_order else _REASSOC
            if kind == "add":
                return self.binary_op(llvm.FAddOp, acc, value, flags)
            if kind == "mul":
                return self.binary_op(llvm.FMulOp, acc, value, flags)
            return self.numpy_minmax(kind, acc, value)
        if element == IntegerType(1):  # bools: sum/max are `or`, product/min are `and`
            return self.binary_op(llvm.OrOp if kind in ("add", "max") else llvm.AndOp, acc, value)
        if kind == "add":
            return self.add(acc, value)
        if kind == "mul":
            return self.mul(acc, value)
        pred = 4 if kind == "max" else 2  # sgt / slt
        better = self.emit(llvm.ICmpOp(value, acc, IntegerAttr(pred, i64)))
        return self.emit(llvm.SelectOp(better, value, acc))

    # -- memory -------------------------------------------------------------------------------
    def address(self, buf: _Buffer, indices: Sequence[SSAValue], element: Attribute, lanes: int = 1,
                active: SSAValue | None | object = None) -> SSAValue:
        """Where `buf[indices]` is; with `check_bounds`, checked for an access of `lanes`
        consecutive elements (0: unchecked, a prefetch), of which a masked access takes
        `active` (an i64: those of a `vector.create_mask`; `_SOME_LANES`: another mask)."""
        flat: SSAValue | None = None
        for index, dim in zip(indices, buf.dims):
            flat = index if flat is None else self.add(self.mul(flat, dim), index)
        if flat is None:
            return buf.ptr
        ptr = self.pure((llvm.GEPOp, element), (buf.ptr, flat), PTR,
                        lambda: llvm.GEPOp(buf.ptr, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[flat],
                                           inbounds=True))
        if not (self.check_bounds and buf.code and lanes != 0):
            return ptr
        return self.checked(buf, indices, lanes, active, ptr)

    def checked(self, buf: _Buffer, indices: Sequence[SSAValue], lanes: int, active: SSAValue | None | object,
                ptr: SSAValue) -> SSAValue:
        """`ptr` if every index is in bounds (unsigned compares: a negative index is out)
        and so is the last lane taken (a masked access that takes none is not checked;
        one whose lanes are not counted is checked on its leading indices only), else
        the process's spare area, the buffer's code stored in the error word
        (`runtime.bounds`)."""
        ok: SSAValue | None = None
        for axis, (index, dim) in enumerate(zip(indices, buf.dims)):
            last = axis == len(indices) - 1
            if last and active is _SOME_LANES:
                continue
            inside = self.emit(llvm.ICmpOp(index, dim, IntegerAttr(6, i64)))  # ult
            if last and (lanes > 1 or active is not None):
                span = self.const(lanes, i64)
                if isinstance(active, SSAValue):  # min(active, lanes)
                    fewer = self.emit(llvm.ICmpOp(active, span, IntegerAttr(2, i64)))  # slt
                    span = self.emit(llvm.SelectOp(fewer, active, span))
                end = self.emit(llvm.ICmpOp(self.add(index, span), dim, IntegerAttr(7, i64)))  # ule
                inside = self.binary_op(llvm.AndOp, inside, end)
            ok = inside if ok is None else self.binary_op(llvm.AndOp, ok, inside)
        if ok is None:
            return ptr
        if isinstance(active, SSAValue):  # (no lane taken: nothing is accessed)
            none = self.emit(llvm.ICmpOp(active, self.const(0, i64), IntegerAttr(3, i64)))  # sle
            ok = self.binary_op(llvm.OrOp, ok, none)
        fail, go_on = self.new_block(), self.new_block()
        self.emit(llvm.CondBrOp(ok, go_on, [], fail, []))
        self.block = fail
        self.emit(llvm.StoreOp(self.const(buf.code, i64), self.global_address(bounds.ERROR_SYMBOL, i64)))
        self.emit(llvm.BrOp(go_on))
        self.block = go_on
        spare = self.global_address(bounds.SPARE_SYMBOL, llvm.LLVMArrayType(IntAttr(bounds.SPARE_BYTES), i8))
        return self.emit(llvm.SelectOp(ok, ptr, spare))

    def lanes_taken(self, mask: SSAValue) -> SSAValue | object:
        """How many lanes a mask turns on: the count of the `vector.create_mask` that
        made it (the first lanes), else `_SOME_LANES`."""
        owner = mask.owner
        if isinstance(owner, vector.CreateMaskOp) and len(owner.operands) == 1:
            return self.v(owner.operands[0])
        return _SOME_LANES

    def global_address(self, name: str, t: Attribute) -> SSAValue:
        """The address of the process's global `name` (of type `t`), declared once."""
        if name not in self.externals:
            self.externals[name] = llvm.GlobalOp(t, name, "external")
        return self.emit(llvm.AddressOfOp(name, PTR))

    def load_from(self, ptr: SSAValue, t: Attribute, alignment: int | None = None) -> SSAValue:
        return self.made((llvm.LoadOp, alignment), (ptr,), (t,),
                         lambda: llvm.LoadOp(ptr, t, alignment=alignment))

    def store_to(self, value: SSAValue, ptr: SSAValue, alignment: int | None = None) -> None:
        self.made((llvm.StoreOp, alignment), (value, ptr), (),
                  lambda: llvm.StoreOp(value, ptr, alignment=alignment))

    def shuffle_vector(self, v1: SSAValue, v2: SSAValue, mask: Sequence[int], t: Attribute) -> SSAValue:
        return self.pure((llvm.ShuffleVectorOp, tuple(mask)), (v1, v2), t,
                         lambda: llvm.ShuffleVectorOp(v1, v2, DenseArrayBase.from_list(i32, list(mask)), t))

    def load(self, op: memref.LoadOp) -> None:
        buf = self.buffers[op.memref]
        t = llvm_type(op.res.type)
        ptr = self.address(buf, [self.v(i) for i in op.indices], t)
        self.values[op.res] = self.load_from(ptr, t)

    def prefetch(self, op: loop.PrefetchOp) -> None:
        buf = self.buffers[op.memref]
        element = llvm_type(op.memref.type.get_element_type())
        ptr = self.address(buf, [self.v(i) for i in op.indices], element, 0)  # (unchecked: a prefetch cannot fault)
        read, data = self.const(0, i32), self.const(1, i32)
        self.emit(llvm.CallIntrinsicOp("llvm.prefetch.p0", [ptr, read, self.const(op.locality.value.data, i32), data],
                                       []))

    def store(self, op: memref.StoreOp) -> None:
        buf = self.buffers[op.memref]
        ptr = self.address(buf, [self.v(i) for i in op.indices], llvm_type(op.value.type))
        self.store_to(self.v(op.value), ptr)

    def vload(self, op: vector.LoadOp) -> None:
        buf = self.buffers[op.base]
        t = op.result.type
        element = t.get_element_type()
        ptr = self.address(buf, [self.v(i) for i in op.indices], element, t.get_shape()[0])
        if element == IntegerType(1):  # bools are bytes in memory; <N x i1> would be bits
            raw = self.emit(llvm.LoadOp(ptr, _bytes_of(t), alignment=1))
            self.values[op.result] = self.emit(llvm.TruncOp(raw, t))
            return
        self.values[op.result] = self.load_from(ptr, t, 4)

    def vstore(self, op: vector.StoreOp) -> None:
        buf = self.buffers[op.base]
        t = op.vector.type
        element = t.get_element_type()
        ptr = self.address(buf, [self.v(i) for i in op.indices], element, t.get_shape()[0])
        value = self.v(op.vector)
        if element == IntegerType(1):
            self.emit(llvm.StoreOp(self.emit(llvm.ZExtOp(value, _bytes_of(t))), ptr, alignment=1))
            return
        self.store_to(value, ptr, 4)

    def collapse(self, op: memref.CollapseShapeOp) -> None:
        src = self.buffers[op.src]
        dims = []
        for group in op.reassociation:
            size = None
            for axis in group:
                d = src.dims[axis.value.data]
                size = d if size is None else self.mul(size, d)
            dims.append(size)
        self.buffers[op.result] = _Buffer(src.ptr, dims, src.code)

    def masked_load(self, op: vector.MaskedLoadOp) -> None:
        buf = self.buffers[op.base]
        t = op.result.type
        ptr = self.address(buf, [self.v(i) for i in op.indices], t.get_element_type(), t.get_shape()[0],
                           self.lanes_taken(op.mask))
        align = self.const(4, i32)
        self.values[op.result] = self.emit(llvm.CallIntrinsicOp(
            f"llvm.masked.load.{_suffix(t)}.p0", [ptr, align, self.v(op.mask), self.v(op.pass_thru)], [t]))

    def masked_store(self, op: vector.MaskedStoreOp) -> None:
        buf = self.buffers[op.base]
        t = op.value_to_store.type
        ptr = self.address(buf, [self.v(i) for i in op.indices], t.get_element_type(), t.get_shape()[0],
                           self.lanes_taken(op.mask))
        self.emit(llvm.MaskedStoreOp(self.v(op.value_to_store), ptr, self.v(op.mask), alignment=4))

    def dim(self, op: memref.DimOp) -> None:
        index = op.index.owner
        if not isinstance(index, arith.ConstantOp):
            raise LLVMLoweringError("memref.dim needs a constant dim index")
        self.values[op.result] = self.buffers[op.source].dims[index.value.value.data]

    def hoist_allocs(self, nest: Operation, frees: list[SSAValue | _Lazy]) -> None:
        """Heap buffers allocated inside the loops of `nest` (a kernel's top-level op) with
        sizes known before it, a panel per iteration, are allocated once before it and
        freed at the kernel's end (the chunk runs its iterations one after the other):
        made where it was, the first time the loops get there (`lazy_malloc`), so a nest
        that runs no iteration this call (the packed side of a run-time split at 8 rows)
        costs a compare, not a 16 KiB malloc and free per call.
        Allocated per iteration, a buffer over glibc's mmap threshold (128 KiB at first,
        then moving with the sizes freed) may be mapped and unmapped each time, its pages
        faulted in again: a conv's 147 KB im2col panels, 49 per call, took 0.75 ms more
        per 2.4 ms call when the kernel's previous call had other sizes."""
        for op in nest.walk():
            if isinstance(op, loop.AllocOp) and op.level.data != "reg" and _on_heap(op) \
                    and not any(loop.defined_inside(s, nest) for s in op.dynamic_sizes):
                saved = self.block
                self.block = self.entry
                slot = self.emit(llvm.IntToPtrOp(self.emit(llvm.PtrToIntOp(
                    self.emit(llvm.AllocaOp(self.const(1, i64), i64, alignment=8)), i64))))
                self.block = saved
                self.emit(llvm.StoreOp(self.const(0, i64), slot))
                self.lazy[op.memref] = slot
                frees.append(_Lazy(slot))

    def alloc(self, op: loop.AllocOp, frees: list[SSAValue | _Lazy]) -> None:
        if op.memref in self.buffers:  # hoisted
            return
        t = op.memref.type
        element = t.get_element_type()
        sizes = iter(self.v(s) for s in op.dynamic_sizes)
        dims = [next(sizes) if d < 0 else self.const(d, i64) for d in t.get_shape()]
        count: SSAValue = self.const(1, i64)
        for d in dims:
            count = self.mul(count, d)
        shared = op.level.data != "reg" and op.parent_block() is self.kernel.body.block and bool(self.regions)
        if shared:  # chunk 0 allocates it for all
            nbytes = self.mul(count, self.const(_byte_size(element), i64))
            name = self.external("nimble_shared_alloc", PTR, [PTR, i64, i64, i64, i64])
            index = self.const(len(self.shared_buffers), i64)
            ptr = self.emit(llvm.CallOp(name, self.mailbox, index, self.chunk, self.nchunks, nbytes, return_type=PTR))
            self.shared_buffers.append(ptr)
            frees.append(ptr)
        elif op.memref in self.lazy:  # hoisted: made once, here, the first time
            nbytes = self.mul(count, self.const(_byte_size(element), i64))
            ptr = self.lazy_malloc(self.lazy.pop(op.memref), nbytes)
        elif _on_heap(op):
            nbytes = self.mul(count, self.const(_byte_size(element), i64))
            ptr = self.malloc_unless_empty(nbytes) if op.dynamic_sizes else \
                self.emit(llvm.CallOp(self.external("malloc", PTR, [i64]), nbytes, return_type=PTR))
            frees.append(ptr)
        else:  # static: a stack slot in the entry block, made once
            saved = self.block
            self.block = self.entry
            size = self.const(_product(t.get_shape()), i64)
            slot = self.emit(llvm.AllocaOp(size, llvm_type(element), alignment=64))
            # llvmlite types an alloca (`float*`), and a typed pointer takes no vector
            # stores (`<16 x float>`); through an integer it becomes an opaque `ptr`
            # like every other buffer (LLVM folds the round trip away).
            ptr = self.emit(llvm.IntToPtrOp(self.emit(llvm.PtrToIntOp(slot, i64))))
            self.block = saved
        self.buffers[op.memref] = _Buffer(ptr, dims, bounds.ALLOCATED + self.allocated)
        self.allocated += 1

    def lazy_malloc(self, slot: SSAValue, nbytes: SSAValue) -> SSAValue:
        """The buffer whose address `slot` holds, malloc'd (and kept there) if it holds 0."""
        bits = self.emit(llvm.LoadOp(slot, i64))
        made = self.emit(llvm.ICmpOp(bits, self.const(0, i64), IntegerAttr(1, i64)))  # ne
        return self.malloc_unless(made, nbytes, self.emit(llvm.IntToPtrOp(bits)), slot)

    def malloc_unless_empty(self, nbytes: SSAValue) -> SSAValue:
        """malloc(nbytes), or null for 0 bytes (`free` of null does nothing): the staging
        buffer of a split's side that takes no rows this call (lanes along the rows at 8
        rows) costs a compare, not a malloc and a free."""
        empty = self.emit(llvm.ICmpOp(nbytes, self.const(0, i64), IntegerAttr(0, i64)))  # eq
        return self.malloc_unless(empty, nbytes, self.emit(llvm.IntToPtrOp(self.const(0, i64))))

    def malloc_unless(self, skip: SSAValue, nbytes: SSAValue, otherwise: SSAValue,
                      slot: SSAValue | None = None) -> SSAValue:
        """`otherwise` where `skip`, else malloc(nbytes) (its address stored in `slot`, if
        given)."""
        call, join = self.new_block(), self.new_block([PTR])
        self.emit(llvm.CondBrOp(skip, join, [otherwise], call, []))
        self.block = call
        ptr = self.emit(llvm.CallOp(self.external("malloc", PTR, [i64]), nbytes, return_type=PTR))
        if slot is not None:
            self.emit(llvm.StoreOp(self.emit(llvm.PtrToIntOp(ptr, i64)), slot))
        self.emit(llvm.BrOp(join, ptr))
        self.block = join
        return join.args[0]

    # -- scalars --------------------------------------------------------------------------------
    def constant(self, op: arith.ConstantOp) -> None:
        t = llvm_type(op.result.type)
        value = op.value
        if isinstance(value, IntegerAttr):
            value = IntegerAttr(value.value.data, t)
        self.values[op.result] = self.constant_value(value, t)

    def binary(self, op: Operation) -> None:
        a, b = (self.v(o) for o in op.operands)
        kind = _INT_BINARY.get(type(op))
        if kind is not None:
            self.values[op.results[0]] = self.binary_op(kind, a, b)
        else:
            flags = _EXACT if loop.EXACT_MARK in op.attributes else _FAST
            self.values[op.results[0]] = self.binary_op(_FLOAT_BINARY[type(op)], a, b, flags)

    def numpy_minmax(self, kind: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """numpy's `maximum` / `minimum`: `a` where `a > b` (`a < b`) or `a` is NaN,
        else `b` (so a NaN on either side wins; of two equal values, `b`). LLVM's
        `llvm.maximum` also orders -0 below +0, which costs a sequence of blends on x86:
        a 64-channel 3 x 3 max pool over 112 x 112 (1 thread) took 341 us with it, 288 us
        in this form (a compare, a NaN test, two blends: no sign-of-zero fix-up)."""
        picked = self.emit(llvm.SelectOp(self.fcmp(a, b, "ogt" if kind == "max" else "olt"), a, b))
        return self.emit(llvm.SelectOp(self.fcmp(a, a, "uno"), a, picked))

    def minmax_float(self, op: Operation) -> None:
        """Against a constant (relu, a clamp), `llvm.maximum` / `llvm.minimum`, which LLVM
        simplifies knowing the constant (gelu over 128 x 1024, 1 thread: 53 us, 64 in the
        compare/select form); else `numpy_minmax`."""
        a, b = (self.v(o) for o in op.operands)
        kind = "max" if isinstance(op, arith.MaximumfOp) else "min"
        if any(_constant(o) for o in op.operands):
            self.values[op.results[0]] = self.intrinsic(f"llvm.{kind}imum", [a, b], op.results[0].type)
            return
        self.values[op.results[0]] = self.numpy_minmax(kind, a, b)

    def minmax_int(self, op: Operation) -> None:
        a, b = (self.v(o) for o in op.operands)
        pred = 4 if isinstance(op, arith.MaxSIOp) else 2
        self.values[op.results[0]] = self.emit(llvm.SelectOp(self.emit(llvm.ICmpOp(a, b, IntegerAttr(pred, i64))), a, b))

    def div_round(self, op: Operation) -> None:
        """floordiv / ceildiv on signed index values (shape arithmetic)."""
        a, b = (self.v(o) for o in op.operands)
        q = self.sdiv(a, b)
        r = self.srem(a, b)
        zero = self.const(0, i64)
        nonzero = self.emit(llvm.ICmpOp(r, zero, IntegerAttr(1, i64)))
        signs_differ = self.emit(llvm.ICmpOp(self.binary_op(llvm.XOrOp, r, b), zero, IntegerAttr(2, i64)))
        if isinstance(op, arith.FloorDivSIOp):
            adjust = self.binary_op(llvm.AndOp, nonzero, signs_differ)
            self.values[op.result] = self.sub(q, self.emit(llvm.ZExtOp(adjust, i64)))
        else:
            same = self.binary_op(llvm.XOrOp, signs_differ, self.const(1, IntegerType(1)))
            adjust = self.binary_op(llvm.AndOp, nonzero, same)
            self.values[op.result] = self.add(q, self.emit(llvm.ZExtOp(adjust, i64)))

    def create_mask(self, op: vector.CreateMaskOp) -> None:
        """Lane l on when l < count: the lane numbers against the count, splatted."""
        width = op.mask_vector.type.get_shape()[0]
        t = loop.vector_type(i64, (width,))
        lanes = self.constant_value(DenseIntOrFPElementsAttr.from_list(t, list(range(width))), t)
        count = self.splat(self.v(op.mask_dim_sizes[0]), t)
        self.values[op.mask_vector] = self.emit(llvm.ICmpOp(lanes, count, IntegerAttr(2, i64)))  # slt

    def cmpi(self, op: arith.CmpiOp) -> None:
        self.values[op.result] = self.emit(llvm.ICmpOp(self.v(op.lhs), self.v(op.rhs), op.predicate))

    def fcmp(self, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        """`llvm.fcmp`, of vectors too (i1 per lane)."""
        return self.emit(llvm.FCmpOp(a, b, predicate))

    def cmpf(self, op: arith.CmpfOp) -> None:
        name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        self.values[op.result] = self.fcmp(self.v(op.lhs), self.v(op.rhs), name)

    def select(self, op: arith.SelectOp) -> None:
        self.values[op.result] = self.emit(llvm.SelectOp(*(self.v(o) for o in op.operands)))

    def negf(self, op: arith.NegfOp) -> None:
        self.values[op.result] = self.emit(llvm.FNegOp(self.v(op.operand)))

    def cast(self, op: Operation) -> None:
        x, src, dst = self.v(op.operands[0]), op.operands[0].type, op.results[0].type
        if isinstance(src, BFloat16Type) and dst == f32:  # the bits are the top half of an f32
            wide = self.emit(llvm.ZExtOp(x, i32))
            x = self.emit(llvm.BitcastOp(self.binary_op(llvm.ShlOp, wide, self.const(16, i32)), f32))
        elif isinstance(dst, BFloat16Type) and src == f32:  # round to nearest even
            bits = self.emit(llvm.BitcastOp(x, i32))
            high = self.binary_op(llvm.LShrOp, bits, self.const(16, i32))
            odd = self.binary_op(llvm.AndOp, high, self.const(1, i32))
            rounded = self.add(bits, self.add(odd, self.const(0x7FFF, i32)))
            x = self.emit(llvm.TruncOp(self.binary_op(llvm.LShrOp, rounded, self.const(16, i32)), i16))
        else:
            x = self.emit(_CASTS[type(op)](x, dst))
        self.values[op.results[0]] = x

    def index_cast(self, op: arith.IndexCastOp) -> None:
        x = self.v(op.input)
        src, dst = llvm_type(op.input.type), llvm_type(op.result.type)
        if src == dst:
            self.values[op.result] = x
        elif src.width.data < dst.width.data:
            self.values[op.result] = self.emit(llvm.SExtOp(x, dst))
        else:
            self.values[op.result] = self.emit(llvm.TruncOp(x, dst))

    def absi(self, op: xmath.AbsIOp) -> None:
        x = self.v(op.operand)
        neg = self.sub(self.const(0, x.type), x)
        is_neg = self.emit(llvm.ICmpOp(x, self.const(0, x.type), IntegerAttr(2, i64)))
        self.values[op.result] = self.emit(llvm.SelectOp(is_neg, neg, x))

    def intrinsic_op(self, op: Operation) -> None:
        args = [self.v(o) for o in op.operands]
        self.values[op.results[0]] = self.intrinsic(_INTRINSICS[type(op)], args, op.results[0].type)

    def libm(self, op: Operation) -> None:
        t = op.results[0].type
        if not isinstance(t, AnyFloat):
            raise LLVMLoweringError(f"'{op.name}' on {t} is not supported")
        x = self.v(op.operands[0])
        if t.bitwidth < 32:  # (f16, bf16: no C function takes them; computed in f32, rounded back)
            wide = self.emit(llvm.FPExtOp(x, f32))
            name = _LIBM[type(op)][0]
            y = self.emit(llvm.CallOp(self.external(name, f32, [f32]), wide, return_type=f32))
            self.values[op.results[0]] = self.emit(llvm.FPTruncOp(y, t))
            return
        name = _LIBM[type(op)][0 if t == f32 else 1]
        self.values[op.results[0]] = self.emit(llvm.CallOp(self.external(name, t, [t]), x, return_type=t))

    _LANE_COMBINE = {vector.CombiningKindFlag.ADD: "add", vector.CombiningKindFlag.MUL: "mul",
                     vector.CombiningKindFlag.MAXIMUMF: "max", vector.CombiningKindFlag.MINIMUMF: "min"}

    def vector_reduction(self, op: vector.ReductionOp) -> None:
        """Lanes combined as a tree (halves folded onto each other: log2(n) dependent
        steps, not n), then with the accumulator. The reduction's own combiner is
        associative by the loop.reduce contract."""
        v = self.v(op.vector)
        kind = self._LANE_COMBINE[op.kind.data]
        element = op.dest.type
        n = v.type.get_shape()[0]
        while n > 1:
            half = n // 2
            t = loop.vector_type(element, (half,))
            low = self.shuffle_vector(v, v, range(half), t)
            high = self.shuffle_vector(v, v, range(half, n), t)
            v = self.combine(kind, low, high)
            n = half
        lane = self.emit(llvm.BitcastOp(v, element))
        self.values[op.dest] = self.combine(kind, self.v(op.acc), lane)

    def shuffle(self, op: vector.ShuffleOp) -> None:
        mask = op.mask.get_values()
        self.values[op.result] = self.shuffle_vector(self.v(op.v1), self.v(op.v2), mask, op.result.type)

    def broadcast(self, op: vector.BroadcastOp) -> None:
        self.values[op.vector] = self.splat(self.v(op.source), op.vector.type)

    def splat(self, value: SSAValue, t: VectorType) -> SSAValue:
        """`value` in every lane of a `t`: inserted into lane 0, shuffled to all."""
        undef = self.undef(t)
        first = self.pure((llvm.InsertElementOp,), (undef, value, self.const(0, i32)), t,
                          lambda: llvm.InsertElementOp(undef, value, self.const(0, i32)))
        return self.shuffle_vector(first, undef, [0] * t.get_shape()[0], t)


def _bytes_of(t: VectorType) -> VectorType:
    return loop.vector_type(IntegerType(8), tuple(t.get_shape()))


def _byte_size(t: Attribute) -> int:
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, AnyFloat):
        return t.bitwidth // 8
    return max(1, t.width.data // 8)


def _on_heap(op: loop.AllocOp) -> bool:
    """Whether a buffer is malloc'd (sized at run time, or over STACK_LIMIT), not a stack slot."""
    t = op.memref.type
    return bool(op.dynamic_sizes) or _product(t.get_shape()) * _byte_size(t.get_element_type()) > STACK_LIMIT


def _constant(value: SSAValue) -> bool:
    """A constant, or a vector of one constant."""
    owner = value.owner
    if isinstance(owner, vector.BroadcastOp):
        owner = owner.source.owner
    return isinstance(owner, arith.ConstantOp)


SHORT_REDUCTION = 16
"""Steps below which a reduction loop sums in order (`_fewer_steps_than`)."""


def _fewer_steps_than(op: loop.ReduceOp, n: int) -> bool:
    """Whether the loop runs from `upper - upper % c` to `upper` by 1, c <= n: fewer than
    n steps."""
    lower = op.lower.owner
    if constant_index(op.step) != 1 or not isinstance(lower, arith.SubiOp) or lower.lhs is not op.upper:
        return False
    rem = lower.rhs.owner
    c = constant_index(rem.rhs) if isinstance(rem, arith.RemSIOp) and rem.lhs is op.upper else None
    return c is not None and 0 < c <= n


def _parallel(op: loop.ForeachOp) -> bool:
    return op.schedule is not None and op.schedule.schedule.parallel


def _product(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


_HANDLERS: dict[type[Operation], Callable[[_FunctionLowering, Operation], None]] = {
    loop.ForeachOp: _FunctionLowering.foreach,
    loop.ReduceOp: _FunctionLowering.reduce,
    scf.ForOp: _FunctionLowering.scf_for,
    memref.LoadOp: _FunctionLowering.load,
    memref.StoreOp: _FunctionLowering.store,
    loop.PrefetchOp: _FunctionLowering.prefetch,
    memref.DimOp: _FunctionLowering.dim,
    memref.CollapseShapeOp: _FunctionLowering.collapse,
    vector.LoadOp: _FunctionLowering.vload,
    vector.StoreOp: _FunctionLowering.vstore,
    vector.BroadcastOp: _FunctionLowering.broadcast,
    vector.ShuffleOp: _FunctionLowering.shuffle,
    vector.ReductionOp: _FunctionLowering.vector_reduction,
    vector.MaskedLoadOp: _FunctionLowering.masked_load,
    vector.CreateMaskOp: _FunctionLowering.create_mask,
    vector.MaskedStoreOp: _FunctionLowering.masked_store,
    arith.ConstantOp: _FunctionLowering.constant,
    arith.CmpiOp: _FunctionLowering.cmpi,
    arith.CmpfOp: _FunctionLowering.cmpf,
    arith.SelectOp: _FunctionLowering.select,
    arith.NegfOp: _FunctionLowering.negf,
    arith.IndexCastOp: _FunctionLowering.index_cast,
    arith.MaxSIOp: _FunctionLowering.minmax_int,
    arith.MaximumfOp: _FunctionLowering.minmax_float,
    arith.MinimumfOp: _FunctionLowering.minmax_float,
    arith.MinSIOp: _FunctionLowering.minmax_int,
    arith.FloorDivSIOp: _FunctionLowering.div_round,
    arith.CeilDivSIOp: _FunctionLowering.div_round,
    xmath.AbsIOp: _FunctionLowering.absi,
    **{k: _FunctionLowering.binary for k in (*_INT_BINARY, *_FLOAT_BINARY)},
    **{k: _FunctionLowering.cast for k in _CASTS},
    **{k: _FunctionLowering.intrinsic_op for k in _INTRINSICS},
    **{k: _FunctionLowering.libm for k in _LIBM},
}


def _wrapper(kernel: func.FuncOp, body: llvm.FuncOp) -> llvm.FuncOp:
    """`void k(i64* args)`: unpack the slots and call the body."""
    entry = Block(arg_types=[PTR])

    def add(op: Operation) -> SSAValue:
        entry.add_op(op)
        return op.results[0]

    args: list[SSAValue] = []
    for slot, t in enumerate(body.function_type.inputs):
        ptr = add(llvm.GEPOp(entry.args[0], [slot], i64)) if slot else entry.args[0]
        args.append(add(llvm.LoadOp(ptr, t)))
    entry.add_op(llvm.CallOp(body.sym_name.data, *args))
    entry.add_op(llvm.ReturnOp())
    return _function(kernel.sym_name.data, llvm.LLVMFunctionType([PTR]), "external", Region(entry))


def _function(name: str, t: llvm.LLVMFunctionType, linkage: str, body: Region | None = None) -> llvm.FuncOp:
    """An `llvm.func` with the properties xdsl's parser gives one (`unnamed_addr` 0, which
    its printer leaves out), so that the printed IR parses back to the same module."""
    return llvm.FuncOp(name, t, linkage=llvm.LinkageAttr(linkage), body=body,
                       other_props={"unnamed_addr": IntegerAttr(0, 64)})



def lower_kernels(module: ModuleOp, devices: Sequence[str] = ("cpu",),
                  check_bounds: bool | None = None) -> ModuleOp:
    """A new module of `llvm` functions: one wrapper + body per kernel of `module` for
    `devices` (spatial programs run on the CPU for functional execution); every access
    checked if `check_bounds` (default: `NIMBLE_CHECK_BOUNDS`, `runtime.bounds`)."""
    check = bounds.enabled() if check_bounds is None else check_bounds
    externals: dict[str, Operation] = {}
    functions: list[Operation] = []
    kernels = [k for d in devices for k in loop.kernels_of(module, d)]
    for kernel in kernels:
        body = _FunctionLowering(kernel, externals, check).run()
        functions += [body, _wrapper(kernel, body)]
    return ModuleOp([*externals.values(), *functions])


@dataclass(frozen=True)
class LowerLoopsToLLVMPass(ModulePass):
    """Replace the module by the LLVM-dialect form of its kernels (host code is dropped:
    it runs on the VM)."""

    name = "lower-loops-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowered = lower_kernels(op)
        for old in list(op.body.block.ops):
            old.detach()
            old.erase(safe_erase=False)
        for new in list(lowered.body.block.ops):
            new.detach()
            op.body.block.add_op(new)
