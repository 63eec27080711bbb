"""Regressions for bugs a review found by differential testing: each used to give a
wrong result or kill the process."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import nimble


def run_both(text: str, *args):
    return nimble.compile(text)(*args), nimble.interpret(nimble.parse(text), *args)[0]


def test_argmax_with_nan_answers_the_first_nan():
    text = """func.func @main(%x: tensor<?x?xf32>) -> tensor<?xi64> {
  %i = graph.argmax %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<?xi64>
  func.return %i : tensor<?xi64>
}"""
    x = np.array([[1, np.nan, 3, 2, 0], [4, 1, 9, 9, 2]], np.float32)
    got, expected = run_both(text, x)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, [1, 2])


@pytest.mark.parametrize("op,expected", [("reduce_max", True), ("reduce_sum", True)])
def test_bool_reductions_are_or(op, expected):
    text = f"""func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<i1> {{
  %b = graph.less %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xi1>
  %m = graph.{op} %b : tensor<?xi1> -> tensor<i1>
  func.return %m : tensor<i1>
}}"""
    for x, y in [([0, 1], [1, 0]), ([0, 0], [1, 1]), ([1, 1], [0, 0])]:
        got, want = run_both(text, np.array(x, np.float32), np.array(y, np.float32))
        assert bool(got) == bool(want)


def test_concat_with_an_empty_part_reads_nothing_outside():
    text = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = graph.concat %a, %b {axis = 0 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}"""
    # Large enough that a read before the empty part's buffer faults.
    b = np.ones((2, 4_000_000), np.float32)
    got, expected = run_both(text, np.zeros((0, 4_000_000), np.float32), b)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("after, clamps", [("", False), ("relu", True)])
def test_an_empty_input_runs_the_kernel_unless_it_clamps_reads(after, clamps, monkeypatch):
    """A concat that is its kernel's output is written part by part, so an empty part is
    read nowhere and the kernel runs as compiled (an RNN's first step, whose stacked
    output has no rows yet); read per element (by a relu in its group) it clamps indices
    into its parts, and an empty part sends the launch to the reference semantics."""
    result = "%c" if not after else "%r"
    extra = "" if not after else f"  %r = graph.{after} %c : tensor<?x4xf32> -> tensor<?x4xf32>\n"
    text = f"""func.func @main(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {{
  %c = graph.concat %a, %b {{axis = 0 : i64}} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
{extra}  func.return {result} : tensor<?x4xf32>
}}"""
    exe = nimble.compile(text)
    assert [k.clamps for k in exe.vm.kernels] == [clamps]
    import nimble.runtime.kernels as kernels

    calls = []
    real_launch = kernels.KernelEntry.launch

    def counting(self, args, outputs, threads, pool, reference):
        return real_launch(self, args, outputs, threads, pool, lambda *a: calls.append(1) or reference(*a))

    monkeypatch.setattr(kernels.KernelEntry, "launch", counting)
    a, b = np.zeros((0, 4), np.float32), np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    np.testing.assert_array_equal(exe(a, b), np.maximum(b, 0) if after else b)
    assert len(calls) == int(clamps)


def test_integer_min_divided_by_minus_one_does_not_trap():
    text = """func.func @main(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %c = graph.div %a, %b : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  func.return %c : tensor<?xi32>
}"""
    a = np.array([-2**31, 7, -7, 9], np.int32)
    b = np.array([-1, 1, 2, -1], np.int32)
    got, expected = run_both(text, a, b)
    np.testing.assert_array_equal(got, expected)


def test_fusion_never_makes_two_groups_depend_on_each_other(rng):
    """Found by the random fuse-ops test: relu(p) and a dead `relu(p) + v0` formed one
    group, `v0` another, and `v7 + relu(p)` joined v0's group: each group used the
    other's output, a cycle no order of kernels can run. Reaching one op of a group now
    reaches the whole group in the convexity check."""
    text = """def @main(%p0: f32[?], %p1: f32[?]) {
  let %r0 = reduce_sum(%p0, axes=[0], keepdims=true)
  let %v0 = %r0 + %p0
  let %v1 = relu(%p0)
  let %v2 = relu(%p0)
  let %v3 = relu(%p0)
  let %v4 = if true { relu(%p0) } else { %p0 }
  let %v5 = relu(%p0)
  let %v6 = %v1 + %v0
  let %v7 = %p0 + %v0
  let %v8 = %v7 + %v1
  %v8
}
"""
    from xdsl.passes import PassPipeline

    from nimble.frontend import parse_nb
    from nimble.registry import all_passes, make_context

    x = rng.standard_normal(5).astype(np.float32)
    expected = nimble.interpret(parse_nb(text, "cycle.nb"), x, x)[0]
    fused = parse_nb(text, "cycle.nb")  # fuse-ops alone: the dead sum is still there
    PassPipeline.parse_spec(all_passes(), "fuse-ops").apply(make_context(), fused)
    fused.verify()
    np.testing.assert_allclose(nimble.interpret(fused, x, x)[0], expected, rtol=1e-6)


