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
- `nimble_shared_alloc(mailbox, index, chunk, nchunks, bytes)`: chunk 0 mallocs and
  publishes the address in word `MAILBOX_BUFFERS + index` (release); the others wait for
  it. Alone (`nchunks` 1) it is malloc.
- `nimble_shared_free(chunk, pointer)`: chunk 0 frees (after a barrier: nobody reads).
"""

from __future__ import annotations

MAILBOX_WORDS = 64
MAILBOX_BUFFERS = 8
"""The first word holding a shared buffer's address (the counter has its own cache line)."""
MAILBOX_LATE = 1
"""Set when a chunk waited at a barrier longer than `LATE_CYCLES` for the others (one
was not running: the machine is loaded); the launcher counts it (`workers`)."""
SPINS = 1 << 14
LATE_CYCLES = 1 << 20
"""Time-stamp counter cycles (~0.3-0.5 ms) a chunk may wait for another before the launch
counts as late: that long behind, the other was not running (its core taken by other
processes), not merely waking (tens of microseconds)."""

SOURCE = f"""
declare ptr @malloc(i64)
declare void @free(ptr)
declare i32 @sched_yield()
declare i64 @llvm.readcyclecounter()

define void @nimble_barrier(ptr %mailbox, i64 %nchunks, ptr %count) {{
entry:
  %alone = icmp sle i64 %nchunks, 1
  br i1 %alone, label %done, label %arrive
arrive:
  %before = load i64, ptr %count
  %mine = add i64 %before, 1
  store i64 %mine, ptr %count
  %target = mul i64 %mine, %nchunks
  %old = atomicrmw add ptr %mailbox, i64 1 acq_rel
  %t0 = call i64 @llvm.readcyclecounter()
  br label %wait
wait:
  %spins = phi i64 [0, %arrive], [%next, %again], [%next, %yield]
  %now = load atomic i64, ptr %mailbox acquire, align 8
  %all = icmp sge i64 %now, %target
  br i1 %all, label %done, label %again
again:
  %next = add i64 %spins, 1
  %long = icmp sgt i64 %spins, {SPINS}
  br i1 %long, label %late, label %wait
late:
  %t = call i64 @llvm.readcyclecounter()
  %waited = sub i64 %t, %t0
  %behind = icmp ugt i64 %waited, {LATE_CYCLES}
  br i1 %behind, label %mark, label %yield
mark:
  %latep = getelementptr i64, ptr %mailbox, i64 {MAILBOX_LATE}
  store atomic i64 1, ptr %latep monotonic, align 8
  br label %yield
yield:
  %ignored = call i32 @sched_yield()
  br label %wait
done:
  ret void
}}

define ptr @nimble_shared_alloc(ptr %mailbox, i64 %index, i64 %chunk, i64 %nchunks, i64 %bytes) {{
entry:
  %word = add i64 %index, {MAILBOX_BUFFERS}
  %slot = getelementptr i64, ptr %mailbox, i64 %word
  %alone = icmp sle i64 %nchunks, 1
  %first = icmp eq i64 %chunk, 0
  %allocates = or i1 %alone, %first
  br i1 %allocates, label %allocate, label %wait
allocate:
  %new = call ptr @malloc(i64 %bytes)
  br i1 %alone, label %mine, label %publish
publish:
  %address = ptrtoint ptr %new to i64
  store atomic i64 %address, ptr %slot release, align 8
  br label %mine
mine:
  ret ptr %new
wait:
  %spins = phi i64 [0, %entry], [%next, %again], [%next, %yield]
  %seen = load atomic i64, ptr %slot acquire, align 8
  %ready = icmp ne i64 %seen, 0
  br i1 %ready, label %theirs, label %again
again:
  %next = add i64 %spins, 1
  %long = icmp sgt i64 %spins, {SPINS}
  br i1 %long, label %yield, label %wait
yield:
  %ignored = call i32 @sched_yield()
  br label %wait
theirs:
  %shared = inttoptr i64 %seen to ptr
  ret ptr %shared
}}

define void @nimble_shared_free(i64 %chunk, ptr %pointer) {{
entry:
  %first = icmp eq i64 %chunk, 0
  br i1 %first, label %release, label %done
release:
  call void @free(ptr %pointer)
  br label %done
done:
  ret void
}}
"""

SYMBOLS = ("nimble_barrier", "nimble_shared_alloc", "nimble_shared_free")
