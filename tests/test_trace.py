"""Traces of a run (`Executable.run(..., trace=PATH)`, `nimble-run --trace`,
runtime/trace.py): Chrome's trace event format, one event per VM instruction named by
what it does, one per function call around its instructions; a traced call computes
what an untraced one does, and tracing ends with the call (also when it fails)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import nimble
from nimble import interpret, parse
from nimble.reference import InterpreterError
from nimble.run_cli import main as nimble_run

PROGRAM = """
def @layer(%x: f32[n, 8], %w: f32[8, 8]) -> f32[n, 8] {
  relu(dense(%x, %w))
}

def @main(%x: f32[n, 8], %w: f32[8, 8], %k: index) -> f32[n, 8] {
  let %y = if (%k > index(1)) { @layer(@layer(%x, %w), %w) } else { @layer(%x, %w) }
  softmax(%y, axis=1)
}
"""


def _events(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    assert data["displayTimeUnit"] == "ms"
    return [e for e in data["traceEvents"] if e["ph"] == "X"]


@pytest.mark.parametrize("n, k", [(1, 1), (5, 3)])
def test_a_traced_call_records_every_instruction(tmp_path, n, k):
    module = parse(PROGRAM, "layers.nb")
    exe = nimble.compile(module, threads=1)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((n, 8), dtype=np.float32), rng.standard_normal((8, 8), dtype=np.float32)
    steps = exe.vm.steps
    (traced,) = exe.run(x, w, k, trace=tmp_path / "run.json")
    np.testing.assert_allclose(traced, interpret(module, x, w, k)[0], rtol=1e-5, atol=1e-6)
    events = _events(tmp_path / "run.json")
    instructions = [e for e in events if e["cat"] != "function"]
    fused = sum(" + " in e["name"] for e in instructions)  # (two instructions in one step)
    assert len(instructions) + fused == exe.vm.steps - steps  # (the VM counts what it ran)
    for e in events:
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(e) and e["dur"] >= 0
    kernels = [e["name"] for e in events if e["cat"] == "kernel"]
    assert kernels and all(name.split("@")[1] in exe.kernel_names for name in kernels)
    calls = [e for e in events if e["cat"] == "function"]
    assert sorted(e["name"] for e in calls) == sorted(["@main"] + ["@layer"] * min(k, 2))
    for call in calls:  # each call's instructions lie within its event
        own = [e for e in instructions if e["args"]["function"] == call["name"][1:]
               and call["ts"] <= e["ts"] <= call["ts"] + call["dur"]]
        assert own and all(e["ts"] + e["dur"] <= call["ts"] + call["dur"] + 1e-3 for e in own)
    assert exe.vm.tracer is None
    np.testing.assert_array_equal(exe.run(x, w, k)[0], traced)  # untraced again


def test_tracing_ends_when_the_call_fails(tmp_path):
    exe = nimble.compile(parse(PROGRAM, "layers.nb"), threads=1)
    with pytest.raises(InterpreterError):
        exe.run(np.ones((2, 8), np.float32), np.ones((8, 9), np.float32), 1, trace=tmp_path / "bad.json")
    assert exe.vm.tracer is None and not (tmp_path / "bad.json").exists()
    assert exe.run(np.ones((2, 8), np.float32), np.ones((8, 8), np.float32), 1)[0].shape == (2, 8)


def test_nimble_run_writes_a_trace(tmp_path, capsys):
    model = tmp_path / "layers.nb"
    model.write_text(PROGRAM)
    assert nimble_run([str(model), "--dim", "3", "--trace", str(tmp_path / "t.json"), "--quiet"]) == 0
    names = {e["name"] for e in _events(tmp_path / "t.json")}
    assert "@main" in names and any(name.startswith("kernel @") for name in names)
