"""Kernels' heap buffers, kept from one call to the next (CPU).

A kernel's buffer too large for its stack or sized at run time (a depthwise conv's
padded copy, a conv's im2col rows, a staged result) is allocated and freed on every
call. From malloc, one past glibc's mmap threshold (128 KiB at first, then moving with
the sizes freed) is mapped and unmapped each time and its pages faulted in again: a
depthwise 5 x 5 conv over 240 channels at 14 x 14, batch 3, took 1.33 ms a call with
~170 page faults, 0.31 ms with glibc told to keep such blocks (`MALLOC_MMAP_THRESHOLD_`).
Kernels call instead (JIT-compiled once per process, bound as symbols like `sync`'s):

- `nimble_scratch_alloc(bytes)`: a kept block of `bytes` to `2 * bytes + SLACK` bytes
  taken from one of `SLOTS` slots (by compare-and-swap: any thread may allocate and
  free), else a new one from malloc (null if malloc fails); the `HEADER` bytes before the
  buffer hold the block's size.
- `nimble_scratch_free(pointer)`: keeps the block in an empty slot while the kept blocks
  then hold at most `KEPT_BYTES`, else frees it; null does nothing.
- `nimble_scratch_trim()`: frees every kept block; `nimble_scratch_kept()`: the bytes
  they hold (from Python: `llvm_jit.runtime_function`).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from nimble.runtime.native_ir import I64, P8, P64, VOID, Emitter, module

SLOTS = 64
HEADER = 64
"""Bytes before a buffer (its block's size in the first word): a multiple of 64 keeps
malloc's alignment."""
SLACK = 4096
KEPT_BYTES = 1 << 28
"""Most bytes the kept blocks hold together (a block larger than this is never kept)."""
SYMBOLS = ("nimble_scratch_alloc", "nimble_scratch_free", "nimble_scratch_trim", "nimble_scratch_kept")


def source() -> str:
    """The LLVM IR of the four functions."""
    m = module()
    slots = ir.GlobalVariable(m, ir.ArrayType(I64, SLOTS), "nimble_scratch_slots")
    slots.initializer = ir.Constant(ir.ArrayType(I64, SLOTS), None)
    kept = ir.GlobalVariable(m, I64, "nimble_scratch_kept_bytes")
    kept.initializer = I64(0)
    for g in (slots, kept):
        g.linkage = "internal"
    free = Emitter(m, "nimble_scratch_free", VOID, [("pointer", P8)])
    _free(free, slots, kept)
    _alloc(Emitter(m, "nimble_scratch_alloc", P8, [("bytes", I64)]), slots, kept, free.function)
    _trim(Emitter(m, "nimble_scratch_trim", VOID, []), slots, kept)
    e = Emitter(m, "nimble_scratch_kept", I64, [])
    e.b.ret(e.b.load_atomic(kept, "monotonic", 8))
    return str(m)


def _slot(e: Emitter, slots: ir.GlobalVariable, i: ir.Value) -> ir.Value:
    return e.b.gep(slots, [I64(0), i])


def _scan(e: Emitter, name: str, visit: Callable[[ir.Value, ir.Block], None]) -> None:
    """For each slot i (an i64) in order: `visit(i, next_block)` emits the slot's test,
    branching to `next_block` to go on; the builder continues after the last slot."""
    b = e.b
    head, body, done = e.block(f"{name}.head"), e.block(f"{name}.slot"), e.block(f"{name}.done")
    before = b.block
    b.branch(head)
    e.enter(head)
    i = b.phi(I64, f"{name}.i")
    i.add_incoming(I64(0), before)
    b.cbranch(b.icmp_signed("<", i, I64(SLOTS)), body, done)
    e.enter(body)
    following = e.block(f"{name}.next")
    visit(i, following)
    e.enter(following)
    i.add_incoming(b.add(i, I64(1)), following)
    b.branch(head)
    e.enter(done)


def _alloc(e: Emitter, slots: ir.GlobalVariable, kept: ir.GlobalVariable, free: ir.Function) -> None:
    b, wanted = e.b, e.arg["bytes"]
    most = b.add(b.shl(wanted, I64(1)), I64(SLACK))

    def visit(i: ir.Value, following: ir.Block) -> None:
        slot = _slot(e, slots, i)
        block = b.load_atomic(slot, "monotonic", 8)
        check, take, mine, fits, back = (e.block(s) for s in ("check", "take", "mine", "fits", "back"))
        b.cbranch(b.icmp_signed("!=", block, I64(0)), check, following)
        e.enter(check)
        size = b.load(b.inttoptr(block, P64))
        b.cbranch(b.and_(b.icmp_unsigned(">=", size, wanted), b.icmp_unsigned("<=", size, most)), take, following)
        e.enter(take)
        swap = b.cmpxchg(slot, block, I64(0), "acq_rel", "monotonic")
        b.cbranch(b.extract_value(swap, 1), mine, following)
        e.enter(mine)
        # Ours now. Its size is read again: between the test and the swap another thread
        # may have taken it, freed it, and kept another block at the same address.
        size = b.load(b.inttoptr(block, P64))
        b.atomic_rmw("sub", kept, size, "monotonic")
        buffer = b.gep(b.inttoptr(block, P8), [I64(HEADER)])
        b.cbranch(b.icmp_unsigned(">=", size, wanted), fits, back)
        e.enter(fits)
        b.ret(buffer)
        e.enter(back)  # (too small after all: kept again, or freed)
        b.call(free, [buffer])
        b.branch(following)

    _scan(e, "take", visit)
    made = e.call("malloc", P8, [b.add(wanted, I64(HEADER))])
    ok, failed = e.block("made"), e.block("failed")
    b.cbranch(b.icmp_unsigned("==", b.ptrtoint(made, I64), I64(0)), failed, ok)
    e.enter(failed)
    b.ret(ir.Constant(P8, None))
    e.enter(ok)
    b.store(wanted, b.bitcast(made, P64))
    b.ret(b.gep(made, [I64(HEADER)]))


def _free(e: Emitter, slots: ir.GlobalVariable, kept: ir.GlobalVariable) -> None:
    b, buffer = e.b, e.arg["pointer"]
    given, small, counted, undo, release, leave = (e.block(s) for s in ("given", "small", "counted", "undo",
                                                                        "release", "leave"))
    b.cbranch(b.icmp_unsigned("==", b.ptrtoint(buffer, I64), I64(0)), leave, given)
    e.enter(leave)
    b.ret_void()
    e.enter(given)
    block = b.gep(buffer, [I64(-HEADER)])
    size = b.load(b.bitcast(block, P64))
    b.cbranch(b.icmp_unsigned("<=", size, I64(KEPT_BYTES)), small, release)
    e.enter(small)
    before = b.atomic_rmw("add", kept, size, "monotonic")
    b.cbranch(b.icmp_unsigned("<=", b.add(before, size), I64(KEPT_BYTES)), counted, undo)
    e.enter(counted)
    address = b.ptrtoint(block, I64)

    def visit(i: ir.Value, following: ir.Block) -> None:
        swap = b.cmpxchg(_slot(e, slots, i), I64(0), address, "acq_rel", "monotonic")
        done = e.block("kept")
        b.cbranch(b.extract_value(swap, 1), done, following)
        e.enter(done)
        b.ret_void()

    _scan(e, "keep", visit)
    b.branch(undo)  # (no empty slot)
    e.enter(undo)
    b.atomic_rmw("sub", kept, size, "monotonic")
    b.branch(release)
    e.enter(release)
    e.call("free", VOID, [block])
    b.ret_void()


def _trim(e: Emitter, slots: ir.GlobalVariable, kept: ir.GlobalVariable) -> None:
    b = e.b

    def visit(i: ir.Value, following: ir.Block) -> None:
        block = b.atomic_rmw("xchg", _slot(e, slots, i), I64(0), "acq_rel")
        held = e.block("held")
        b.cbranch(b.icmp_signed("!=", block, I64(0)), held, following)
        e.enter(held)
        b.atomic_rmw("sub", kept, b.load(b.inttoptr(block, P64)), "monotonic")
        e.call("free", VOID, [b.inttoptr(block, P8)])
        b.branch(following)

    _scan(e, "trim", visit)
    b.ret_void()
