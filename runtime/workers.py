"""Native worker threads running the chunks of parallel kernel launches.

Handing a chunk to a `ThreadPoolExecutor` and waiting for it costs ~50 us here
(measured: 2000 submit/result round trips), as much as a dense layer of BERT at
sequence length 32: on two threads such models ran slower than on one. These workers
never touch Python: each is a Python daemon thread parked inside one ctypes call to
`nimble_worker` (below, JIT-compiled once per process), which waits for jobs on its
state words, spinning for a while after each job (launches come back to back) and then
sleeping on a futex. `nimble_run_chunks` posts chunks 1.. to the workers, runs chunk 0
on the calling thread and spins until the workers are done (a dense layer of 128 rows,
256 -> 1024, measured: 289 us on one thread, 217 us in 2 chunks through the pool, 187
us on the workers). One launch uses the workers at a time (`nimble_run_locked` holds
the lock word of `Workers.control`). `nimble_split` makes a split launch's chunk slots
(and its cooperative mailbox) from one slot array in machine code, for the launch fast
path (`launcher`): from Python the same took 30-40 us per launch after a large kernel
(timed inside `KernelEntry.launch`, ResNet-18 at 2 threads).

Per worker, 32 words: word 0 (as i32) the number of jobs posted (the futex word),
word 8 the number done, word 12 (as i32) the number claimed, words 16 and 17 the job's
function and argument, word 24 (as i32) whether the worker sleeps, word 28 how many
runs hold it awake (`Workers.hold`: once woken, it spins instead of sleeping). A job runs on
whichever side claims it first (compare-and-swap of word 12 from job - 1 to job, in
32 bits like the job count, so both wrap alike): the worker when it sees the job, or
the launching thread once its own chunk is done. A worker still waking from its futex
(tens of microseconds on a VM) then no longer holds up a short launch: BERT's attention
softmax, 7 us on one thread, took 42 us in 2 chunks while the worker woke, 26 us with
the claim. Linux only (the futex system call); elsewhere `workers()` is None and launches use the
Python pool.
"""

from __future__ import annotations

import ctypes
import os
import platform
import threading
import time

import numpy as np

from nimble.runtime.pointers import data_pointer
from nimble.runtime.sync import LATE_CYCLES, MAILBOX_LATE, MAILBOX_WORDS

STATE_WORDS = 32
IDLE_SPINS = 1 << 14
"""Job checks a worker makes before it sleeps (~25 us: a VM's next launch comes sooner;
a worker spinning longer takes the core from other libraries' threads)."""
WAIT_SPINS = 1 << 14
"""Checks the launching thread makes for a worker's chunk before yielding the CPU."""
LOOK_SECONDS = 0.05
"""How often a run's start reads how many threads the machine runs (~10 us a read)."""
SOLO_SECONDS = (0.05, 5.0)
"""How long launches run whole on the calling thread after a late one: the first
stretch, doubled while probes find the workers late again, up to the second."""
FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
FUTEX_WAIT, FUTEX_WAKE = 128, 129  # the _PRIVATE forms
SUPPORTED = FUTEX is not None and platform.system() == "Linux"
SPLIT_HEADER = 5
"""Words before the kernel's slots in a `nimble_split` argument: the kernel, its slot
count, the number of chunks, the workers' states and their control words."""

