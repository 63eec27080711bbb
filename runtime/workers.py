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
word 8 the number done, word 9 the time-stamp counter when the worker started its last
job, word 12 (as i32) the number claimed, words 16 and 17 the job's
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
from llvmlite import ir

from nimble.runtime.native_ir import I1, I8, I32, I64, NULL, P8, P64, VOID, Emitter, keep, module
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

JOBS, DONE, STARTED, CLAIMED, FUNCTION, ARGUMENT, SLEEPING, HELD = 0, 8, 9, 12, 16, 17, 24, 28
"""The words of a worker's state (the module docstring)."""
LOCK, LAUNCHES, LATE, SOLO = 0, 1, 2, 3
"""The words of `Workers.control`."""
_RUN = [("fn", P8), ("slots", P8), ("chunks", I64), ("words", I64), ("states", P8), ("control", P64)]


def source() -> str:
    """The LLVM IR of the workers' functions."""
    m = module()
    _worker(Emitter(m, "nimble_worker", VOID, [("state", P8)]))
    _wake(Emitter(m, "nimble_wake", VOID, [("states", P8), ("count", I64)]))
    _hold(Emitter(m, "nimble_hold", VOID, [("states", P8), ("count", I64), ("delta", I64), ("wake", I64)]))
    _run_chunks(Emitter(m, "nimble_run_chunks", VOID, _RUN))
    _run_locked(Emitter(m, "nimble_run_locked", VOID, _RUN))
    _split(Emitter(m, "nimble_split", VOID, [("head", P64)]))
    return str(m)


def _worker(e: Emitter) -> None:
    """`nimble_worker(state)`: wait for a job (spinning, then asleep on the futex unless
    a run holds it awake), claim it, run it, report it done; forever."""
    b, state = e.b, e.arg["state"]
    jobs, sleeping, held = e.word(state, JOBS, I32), e.word(state, SLEEPING, I32), e.word(state, HELD)
    entry, wait = b.block, e.block("wait")
    b.branch(wait)
    e.enter(wait)
    seen = b.phi(I32, "seen")
    seen.add_incoming(I32(0), entry)
    job: list[ir.Value] = []

    def park() -> None:
        b.store_atomic(I32(1), sleeping, "seq_cst", 8)
        posted = b.icmp_signed("!=", b.load_atomic(jobs, "seq_cst", 8), seen)
        wanted = b.icmp_signed("!=", b.load_atomic(held, "seq_cst", 8), I64(0))
        with b.if_then(b.not_(b.or_(posted, wanted))):
            e.futex(FUTEX, jobs, FUTEX_WAIT, b.zext(seen, I64), NULL)
        b.store_atomic(I32(0), sleeping, "seq_cst", 8)

    def unheld(over: ir.Value) -> ir.Value:
        return b.and_(over, b.icmp_signed("==", b.load_atomic(held, "monotonic", 8), I64(0)))

    e.spin_until(lambda: b.icmp_signed("!=", keep(job, b.load_atomic(jobs, "acquire", 8)), seen), IDLE_SPINS,
                 park, tired=unheld, restart=True, name="idle")
    with b.if_then(e.claim(e.word(state, CLAIMED), job[-1])):
        b.store_atomic(e.cycles(), e.word(state, STARTED), "monotonic", 8)
        e.run_chunk(b.load(e.word(state, FUNCTION, P8)), b.load(e.word(state, ARGUMENT, P8)))
        b.store_atomic(b.zext(job[-1], I64), e.word(state, DONE), "release", 8)
    seen.add_incoming(job[-1], b.block)
    b.branch(wait)


def _wake_if_asleep(e: Emitter, state: ir.Value) -> None:
    b = e.b
    with b.if_then(b.icmp_signed("!=", b.load_atomic(e.word(state, SLEEPING, I32), "seq_cst", 8), I32(0))):
        e.futex(FUTEX, state, FUTEX_WAKE, 1)


