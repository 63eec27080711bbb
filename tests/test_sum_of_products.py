"""`kernel_parts.sum_of_products`: a grouped conv's unrolled taps are added up in a few
independent chains (a long single chain is latency-bound), still counted as all its
taps' work, and still the conv's values."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_compiled
from test_graph_reference import conv2d_naive

from nimble import parse
from nimble.compile import run_stages
from nimble.dialects import arith, kernel_analysis, loop
from nimble.lowering.kernels.kernel_parts import PRODUCT_CHAINS


def _longest_chain(kernel) -> int:
    """The most additions of the kernel that each wait for the one before."""
    depth: dict = {}
    for op in kernel.walk():
        if isinstance(op, arith.AddfOp):
            depth[op.result] = 1 + max(depth.get(op.lhs, 0), depth.get(op.rhs, 0))
    return max(depth.values(), default=0)


@pytest.mark.parametrize("cg, k", [(8, 3), (1, 3), (2, 5)])
def test_grouped_taps_in_chains(cg, k, rng):
    c = 16
    text = f"""func.func @main(%x: tensor<?x{c}x7x9xf32>, %w: tensor<{c}x{cg}x{k}x{k}xf32>, %b: tensor<{c}xf32>) -> tensor<?x{c}x7x9xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: 1, 1>, padding = array<i64: {k // 2}, {k // 2}, {k // 2}, {k // 2}>, dilations = array<i64: 1, 1>, groups = {c // cg} : i64}} : (tensor<?x{c}x7x9xf32>, tensor<{c}x{cg}x{k}x{k}xf32>, tensor<{c}xf32>) -> tensor<?x{c}x7x9xf32>
  func.return %y : tensor<?x{c}x7x9xf32>
}}"""
    module = parse(text)
    run_stages(module, ["graph", "recurrences", "layout", "loops"])
    (kernel,) = loop.kernels_of(module)
    taps = cg * k * k
    per, most = PRODUCT_CHAINS
    chains = max(1, min(most, -(-taps // per)))
    assert kernel_analysis.kernel_work(kernel) == taps
    assert _longest_chain(kernel) <= -(-taps // chains) + chains, "the taps' additions in chains"
    if chains == 1:
        assert _longest_chain(kernel) >= taps, "a short sum stays one chain of multiply-adds"
    w = rng.standard_normal((c, cg, k, k)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    for n in (1, 2):
        x = rng.standard_normal((n, c, 7, 9)).astype(np.float32)
        want = conv2d_naive(x, w, b, (1, 1), (k // 2,) * 4, 1, c // cg)
        np.testing.assert_allclose(run_compiled(text, x, w, b)[0], want, rtol=1e-4, atol=1e-4)