_SOURCE = f"""
declare i64 @syscall(i64, ...)
declare i32 @sched_yield()
declare i64 @llvm.readcyclecounter()
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

define void @nimble_worker(ptr %state) {{
entry:
  %jobs = getelementptr i64, ptr %state, i64 0
  %done = getelementptr i64, ptr %state, i64 8
  %fnp = getelementptr i64, ptr %state, i64 16
  %argp = getelementptr i64, ptr %state, i64 17
  %sleeping = getelementptr i64, ptr %state, i64 24
  %claimed = getelementptr i64, ptr %state, i64 12
  %held = getelementptr i64, ptr %state, i64 28
  br label %wait
wait:
  %seen = phi i32 [0, %entry], [%job, %run], [%job, %call], [%seen, %unpark]
  br label %spin
spin:
  %spins = phi i64 [0, %wait], [%next, %again]
  %job = load atomic i32, ptr %jobs acquire, align 8
  %new = icmp ne i32 %job, %seen
  br i1 %new, label %run, label %again
again:
  %next = add i64 %spins, 1
  %idle = icmp sgt i64 %spins, {IDLE_SPINS}
  %holds = load atomic i64, ptr %held monotonic, align 8
  %free = icmp eq i64 %holds, 0
  %tired = and i1 %idle, %free
  br i1 %tired, label %park, label %spin
park:
  store atomic i32 1, ptr %sleeping seq_cst, align 8
  %recheck = load atomic i32, ptr %jobs seq_cst, align 8
  %posted = icmp ne i32 %recheck, %seen
  %reheld = load atomic i64, ptr %held seq_cst, align 8
  %wanted = icmp ne i64 %reheld, 0
  %awake = or i1 %posted, %wanted
  br i1 %awake, label %unpark, label %sleep
sleep:
  %seen64 = zext i32 %seen to i64
  %ignored = call i64 (i64, ...) @syscall(i64 {FUTEX}, ptr %jobs, i64 {FUTEX_WAIT}, i64 %seen64, ptr null)
  br label %unpark
unpark:
  store atomic i32 0, ptr %sleeping seq_cst, align 8
  br label %wait
run:
  %before = sub i32 %job, 1
  %claim = cmpxchg ptr %claimed, i32 %before, i32 %job acq_rel acquire
  %mine = extractvalue {{ i32, i1 }} %claim, 1
  br i1 %mine, label %call, label %wait
call:
  %fn = load ptr, ptr %fnp
  %arg = load ptr, ptr %argp
  call void %fn(ptr %arg)
  %job64 = zext i32 %job to i64
  store atomic i64 %job64, ptr %done release, align 8
  br label %wait
}}

define void @nimble_hold(ptr %states, i64 %count, i64 %delta, i64 %wake) {{
entry:
  br label %each
each:
  %w = phi i64 [0, %entry], [%w1, %next]
  %more = icmp slt i64 %w, %count
  br i1 %more, label %add, label %done
add:
  %offset = mul i64 %w, {STATE_WORDS * 8}
  %state = getelementptr i8, ptr %states, i64 %offset
  %held = getelementptr i64, ptr %state, i64 28
  %old = atomicrmw add ptr %held, i64 %delta seq_cst
  br label %next
next:
  %w1 = add i64 %w, 1
  br label %each
done:
  %waking = icmp ne i64 %wake, 0
  br i1 %waking, label %woken, label %back
woken:
  call void @nimble_wake(ptr %states, i64 %count)
  br label %back
back:
  ret void
}}

define void @nimble_wake(ptr %states, i64 %count) {{
entry:
  br label %each
each:
  %w = phi i64 [0, %entry], [%w1, %next]
  %more = icmp slt i64 %w, %count
  br i1 %more, label %check, label %done
check:
  %offset = mul i64 %w, {STATE_WORDS * 8}
  %state = getelementptr i8, ptr %states, i64 %offset
  %sleeping = getelementptr i64, ptr %state, i64 24
  %asleep = load atomic i32, ptr %sleeping seq_cst, align 8
  %parked = icmp ne i32 %asleep, 0
  br i1 %parked, label %wakeup, label %next
wakeup:
  %ignored = call i64 (i64, ...) @syscall(i64 {FUTEX}, ptr %state, i64 {FUTEX_WAKE}, i64 1)
  br label %next
next:
  %w1 = add i64 %w, 1
  br label %each
done:
  ret void
}}

define void @nimble_run_chunks(ptr %fn, ptr %slots, i64 %chunks, i64 %words, ptr %states, ptr %control) {{
entry:
  %stride = mul i64 %words, 8
  br label %post
post:
  %c = phi i64 [1, %entry], [%c1, %posted]
  %more = icmp slt i64 %c, %chunks
  br i1 %more, label %give, label %own
give:
  %w = sub i64 %c, 1
  %offset = mul i64 %w, {STATE_WORDS * 8}
  %state = getelementptr i8, ptr %states, i64 %offset
  %fnp = getelementptr i64, ptr %state, i64 16
  %argp = getelementptr i64, ptr %state, i64 17
  %at = mul i64 %c, %stride
  %arg = getelementptr i8, ptr %slots, i64 %at
  store ptr %fn, ptr %fnp
  store ptr %arg, ptr %argp
  %old = atomicrmw add ptr %state, i32 1 seq_cst
  %sleeping = getelementptr i64, ptr %state, i64 24
  %asleep = load atomic i32, ptr %sleeping seq_cst, align 8
  %wake = icmp ne i32 %asleep, 0
  br i1 %wake, label %wakeup, label %posted
wakeup:
  %ignored = call i64 (i64, ...) @syscall(i64 {FUTEX}, ptr %state, i64 {FUTEX_WAKE}, i64 1)
  br label %posted
posted:
  %c1 = add i64 %c, 1
  br label %post
own:
  call void %fn(ptr %slots)
  %t0 = call i64 @llvm.readcyclecounter()
  br label %join
join:
  %k = phi i64 [1, %own], [%k1, %joined]
  %left = icmp slt i64 %k, %chunks
  br i1 %left, label %check, label %finish
check:
  %kw = sub i64 %k, 1
  %koffset = mul i64 %kw, {STATE_WORDS * 8}
  %kstate = getelementptr i8, ptr %states, i64 %koffset
  %want32 = load atomic i32, ptr %kstate acquire, align 8
  %want = zext i32 %want32 to i64
  %donep = getelementptr i64, ptr %kstate, i64 8
  %claimedp = getelementptr i64, ptr %kstate, i64 12
  %before = sub i32 %want32, 1
  %claim = cmpxchg ptr %claimedp, i32 %before, i32 %want32 acq_rel acquire
  %mine = extractvalue {{ i32, i1 }} %claim, 1
  br i1 %mine, label %steal, label %spin
steal:
  %kat = mul i64 %k, %stride
  %karg = getelementptr i8, ptr %slots, i64 %kat
  call void %fn(ptr %karg)
  store atomic i64 %want, ptr %donep release, align 8
  br label %joined
spin:
  %spins = phi i64 [0, %check], [%next, %again], [%next, %doyield]
  %got = load atomic i64, ptr %donep acquire, align 8
  %finished = icmp eq i64 %got, %want
  br i1 %finished, label %joined, label %again
again:
  %next = add i64 %spins, 1
  %long = icmp sgt i64 %spins, {WAIT_SPINS}
  br i1 %long, label %yield, label %spin
yield:
  %now = call i64 @llvm.readcyclecounter()
  %waited = sub i64 %now, %t0
  %late = icmp ugt i64 %waited, {LATE_CYCLES}
  br i1 %late, label %mark, label %doyield
mark:
  %latep = getelementptr i64, ptr %control, i64 2
  %l = atomicrmw add ptr %latep, i64 1 monotonic
  br label %doyield
doyield:
  %y = call i32 @sched_yield()
  br label %spin
joined:
  %k1 = add i64 %k, 1
  br label %join
finish:
  %boxat = sub i64 %words, 3
  %boxp = getelementptr i64, ptr %slots, i64 %boxat
  %box = load ptr, ptr %boxp
  %nobox = icmp eq ptr %box, null
  br i1 %nobox, label %out, label %barriers
barriers:
  %flagp = getelementptr i64, ptr %box, i64 {MAILBOX_LATE}
  %flag = load atomic i64, ptr %flagp monotonic, align 8
  %waitedlong = icmp ne i64 %flag, 0
  br i1 %waitedlong, label %count, label %out
count:
  %latecount = getelementptr i64, ptr %control, i64 2
  %lc = atomicrmw add ptr %latecount, i64 1 monotonic
  br label %out
out:
  ret void
}}

define void @nimble_run_locked(ptr %fn, ptr %slots, i64 %chunks, i64 %words, ptr %states, ptr %control) {{
entry:
  br label %try
try:
  %spins = phi i64 [0, %entry], [%next, %busy], [0, %yield]
  %got = cmpxchg ptr %control, i64 0, i64 1 acquire monotonic
  %ok = extractvalue {{ i64, i1 }} %got, 1
  br i1 %ok, label %locked, label %busy
busy:
  %next = add i64 %spins, 1
  %long = icmp sgt i64 %next, {WAIT_SPINS}
  br i1 %long, label %yield, label %try
yield:
  %y = call i32 @sched_yield()
  br label %try
locked:
  %launchesp = getelementptr i64, ptr %control, i64 1
  %old = atomicrmw add ptr %launchesp, i64 1 monotonic
  %solop = getelementptr i64, ptr %control, i64 3
  %solo = load atomic i64, ptr %solop monotonic, align 8
  %alone = icmp ne i64 %solo, 0
  br i1 %alone, label %serial, label %shared
shared:
  call void @nimble_run_chunks(ptr %fn, ptr %slots, i64 %chunks, i64 %words, ptr %states, ptr %control)
  br label %unlock
serial:
  %countat = sub i64 %words, 1
  %countp = getelementptr i64, ptr %slots, i64 %countat
  store i64 1, ptr %countp
  call void %fn(ptr %slots)
  br label %unlock
unlock:
  store atomic i64 0, ptr %control release, align 8
  ret void
}}

define void @nimble_split(ptr %head) {{
entry:
  %fn = load ptr, ptr %head
  %wordsp = getelementptr i64, ptr %head, i64 1
  %words = load i64, ptr %wordsp
  %chunksp = getelementptr i64, ptr %head, i64 2
  %chunks = load i64, ptr %chunksp
  %statesp = getelementptr i64, ptr %head, i64 3
  %states = load ptr, ptr %statesp
  %controlp = getelementptr i64, ptr %head, i64 4
  %control = load ptr, ptr %controlp
  %slots = getelementptr i64, ptr %head, i64 {SPLIT_HEADER}
  %n = mul i64 %chunks, %words
  %parts = alloca i64, i64 %n, align 64
  %mailbox = alloca i64, i64 {MAILBOX_WORDS}, align 64
  call void @llvm.memset.p0.i64(ptr %mailbox, i8 0, i64 {MAILBOX_WORDS * 8}, i1 false)
  %box = ptrtoint ptr %mailbox to i64
  %bytes = shl i64 %words, 3
  %last = sub i64 %words, 3
  br label %row
row:
  %c = phi i64 [0, %entry], [%c1, %row]
  %at = mul i64 %c, %words
  %dst = getelementptr i64, ptr %parts, i64 %at
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %slots, i64 %bytes, i1 false)
  %boxp = getelementptr i64, ptr %dst, i64 %last
  store i64 %box, ptr %boxp
  %chunkp = getelementptr i64, ptr %boxp, i64 1
  store i64 %c, ptr %chunkp
  %countp = getelementptr i64, ptr %boxp, i64 2
  store i64 %chunks, ptr %countp
  %c1 = add i64 %c, 1
  %more = icmp slt i64 %c1, %chunks
  br i1 %more, label %row, label %go
go:
  call void @nimble_run_locked(ptr %fn, ptr %parts, i64 %chunks, i64 %words, ptr %states, ptr %control)
  ret void
}}
"""