def _wake(e: Emitter) -> None:
    """`nimble_wake(states, count)`: wake the workers asleep."""
    e.each(0, e.arg["count"], lambda w: _wake_if_asleep(e, e.record(e.arg["states"], w, STATE_WORDS)), "worker")
    e.b.ret_void()


def _hold(e: Emitter) -> None:
    """`nimble_hold(states, count, delta, wake)`: add `delta` to every worker's holds,
    then wake them if `wake`."""
    b, a = e.b, e.arg
    e.each(0, a["count"], lambda w: b.atomic_rmw(
        "add", e.word(e.record(a["states"], w, STATE_WORDS), HELD), a["delta"], "seq_cst"), "worker")
    with b.if_then(b.icmp_signed("!=", a["wake"], I64(0))):
        e.call("nimble_wake", VOID, [a["states"], a["count"]])
    b.ret_void()


def _count_late(e: Emitter) -> None:
    e.b.atomic_rmw("add", e.word(e.arg["control"], LATE), I64(1), "monotonic")


def _run_chunks(e: Emitter) -> None:
    """`nimble_run_chunks(fn, slots, chunks, words, states, control)`: post chunks 1..
    to the workers, run chunk 0, then each worker's chunk that no worker has claimed,
    and wait for the others; count a launch whose worker was late: one that started its
    chunk more than `LATE_CYCLES` after it was posted (its core was taken). A worker
    that merely has more to do (3 images on 2 chunks) is not late: counted by when
    chunks ended, such launches ran whole for seconds at a time (MobileNetV2 at batch 3
    on 2 threads took its one-thread time)."""
    b, a = e.b, e.arg
    stride = b.mul(a["words"], I64(8))
    posted = e.cycles()

    def post(c: ir.Value) -> None:
        state = e.record(a["states"], b.sub(c, I64(1)), STATE_WORDS)
        b.store(a["fn"], e.word(state, FUNCTION, P8))
        b.store(e.byte(a["slots"], b.mul(c, stride)), e.word(state, ARGUMENT, P8))
        b.atomic_rmw("add", e.word(state, JOBS, I32), I32(1), "seq_cst")
        _wake_if_asleep(e, state)

    e.each(1, a["chunks"], post, "post")
    e.run_chunk(a["fn"], a["slots"])

    def join(k: ir.Value) -> None:
        state = e.record(a["states"], b.sub(k, I64(1)), STATE_WORDS)
        want = b.load_atomic(e.word(state, JOBS, I32), "acquire", 8)
        done, want64 = e.word(state, DONE), b.zext(want, I64)
        with b.if_else(e.claim(e.word(state, CLAIMED), want)) as (steal, wait):
            with steal:
                e.run_chunk(a["fn"], e.byte(a["slots"], b.mul(k, stride)))
                b.store_atomic(want64, done, "release", 8)
            with wait:
                e.spin_until(lambda: b.icmp_signed("==", b.load_atomic(done, "acquire", 8), want64),
                             WAIT_SPINS, name="chunk")
                started = b.load_atomic(e.word(state, STARTED), "monotonic", 8)
                with b.if_then(b.icmp_signed(">", b.sub(started, posted), I64(LATE_CYCLES))):
                    _count_late(e)

    e.each(1, a["chunks"], join, "join")
    box = b.load(e.word(a["slots"], b.sub(a["words"], I64(3)), P8))
    with b.if_then(b.icmp_unsigned("!=", box, NULL)):
        with b.if_then(b.icmp_signed("!=", b.load_atomic(e.word(box, MAILBOX_LATE), "monotonic", 8), I64(0))):
            _count_late(e)
    b.ret_void()


