"""What is thread-safe (docs/reliability.md): one compiled model may be called from many
Python threads at once, at different shapes, cold (no call recorded yet) or warm, and
several models at once; each call's results are bit-for-bit those of serial calls.
(Processes sharing the kernel and program caches: test_kernel_cache.py and
test_program_cache.py.)"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import nimble
from nimble.dialects.graph import AdtValue

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
THREADS = 8


def _lstm_calls(rng: np.random.Generator) -> list[list[np.ndarray]]:
    w = (rng.standard_normal((512, 192)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(512) * 0.1).astype(np.float32)
    calls = []
    for t, n in [(1, 1), (3, 5), (7, 2), (2, 17), (5, 1), (4, 3)]:
        xs, h0, c0 = (rng.standard_normal(s).astype(np.float32) for s in [(t, n, 64), (n, 128), (n, 128)])
        calls.append([xs, h0, c0, w, b])
    return calls


def _tree(rng: np.random.Generator, depth: int) -> AdtValue:
    x = rng.standard_normal((1, 64)).astype(np.float32)
    if depth == 0 or rng.random() < 0.25:
        return AdtValue("Leaf", (x,))
    return AdtValue("Node", (x, _tree(rng, depth - 1), _tree(rng, depth - 1)))


def _tree_calls(rng: np.random.Generator) -> list[list[object]]:
    params = [(rng.standard_normal(s) * 0.1).astype(np.float32)
              for s in [(450, 64), (450, 150), (450,), (150, 64), (150, 150), (150,)]]
    return [[_tree(rng, depth), *params] for depth in (0, 2, 4, 3, 1, 5)]


MODELS = {"lstm": _lstm_calls, "tree_lstm": _tree_calls}


def _hammer(jobs: list[tuple[nimble.Executable, list[object], list[np.ndarray]]]) -> None:
    """Run `jobs` (executable, arguments, serial results) from THREADS threads at once,
    each its own order of them, three rounds; every result must equal the serial one."""
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def work(k: int) -> None:
        try:
            start.wait()
            order = np.random.default_rng(k).permutation(len(jobs))
            for _ in range(3):
                for i in order:
                    exe, args, want = jobs[i]
                    for got, expected in zip(exe.run(*args), want):
                        np.testing.assert_array_equal(got, expected)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("threads", [1, 2])
def test_eight_threads_on_one_model_get_the_serial_results(name, threads, rng):
    """Cold: the threads make the first calls of every shape (recordings race); then warm."""
    calls = MODELS[name](rng)
    serial = nimble.compile(EXAMPLES / f"{name}.nb", threads=threads)
    expected = [serial.run(*args) for args in calls]
    exe = nimble.compile(EXAMPLES / f"{name}.nb", threads=threads)
    _hammer([(exe, args, want) for args, want in zip(calls, expected)])
    _hammer([(exe, args, want) for args, want in zip(calls, expected)])


def test_eight_threads_on_several_models_at_once(rng):
    jobs = []
    for name, make in MODELS.items():
        calls = make(rng)
        serial = nimble.compile(EXAMPLES / f"{name}.nb")
        exe = nimble.compile(EXAMPLES / f"{name}.nb")
        jobs += [(exe, args, serial.run(*args)) for args in calls]
    _hammer(jobs)


def test_solo_launches_give_the_split_results(rng):
    """On a loaded machine (`Workers.may_split` false) split launches run whole on the
    calling thread as chunk 0 of 1, cooperative kernels (the LSTM's time loop, whose
    chunks meet at barriers) included: the same results as split launches."""
    from nimble.runtime.workers import workers

    calls = _lstm_calls(rng)
    exe = nimble.compile(EXAMPLES / "lstm.nb", threads=2)
    split = [exe.run(*args) for args in calls]
    native = workers(1)
    if native is None:
        pytest.skip("no native workers here")
    launches = native.launches
    native.control[3] = 1
    native._solo_until = float("inf")
    try:
        for args, want in zip(calls, split):
            for got, expected in zip(exe.run(*args), want):
                np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
        assert native.launches > launches  # (they went through the split path, and ran solo)
    finally:
        native.control[3] = 0
        native._solo_until = 0.0


def test_a_late_worker_starts_a_solo_stretch_and_a_clean_probe_ends_them(monkeypatch):
    from nimble.runtime import workers as w

    native = w.workers(1)
    if native is None:
        pytest.skip("no native workers here")
    monkeypatch.setattr(native, "others_running", lambda: 0)
    clock = [1000.0]
    monkeypatch.setattr(w.time, "perf_counter", lambda: clock[0])
    native._solo_until, native._stretch, native._late_seen = 0.0, w.SOLO_SECONDS[0], int(native.control[2])
    native._next_look = 0.0
    try:
        assert native.may_split()
        native.control[2] += 1  # (a launch waited for a late worker)
        native.ran()
        assert not native.may_split()
        clock[0] += w.SOLO_SECONDS[0] + 0.01
        assert native.may_split()  # the probe
        native.control[2] += 1  # late again: a longer stretch
        native.ran()
        assert native._stretch == 2 * w.SOLO_SECONDS[0] and not native.may_split()
        clock[0] += 2 * w.SOLO_SECONDS[0] + 0.01
        assert native.may_split()
        native.ran()  # a clean probe
        assert native._stretch == w.SOLO_SECONDS[0] and native.may_split()
        monkeypatch.setattr(native, "others_running", lambda: 64)  # every core busy elsewhere
        clock[0] += w.LOOK_SECONDS + 0.01
        assert not native.may_split()
    finally:
        native.control[3] = 0
        native._solo_until = native._next_look = 0.0


SPIN = """
declare i64 @llvm.readcyclecounter()
define void @spin(i8* %slots) {
entry:
  %p = bitcast i8* %slots to i64*
  %n = load i64, i64* %p
  %t0 = call i64 @llvm.readcyclecounter()
  br label %loop
loop:
  %t = call i64 @llvm.readcyclecounter()
  %d = sub i64 %t, %t0
  %more = icmp ult i64 %d, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""
"""A chunk that spins for the time-stamp counter cycles in its first slot."""


@pytest.fixture
def spinning():
    """(the workers, the address of `SPIN`'s chunk, chunk slots for given spins)."""
    from nimble.runtime import workers as w
    from nimble.runtime.llvm_jit import support_engine

    native = w.workers(1)
    if native is None:
        pytest.skip("no native workers here")
    engine = support_engine(SPIN)
    address = engine.get_function_address("spin")

    def slots(*cycles: int) -> np.ndarray:  # (its spins, no mailbox, the chunk, the chunks)
        return np.array([[c, 0, k, len(cycles)] for k, c in enumerate(cycles)], np.int64)

    native.control[w.SOLO] = 0
    yield native, address, slots  # (the engine, holding the code, lives until the test ends)


def test_a_worker_with_more_to_do_is_not_late(spinning):
    """A launch whose worker's chunk is long (3 images on 2 chunks) waits for it without
    counting the worker late: it started on time. (Counted by when the chunks ended,
    every such launch was late, and launches ran whole for seconds at a time.) Under
    load a worker may truly start late: one of ten clean launches is enough."""
    from nimble.runtime.sync import LATE_CYCLES
    from nimble.runtime.workers import LATE

    native, address, slots = spinning
    clean = 0
    native.hold(1, wake=True)
    try:
        for _ in range(10):
            before = int(native.control[LATE])
            native.run(address, slots(1000, 40 * LATE_CYCLES))
            clean += int(native.control[LATE]) == before
    finally:
        native.hold(-1)
    assert clean >= 1


def test_a_worker_that_starts_its_chunk_late_is_counted(spinning):
    """A worker still busy with an earlier job when a launch posts its chunk starts it
    late: the launch counts it (the machine is loaded, `Workers.ran` then runs launches
    whole for a while)."""
    from nimble.runtime.sync import LATE_CYCLES
    from nimble.runtime.workers import ARGUMENT, CLAIMED, DONE, FUNCTION, JOBS, LATE

    native, address, slots = spinning
    state = native.states[0]
    earlier = slots(20 * LATE_CYCLES)
    job = int(state[JOBS] & 0xFFFFFFFF) + 1
    state[FUNCTION], state[ARGUMENT] = address, earlier.ctypes.data
    state[JOBS] = (int(state[JOBS]) & ~0xFFFFFFFF) | job  # post it, as `nimble_run_chunks` does
    native.hold(1, wake=True)
    try:
        while int(state[CLAIMED] & 0xFFFFFFFF) != job:  # (one job at a time: as under the launch lock)
            pass
        before = int(native.control[LATE])
        native.run(address, slots(60 * LATE_CYCLES, 1000))
        assert int(native.control[LATE]) > before
        while int(state[DONE]) < job:
            pass
    finally:
        native.hold(-1)
