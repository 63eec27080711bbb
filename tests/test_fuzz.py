"""The differential fuzzer: its generator makes legal programs over (nearly) every graph op,
its comparison and shrinking catch what they must, a short campaign runs clean, and every
program it once found wrong stays right."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nimble.api import parse
from nimble.dialects.graph import Graph
from nimble.fuzz import differential
from nimble.fuzz.generate import ProgramGenerator
from nimble.fuzz.samplers import NOT_GENERATED

REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.mlir"))


def test_generated_programs_verify_round_trip_and_cover_the_graph_dialect():
    covered = Counter()
    for seed in range(300):
        program = ProgramGenerator(np.random.default_rng(seed)).program()
        text = program.text
        assert str(parse(text)) == text, f"seed {seed}"
        covered.update(program.ops)
    everything = {op.name for op in Graph.operations}
    assert everything - set(covered) == set(NOT_GENERATED)
    assert len(covered) >= 0.9 * len(everything)


def test_the_same_seed_makes_the_same_program():
    texts = [ProgramGenerator(np.random.default_rng(7)).program().text for _ in range(2)]
    assert texts[0] == texts[1]


@pytest.mark.parametrize(("got", "why"), [
    ([np.ones((2, 3), np.float32)], None),
    ([np.ones((2, 3), np.float32) * 1.0005], None),  # within RTOL
    ([np.ones((2, 3), np.float32) * 1.01], "result #0 differs at (0, 0)"),
    ([np.ones((3, 2), np.float32)], "shape (3, 2)"),
    ([np.ones((2, 3), np.float64)], "dtype float64"),
    ([np.ones((2, 3), np.float32)] * 2, "2 results"),
])
def test_compare_names_what_differs(got, why):
    message = differential.compare(got, [np.ones((2, 3), np.float32)])
    assert (message is None) if why is None else (why in message)


def test_only_elements_the_reference_cannot_pin_down_are_excused():
    """`equal(gelu(exp(x)), exp(x))`: where exp(x) is large, gelu rounds to exp(x) or one
    ulp below, and either answer is right; where it is small they differ for sure."""
    import nimble

    module = parse(next(p for p in REGRESSIONS if p.name.startswith("50163")).read_text())
    args = differential.arguments(module, {"n": 5, "m": 5}, np.random.default_rng(0))
    expected = nimble.interpret(module, *args)
    masks = differential.unstable(module, args, expected, seed=0)
    assert masks[0].any() and not masks[0].all()
    for where, excused in ((np.argwhere(masks[0])[0], True), (np.argwhere(~masks[0])[0], False)):
        got = [e.copy() for e in expected]
        got[0][tuple(where)] = ~got[0][tuple(where)]
        assert differential.compare(got, expected) is not None
        assert (differential.compare(got, expected, masks) is None) is excused


def test_nan_and_inf_agree_only_with_themselves():
    expected = [np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)]
    assert differential.compare([expected[0].copy()], expected) is None
    assert "differs at (1,)" in differential.compare([np.array([np.nan, 1.0, -np.inf, 1.0], np.float32)], expected)


PLANTED = """func.func @main(%0: tensor<?xf32>, %1: tensor<?x4xf32>) -> (tensor<?xf32>, tensor<?x4xf32>, tensor<?xf32>) {
  %2 = graph.tanh %0 : tensor<?xf32> -> tensor<?xf32>
  %3 = graph.exp %2 : tensor<?xf32> -> tensor<?xf32>
  %4 = graph.neg %3 : tensor<?xf32> -> tensor<?xf32>
  %5 = graph.relu %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  %6 = graph.add %5, %5 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %7 = graph.mul %4, %0 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %4, %6, %7 : tensor<?xf32>, tensor<?x4xf32>, tensor<?xf32>
}"""


def test_shrinking_keeps_the_failure_and_drops_the_rest():
    """A planted failure (any program holding graph.exp fails) shrinks to the exp alone:
    other outputs dropped, other ops bypassed, sizes lowered to 1. (A fixed program: the
    generator's stream moves with every sampler added, and the shrinker steps through
    the function's own ops, not into regions or past a value of a type met only once.)"""
    finding = differential.Finding("mismatch", "llvm", {"n": 8, "m": 5}, "planted")
    small, sizes = differential.shrink(PLANTED, finding, 0, fails=lambda t, s: "graph.exp" in t)
    assert small.count(" = graph.") == 1 and "graph.exp" in small, small
    assert sizes == {"n": 1, "m": 1}
    parse(small)


def test_a_short_campaign_in_every_configuration_finds_nothing(tmp_path, capsys):
    """The CI smoke run: a few programs through every configuration, in a worker process."""
    assert differential.main(["--count", "4", "--seed", "3", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "4 programs" in out and "findings: 0" in out
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.stem for p in REGRESSIONS])
def test_programs_the_fuzzer_found_wrong_are_right(path):
    text = path.read_text()
    for config in differential.CONFIGS:
        assert differential.check(text, config, [{"n": 1, "m": 1}, {"n": 5, "m": 3}], seed=0) is None, config


@pytest.mark.parametrize("target", ["nb", "mlir", "onnx", "nbc", "kernel-cache"])
def test_coverage_guided_smoke_run(target, tmp_path):
    """CI's short run of each atheris target (the long, instrumented runs:
    docs/reliability.md): its seeds and a few hundred mutations, every one handled (a clear
    error counts)."""
    pytest.importorskip("atheris")
    checkout = Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, "-m", "nimble.fuzz.coverage", target, "--runs", "300",
                             "--out", str(tmp_path), "--no-instrument", "--checkout", str(checkout)],
                            capture_output=True, text=True, timeout=600, cwd=tmp_path)  # (not the checkout:
    # its `nimble/` folder would shadow the installed package)
    assert result.returncode == 0, result.stderr[-3000:]
    executed = re.search(r"stat::number_of_executed_units:\s*(\d+)", result.stderr)
    assert executed and int(executed[1]) >= 300, result.stderr[-2000:]
    assert not list(tmp_path.glob("crash-*"))


OPEN = sorted((Path(__file__).parent / "fuzz_findings_open").glob("*.mlir"))


@pytest.mark.xfail(strict=True, reason="found by the differential fuzzer, not fixed yet (issue 45's note)")
@pytest.mark.parametrize("path", OPEN, ids=[p.stem for p in OPEN])
def test_programs_the_fuzzer_found_wrong_and_still_open(path):
    """Each fails today; a fix makes this test fail too (strict): then the file moves to
    fuzz_regressions/."""
    text = path.read_text()
    for config in differential.CONFIGS:
        assert differential.check(text, config, [{"n": 1, "m": 1}, {"n": 5, "m": 3}], seed=0) is None, config