def test_a_conv_feeding_a_concat_written_part_by_part_stages_its_input_first():
    """A 1 x 1 conv (+ relu) whose concat with a small static map is the kernel's output:
    the conv's staged input used to be placed after the concat's nests that read it
    (`KeyError` at the JIT; SqueezeNet's fire modules, when their concat joined a conv)."""
    text = """func.func @main(%x: tensor<1x16x5x5xf32>, %w: tensor<8x16x1x1xf32>, %b: tensor<8xf32>, %o: tensor<1x4x5x5xf32>) -> tensor<1x12x5x5xf32> {
  %c = graph.conv2d %x, %w, %b : (tensor<1x16x5x5xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x5x5xf32>
  %r = graph.relu %c : tensor<1x8x5x5xf32> -> tensor<1x8x5x5xf32>
  %j = graph.concat %r, %o {axis = 1 : i64} : (tensor<1x8x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x12x5x5xf32>
  func.return %j : tensor<1x12x5x5xf32>
}"""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((1, 16, 5, 5), (8, 16, 1, 1), (8,), (1, 4, 5, 5))]
    exe = nimble.compile(text)
    assert len(exe.vm.kernels) == 1  # (conv, relu and concat in one kernel)
    np.testing.assert_allclose(exe(*args), nimble.interpret(nimble.parse(text), *args)[0], rtol=1e-5, atol=1e-6)


def test_a_long_elementwise_chain_compiles_at_the_default_recursion_limit(monkeypatch):
    """1,500 elementwise ops fused into one nest (fusion's size limit lifted): the kernel
    builder made each scalar and each op's dims by recursion along the chain
    (RecursionError past ~300 ops, or not, depending on whether a VM had raised the
    process's limit before)."""
    from nimble.passes import fuse_ops

    monkeypatch.setattr(fuse_ops, "MAX_GROUP_OPS", 10_000)
    n = 1500
    ops = ["graph.tanh", "graph.neg", "graph.sigmoid"]
    lines = [f"  %x{i + 1} = {ops[i % 3]} %x{i} : tensor<?x8xf32> -> tensor<?x8xf32>" for i in range(n)]
    text = ("func.func @main(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {\n" + "\n".join(lines)
            + f"\n  %y = graph.add %x{n}, %x0 : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>"
            + "\n  func.return %y : tensor<?x8xf32>\n}")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # (Python's default: what a process that ran no VM yet has)
    try:
        exe = nimble.compile(text, jit="lazy")
    finally:
        sys.setrecursionlimit(max(limit, sys.getrecursionlimit()))
    for batch in (1, 5):
        x = np.linspace(-2, 2, batch * 8, dtype=np.float32).reshape(batch, 8)
        chain = x
        for i in range(n):
            chain = (np.tanh, np.negative, lambda v: 1 / (1 + np.exp(-v)))[i % 3](chain)
        np.testing.assert_allclose(exe(x), chain + x, rtol=1e-5, atol=1e-6)


def test_a_10000_op_chain_is_cut_into_kernels_of_bounded_size():
    """A 10,000-op elementwise chain: fusion stops a group at MAX_GROUP_OPS ops, so the
    kernels (and the work of every pass on each) stay bounded and the whole compile is
    linear in the chain (one 10,000-op kernel took minutes); the answer is the chain's."""
    from nimble.compile import run_stages
    from nimble.dialects import graph
    from nimble.passes.fuse_ops import MAX_GROUP_OPS

    n = 10_000
    ops = ["graph.tanh", "graph.relu", "graph.neg", "graph.sigmoid"]
    pattern = np.arange(n) % len(ops)  # (kernels alike: one compile; a random mix: benchmarks/compile_time.py)
    lines = [f"  %x{i + 1} = {ops[k]} %x{i} : tensor<?x8xf32> -> tensor<?x8xf32>" for i, k in enumerate(pattern)]
    text = ("func.func @main(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {\n" + "\n".join(lines)
            + f"\n  func.return %x{n} : tensor<?x8xf32>\n}}")
    module = nimble.parse(text)
    run_stages(module, ["graph"])
    sizes = [len([o for o in f.body.block.ops if not isinstance(o, graph.YieldOp)])
             for f in module.walk() if isinstance(f, graph.FusedOp)]
    assert sum(sizes) == n and max(sizes) <= MAX_GROUP_OPS, sizes
    exe = nimble.compile(text)
    functions = [np.tanh, lambda v: np.maximum(v, 0), np.negative, lambda v: 1 / (1 + np.exp(-v))]
    for batch in (1, 3):
        x = np.linspace(-2, 2, batch * 8, dtype=np.float32).reshape(batch, 8)
        expected = x
        for k in pattern:
            expected = functions[k](expected)
        np.testing.assert_allclose(exe(x), expected, rtol=1e-4, atol=1e-5)
