"""One kernel's lowering to the `llvm` dialect: its regions in order (barriers between a
cooperative kernel's nests), its loops as counted loops over basic blocks (a `parallel`
loop split between the chunks), reductions (unrolled), and the table of op handlers."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import math as xmath
from xdsl.dialects import memref, scf, vector
from xdsl.dialects.builtin import IntegerAttr, IntegerType, i64
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue

from nimble.dialects import arith, kernel_analysis, llvm, loop
from nimble.dialects.shape_functions import constant_index
from nimble.lowering.llvm.common import PTR, LazyBuffer, LLVMLoweringError, llvm_function
from nimble.lowering.llvm.memory import MemoryLowering
from nimble.lowering.llvm.scalars import (
    CASTS,
    FLOAT_BINARY,
    INT_BINARY,
    INTRINSICS,
    LIBM_FUNCTIONS,
    ScalarLowering,
)


UNEVEN_TRIPS = 8
"""Iterations per chunk from which a parallel loop with another inside splits even when
its trips do not divide evenly (one chunk then has at most 1/8 more). With fewer, the
parallel loop inside splits instead: 3 images on 2 chunks ran 2 + 1, now each image's
pixels halve (MobileNetV2 at batch 3, 2 threads, median of 40 calls, two rounds:
23.6-23.8 ms before, 19.0-22.1 after)."""


class FunctionLowering(MemoryLowering, ScalarLowering):
    """Translates one `loop.kernel` into an `llvm.func` (with its CFG)."""

    def run(self) -> llvm.FuncOp:
        start = self.new_block()
        self.block = start
        self.region(self.kernel.body.block)
        self.entry.add_op(llvm.BrOp(start))
        body = Region(self.blocks)
        name = f"{self.kernel.sym_name.data}_body"
        return llvm_function(name, llvm.LLVMFunctionType(self.arg_types), "internal", body)

    def region(self, block: Block, after: Callable[[Operation], None] | None = None) -> None:
        """Lower the ops of `block`; `after(op)` is called after each."""
        frees: list[SSAValue | LazyBuffer] = []
        together = block in self.regions
        reads: set[SSAValue] = set()  # buffers read and written since the last barrier
        writes: set[SSAValue] = set()
        for op in block.ops:
            if isinstance(op, (loop.YieldOp, scf.YieldOp, loop.ReturnOp)):
                continue
            if together:
                op_reads, op_writes = kernel_analysis.accessed_buffers(op)
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
            if isinstance(ptr, LazyBuffer):  # (0 if never made: free of null does nothing)
                ptr = self.emit(llvm.IntToPtrOp(self.emit(llvm.LoadOp(ptr.slot, i64))))
            if ptr in self.shared_buffers:
                name = self.external("nimble_shared_free", llvm.LLVMVoidType(), [i64, PTR])
                self.emit(llvm.CallOp(name, self.chunk, ptr))
            else:
                self.emit(llvm.CallOp(self.external("nimble_scratch_free", llvm.LLVMVoidType(), [PTR]), ptr))
        if isinstance(block.last_op, loop.ReturnOp):
            self.emit(llvm.ReturnOp())

    def op(self, op: Operation, frees: list[SSAValue | LazyBuffer]) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op)
            return
        if isinstance(op, loop.AllocOp):
            self.alloc(op, frees)
            return
        raise LLVMLoweringError(f"'{op.name}' has no lowering to LLVM (in kernel @{self.kernel.sym_name.data})")

    def bounds(self, op: loop._LoopOp) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None]:
        """Loop bounds, for a `parallel` loop restricted to this chunk's share when no
        enclosing loop was split already and the loop has at least one iteration per
        chunk, or its schedule's `grain` (or, with a grain, whole steps that split
        evenly: a conv's 4 full panels of pixels on 2 chunks), and its iterations split
        evenly or number `UNEVEN_TRIPS` per chunk; otherwise the split passes on to
        parallel loops inside, if any. The last value says, at run time, whether the
        iterations inside are already split."""
        lb, ub, step = self.v(op.lower), self.v(op.upper), self.v(op.step)
        if not is_parallel(op) and op not in self.split_loops:
            return lb, ub, step, None
        chunk_lb, chunk_ub, trips = self.chunk_bounds(lb, ub, step)
        free = self.binary_op(llvm.XOrOp, self.split, self.const(1, IntegerType(1)))
        if any(isinstance(o, loop.ForeachOp) and (is_parallel(o) or o in self.split_loops) for o in op.body.walk()):
            grain = op.schedule.schedule.grain if op.schedule is not None else 0
            least = self.mul(self.nchunks, self.const(grain, i64)) if grain > 1 else self.nchunks
            enough = self.emit(llvm.ICmpOp(trips, least, IntegerAttr(5, i64)))  # sge
            zero = self.const(0, i64)
            even = self.emit(llvm.ICmpOp(self.srem(trips, self.nchunks), zero, IntegerAttr(0, i64)))  # eq
            if grain > 1:  # or fewer, when they are whole steps that split evenly (no chunk gets more)
                whole = self.emit(llvm.ICmpOp(self.srem(self.sub(ub, lb), step), zero,
                                              IntegerAttr(0, i64)))  # eq
                enough = self.binary_op(llvm.OrOp, enough, self.binary_op(llvm.AndOp, whole, even))
            many = self.emit(llvm.ICmpOp(trips, self.mul(self.nchunks, self.const(UNEVEN_TRIPS, i64)),
                                         IntegerAttr(5, i64)))  # sge
            enough = self.binary_op(llvm.AndOp, enough, self.binary_op(llvm.OrOp, even, many))
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


def is_parallel(op: loop.ForeachOp) -> bool:
    return op.schedule is not None and op.schedule.schedule.parallel


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


_HANDLERS: dict[type[Operation], Callable[[FunctionLowering, Operation], None]] = {
    loop.ForeachOp: FunctionLowering.foreach,
    loop.ReduceOp: FunctionLowering.reduce,
    scf.ForOp: FunctionLowering.scf_for,
    memref.LoadOp: FunctionLowering.load,
    memref.StoreOp: FunctionLowering.store,
    loop.PrefetchOp: FunctionLowering.prefetch,
    memref.DimOp: FunctionLowering.dim,
    memref.CollapseShapeOp: FunctionLowering.collapse,
    vector.LoadOp: FunctionLowering.vload,
    vector.StoreOp: FunctionLowering.vstore,
    vector.BroadcastOp: FunctionLowering.broadcast,
    vector.ShuffleOp: FunctionLowering.shuffle,
    vector.ReductionOp: FunctionLowering.vector_reduction,
    vector.MaskedLoadOp: FunctionLowering.masked_load,
    vector.CreateMaskOp: FunctionLowering.create_mask,
    vector.MaskedStoreOp: FunctionLowering.masked_store,
    arith.ConstantOp: FunctionLowering.constant,
    arith.CmpiOp: FunctionLowering.cmpi,
    arith.CmpfOp: FunctionLowering.cmpf,
    arith.SelectOp: FunctionLowering.select,
    arith.NegfOp: FunctionLowering.negf,
    arith.IndexCastOp: FunctionLowering.index_cast,
    arith.MaxSIOp: FunctionLowering.minmax_int,
    arith.MaximumfOp: FunctionLowering.minmax_float,
    arith.MinimumfOp: FunctionLowering.minmax_float,
    arith.MinSIOp: FunctionLowering.minmax_int,
    arith.FloorDivSIOp: FunctionLowering.div_round,
    arith.CeilDivSIOp: FunctionLowering.div_round,
    xmath.AbsIOp: FunctionLowering.absi,
    **{k: FunctionLowering.binary for k in (*INT_BINARY, *FLOAT_BINARY)},
    **{k: FunctionLowering.cast for k in CASTS},
    **{k: FunctionLowering.intrinsic_op for k in INTRINSICS},
    **{k: FunctionLowering.libm for k in LIBM_FUNCTIONS},
}

