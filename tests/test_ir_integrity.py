"""IR integrity: every pass of every pipeline leaves IR that verifies, and at every stage
boundary the IR prints, in the custom and in the generic form, to text that parses back
to the same module and prints again identically.

Checked on every example through every pipeline of `nimble.compile.PIPELINES` (stage
names come from that table, so a new stage or target is covered without editing this
file), on random small programs (hypothesis), and on every attribute and type Nimble's
dialects define; with `pytest --sweep`, also on every lit test's input (~12 min).

Where upstream MLIR's `mlir-opt-22` is installed (Debian's `mlir-22-tools`, which
`scripts/install-system-packages.sh` installs; `$NIMBLE_MLIR_OPT` names another binary),
the generic form must also parse and verify there, Nimble's own dialects taken as
unregistered ones: no Nimble op may take the name of an upstream op it does not match.
"""

from __future__ import annotations

import importlib
import io
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_text_roundtrip import models
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, f64
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from nimble import parse
from nimble.compile import PIPELINES, STAGES, TARGET_OPTIONS, run_stages
from nimble.diagnostics import DominanceError, OpError, PassBrokeIR, check_dominance
from nimble.frontend import parse_nb
from nimble.frontend.errors import FrontendError
from nimble.opt import main as nimble_opt
from nimble.opt import split_chunks
from nimble.parser import parse_mlir
from nimble.registry import make_context, registry

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".nb", ".mlir"))
LIT_INPUTS = sorted(p for p in (ROOT / "lit_tests").rglob("*") if p.suffix in (".nb", ".mlir"))


MLIR_OPT = shutil.which(os.environ.get("NIMBLE_MLIR_OPT", "mlir-opt-22"))


