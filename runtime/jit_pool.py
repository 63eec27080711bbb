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
"""

from __future__ import annotations

import multiprocessing
import os
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
