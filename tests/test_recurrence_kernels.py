"""Recurrences as one CPU kernel (`lower-rnn-to-kernels`): numerics against the reference
interpreter at several sequence lengths and batch sizes, the launch's shape checks, the
loops it leaves to the VM, and the loop transformations it relies on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import VectorType

import nimble
from nimble import interpret, parse
from nimble.compile import run_stages
from nimble.lowering.rnn_to_kernels import RECURRENCE_ATTR, SKIPPED_ATTR
from nimble.reference import InterpreterError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SIZES = [(0, 1), (1, 1), (5, 1), (7, 3), (33, 2)]  # (steps, batch): none, one, odd, past a 4-step tile

_EXES: dict[str, nimble.Executable] = {}


def lstm_source(hidden: int, inputs: int) -> str:
    gates = 4 * hidden
    return f"""
def @cell(%x: f32[n, {inputs}], %h: f32[n, {hidden}], %c: f32[n, {hidden}], %w: f32[{gates}, {inputs + hidden}], %b: f32[{gates}]) -> (f32[n, {hidden}], f32[n, {hidden}]) {{
  let %gates = dense(concat(%x, %h, axis=1), %w, %b)
  let %i, %f, %o, %u = split(%gates, axis=1, num=4)
  let %c2 = sigmoid(%f) * %c + sigmoid(%i) * tanh(%u)
  (sigmoid(%o) * tanh(%c2), %c2)
}}

def @main(%xs: f32[t, n, {inputs}], %h0: f32[n, {hidden}], %c0: f32[n, {hidden}], %w: f32[{gates}, {inputs + hidden}], %b: f32[{gates}]) -> (f32[n, {hidden}], f32[n, {hidden}]) {{
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %c = while (%i = index(0), %h = %h0, %c = %c0) cond {{ %i < %steps }} do {{
    let %h2, %c2 = @cell(%xs[%i], %h, %c, %w, %b)
    (%i + 1, %h2, %c2)
  }}
  (%h, %c)
}}
"""


def compiled(key: str, source) -> nimble.Executable:
    if key not in _EXES:
        _EXES[key] = nimble.compile(source)
    return _EXES[key]


def lstm_args(rng: np.random.Generator, t: int, n: int, hidden: int, inputs: int) -> list[np.ndarray]:
    f = np.float32
    return [rng.standard_normal((t, n, inputs)).astype(f), rng.standard_normal((n, hidden)).astype(f),
            rng.standard_normal((n, hidden)).astype(f),
            (0.2 * rng.standard_normal((4 * hidden, inputs + hidden))).astype(f),
            rng.standard_normal(4 * hidden).astype(f)]


@pytest.mark.parametrize("hidden,inputs", [(16, 16), (20, 13), (128, 128), (64, 256), (256, 1024)])  # lanes, not, 1 KB rows, > 4 MB
@pytest.mark.parametrize("t,n", SIZES)
def test_lstm_matches_reference(hidden: int, inputs: int, t: int, n: int, rng: np.random.Generator) -> None:
    source = lstm_source(hidden, inputs)
    exe = compiled(f"lstm{hidden}x{inputs}", parse(source, "lstm.nb"))
    args = lstm_args(rng, t, n, hidden, inputs)
    expected = interpret(parse(source, "lstm.nb"), *args)
    got = exe(*args)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_the_loop_is_one_launch(rng: np.random.Generator) -> None:
    """The whole loop runs as one kernel: the VM runs a handful of instructions per call,
    however many steps there are (a loop of launches ran dozens per step)."""
    exe = compiled("lstm16x16", parse(lstm_source(16, 16), "lstm.nb"))
    counts = []
    for t in (4, 40):
        profile = exe.vm.start_profile()
        exe(*lstm_args(rng, t, 2, 16, 16))
        counts.append(exe.vm.steps)
        assert list(profile) == ["main_rnn_0"] and len(profile["main_rnn_0"]) == 1
        exe.vm.profile, exe.vm.max_steps = None, None
    assert counts[0] == counts[1]
    # Its chunks (one per thread) each run the time loop, sharing every step's nests.
    (kernel,) = [k for k in exe.program.kernels if k.name == "main_rnn_0"]
    assert kernel.parallel


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("hidden,inputs", [(16, 16), (20, 13), (128, 128)])
def test_chunks_of_a_recurrence_share_each_step(threads: int, hidden: int, inputs: int, rng: np.random.Generator,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Split however small (every launch in 2 or 3 chunks, each taking its share of
    every step's nests and meeting the others at barriers; 3 chunks on 2 cores too):
    the same results as the reference."""
    from nimble.runtime.recurrence import RecurrenceEntry

    monkeypatch.setattr(RecurrenceEntry, "min_work", 0)
    source = parse(lstm_source(hidden, inputs), "lstm.nb")
    exe = nimble.compile(source, threads=threads)
    for t, n in SIZES:
        args = lstm_args(rng, t, n, hidden, inputs)
        for g, e in zip(exe(*args), interpret(source, *args)):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    (entry,) = [k for k in exe.vm.kernels if isinstance(k, RecurrenceEntry)]
    assert {p.chunks for p in entry._plans.values()} == {threads}


