"""Kernels compiled on forked workers (runtime/jit_pool.py): every job answered once, a
failing job reported without stopping the others, a worker that dies taken over here."""

from __future__ import annotations

import os
import time

import pytest

from nimble.runtime import jit_pool

PARENT = os.getpid()


def _code(name: str) -> bytes:
    if name == "bad":
        raise ValueError("no lowering for this op")
    if name == "dies" and os.getpid() != PARENT:
        os._exit(3)  # (a crash inside LLVM, in a worker)
    return f"{name}:{os.getpid()}".encode()


@pytest.mark.parametrize("workers", [1, 2])
def test_every_job_answered_once(workers):
    names = [f"k{i}" for i in range(7)]
    results = dict(jit_pool.build(names, _code, workers))
    assert sorted(results) == names
    assert all(results[n].startswith(f"{n}:".encode()) for n in names)
    pids = {int(r.split(b":")[1]) for r in results.values()}
    assert (pids == {PARENT}) == (workers == 1)  # (two workers: compiled in other processes)


def test_a_failing_job_is_reported_and_the_others_go_on():
    results = dict(jit_pool.build(["a", "bad", "b"], _code, 2))
    assert isinstance(results["bad"], RuntimeError)
    assert str(results["bad"]) == "ValueError: no lowering for this op"
    assert results["a"].startswith(b"a:") and results["b"].startswith(b"b:")


def test_a_dead_worker_leaves_its_jobs_to_this_process():
    names = ["dies", *[f"k{i}" for i in range(5)]]
    results = dict(jit_pool.build(names, _code, 2))
    assert sorted(results) == sorted(names)
    assert results["dies"] == f"dies:{PARENT}".encode()
    assert not any(isinstance(r, Exception) for r in results.values())


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_stream_answers_every_job_once(workers):
    """Jobs added while this process works compile on children (one at a time while it
    works, on every worker at `finish`); one worker: all here."""
    stream = jit_pool.Stream(_code, workers)
    names = [f"k{i}" for i in range(7)]
    for i, name in enumerate(names):
        stream.add(name, weight=i)
    results = stream.finish()
    assert sorted(results) == names
    assert all(results[n].startswith(f"{n}:".encode()) for n in names)
    pids = {int(r.split(b":")[1]) for r in results.values()}
    assert (pids == {PARENT}) == (workers == 1)
    assert (stream.forked == 0) == (workers == 1)


def test_a_stream_reports_failures_and_takes_over_from_a_dead_child():
    stream = jit_pool.Stream(_code, 2)
    for name in ["a", "bad", "dies", "b"]:
        stream.add(name)
    results = stream.finish()
    assert sorted(results) == ["a", "b", "bad", "dies"]
    assert str(results["bad"]) == "ValueError: no lowering for this op"
    assert results["dies"] == f"dies:{PARENT}".encode()
    assert results["a"].startswith(b"a:") and results["b"].startswith(b"b:")


def _slow(name: str) -> bytes:
    time.sleep(0.1)
    return _code(name)


def test_a_later_child_takes_over_what_an_earlier_one_has_not_reached():
    """A child forked during the work is given every job waiting; one forked at `finish`
    claims those it has not begun: both compile some (each job once)."""
    stream = jit_pool.Stream(_slow, 2)
    names = [f"k{i}" for i in range(10)]
    for name in names:
        stream.add(name, weight=1)  # (the first forks a child; the rest wait for it)
    time.sleep(0.3)
    stream.add("last", weight=2)  # (that child is done: the next takes all eleven)
    results = stream.finish()  # (and a second one shares them)
    assert sorted(results) == sorted([*names, "last"])
    pids = {int(results[n].split(b":")[1]) for n in names}
    assert len(pids) == 3 and PARENT not in pids


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stream_drops_the_jobs_not_wanted_at_finish(workers):
    """Kernels the program turns out not to launch are not compiled once the passes
    are done: a child that listed them finds them claimed; one begun already may finish."""
    stream = jit_pool.Stream(_slow, workers)
    names = [f"k{i}" for i in range(8)]
    for i, name in enumerate(names):
        stream.add(name, weight=10 - i)  # (the heaviest first: k0 ... k7)
    results = stream.finish(wanted={"k0", "k1"})
    assert {"k0", "k1"} <= set(results)
    assert len(results) <= 3  # (at most the one a child had begun before `finish`)
