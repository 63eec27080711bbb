"""`verify-memory-plan` (the memory stage's last pass): passes what plan-memory makes of
the examples, and catches a planner that shares memory between live tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

import nimble
from nimble.passes import plan_memory

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CHAIN = """func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = graph.constant dense<0.5> : tensor<8x8xf32>
  %a = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = graph.matmul %a, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %c = graph.matmul %b, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %d = graph.add %a, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %d : tensor<4x8xf32>
}"""


@pytest.mark.parametrize("name", ["lstm.nb", "bert.nb", "resnet18.nb", "tree_lstm.nb", "detection.nb", "mlp.mlir"])
def test_the_examples_plans_check(name):
    nimble.compile(EXAMPLES / name, jit="lazy")  # (the memory stage ends with verify-memory-plan)


def test_a_planner_that_overlaps_live_tensors_is_caught(monkeypatch):
    """Every static storage at offset 0 of the arena: %a (live until the add) and %b
    would share bytes while both live."""
    x = np.ones((4, 8), np.float32)
    assert nimble.compile(CHAIN)(x).shape == (4, 8)

    def everything_at_zero(storages):
        for s in storages:
            s.offset = 0
        return max(s.size for s in storages)

    monkeypatch.setattr(plan_memory, "_first_fit", everything_at_zero)
    monkeypatch.setenv("NIMBLE_CACHE_DIR", "")  # (not the program the first compile cached)
    with pytest.raises(DiagnosticException, match="share memory while both are live"):
        nimble.compile(CHAIN)
