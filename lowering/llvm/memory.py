"""Memory in the LLVM lowering: addresses (checked ones with `NIMBLE_CHECK_BOUNDS`), loads
and stores (scalar, vector, masked), views, and buffers (stack slots, heap buffers made
once or per iteration, buffers a cooperative kernel's chunks share)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref, vector
from xdsl.dialects.builtin import IntAttr, IntegerAttr, IntegerType, i8, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from nimble.dialects import arith, llvm
from nimble.dialects import loop
from nimble.lowering.llvm.base import LoweringBase
from nimble.lowering.llvm.common import (
    PTR,
    SOME_LANES,
    Buffer,
    LazyBuffer,
    LLVMLoweringError,
    byte_size,
    bytes_of,
    llvm_type,
    product,
    type_suffix,
)
from nimble.runtime import bounds

STACK_LIMIT = 1 << 16
"""Static buffers up to this many bytes are stack slots; larger ones (an SRAM copy of
a weight matrix) come from the heap."""


def on_heap(op: loop.AllocOp) -> bool:
    """Whether a buffer comes from the heap (sized at run time, or over STACK_LIMIT), not a
    stack slot: from the blocks the runtime keeps between calls (`runtime/scratch.py`)."""
    t = op.memref.type
    return bool(op.dynamic_sizes) or product(t.get_shape()) * byte_size(t.get_element_type()) > STACK_LIMIT


class MemoryLowering(LoweringBase):
    """Loads, stores, views and buffers of a kernel."""

    def address(self, buf: Buffer, indices: Sequence[SSAValue], element: Attribute, lanes: int = 1,
                active: SSAValue | None | object = None) -> SSAValue:
        """Where `buf[indices]` is; with `check_bounds`, checked for an access of `lanes`
        consecutive elements (0: unchecked, a prefetch), of which a masked access takes
        `active` (an i64: those of a `vector.create_mask`; `SOME_LANES`: another mask)."""
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

    def checked(self, buf: Buffer, indices: Sequence[SSAValue], lanes: int, active: SSAValue | None | object,
                ptr: SSAValue) -> SSAValue:
        """`ptr` if every index is in bounds (unsigned compares: a negative index is out)
        and so is the last lane taken (a masked access that takes none is not checked;
        one whose lanes are not counted is checked on its leading indices only), else
        the process's spare area, the buffer's code stored in the error word
        (`runtime.bounds`)."""
        ok: SSAValue | None = None
        for axis, (index, dim) in enumerate(zip(indices, buf.dims)):
            last = axis == len(indices) - 1
            if last and active is SOME_LANES:
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
        made it (the first lanes), else `SOME_LANES`."""
        owner = mask.owner
        if isinstance(owner, vector.CreateMaskOp) and len(owner.operands) == 1:
            return self.v(owner.operands[0])
        return SOME_LANES

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
            raw = self.emit(llvm.LoadOp(ptr, bytes_of(t), alignment=1))
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
            self.emit(llvm.StoreOp(self.emit(llvm.ZExtOp(value, bytes_of(t))), ptr, alignment=1))
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
        self.buffers[op.result] = Buffer(src.ptr, dims, src.code)

    def masked_load(self, op: vector.MaskedLoadOp) -> None:
        buf = self.buffers[op.base]
        t = op.result.type
        ptr = self.address(buf, [self.v(i) for i in op.indices], t.get_element_type(), t.get_shape()[0],
                           self.lanes_taken(op.mask))
        align = self.const(4, i32)
        self.values[op.result] = self.emit(llvm.CallIntrinsicOp(
            f"llvm.masked.load.{type_suffix(t)}.p0", [ptr, align, self.v(op.mask), self.v(op.pass_thru)], [t]))

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

    def hoist_allocs(self, nest: Operation, frees: list[SSAValue | LazyBuffer]) -> None:
        """Heap buffers allocated inside the loops of `nest` (a kernel's top-level op) with
        sizes known before it, a panel per iteration, are allocated once before it and
        freed at the kernel's end (the chunk runs its iterations one after the other):
        made where it was, the first time the loops get there (`lazy_alloc`), so a nest
        that runs no iteration this call (the packed side of a run-time split at 8 rows)
        costs a compare, not a 16 KiB allocation and free per call.
        Allocated per iteration, a buffer over glibc's mmap threshold (128 KiB at first,
        then moving with the sizes freed) may be mapped and unmapped each time, its pages
        faulted in again: a conv's 147 KB im2col panels, 49 per call, took 0.75 ms more
        per 2.4 ms call when the kernel's previous call had other sizes."""
        for op in nest.walk():
            if isinstance(op, loop.AllocOp) and op.level.data != loop.Level.REG and on_heap(op) \
                    and not any(loop.defined_inside(s, nest) for s in op.dynamic_sizes):
                saved = self.block
                self.block = self.entry
                slot = self.emit(llvm.IntToPtrOp(self.emit(llvm.PtrToIntOp(
                    self.emit(llvm.AllocaOp(self.const(1, i64), i64, alignment=8)), i64))))
                self.block = saved
                self.emit(llvm.StoreOp(self.const(0, i64), slot))
                self.lazy[op.memref] = slot
                frees.append(LazyBuffer(slot))

    def alloc(self, op: loop.AllocOp, frees: list[SSAValue | LazyBuffer]) -> None:
        if op.memref in self.buffers:  # hoisted
            return
        t = op.memref.type
        element = t.get_element_type()
        sizes = iter(self.v(s) for s in op.dynamic_sizes)
        dims = [next(sizes) if d < 0 else self.const(d, i64) for d in t.get_shape()]
        count: SSAValue = self.const(1, i64)
        for d in dims:
            count = self.mul(count, d)
        shared = op.level.data != loop.Level.REG and op.parent_block() is self.kernel.body.block and bool(self.regions)
        if shared:  # chunk 0 allocates it for all
            nbytes = self.mul(count, self.const(byte_size(element), i64))
            name = self.external("nimble_shared_alloc", PTR, [PTR, i64, i64, i64, i64])
            index = self.const(len(self.shared_buffers), i64)
            ptr = self.emit(llvm.CallOp(name, self.mailbox, index, self.chunk, self.nchunks, nbytes, return_type=PTR))
            self.shared_buffers.append(ptr)
            frees.append(ptr)
        elif op.memref in self.lazy:  # hoisted: made once, here, the first time
            nbytes = self.mul(count, self.const(byte_size(element), i64))
            ptr = self.lazy_alloc(self.lazy.pop(op.memref), nbytes)
        elif on_heap(op):
            nbytes = self.mul(count, self.const(byte_size(element), i64))
            ptr = self.alloc_unless_empty(nbytes) if op.dynamic_sizes else \
                self.emit(llvm.CallOp(self.external("nimble_scratch_alloc", PTR, [i64]), nbytes, return_type=PTR))
            frees.append(ptr)
        else:  # static: a stack slot in the entry block, made once
            saved = self.block
            self.block = self.entry
            size = self.const(product(t.get_shape()), i64)
            slot = self.emit(llvm.AllocaOp(size, llvm_type(element), alignment=64))
            # llvmlite types an alloca (`float*`), and a typed pointer takes no vector
            # stores (`<16 x float>`); through an integer it becomes an opaque `ptr`
            # like every other buffer (LLVM folds the round trip away).
            ptr = self.emit(llvm.IntToPtrOp(self.emit(llvm.PtrToIntOp(slot, i64))))
            self.block = saved
        self.buffers[op.memref] = Buffer(ptr, dims, bounds.ALLOCATED + self.allocated)
        self.allocated += 1

    def lazy_alloc(self, slot: SSAValue, nbytes: SSAValue) -> SSAValue:
        """The buffer whose address `slot` holds, allocated (and kept there) if it holds 0."""
        bits = self.emit(llvm.LoadOp(slot, i64))
        made = self.emit(llvm.ICmpOp(bits, self.const(0, i64), IntegerAttr(1, i64)))  # ne
        return self.alloc_unless(made, nbytes, self.emit(llvm.IntToPtrOp(bits)), slot)

    def alloc_unless_empty(self, nbytes: SSAValue) -> SSAValue:
        """A heap buffer of nbytes, or null for 0 bytes (freeing null does nothing): the staging
        buffer of a split's side that takes no rows this call (lanes along the rows at 8
        rows) costs a compare, not an allocation and a free."""
        empty = self.emit(llvm.ICmpOp(nbytes, self.const(0, i64), IntegerAttr(0, i64)))  # eq
        return self.alloc_unless(empty, nbytes, self.emit(llvm.IntToPtrOp(self.const(0, i64))))

    def alloc_unless(self, skip: SSAValue, nbytes: SSAValue, otherwise: SSAValue,
                      slot: SSAValue | None = None) -> SSAValue:
        """`otherwise` where `skip`, else a heap buffer of nbytes (its address stored in `slot`, if
        given)."""
        call, join = self.new_block(), self.new_block([PTR])
        self.emit(llvm.CondBrOp(skip, join, [otherwise], call, []))
        self.block = call
        ptr = self.emit(llvm.CallOp(self.external("nimble_scratch_alloc", PTR, [i64]), nbytes, return_type=PTR))
        if slot is not None:
            self.emit(llvm.StoreOp(self.emit(llvm.PtrToIntOp(ptr, i64)), slot))
        self.emit(llvm.BrOp(join, ptr))
        self.block = join
        return join.args[0]
