"""What the chunks of a cooperative kernel share: barriers and buffers (CPU).

A cooperative kernel (`loop.COOPERATIVE_MARK`: a recurrence's, whose time loop is
inside, or one that stages a buffer such as a conv's im2col) runs as `nchunks` calls at
once, one per thread, each doing its share of every
loop nest and waiting for the others between nests. They meet in a *mailbox* the
launcher allocates zeroed per launch (its address is the slot before the chunk index):
word 0 counts barrier arrivals, word `MAILBOX_LATE` says a chunk waited long for
another; words `MAILBOX_BUFFERS...` hold the buffers chunk 0 allocates for all. The functions here are JIT-compiled once per process and bound as
symbols kernels call (`llvm_jit`, before the first kernel is compiled or loaded):

- `nimble_barrier(mailbox, nchunks, count)`: arrive and wait until every chunk has
  arrived as often (`*count` is this chunk's number of barriers so far); returns at once
  when `nchunks` is 1. Waiting spins on the counter (acquire loads), yielding the CPU
  after `SPINS` tries so an oversubscribed machine still progresses.
- `nimble_shared_alloc(mailbox, index, chunk, nchunks, bytes)`: chunk 0 allocates
  (`scratch`) and publishes the address in word `MAILBOX_BUFFERS + index` (release); the
  others wait for it. Alone (`nchunks` 1) it is `nimble_scratch_alloc`.
- `nimble_shared_free(chunk, pointer)`: chunk 0 frees (after a barrier: nobody reads).
"""

from __future__ import annotations

from llvmlite import ir

from nimble.runtime.native_ir import I64, P8, P64, VOID, Emitter, keep, module

MAILBOX_WORDS = 64
MAILBOX_BUFFERS = 8
"""The first word holding a shared buffer's address (the counter has its own cache line)."""
MAILBOX_LATE = 1
"""Set when a chunk waited at a barrier longer than `LATE_CYCLES` for the others (one
was not running: the machine is loaded); the launcher counts it (`workers`)."""
SPINS = 1 << 14
LATE_CYCLES = 1 << 20
"""Time-stamp counter cycles (~0.3-0.5 ms) a chunk may wait for another at a barrier, or a
worker take to start its chunk after the launch posted it (`workers`), before the launch
counts as late: that long behind, the other was not running (its core taken by other
processes), not merely waking (tens of microseconds)."""

def source() -> str:
    """The LLVM IR of the three functions."""
    m = module()
    _barrier(Emitter(m, "nimble_barrier", VOID, [("mailbox", P64), ("nchunks", I64), ("count", P64)]))
    _shared_alloc(Emitter(m, "nimble_shared_alloc", P8,
                          [("mailbox", P64), ("index", I64), ("chunk", I64), ("nchunks", I64), ("bytes", I64)]))
    _shared_free(Emitter(m, "nimble_shared_free", VOID, [("chunk", I64), ("pointer", P8)]))
    return str(m)


def _barrier(e: Emitter) -> None:
    b, mailbox = e.b, e.arg["mailbox"]
    with b.if_then(b.icmp_signed(">", e.arg["nchunks"], I64(1))):
        mine = b.add(b.load(e.arg["count"]), I64(1))
        b.store(mine, e.arg["count"])
        target = b.mul(mine, e.arg["nchunks"])
        b.atomic_rmw("add", mailbox, I64(1), "acq_rel")
        t0 = e.cycles()

        def late() -> None:
            with b.if_then(e.later_than(t0, LATE_CYCLES)):
                b.store_atomic(I64(1), e.word(mailbox, MAILBOX_LATE), "monotonic", 8)
            e.yield_cpu()

        e.spin_until(lambda: b.icmp_signed(">=", b.load_atomic(mailbox, "acquire", 8), target), SPINS, late)
    b.ret_void()


def _shared_alloc(e: Emitter) -> None:
    b = e.b
    slot = e.word(e.arg["mailbox"], b.add(e.arg["index"], I64(MAILBOX_BUFFERS)))
    alone = b.icmp_signed("<=", e.arg["nchunks"], I64(1))
    with b.if_then(b.or_(alone, b.icmp_signed("==", e.arg["chunk"], I64(0)))):
        new = e.call("nimble_scratch_alloc", P8, [e.arg["bytes"]])
        with b.if_then(b.not_(alone)):
            b.store_atomic(b.ptrtoint(new, I64), slot, "release", 8)
        b.ret(new)
    seen: list[ir.Value] = []
    e.spin_until(lambda: b.icmp_signed("!=", keep(seen, b.load_atomic(slot, "acquire", 8)), I64(0)), SPINS)
    b.ret(b.inttoptr(seen[-1], P8))


def _shared_free(e: Emitter) -> None:
    b = e.b
    with b.if_then(b.icmp_signed("==", e.arg["chunk"], I64(0))):
        e.call("nimble_scratch_free", VOID, [e.arg["pointer"]])
    b.ret_void()


SYMBOLS = ("nimble_barrier", "nimble_shared_alloc", "nimble_shared_free")