class Workers:
    """`count` native workers (see the module docstring)."""

    def __init__(self, count: int, worker: ctypes.CFUNCTYPE, run_chunks: ctypes.CFUNCTYPE, hold: ctypes.CFUNCTYPE):
        self.count = count
        self.states = np.zeros((count, STATE_WORDS), np.int64)
        self.control = np.zeros(8, np.int64)
        """Word 0 the lock one launch at a time holds (launches from Python and from
        `nimble_split` alike), word 1 the split launches run so far, word 2 how many
        launches waited for a late worker (`sync.LATE_CYCLES`: after the launching
        thread's chunk, or at a cooperative kernel's barrier), word 3 whether split
        launches run whole on the calling thread instead, as chunk 0 of 1 (a cooperative
        kernel's chunks wait for each other: they cannot run one after another)."""
        self._late_seen = 0
        self._solo_until = 0.0
        self._stretch = SOLO_SECONDS[0]
        self._probing = False
        self._next_look = 0.0
        self._run = run_chunks
        self._hold = hold
        self._base = data_pointer(self.states)
        self.control_address = data_pointer(self.control)
        for w in range(count):
            threading.Thread(target=worker, args=(self._base + w * STATE_WORDS * 8,), daemon=True,
                             name=f"nimble-worker-{w}").start()

    def hold(self, delta: int, wake: bool = False) -> None:
        """Add `delta` (1 when a model's run starts, -1 when it ends) to the holds that
        keep the workers awake once a job woke them: spinning instead of parking on their
        futex. A run's split launches come between others run whole, often more than the
        ~25 us a worker spins after a job apart, and a parked worker takes tens to
        hundreds of microseconds to wake on a VM (BERT at 2 threads: the first dense
        layer of each layer, after a layer norm run whole, took 350 us against 140 for
        the next two of the same shape).

        With `wake`, parked workers are woken too (a system call each, in the same native
        call), so that they are awake when the run's first split launch comes: a run
        expected to split (the last one did) starts with `hold(1, wake=True)`; one that
        never splits (an MLP at batch 1) would pay the system calls for nothing. A worker
        takes tens of microseconds to wake on a VM: BERT's batched Q K^T at S=128 alone,
        2 threads, called 1 ms apart, took 146 us a run (median) against 77 back to back
        (39 us in the kernel); woken at the run's start, 116."""
        self._hold(self._base, self.count, delta, wake)

    def may_split(self) -> bool:
        """Whether a run starting now may split its launches between the workers. When
        other processes keep every core busy (`others_running`, looked at every
        `LOOK_SECONDS`), or after a late worker (one that was not running when its
        chunk was awaited), launches run whole on the calling thread for a stretch
        (`SOLO_SECONDS`), then one run probes whether the workers keep up again. A
        loaded machine then runs a model at about its one-thread speed, not at the
        pace of a worker waiting for a core."""
        now = time.perf_counter()
        if now >= self._next_look:
            self._next_look = now + LOOK_SECONDS
            if self.others_running() >= _CPUS:
                self._solo_until = max(self._solo_until, now + SOLO_SECONDS[0])
                self.control[3] = 1
        if self.control[3] and now >= self._solo_until:
            self.control[3] = 0
            self._probing = True
        return not self.control[3]

    def others_running(self) -> int:
        """Threads running or runnable now besides this one and the awake workers
        (`/proc/loadavg`'s fourth field; 0 where it cannot be read)."""
        try:
            with open("/proc/loadavg", "rb") as f:
                running = int(f.read().split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        awake = int(np.count_nonzero(self.states[:, 24] & 0xFFFFFFFF == 0))
        return running - 1 - awake

    def ran(self) -> None:
        """After a run: a late worker during it starts (or lengthens) a solo stretch; a
        probe that found none ends them."""
        late = int(self.control[2])
        if late != self._late_seen:
            self._late_seen = late
            if self._probing:
                self._stretch = min(self._stretch * 2, SOLO_SECONDS[1])
            self._solo_until = time.perf_counter() + self._stretch
            self.control[3] = 1
        elif self._probing:
            self._stretch = SOLO_SECONDS[0]
        self._probing = False

    @property
    def launches(self) -> int:
        """Split launches run so far (a run can tell whether it split: `VirtualMachine.invoke`)."""
        return int(self.control[1])

    def run(self, address: ctypes.c_void_p, parts: np.ndarray) -> None:
        """Run the kernel at `address` on each row of `parts` (a chunk's slots), row 0 on
        this thread, the others on workers; return when all are done."""
        self._run(address, data_pointer(parts), len(parts), parts.shape[1], self._base, self.control_address)

    def split_head(self, address: int, words: int, chunks: int) -> list[int]:
        """The `SPLIT_HEADER` words before a kernel's slots for `nimble_split`:
        the launch fast path (`launcher`) then splits a launch in machine code, as `run`
        does from Python."""
        return [address, words, chunks, self._base, self.control_address]


_CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_LOCK = threading.Lock()
_FUNCTIONS: tuple | None = None
_WORKERS: Workers | None = None
_RETIRED: list[Workers] = []
"""Workers replaced by more: their threads stay parked on their states, kept alive."""


def _functions() -> tuple:
    global _FUNCTIONS
    if _FUNCTIONS is None:
        from nimble.runtime.llvm_jit import support_engine

        engine = support_engine(_SOURCE)
        worker = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.get_function_address("nimble_worker"))
        run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_void_p, ctypes.c_void_p)(engine.get_function_address("nimble_run_locked"))
        hold = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(
            engine.get_function_address("nimble_hold"))
        _FUNCTIONS = (engine, worker, run, hold)
    return _FUNCTIONS


def split_address() -> int:
    """The address of `nimble_split(i64 *head)`: a launch split between the workers whose
    `Workers.split_head` precedes the kernel's slots."""
    return _functions()[0].get_function_address("nimble_split")


def current() -> Workers | None:
    """The process's workers as they are (None before the first split launch, and in a
    forked child until its first)."""
    return _WORKERS


def _forget_in_child() -> None:
    global _WORKERS
    _WORKERS = None  # the parent's threads are not in the child: `workers` makes new ones


os.register_at_fork(after_in_child=_forget_in_child)


def workers(count: int) -> Workers | None:
    """The process's workers, at least `count` of them (made on first use, and again in
    a forked child, which has none of its parent's threads); None where futexes are
    unknown."""
    global _WORKERS
    ready = _WORKERS
    if ready is not None and ready.count >= count:  # a forked child has none (`_forget_in_child`)
        return ready
    if not SUPPORTED:
        return None
    with _LOCK:
        if _WORKERS is None or _WORKERS.count < count:
            _, worker, run, hold = _functions()
            if _WORKERS is not None:
                _RETIRED.append(_WORKERS)
            _WORKERS = Workers(count, worker, run, hold)
        return _WORKERS