def printed(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def assert_round_trips(module: ModuleOp, where: str) -> None:
    """Custom and generic text both parse back (verified) to a module structurally equal
    to `module`, which prints to the same text again."""
    for generic in (False, True):
        form = "generic" if generic else "custom"
        text = printed(module, generic)
        again = parse_mlir(make_context(), text, f"<{where}, {form} form>")
        again.verify()
        assert again.is_structurally_equivalent(module), f"{where}: the {form} form parses to another module"
        assert printed(again, generic) == text, f"{where}: the {form} form prints differently once parsed"
        if generic:
            assert_parses_upstream(text, where)


def assert_parses_upstream(text: str, where: str) -> None:
    """Upstream `mlir-opt` reads the generic form (when it is installed)."""
    if MLIR_OPT is None:
        return
    run = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", "-o", os.devnull], input=text,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{where}: upstream mlir-opt rejects the generic form:\n{run.stderr[:2000]}"


def prefix_key(stages: Sequence[str], options: dict[str, str]) -> tuple:
    """What a pipeline's first stages compute from a module: their names and the options
    the pipeline gives their passes."""
    passes = {p.split("{")[0] for s in stages for p in STAGES[s]}
    return tuple(stages), tuple(sorted((p, o) for p, o in options.items() if p in passes))


def stage_prefixes() -> Iterator[tuple[tuple, tuple, str, str]]:
    """(the key of the stages before, the key with the stage, the stage, the pipeline's
    name) for every stage of every pipeline; a prefix several pipelines share once."""
    seen: set[tuple] = set()
    for name, stages in PIPELINES.items():
        options = TARGET_OPTIONS.get(name, {})
        for i, stage in enumerate(stages):
            key = prefix_key(stages[:i + 1], options)
            if key not in seen:
                seen.add(key)
                yield prefix_key(stages[:i], options), key, stage, name


def check_every_stage(module: ModuleOp, where: str, rejected_ok: bool = False) -> None:
    """Run every pipeline on a copy of `module`, verifying after each pass and
    round-tripping at each stage boundary. With `rejected_ok`, a pipeline may stop at a
    pass that rejects the input with a located error (`OpError`, e.g. a loop nest outside
    a kernel has no VM lowering); its later stages are then skipped."""
    after: dict[tuple, ModuleOp] = {prefix_key([], {}): module}
    for before, key, stage, pipeline in stage_prefixes():
        if before not in after:
            continue  # an earlier stage rejected the input
        current = after[before].clone()
        try:
            run_stages(current, [stage], TARGET_OPTIONS.get(pipeline), verify_each=True)
        except OpError:
            if not rejected_ok:
                raise
            continue
        assert_round_trips(current, f"{where}, {pipeline} after '{stage}'")
        after[key] = current


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_verifies_and_round_trips_at_every_stage(path):
    module = parse(path)
    assert_round_trips(module, f"{path.name} as parsed")
    check_every_stage(module, path.name)


@pytest.mark.sweep
@pytest.mark.parametrize("path", LIT_INPUTS, ids=lambda p: str(p.relative_to(ROOT / "lit_tests")))
def test_lit_input_verifies_and_round_trips_at_every_stage(path):
    """Each case of a lit test that parses and verifies (not the `expected-error` ones)
    goes through every pipeline, or is rejected by a pass with a located error."""
    text = path.read_text()
    chunks = split_chunks(text) if "--split-input-file" in text else [(text, 0)]
    for i, (chunk, offset) in enumerate(chunks):
        if "expected-error" in chunk:
            continue
        try:
            module = parse_nb("\n" * offset + chunk, str(path)) if path.suffix == ".nb" else \
                parse_mlir(make_context(), chunk, str(path), offset)
            module.verify()
        except (ParseError, FrontendError, VerifyException):
            continue  # a case about bad input (checked by its RUN lines)
        check_every_stage(module, f"{path.name} case {i + 1}", rejected_ok=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(), st.sampled_from(sorted(PIPELINES)))
def test_random_program_verifies_and_round_trips_at_every_stage(source, pipeline):
    module = parse_nb(source, "random.nb")
    current = module.clone()
    for stage in PIPELINES[pipeline]:
        run_stages(current, [stage], TARGET_OPTIONS.get(pipeline), verify_each=True)
        assert_round_trips(current, f"random program, {pipeline} after '{stage}'\n{source}")


# -- attributes and types ---------------------------------------------------------------

ATTRIBUTE_SAMPLES: dict[str, list[str]] = {
    "loop.schedule": ["#loop.schedule<>", "#loop.schedule<vector = 16>",
                      "#loop.schedule<tile = 64, vector = 16, unroll = 2, par = 4, parallel, pipeline, pack, mask, "
                      "dots, grain = 4>"],
    "loop.level": ["#loop.level<dram>", "#loop.level<sram>", "#loop.level<reg>"],
    "graph.adt": ["!graph.adt<@Tree>"],
    "dynshape.shape": ["!dynshape.shape<0>", "!dynshape.shape<2>"],
    "device.storage": ["!device.storage"],
    "nimble.dims": ["#nimble.dims<[]>", "#nimble.dims<[batch, seq * 12, 768]>",
                    "#nimble.dims<[?, seq floordiv 2 + 1, min(a, b), -((x * 2) mod 3)]>"],
    "nimble.cpu": ['#nimble.cpu<"haswell">', '#nimble.cpu<"x86-64-v2", features = "+avx,+avx2">',
                   '#nimble.cpu<"znver4", features = "-avx512f", l1d = 49152, l2 = 2097152, l3 = 1, cores = 96>'],
}
"""Texts of every attribute and type Nimble's dialects define, with empty and default
parameters where they have them."""

NIMBLE_ATTRIBUTES = sorted({a.name for factory in registry().dialects.values() for a in factory().attributes
                            if a.__module__.startswith("nimble.")})


def test_every_attribute_has_samples():
    assert sorted(ATTRIBUTE_SAMPLES) == NIMBLE_ATTRIBUTES


@pytest.mark.parametrize("text", [t for texts in ATTRIBUTE_SAMPLES.values() for t in texts])
def test_attribute_round_trips(text):
    module = parse_mlir(make_context(), f"func.func @f() attributes {{sample = {text}}} {{\n  func.return\n}}\n")
    attribute: Attribute = module.body.block.first_op.attributes["sample"]
    assert str(attribute) == text
    assert_round_trips(module, text)


# -- verifying after each pass ---------------------------------------------------------


@dataclass(frozen=True)
class BreakReturns(ModulePass):
    """Gives every function an f64 result without changing what it returns (invalid IR)."""

    name = "test-break-returns"

    def apply(self, ctx, op):
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                f.function_type = FunctionType.from_lists(f.function_type.inputs.data, [f64])


def with_broken_pass(module_name: str, monkeypatch) -> None:
    module = importlib.import_module(module_name)
    passes = {**module.all_passes(), BreakReturns.name: lambda: BreakReturns}
    monkeypatch.setattr(module, "all_passes", lambda: passes)


def test_verify_each_names_the_pass_that_broke_the_ir(tmp_path, capsys, monkeypatch):
    with_broken_pass("nimble.opt", monkeypatch)
    path = tmp_path / "m.mlir"
    path.write_text("func.func @f(%a: index) -> index {\n  func.return %a : index\n}\n")
    code = nimble_opt([str(path), "-p", "canonicalize,test-break-returns,cse"])
    err = capsys.readouterr().err
    assert code == 1
    assert "after pass 'test-break-returns'" in err and "Traceback" not in err
    code = nimble_opt([str(path), "-p", "canonicalize,test-break-returns,cse", "--verify-each=false"])
    err = capsys.readouterr().err
    assert code == 1 and "test-break-returns" not in err  # found only at the end


def test_run_stages_verify_each_names_the_pass(monkeypatch):
    with_broken_pass("nimble.compile", monkeypatch)
    monkeypatch.setitem(STAGES, "broken", ["canonicalize", BreakReturns.name, "cse"])
    module = parse_mlir(make_context(), "func.func @f(%a: index) -> index {\n  func.return %a : index\n}\n")
    run_stages(module.clone(), ["broken"])  # not verified: no error
    with pytest.raises(PassBrokeIR, match="after pass 'test-break-returns'"):
        run_stages(module, ["broken"], verify_each=True)


@dataclass(frozen=True)
class UseBeforeDefinition(ModulePass):
    """Moves every function's first op to just before its terminator, after its users (IR
    that xdsl's own verifier accepts)."""

    name = "test-use-before-definition"

    def apply(self, ctx, op):
        for f in op.walk():
            if isinstance(f, func.FuncOp):
                block = f.body.block
                first = block.first_op
                first.detach()
                block.insert_op_before(first, block.last_op)


def test_verify_each_finds_a_use_its_definition_does_not_reach(monkeypatch):
    module = importlib.import_module("nimble.compile")
    passes = {**module.all_passes(), UseBeforeDefinition.name: lambda: UseBeforeDefinition}
    monkeypatch.setattr(module, "all_passes", lambda: passes)
    monkeypatch.setitem(STAGES, "broken", ["cse", UseBeforeDefinition.name])
    text = """func.func @f(%a: index) -> index {
  %b = arith.addi %a, %a : index
  %c = arith.muli %b, %b : index
  func.return %c : index
}"""
    broken = parse_mlir(make_context(), text)
    run_stages(broken, ["broken"])
    broken.verify()  # (xdsl's verifier does not see it)
    with pytest.raises(DominanceError, match="'arith.muli' uses a value \\(of arith.addi"):
        check_dominance(broken)
    with pytest.raises(PassBrokeIR, match="after pass 'test-use-before-definition': 'arith.muli'"):
        run_stages(parse_mlir(make_context(), text), ["broken"], verify_each=True)
    check_dominance(parse_mlir(make_context(), text))  # (the input is fine)