def _run_locked(e: Emitter) -> None:
    """`nimble_run_locked(...)`: `nimble_run_chunks` holding the lock word, or the whole
    launch on this thread as chunk 0 of 1 while launches run solo."""
    b, a = e.b, e.arg
    control = a["control"]
    lock = e.word(control, LOCK)
    e.spin_until(lambda: b.extract_value(b.cmpxchg(lock, I64(0), I64(1), "acquire", "monotonic"), 1),
                 WAIT_SPINS, restart=True, name="lock")
    b.atomic_rmw("add", e.word(control, LAUNCHES), I64(1), "monotonic")
    solo = b.load_atomic(e.word(control, SOLO), "monotonic", 8)
    with b.if_else(b.icmp_signed("!=", solo, I64(0))) as (serial, shared):
        with serial:
            b.store(I64(1), e.word(a["slots"], b.sub(a["words"], I64(1))))
            e.run_chunk(a["fn"], a["slots"])
        with shared:
            e.call("nimble_run_chunks", VOID, list(e.function.args))
    b.store_atomic(I64(0), lock, "release", 8)
    b.ret_void()


def _split(e: Emitter) -> None:
    """`nimble_split(head)`: each chunk's slots made from the one slot array after the
    `SPLIT_HEADER` words (with its mailbox, chunk index and count), then run locked."""
    b, head = e.b, e.arg["head"]
    fn, states, control = (b.load(e.word(head, k, kind)) for k, kind in ((0, P8), (3, P8), (4, P64)))
    words, chunks = e.load_word(head, 1), e.load_word(head, 2)
    slots = e.word(head, SPLIT_HEADER)
    parts = b.alloca(I64, b.mul(chunks, words))
    mailbox = b.alloca(I64, I64(MAILBOX_WORDS))
    parts.align = mailbox.align = 64
    e.call("llvm.memset.p0.i64", VOID, [b.bitcast(mailbox, P8), I8(0), I64(MAILBOX_WORDS * 8), I1(0)])
    box, last = b.ptrtoint(mailbox, I64), b.sub(words, I64(3))

    def row(c: ir.Value) -> None:
        to = b.gep(parts, [b.mul(c, words)])
        e.copy_words(to, slots, words)
        for k, value in enumerate((box, c, chunks)):
            b.store(value, b.gep(to, [b.add(last, I64(k))]))

    e.each(0, chunks, row, "row")
    e.call("nimble_run_locked", VOID, [fn, b.bitcast(parts, P8), chunks, words, states, control])
    b.ret_void()


class Workers:
    """`count` native workers (see the module docstring)."""

    def __init__(self, count: int, worker: ctypes.CFUNCTYPE, run_chunks: ctypes.CFUNCTYPE, hold: ctypes.CFUNCTYPE):
        self.count = count
        self.states = np.zeros((count, STATE_WORDS), np.int64)
        self.control = np.zeros(8, np.int64)
        """Word 0 the lock one launch at a time holds (launches from Python and from
        `nimble_split` alike), word 1 the split launches run so far, word 2 how many
        launches had a late worker (`sync.LATE_CYCLES`: one that started its chunk that
        long after it was posted, or a chunk that waited that long at a cooperative
        kernel's barrier), word 3 whether split
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
                self.control[SOLO] = 1
        if self.control[SOLO] and now >= self._solo_until:
            self.control[SOLO] = 0
            self._probing = True
        return not self.control[SOLO]

    def others_running(self) -> int:
        """Threads running or runnable now besides this one and the awake workers
        (`/proc/loadavg`'s fourth field; 0 where it cannot be read)."""
        try:
            with open("/proc/loadavg", "rb") as f:
                running = int(f.read().split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        awake = int(np.count_nonzero(self.states[:, SLEEPING] & 0xFFFFFFFF == 0))
        return running - 1 - awake

    def ran(self) -> None:
        """After a run: a late worker during it starts (or lengthens) a solo stretch; a
        probe that found none ends them."""
        late = int(self.control[LATE])
        if late != self._late_seen:
            self._late_seen = late
            if self._probing:
                self._stretch = min(self._stretch * 2, SOLO_SECONDS[1])
            self._solo_until = time.perf_counter() + self._stretch
            self.control[SOLO] = 1
        elif self._probing:
            self._stretch = SOLO_SECONDS[0]
        self._probing = False

    @property
    def launches(self) -> int:
        """Split launches run so far (a run can tell whether it split: `VirtualMachine.invoke`)."""
        return int(self.control[LAUNCHES])

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

        engine = support_engine(source())
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
