"""The state and the emitting helpers of one kernel's lowering to the `llvm` dialect (the
base of `MemoryLowering`, `ScalarLowering` and `FunctionLowering`): the function's
arguments and buffers, the cooperative chunks' state, constants made once in the entry
block, pure ops numbered per block, external functions declared once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from nimble.dialects import kernel_analysis, llvm, loop
from nimble.lowering.llvm.common import PTR, Buffer, llvm_function, llvm_type, type_suffix

_PROPERTIES: dict[tuple, dict[str, Attribute]] = {}  # (see `LoweringBase.made`)


class LoweringBase:
    """Translates one `loop.kernel` into an `llvm.func` (with its CFG): the state."""

    def __init__(self, kernel: loop.KernelOp, externals: dict[str, Operation], check_bounds: bool = False):
        self.kernel = kernel
        self.externals = externals
        self.check_bounds = check_bounds
        self.allocated = 0  # buffers allocated so far (their bounds codes)
        self.values: dict[SSAValue, SSAValue] = {}
        self.constants: dict[object, SSAValue] = {}  # (attribute, type), or a type (undef) -> value
        self.buffers: dict[SSAValue, Buffer] = {}
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
                self.buffers[arg] = Buffer(ptr, dims, position + 1)
            else:
                self.values[arg] = next(args)
        mailbox = next(args)
        self.chunk, self.nchunks = next(args), next(args)
        self.split = self.const(0, IntegerType(1))
        self._cooperate(mailbox)

    def _cooperate(self, mailbox: SSAValue) -> None:
        """For a kernel whose chunks run together (`kernel_analysis.can_cooperate`): the regions all
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
        if not kernel_analysis.can_cooperate(self.kernel):
            return
        self.mailbox = self.emit(llvm.IntToPtrOp(mailbox))
        self.regions = set(kernel_analysis.cooperative_regions(self.kernel))
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
            self.externals[name] = llvm_function(name, llvm.LLVMFunctionType(args, result), "external")
        return name

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        return self.emit(llvm.CallIntrinsicOp(f"{name}.{type_suffix(result)}", args, [result]))

    def shuffle_vector(self, v1: SSAValue, v2: SSAValue, mask: Sequence[int], t: Attribute) -> SSAValue:
        return self.pure((llvm.ShuffleVectorOp, tuple(mask)), (v1, v2), t,
                         lambda: llvm.ShuffleVectorOp(v1, v2, DenseArrayBase.from_list(i32, list(mask)), t))
