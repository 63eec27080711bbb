"""The shape dialect and the dim algebra: reference semantics, and property tests that
the emitted shape IR computes what the static algebra and Python compute."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SIZES, run_mlir
from nimble import interpret, parse
from nimble.dialects.shape_functions import StaticDims


@pytest.mark.parametrize("n", SIZES)
def test_shape_ops(n, rng):
    text = """func.func @main(%x: tensor<?x1x3xf32>, %y: tensor<5x3xf32>) -> (!dynshape.shape<3>, index, tensor<?x3xf32>, index) {
  %a = dynshape.of %x : tensor<?x1x3xf32> -> !dynshape.shape<3>
  %b = dynshape.of %y : tensor<5x3xf32> -> !dynshape.shape<2>
  %s = dynshape.broadcast %a, %b : !dynshape.shape<3>, !dynshape.shape<2> -> !dynshape.shape<3>
  %e = dynshape.num_elements %s : !dynshape.shape<3>
  %sq = graph.squeeze %x [1] : tensor<?x1x3xf32> -> tensor<?x3xf32>
  %d = dynshape.get %s, 0 : !dynshape.shape<3>
  func.return %s, %e, %sq, %d : !dynshape.shape<3>, index, tensor<?x3xf32>, index
}"""
    x = rng.standard_normal((n, 1, 3)).astype(np.float32)
    y = rng.standard_normal((5, 3)).astype(np.float32)
    s, e, sq, d = run_mlir(text, x, y)
    assert s == (n, 5, 3) and e == n * 15 and d == n
    np.testing.assert_array_equal(sq, x[:, 0])


def test_shape_broadcast_mismatch_is_a_runtime_error():
    from nimble.reference import InterpreterError

    text = """func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>) -> !dynshape.shape<1> {
  %a = dynshape.of %x : tensor<?xf32> -> !dynshape.shape<1>
  %b = dynshape.of %y : tensor<?xf32> -> !dynshape.shape<1>
  %s = dynshape.broadcast %a, %b : !dynshape.shape<1>, !dynshape.shape<1> -> !dynshape.shape<1>
  func.return %s : !dynshape.shape<1>
}"""
    assert run_mlir(text, np.zeros(1, np.float32), np.zeros(4, np.float32))[0] == (4,)
    with pytest.raises(InterpreterError, match="cannot be broadcast"):
        run_mlir(text, np.zeros(3, np.float32), np.zeros(4, np.float32))


def _reified(v: int, n: int, a: int, b: int) -> tuple[int, ...]:
    """Build IR with ReifyDims for normalize_index, ceildiv and broadcast, and run it."""
    from nimble.dialects.shape_functions import ReifyDims

    module = parse("""func.func @main(%v: index, %n: index, %a: index, %b: index) -> (index, index, index) {
  func.return %v, %v, %v : index, index, index
}""")
    main = next(iter(module.ops))
    ret = main.body.block.last_op
    k = ReifyDims(ret)
    vv, nn, aa, bb = main.body.block.args
    results = [k.normalize_index(vv, nn), k.ceildiv(k.sub(aa, vv), 3), k.broadcast(aa, bb, "dims differ")]
    ret.operands = [k.value(r) for r in results]
    module.verify()
    return tuple(interpret(module, v, n, a, b))


@settings(max_examples=60, deadline=None)
@given(v=st.integers(-40, 40), n=st.integers(0, 30), a=st.integers(1, 9), b=st.sampled_from([1, 2, 5]))
def test_reified_dim_arithmetic_matches_python(v, n, a, b):
    compatible = a == b or a == 1 or b == 1
    expected_index = len(range(n)[:v]) if v >= -n else 0  # Python's own clamping
    from nimble.reference import InterpreterError

    if not compatible:
        with pytest.raises(InterpreterError, match="dims differ"):
            _reified(v, n, a, b)
        return
    got = _reified(v, n, a, b)
    assert got == (expected_index, -((v - a) // 3), max(a, b))
    static = StaticDims()
    assert static.normalize_index(v, n) == expected_index
    assert static.broadcast(a, b, "") == max(a, b)


def test_bind_checks_the_run_time_shape():
    from nimble.reference import InterpreterError

    text = """func.func @main(%x: tensor<?x4xf32>, %n: index) {
  %c4 = arith.constant 4 : index
  %s = dynshape.from_dims %n, %c4 : !dynshape.shape<2>
  dynshape.bind %x, %s upper_bound : tensor<?x4xf32>, !dynshape.shape<2>
  dynshape.bind %x, %s : tensor<?x4xf32>, !dynshape.shape<2>
  func.return
}"""
    run_mlir(text, np.zeros((3, 4), np.float32), 3)
    with pytest.raises(InterpreterError, match="differs from its reified shape"):
        run_mlir(text, np.zeros((2, 4), np.float32), 3)
    with pytest.raises(InterpreterError, match="exceeds its reified upper bound"):
        run_mlir(text, np.zeros((4, 4), np.float32), 3)