def test_weight_columns_are_read_from_compact_copies() -> None:
    """`[W_x | W_h]`: the hoisted input projection reads the first columns, the steps the
    others; each range is read from a copy of its own, rows padded by one cache line
    when they are a multiple of 1 KB long (256 floats); over 4 MB, only the steps' range
    is copied. (`test_lstm_matches_reference` checks the results at these sizes.)"""
    from nimble.dialects import loop

    def copies(hidden: int, inputs: int) -> dict[str, tuple[int, ...]]:
        exe = compiled(f"lstm{hidden}x{inputs}", parse(lstm_source(hidden, inputs), "lstm.nb"))
        (kernel,) = [f for f in exe.module.ops if getattr(f, "sym_name", None) and f.sym_name.data == "main_rnn_0"]
        allocs = [o.memref for o in kernel.walk() if isinstance(o, loop.AllocOp)]
        assert not any(m.name_hint == "w_padded" for m in allocs)
        return {m.name_hint: m.type.get_shape() for m in allocs if m.name_hint and m.name_hint.startswith("w_cols")}

    assert copies(64, 256) == {"w_cols0": (256, 272), "w_cols256": (256, 64)}
    assert copies(16, 16) == {"w_cols0": (64, 16), "w_cols16": (64, 16)}
    assert copies(256, 1024) == {"w_cols1024": (1024, 272)}


def test_a_step_reads_few_weight_rows_at_once() -> None:
    """A step's dot products run one hidden unit per tile: its 4 gates' weight rows side
    by side (`schedule_loops.DOT_STREAMS`), not 4 units' 16 rows (those streams from L3
    ran 1.6x slower at h1024). Tiles still jam the batch rows."""
    from nimble.dialects import loop
    from nimble.passes.schedule_loops import DOT_STREAMS

    exe = compiled("lstm128x128", parse(lstm_source(128, 128), "lstm.nb"))
    (kernel,) = [f for f in exe.module.ops if getattr(f, "sym_name", None) and f.sym_name.data == "main_rnn_0"]
    (steps,) = [o for o in kernel.walk() if isinstance(o, scf.ForOp)]
    widths = [len(o.results) for o in steps.body.walk() if isinstance(o, loop.ReduceOp)
              and isinstance(o.results[0].type, VectorType)]
    assert DOT_STREAMS == 4 and widths and max(widths) == 4


