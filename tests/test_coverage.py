"""Every op Nimble defines is documented, round-tripped in lit, and exercised by the
numeric tests: adding an op without these fails here. (The `arith` and `llvm` dialects
are xdsl's with a few ops re-declared or added: those ops are Nimble's.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nimble.registry import registry

ROOT = Path(__file__).resolve().parent.parent
OPS = sorted((op for f in registry().dialects.values() for op in f().operations if op.__module__.startswith("nimble.")),
             key=lambda o: o.name)


def _text(*globs: str) -> str:
    return "\n".join(p.read_text() for g in globs for p in ROOT.glob(g))


LIT_OPS = _text("lit_tests/dialects/*/ops.mlir")
NUMERIC = _text("tests/test_graph_reference.py", "tests/test_interpreter.py", "tests/test_shape_ops.py",
                "tests/test_loop_kernels.py", "tests/test_vm.py")
# Declarations and terminators have no numeric meaning of their own; they are
# exercised through the ops that hold them.
STRUCTURAL = {"graph.adt", "graph.constructor", "graph.yield", "graph.condition", "vm.function", "vm.constant"}


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_op_is_documented(op):
    doc = (op.__doc__ or "").strip()
    assert doc and "Example" in doc, f"{op.name}: docstring needs a summary and an example"


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_op_round_trips_in_lit(op):
    assert re.search(rf"\b{re.escape(op.name)}\b", LIT_OPS), f"{op.name} missing from lit ops.mlir"


@pytest.mark.parametrize("op", [o for o in OPS if o.name not in STRUCTURAL], ids=lambda o: o.name)
def test_op_is_evaluated_by_numeric_tests(op):
    short = op.name.split(".", 1)[1]
    pattern = rf"{re.escape(op.name)}\b|graph\.\{{op\}}" if op.name.startswith("graph.") else rf"{re.escape(op.name)}\b"
    found = re.search(pattern, NUMERIC) and (op.name in NUMERIC or short in NUMERIC)
    assert found, f"{op.name} is not exercised by the numeric tests"
