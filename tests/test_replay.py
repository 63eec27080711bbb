"""Replayed runs (`runtime/replay.py`): a signature's third call on replays the launches
its second call recorded. Every replayed result is checked against the VM's (replays
off) and the reference interpreter, at several sizes, 1 and odd ones among them."""

from __future__ import annotations

import numpy as np
import pytest

import nimble
from nimble import interpret, parse
from nimble.reference import InterpreterError

MLP = """
def @main(%x: f32[n, 24], %w1: f32[40, 24], %w2: f32[8, 40]) -> (f32[n, 8], f32[n, 40]) {
  let %h = relu(dense(%x, %w1))
  (softmax(dense(%h, %w2), axis=1), %h)
}
"""

LSTM = """
def @main(%xs: f32[t, n, 6], %h0: f32[n, 5], %ys0: f32[k, n, 5], %w: f32[5, 11]) -> (f32[m, n, 5], f32[n, 5]) {
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %ys = while (%i = index(0), %h = %h0, %ys = %ys0) cond { %i < %steps } do {
    let %h2 = tanh(dense(concat(%xs[%i], %h, axis=1), %w))
    (%i + 1, %h2, concat(%ys, unsqueeze(%h2, [0]), axis=0))
  }
  (%ys, %h)
}
"""

VIEWS = """
def @main(%x: f32[n, 4], %c: f32[4]) -> (f32[n, 4], f32[4], f32[n, 4]) {
  (%x, %c, %x + %c)
}
"""


def _traces(exe: nimble.Executable) -> list:
    return list(exe.vm.replays.traces[exe.vm.index["main"]].values())


def _mlp_args(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    f = np.float32
    return [rng.standard_normal((n, 24)).astype(f), rng.standard_normal((40, 24)).astype(f),
            rng.standard_normal((8, 40)).astype(f)]


@pytest.mark.parametrize("threads", [1, 2])
def test_replays_match_the_vm_at_every_size(threads: int, rng: np.random.Generator) -> None:
    module = parse(MLP, "mlp.nb")
    exe = nimble.compile(module, threads=threads)
    vm_only = nimble.compile(module, threads=threads)
    vm_only.vm.replays.enabled = False
    for n in [1, 7, 1, 7, 1, 7, 4000, 4000, 4000, 1]:  # 4000 rows: launches split between threads
        args = _mlp_args(rng, n)
        got, want = exe.run(*args), vm_only.run(*args)
        for g, w, ref in zip(got, want, interpret(module, *args)):
            np.testing.assert_array_equal(g, w)
            np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-5)
    traces = _traces(exe)
    assert len(traces) == 3 and all(t is not None for t in traces)
    if threads == 2:
        assert any(t.workers is not None for t in traces)  # the n = 300 launches split