@pytest.mark.parametrize("example,make", [
    ("lstm.nb", lambda rng, t, n: lstm_args(rng, t, n, 128, 64)),
    ("gru.nb", lambda rng, t, n: [rng.standard_normal((t, n, 64)).astype(np.float32),
                                  rng.standard_normal((n, 128)).astype(np.float32),
                                  (0.1 * rng.standard_normal((384, 64))).astype(np.float32),
                                  (0.1 * rng.standard_normal((384, 128))).astype(np.float32),
                                  rng.standard_normal(384).astype(np.float32),
                                  rng.standard_normal(384).astype(np.float32)]),
])
def test_examples_run_as_recurrence_kernels(example: str, make, rng: np.random.Generator) -> None:
    exe = compiled(example, EXAMPLES / example)
    assert "main_rnn_0" in exe.kernel_names
    for t, n in [(1, 1), (9, 2)]:
        args = make(rng, t, n)
        expected = interpret(parse(EXAMPLES / example), *args)
        np.testing.assert_allclose(exe.run(*args)[0], expected[0], rtol=1e-5, atol=1e-5)


# -- what the launch checks ----------------------------------------------------------------

BOUNDED = """
def @main(%xs: f32[t, 1, 4], %h0: f32[1, 4], %w: f32[4, 8], %k: index) -> f32[1, 4] {
  let %i, %h = while (%i = index(0), %h = %h0) cond { %i < %k } do {
    (%i + 1, tanh(dense(concat(%xs[%i], %h, axis=1), %w)))
  }
  %h
}
"""


