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
the next kernels): each job is added as soon as it can be compiled, and a process forked
then takes every job waiting, on the cores the caller leaves free.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
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
    this process works, up to `workers - 1` children run (one on two cores), each forked
    with every job waiting at that moment (it inherits their IR, as `build`'s workers
    do); `finish` keeps every core busy with one job per child, the heaviest first, and
    waits. A child leaves its results in a file and exits; one that dies leaves its jobs
    to this process. Without fork, or with one worker, the jobs compile here at `finish`."""

    def __init__(self, compile_one: Job, workers: int | None = None,
                 fork_lock: contextlib.AbstractContextManager | None = None):
        self.compile_one = compile_one
        self.workers = workers or cores()
        self._fork_lock = fork_lock or contextlib.nullcontext()  # (held while forking: no thread inside LLVM then)
        self._forks = "fork" in multiprocessing.get_all_start_methods() and self.workers > 1
        self._busy = 1  # (this process, until `finish`)
        self._waiting: dict[str, float] = {}  # name -> weight
        self._children: dict[int, tuple[int, list[str], str]] = {}  # read end of its pipe -> (pid, jobs, results' file)
        self._results: dict[str, bytes | Exception] = {}
        self._orphans: list[str] = []  # (jobs of children that died)
        self._folder = tempfile.mkdtemp(prefix="nimble-jit-") if self._forks else ""
        self.forked = 0
        """Children forked so far."""
        self.early: set[str] = set()
        """The jobs begun before `finish` (while this process worked)."""

    def add(self, name: str, weight: float = 1.0) -> None:
        self._waiting[name] = weight
        self._reap(block=False)
        self._fork()

    def finish(self) -> dict[str, bytes | Exception]:
        """Every job's object code or exception, once all are done."""
        self._busy = 0
        try:
            while self._forks and (self._waiting or self._children):
                self._fork()
                self._reap(block=True)
            for name in [*self._orphans, *self._waiting]:  # (no fork here)
                self._results[name] = _serial(self.compile_one, name)
            self._orphans, self._waiting = [], {}
        finally:
            self.cancel()  # (an interrupted wait: no child outlives it)
        return self._results

    def cancel(self) -> None:
        """Stop the children still running; their jobs and those waiting are dropped."""
        for fd, (pid, _, _) in self._children.items():
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        self._children.clear()
        self._waiting = {}
        shutil.rmtree(self._folder, ignore_errors=True)

    def _fork(self) -> None:
        if not self._forks:
            return
        while self._waiting and len(self._children) < self.workers - self._busy:
            if self._busy:  # every job waiting now
                share = list(self._waiting)
                self.early.update(share)
            else:  # the heaviest one
                share = [max(self._waiting, key=self._waiting.__getitem__)]
            for name in share:
                del self._waiting[name]
            path = os.path.join(self._folder, f"{self.forked}.pickle")
            read, write = os.pipe()
            with self._fork_lock:
                pid = os.fork()
            if pid == 0:  # pragma: no cover (the child: coverage is not collected there)
                os.close(read)
                _child(self.compile_one, share, path)
            os.close(write)  # (the read end sees EOF when the child exits)
            self._children[read] = (pid, share, path)
            self.forked += 1

    def _reap(self, block: bool) -> None:
        """Collect the children that have exited (at least one, if `block`)."""
        if not self._children:
            return
        ready, _, _ = select.select(list(self._children), [], [], None if block else 0)
        for fd in ready:
            pid, names, path = self._children.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            results = None
            if os.waitstatus_to_exitcode(status) == 0:
                with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError), open(path, "rb") as f:
                    results = pickle.load(f)
            if isinstance(results, dict) and sorted(results) == sorted(names):
                self._results.update(results)
            else:  # (a child that died: its jobs compile here, at `finish`)
                self._orphans += names


def _child(compile_one: Job, names: list[str], path: str) -> None:
    """A forked child's life: compile `names`, leave the results in `path`, exit (never
    returning into the parent's code)."""
    code = 1
    try:
        results = {name: _serial(compile_one, name) for name in names}
        with open(path, "wb") as f:
            pickle.dump(results, f)
        code = 0
    finally:
        os._exit(code)