def test_results_of_a_call_are_not_overwritten_by_the_next(rng: np.random.Generator) -> None:
    exe = nimble.compile(parse(MLP, "mlp.nb"))
    calls = [_mlp_args(rng, 5) for _ in range(4)]
    results = [exe.run(*args) for args in calls]
    assert _traces(exe)[0] is not None
    for args, got in zip(calls, results):  # each still the result of its own call
        for g, w in zip(got, interpret(parse(MLP, "mlp.nb"), *args)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("t,n,k", [(0, 1, 0), (1, 1, 0), (9, 3, 2)])
def test_a_recurrence_with_stacked_outputs_replays(t: int, n: int, k: int, rng: np.random.Generator) -> None:
    module = parse(LSTM, "lstm.nb")
    exe = nimble.compile(module)
    f = np.float32
    for _ in range(4):
        args = [rng.standard_normal((t, n, 6)).astype(f), rng.standard_normal((n, 5)).astype(f),
                rng.standard_normal((k, n, 5)).astype(f), (0.4 * rng.standard_normal((5, 11))).astype(f)]
        for g, w in zip(exe.run(*args), interpret(module, *args)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # No step: the launch on an empty sequence runs the loop by its reference semantics
    # (the kernel clamps its reads into the inputs), which no replay repeats.
    assert (_traces(exe)[0] is not None) == (t > 0)


def test_results_that_are_arguments_or_constants_come_back_as_the_vm_gives_them(rng: np.random.Generator) -> None:
    exe = nimble.compile(parse(VIEWS, "views.nb"))
    c = rng.standard_normal(4).astype(np.float32)
    for _ in range(4):
        x = rng.standard_normal((3, 4)).astype(np.float32)
        same, constant, total = exe.run(x, c)
        np.testing.assert_array_equal(same, x)
        assert np.shares_memory(same, x)  # this call's argument, not the recorded one's
        np.testing.assert_array_equal(constant, c)
        np.testing.assert_allclose(total, x + c, rtol=1e-6)
    assert _traces(exe)[0] is not None


def test_one_array_passed_twice_runs_right(rng: np.random.Generator) -> None:
    text = """
def @main(%a: f32[n, 4], %b: f32[n, 4]) -> f32[n, 4] {
  %a * %b + %a
}
"""
    exe = nimble.compile(parse(text, "twice.nb"))
    for _ in range(4):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        np.testing.assert_allclose(exe(x, x), x * x + x, rtol=1e-5, atol=1e-6)
        y = rng.standard_normal((6, 4)).astype(np.float32)
        np.testing.assert_allclose(exe(x, y), x * y + x, rtol=1e-5, atol=1e-6)


def test_a_bad_call_after_replays_is_still_an_error(rng: np.random.Generator) -> None:
    exe = nimble.compile(parse(MLP, "mlp.nb"))
    for _ in range(3):
        exe.run(*_mlp_args(rng, 4))
    x, w1, w2 = _mlp_args(rng, 4)
    with pytest.raises(InterpreterError, match="40"):
        exe.run(x, w1[:, :20].copy(), w2)


def test_calls_that_cannot_replay_run_on_the_vm(rng: np.random.Generator) -> None:
    """A non-contiguous argument is not a replayable signature; a function with a host
    call (here a list, an ADT) is not traceable: both still right."""
    exe = nimble.compile(parse(MLP, "mlp.nb"))
    for _ in range(3):
        x, w1, w2 = _mlp_args(rng, 8)
        view = np.asfortranarray(x)
        for g, w in zip(exe.run(view, w1, w2), interpret(parse(MLP, "mlp.nb"), x, w1, w2)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    assert _traces(exe) == []
    adt = """
type List = Nil | Cons(f32[4], List)
def @sum(%l: List, %acc: f32[4]) -> f32[4] {
  match %l {
    Nil => { %acc }
    Cons(%x, %rest) => { @sum(%rest, %acc + %x) }
  }
}
def @main(%x: f32[4]) -> f32[4] {
  @sum(Cons(%x, Cons(%x, Nil)), %x)
}
"""
    exe = nimble.compile(parse(adt, "adt.nb"))
    assert not exe.vm.replays.traceable[exe.vm.index["main"]]
    x = rng.standard_normal(4).astype(np.float32)
    for _ in range(3):
        np.testing.assert_allclose(exe(x), 3 * x, rtol=1e-6)


def test_profiling_runs_on_the_vm(rng: np.random.Generator) -> None:
    exe = nimble.compile(parse(MLP, "mlp.nb"))
    args = _mlp_args(rng, 2)
    for _ in range(3):
        exe.run(*args)
    profile = exe.vm.start_profile()
    exe.run(*args)
    assert exe.vm.steps > 0 and sum(len(v) for v in profile.values()) >= 2  # instructions and launches seen


def test_threads_calling_one_executable_each_get_their_results(rng: np.random.Generator) -> None:
    """A run recorded in one thread allocates from a pool of its own: another thread's
    runs meanwhile (recording, replaying or on the VM) never share its storages."""
    import threading

    module = parse(MLP, "mlp.nb")
    exe = nimble.compile(module)
    calls = {k: [_mlp_args(np.random.default_rng(k), n) for n in (1, 5, 9, 5, 1, 9)] * 4 for k in range(3)}
    expected = {k: [interpret(module, *args) for args in calls[k][:6]] * 4 for k in calls}
    errors: list[BaseException] = []

    def hammer(k: int) -> None:
        try:
            for args, want in zip(calls[k], expected[k]):
                for g, w in zip(exe.run(*args), want):
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert any(t is not None for t in _traces(exe))