def test_reading_past_the_sequence_is_an_error(rng: np.random.Generator) -> None:
    """A loop bound past the sequence: the reference's error (the last step's slice is
    empty), before the kernel reads anything."""
    exe = compiled("bounded", parse(BOUNDED, "bounded.nb"))
    xs, h0, w = (rng.standard_normal(s).astype(np.float32) for s in ((5, 1, 4), (1, 4), (4, 8)))
    np.testing.assert_allclose(exe(xs, h0, w, 5), interpret(parse(BOUNDED, "b.nb"), xs, h0, w, 5)[0],
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(InterpreterError, match="step 5"):
        exe(xs, h0, w, 6)


BROADCAST = """
func.func @main(%x: tensor<?x4xf32>, %h0: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = graph.while (%i = %c0, %h = %h0) : (index, tensor<?x4xf32>) -> (index, tensor<?x4xf32>) {
    %ok = arith.cmpi slt, %i, %n : index
    graph.condition %ok : i1
  } do {
  ^bb0(%i2: index, %h2: tensor<?x4xf32>):
    %s = graph.add %h2, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %t = graph.tanh %s : tensor<?x4xf32> -> tensor<?x4xf32>
    %next = arith.addi %i2, %c1 : index
    graph.yield %next, %t : index, tensor<?x4xf32>
  }
  func.return %r#1 : tensor<?x4xf32>
}
"""


def test_a_state_that_changes_shape_is_an_error(rng: np.random.Generator) -> None:
    exe = compiled("broadcast", BROADCAST)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    h0 = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(exe(x, h0, 4), interpret(parse(BROADCAST), x, h0, 4)[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(InterpreterError, match=r"state #1 changes shape in a step \(\[1, 4\] -> \[3, 4\]\)"):
        exe(x, h0[:1], 4)
    np.testing.assert_array_equal(exe(x, h0[:1], 0), h0[:1])  # no step: nothing changes


# -- what the lowering leaves to the VM ----------------------------------------------------


STACKED = """
def @main(%xs: f32[t, n, 3], %h0: f32[n, 5], %ys0: f32[k, n, 5], %w: f32[5, 8]) -> (f32[m, n, 5], f32[n, 5]) {
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %ys = while (%i = index(0), %h = %h0, %ys = %ys0) cond { %i < %steps } do {
    let %h2 = tanh(dense(concat(%xs[%i], %h, axis=1), %w))
    (%i + 1, %h2, concat(%ys, unsqueeze(%h2, [0]), axis=0))
  }
  (%ys, %h)
}
"""
REVERSED = """
def @main(%xs: f32[t, n, 3], %h0: f32[n, 5], %ys0: f32[k, n, 5], %w: f32[5, 8]) -> (f32[m, n, 5], f32[n, 5]) {
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %ys = while (%i = index(0), %h = %h0, %ys = %ys0) cond { %i < %steps } do {
    let %h2 = tanh(dense(concat(%xs[%steps - 1 - %i], %h, axis=1), %w))
    (%i + 1, %h2, concat(unsqueeze(%h2, [0]), %ys, axis=0))
  }
  (%ys, %h)
}
"""


@pytest.mark.parametrize("name,source", [("stacked", STACKED), ("reversed", REVERSED)])
@pytest.mark.parametrize("t,n,k", [(0, 1, 0), (1, 1, 0), (5, 2, 0), (7, 3, 2), (0, 2, 3)])
def test_stacked_states_are_one_kernel(name: str, source: str, t: int, n: int, k: int,
                                       rng: np.random.Generator) -> None:
    """A state that stacks every step's rows (ONNX's `Y`), after the earlier ones or, in a
    reverse loop reading `xs[steps - 1 - i]`, before them: one kernel writes each step's
    rows at their place in the output, the initial rows first or last."""
    module = parse(source, f"{name}.nb")
    run_stages(module, ["graph", "recurrences"])
    assert not [o for o in module.walk() if SKIPPED_ATTR in o.attributes]
    assert any(RECURRENCE_ATTR in o.attributes for o in module.walk())
    exe = compiled(name, parse(source, f"{name}.nb"))
    f = np.float32
    args = [rng.standard_normal((t, n, 3)).astype(f), rng.standard_normal((n, 5)).astype(f),
            rng.standard_normal((k, n, 5)).astype(f), (0.5 * rng.standard_normal((5, 8))).astype(f)]
    got, expected = exe(*args), interpret(parse(source, f"{name}.nb"), *args)
    assert [g.shape for g in got] == [e.shape for e in expected] == [(k + t, n, 5), (n, 5)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert exe.fallbacks == []


def test_a_stacked_state_also_read_stays_a_loop() -> None:
    text = """
def @main(%xs: f32[t, 1, 2], %ys0: f32[k, 2], %w: f32[2, 4]) -> f32[m, 2] {
  let %steps = dynshape.dim(%xs, 0)
  let %i, %ys = while (%i = index(0), %ys = %ys0) cond { %i < %steps } do {
    let %h = tanh(dense(concat(%xs[%i], reduce_sum(%ys, axes=[0], keepdims=true), axis=1), %w))
    (%i + 1, concat(%ys, %h, axis=0))
  }
  %ys
}
"""
    module = parse(text, "read.nb")
    run_stages(module, ["graph", "recurrences"])
    (why,) = [o.attributes[SKIPPED_ATTR].data for o in module.walk() if SKIPPED_ATTR in o.attributes]
    assert "stacks every step's rows and is also read by the step" in why


def test_counter_used_other_than_plus_a_constant_stays_a_loop(rng: np.random.Generator) -> None:
    """The launch checks the first and last step; a counter scaled before it reaches a
    slice could go out of range in between, so that loop stays a VM loop (and still runs)."""
    text = """
def @main(%xs: f32[t, 1, 2], %h0: f32[1, 2], %w: f32[2, 4], %k: index) -> f32[1, 2] {
  let %i, %h = while (%i = index(0), %h = %h0) cond { %i < %k } do {
    (%i + 1, tanh(dense(concat(%xs[%i * 2], %h, axis=1), %w)))
  }
  %h
}
"""
    module = parse(text, "scaled.nb")
    run_stages(module, ["graph", "recurrences"])
    (why,) = [o.attributes[SKIPPED_ATTR].data for o in module.walk() if SKIPPED_ATTR in o.attributes]
    assert "depend on the counter through 'arith.muli'" in why
    exe = nimble.compile(parse(text, "scaled.nb"))
    xs, h0, w = (rng.standard_normal(s).astype(np.float32) for s in ((7, 1, 2), (1, 2), (2, 4)))
    np.testing.assert_allclose(exe(xs, h0, w, 4), interpret(parse(text, "s.nb"), xs, h0, w, 4)[0], rtol=1e-5, atol=1e-6)

