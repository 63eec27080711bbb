"""Kernels compiled to object code on several processes at once.

LLVM's optimiser and code generator hold Python's GIL in llvmlite (measured: two threads
compiling ResNet-18's kernels took 4.44 s against 4.38 s on one), so parallel
compilation needs processes. The workers are forked from the compiling process: they
inherit its kernels (no pickling of IR, no second import of Nimble) and send back
object code only. Where fork is not available, or one worker would do, the kernels
compile here, one after the other.

`build(jobs, compile_one, workers)` yields `(name, object code or the exception)` per
job as each finishes; a job that fails is reported, never raised, so that the others
still compile. A worker that dies (a crash inside LLVM) breaks the pool: the jobs it
had not finished compile here instead.

`Stream` compiles jobs while the caller goes on working (the compile's passes, making
the next kernels): each job is added as soon as it can be compiled, and processes forked
on the cores the caller leaves free (and on every core once it is done) claim the jobs
one at a time.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import tempfile
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

Job = Callable[[str], bytes]

_JOB: Job | None = None
"""The compile function of the running `build`, set before the workers fork."""


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run(name: str) -> bytes | Exception:
    assert _JOB is not None
    return _serial(_JOB, name)


def build(names: list[str], compile_one: Job, workers: int | None = None) -> Iterator[tuple[str, bytes | Exception]]:
    """Object code for each of `names` by `compile_one(name)`, on up to `workers`
    processes (default: every core); in the order they finish. One build at a time in a
    process (`KernelCode` holds the LLVM lock around it): the workers find their job in
    a global set before they fork."""
    workers = min(workers or cores(), len(names))
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for name in names:
            yield name, _serial(compile_one, name)
        return
    global _JOB
    _JOB = compile_one
    done: set[str] = set()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {pool.submit(_run, name): name for name in names}
            for future in as_completed(futures):
                result = future.result()
                done.add(futures[future])
                yield futures[future], result
    except BrokenProcessPool:
        for name in names:
            if name not in done:
                yield name, _serial(compile_one, name)
    finally:
        _JOB = None


def _serial(compile_one: Job, name: str) -> bytes | Exception:
    try:
        return compile_one(name)
    except Exception as e:  # noqa: BLE001 (reported, not raised: the other jobs go on)
        error = RuntimeError(f"{type(e).__name__}: {e}")  # (a worker's exception may not pickle)
        error.__cause__ = e
        return error


class Stream:
    """Jobs compiled on forked processes while this one goes on: `add(name, weight)` when
    a job can be compiled (a kernel through its passes), `finish()` after the last. While
    this process works, up to `workers - 1` children run (one on two cores); `finish`
    forks more, one per core. A child is given every job not yet begun when it forks (it
    inherits their IR, as `build`'s workers do), heaviest first, and claims each before
    compiling it (a file created exclusively: one process per job), so a child forked
    later takes over the jobs an earlier one has not reached. A child leaves each result
    in a file; the jobs that a child which died had claimed compile here. Without fork,
    or with one worker, the jobs compile here at `finish`."""

    def __init__(self, compile_one: Job, workers: int | None = None,
                 fork_lock: contextlib.AbstractContextManager | None = None):
        self.compile_one = compile_one
        self.workers = workers or cores()
        self._fork_lock = fork_lock or contextlib.nullcontext()  # (held while forking: no thread inside LLVM then)
        self._forks = "fork" in multiprocessing.get_all_start_methods() and self.workers > 1
        self._busy = 1  # (this process, until `finish`)
        self._jobs: dict[str, float] = {}  # name -> weight, of the jobs without a result yet
        self._number: dict[str, int] = {}  # name -> its files' number
        self._children: dict[int, int] = {}  # read end of its pipe -> pid
        self._results: dict[str, bytes | Exception] = {}
        self._folder = tempfile.mkdtemp(prefix="nimble-jit-") if self._forks else ""
        self.forked = 0
        """Children forked so far."""
        self.early: set[str] = set()
        """The jobs begun before `finish` (while this process worked)."""

    def add(self, name: str, weight: float = 1.0) -> None:
        self._jobs[name] = weight
        self._number.setdefault(name, len(self._number))
        if self._forks:
            self._reap(block=False)
            self._fork()

    def finish(self, wanted: Collection[str] | None = None) -> dict[str, bytes | Exception]:
        """Every job's object code or exception, once all are done; only those of
        `wanted` (default: all) if given: the others not begun yet are dropped."""
        self._busy = 0
        try:
            if wanted is not None:
                self._drop([n for n in self._jobs if n not in wanted])
            if self._forks:
                open(self._path("finish"), "w").close()  # (jobs claimed from now on begin after the passes)
                while self._children or self._unclaimed():
                    self._fork()
                    self._reap(block=True)
            for name in list(self._jobs):  # (no fork here, or claimed by a child that died)
                self._results[name] = _serial(self.compile_one, name)
            self._jobs = {}
        finally:
            self.cancel()  # (an interrupted wait: no child outlives it)
        return self._results

    def _drop(self, names: list[str]) -> None:
        """Forget jobs `names`; a child that has not begun one finds it claimed."""
        for name in names:
            del self._jobs[name]
            if self._forks:
                _claim(self._folder, self._number[name])

    def cancel(self) -> None:
        """Stop the children still running (what they had not finished is dropped)."""
        for fd, pid in self._children.items():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        self._children.clear()
        shutil.rmtree(self._folder, ignore_errors=True)

    def _path(self, what: str) -> str:
        return os.path.join(self._folder, what)

    def _unclaimed(self) -> list[str]:
        """The jobs no process has begun, heaviest first."""
        files = set(os.listdir(self._folder))
        return sorted((n for n in self._jobs if f"claim-{self._number[n]}" not in files),
                      key=self._jobs.__getitem__, reverse=True)

    def _fork(self) -> None:
        while len(self._children) < self.workers - self._busy and (jobs := self._unclaimed()):
            read, write = os.pipe()
            with self._fork_lock:
                pid = os.fork()
            if pid == 0:  # pragma: no cover (the child: coverage is not collected there)
                os.close(read)
                _child(self.compile_one, [(self._number[n], n) for n in jobs], self._folder)
            os.close(write)  # (the read end sees EOF when the child exits)
            self._children[read] = pid
            self.forked += 1

    def _reap(self, block: bool) -> None:
        """Collect the children that have exited (at least one, if `block`)."""
        if not self._children:
            return
        ready, _, _ = select.select(list(self._children), [], [], None if block else 0)
        for fd in ready:
            os.waitpid(self._children.pop(fd), 0)
            os.close(fd)
        files = set(os.listdir(self._folder))  # (one listing, not a failed open per job)
        for name in [n for n in self._jobs if f"result-{self._number[n]}" in files]:
            with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError), \
                    open(self._path(f"result-{self._number[name]}"), "rb") as f:
                self._results[name], early = pickle.load(f)
                del self._jobs[name]
                if early:
                    self.early.add(name)


def _claim(folder: str, number: int) -> bool:
    """Claim job `number` (a file created exclusively: one process per job); False if
    another process has."""
    try:
        os.close(os.open(os.path.join(folder, f"claim-{number}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _child(compile_one: Job, jobs: list[tuple[int, str]], folder: str) -> None:
    """A forked child's life: compile each job (number, name) that no other process has
    claimed, each result in a file of its own (what a child that dies did is kept), then
    exit (never returning into the parent's code)."""
    code = 1
    # The parent's objects (the module's IR) out of the child's collections: scanning them
    # copied their pages too. ResNet-18 cold, 3 runs each: 3.23-3.31 s against 3.33-3.46.
    gc.freeze()
    try:
        for number, name in jobs:
            if not _claim(folder, number):
                continue
            early = not os.path.exists(os.path.join(folder, "finish"))
            result = _serial(compile_one, name)
            path = os.path.join(folder, f"result-{number}")
            with open(path + ".part", "wb") as f:
                pickle.dump((result, early), f)
            os.replace(path + ".part", path)
        code = 0
    finally:
        os._exit(code)
