"""`flatten-dense-rows`: dense layers over rank-3+ tensors run over their rows, with the
elementwise ops after them, and give the reference interpreter's values at any size."""

from __future__ import annotations

import numpy as np
import pytest

import nimble
from nimble.compile import run_stages

MLP = """func.func @main(%x: tensor<?x3x5x24xf32>, %w1: tensor<40x24xf32>, %b1: tensor<40xf32>,
                     %w2: tensor<24x40xf32>, %s: tensor<1x1x24xf32>) -> tensor<?x3x5x24xf32> {
  %h = graph.dense %x, %w1 : (tensor<?x3x5x24xf32>, tensor<40x24xf32>) -> tensor<?x3x5x40xf32>
  %a = graph.add %h, %b1 : (tensor<?x3x5x40xf32>, tensor<40xf32>) -> tensor<?x3x5x40xf32>
  %e = graph.erf %a : tensor<?x3x5x40xf32> -> tensor<?x3x5x40xf32>
  %m = graph.mul %a, %e : (tensor<?x3x5x40xf32>, tensor<?x3x5x40xf32>) -> tensor<?x3x5x40xf32>
  %y = graph.dense %m, %w2 : (tensor<?x3x5x40xf32>, tensor<24x40xf32>) -> tensor<?x3x5x24xf32>
  %z = graph.mul %y, %s : (tensor<?x3x5x24xf32>, tensor<1x1x24xf32>) -> tensor<?x3x5x24xf32>
  func.return %z : tensor<?x3x5x24xf32>
}"""

TWO_DIMS = """func.func @main(%x: tensor<?x?x17xf32>, %w: tensor<9x17xf32>, %b: tensor<9xf32>, %c: tensor<?x1x9xf32>) -> tensor<?x?x9xf32> {
  %h = graph.dense %x, %w, %b : (tensor<?x?x17xf32>, tensor<9x17xf32>, tensor<9xf32>) -> tensor<?x?x9xf32>
  %r = graph.relu %h : tensor<?x?x9xf32> -> tensor<?x?x9xf32>
  %y = graph.add %r, %c : (tensor<?x?x9xf32>, tensor<?x1x9xf32>) -> tensor<?x?x9xf32>
  func.return %y : tensor<?x?x9xf32>
}"""

BROADCAST = """func.func @main(%x: tensor<?x1x5x8xf32>, %w: tensor<6x8xf32>, %d: tensor<?x3x5x6xf32>) -> tensor<?x3x5x6xf32> {
  %h = graph.dense %x, %w : (tensor<?x1x5x8xf32>, tensor<6x8xf32>) -> tensor<?x1x5x6xf32>
  %b = graph.add %h, %d : (tensor<?x1x5x6xf32>, tensor<?x3x5x6xf32>) -> tensor<?x3x5x6xf32>
  func.return %b : tensor<?x3x5x6xf32>
}"""


def _check(text: str, args: list[np.ndarray]) -> None:
    exe = nimble.compile(text)
    for got, want in zip(exe.run(*args), nimble.interpret(nimble.parse(text), *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_the_graph_stage_leaves_dense_layers_over_rows():
    module = nimble.parse(MLP)
    run_stages(module, ["graph"])
    dense = [op for op in module.walk() if op.name == "graph.dense"]
    assert len(dense) == 2 and all(len(op.input.type.get_shape()) == 2 for op in dense)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_mlp_over_pixels(n, rng):
    f = np.float32
    _check(MLP, [rng.standard_normal((n, 3, 5, 24)).astype(f), rng.standard_normal((40, 24)).astype(f),
                 rng.standard_normal(40).astype(f), rng.standard_normal((24, 40)).astype(f),
                 rng.standard_normal((1, 1, 24)).astype(f)])


@pytest.mark.parametrize("n, s", [(1, 1), (2, 3), (3, 17)])
def test_two_dynamic_leading_dims_and_a_bias(n, s, rng):
    f = np.float32
    _check(TWO_DIMS, [rng.standard_normal((n, s, 17)).astype(f), rng.standard_normal((9, 17)).astype(f),
                      rng.standard_normal(9).astype(f), rng.standard_normal((n, 1, 9)).astype(f)])


@pytest.mark.parametrize("n", [1, 4])
def test_an_output_broadcast_by_its_user(n, rng):
    f = np.float32
    _check(BROADCAST, [rng.standard_normal((n, 1, 5, 8)).astype(f), rng.standard_normal((6, 8)).astype(f),
                       rng.standard_normal((n, 3, 5, 6)).astype(f)])
