"""The spatial target: RNN lowering, functional execution, mixed precision, the machine
model's accounting, and the design-space search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import scf

from nimble import interpret, parse
from nimble.compile import run_stages
from nimble.dialects import loop
from nimble.lowering.spatial.rnn_to_spatial import SKIPPED_ATTR, SpatialLoweringError
from nimble.lowering.spatial.dse import SearchError, search
from nimble.reference import InterpreterError
from nimble.lowering.spatial.model import Machine, ModelError, Sizes, estimate, parse_machine
from nimble.spatial import SpatialError, compile_spatial, spatial_programs

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LSTM, GRU = EXAMPLES / "lstm.nb", EXAMPLES / "gru.nb"
STEPS = [(1, 1), (7, 3), (16, 1), (0, 2)]  # (time steps, batch): 1, odd, a lane width, none

_EXES: dict[tuple[str, str], object] = {}


def executable(source: Path | str, weights: str):
    """The model compiled for the spatial target (once per test run); a module is keyed
    by its text."""
    key = (str(source), weights)
    if key not in _EXES:
        _EXES[key] = compile_spatial(source, weights=weights, sizes={"steps": 25})
    return _EXES[key]


def lstm_inputs(rng: np.random.Generator, t: int, n: int) -> list[np.ndarray]:
    f = np.float32
    return [rng.standard_normal((t, n, 64)).astype(f), rng.standard_normal((n, 128)).astype(f),
            rng.standard_normal((n, 128)).astype(f), (0.1 * rng.standard_normal((512, 192))).astype(f),
            rng.standard_normal(512).astype(f)]


def gru_inputs(rng: np.random.Generator, t: int, n: int) -> list[np.ndarray]:
    f = np.float32
    return [rng.standard_normal((t, n, 64)).astype(f), rng.standard_normal((n, 128)).astype(f),
            (0.1 * rng.standard_normal((384, 64))).astype(f), (0.1 * rng.standard_normal((384, 128))).astype(f),
            rng.standard_normal(384).astype(f), rng.standard_normal(384).astype(f)]


MODELS = {"lstm": (LSTM, lstm_inputs), "gru": (GRU, gru_inputs)}


# -- functional execution ------------------------------------------------------------------


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("t,n", STEPS)
def test_f32_program_matches_reference(model: str, t: int, n: int, rng: np.random.Generator) -> None:
    path, make = MODELS[model]
    args = make(rng, t, n)
    expected = interpret(parse(path), *args)[0]
    got = executable(path, "f32")(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _lstm_one_step_bound(args: list[np.ndarray], weights: str) -> np.ndarray:
    """An upper bound on |h_spatial - h_reference| after one LSTM step from weight
    rounding alone: a weight moves by at most max|w_row| / 254 (int8, one scale per row)
    or 2^-9 |w| (bf16, round to nearest), so gate pre-activation j moves by at most E_j;
    sigmoid is 1/4-Lipschitz, tanh 1-Lipschitz, and both are bounded by 1, so
    |dc| <= E_f |c0| / 4 + E_i / 4 + E_u and |dh| <= E_o / 4 + |dc|."""
    xs, h0, c0, w, _ = args
    xh = np.concatenate([xs[0], h0], axis=1).astype(np.float64)
    w = w.astype(np.float64)
    if weights == "int8":
        e = np.abs(xh).sum(axis=1, keepdims=True) * (np.abs(w).max(axis=1) / 254.0)[None, :]
    else:
        e = np.abs(xh) @ np.abs(w).T * 2.0 ** -9
    e_i, e_f, e_o, e_u = np.split(e, 4, axis=1)
    dc = e_f * np.abs(c0) / 4 + e_i / 4 + e_u
    return e_o / 4 + dc + 1e-5  # + the f32 program's own rounding


@pytest.mark.parametrize("weights", ["bf16", "int8"])
@pytest.mark.parametrize("n", [1, 3])
def test_mixed_precision_one_step_within_bound(weights: str, n: int, rng: np.random.Generator) -> None:
    args = lstm_inputs(rng, 1, n)
    expected = interpret(parse(LSTM), *args)[0]
    got = executable(LSTM, weights)(*args)
    error = np.abs(got.astype(np.float64) - expected)
    bound = _lstm_one_step_bound(args, weights)
    assert np.all(error <= bound), f"max excess {np.max(error - bound)}"
    assert error.max() > 0  # the narrow weights are really used


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("weights,limit", [("bf16", 0.02), ("int8", 0.05)])
def test_mixed_precision_sequence_error(model: str, weights: str, limit: float, rng: np.random.Generator) -> None:
    """Over 16 steps the error stays within the documented bound (docs/spatial.md)."""
    path, make = MODELS[model]
    args = make(rng, 16, 2)
    expected = interpret(parse(path), *args)[0]
    got = executable(path, weights)(*args)
    assert 0 < np.abs(got - expected).max() <= limit


def test_bad_shapes_are_errors(rng: np.random.Generator) -> None:
    exe = executable(LSTM, "f32")
    xs, h0, c0, w, b = lstm_inputs(rng, 3, 2)
    with pytest.raises(InterpreterError, match="dim 0 of %h0"):
        exe(xs, h0[:1], c0, w, b)
    with pytest.raises(InterpreterError):
        exe(xs, h0, c0, w[:, :100], b)
    with pytest.raises(InterpreterError):
        exe(xs.astype(np.float64), h0, c0, w, b)


STACKED = """
def @main(%xs: f32[t, n, 2], %h0: f32[n, 4], %ys0: f32[k, n, 4], %w: f32[4, 6], %b: f32[4]) -> f32[m, n, 4] {
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %ys = while (%i = index(0), %h = %h0, %ys = %ys0) cond { %i < %steps } do {
    let %h2 = tanh(dense(concat(%xs[%i], %h, axis=1), %w, %b))
    (%i + 1, %h2, concat(%ys, unsqueeze(%h2, [0]), axis=0))
  }
  %ys
}
"""


@pytest.mark.parametrize("t,n,k", [(3, 2, 0), (1, 1, 2), (0, 2, 1), (17, 3, 0)])
def test_stacked_outputs(t: int, n: int, k: int, rng: np.random.Generator) -> None:
    """A state that appends each step's rows (every step's h) goes to its output row by row."""
    module = parse(STACKED, "stacked.nb")
    exe = executable(module, "f32")
    args = [rng.standard_normal(s).astype(np.float32) for s in [(t, n, 2), (n, 4), (k, n, 4), (4, 6), (4,)]]
    expected = interpret(module, *args)[0]
    got = exe(*args)
    assert got.shape == expected.shape == (k + t, n, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_onnx_exports_run_on_the_spatial_target(cell: str, tmp_path: Path, rng: np.random.Generator) -> None:
    """PyTorch's LSTM and GRU, exported to ONNX with dynamic time and batch axes, imported
    and lowered to one spatial program each (every step's h stacked as ONNX's Y)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = getattr(torch.nn, cell)(16, 32)

        def forward(self, x):
            return self.rnn(x)[0]

    model = Model().eval()
    path = tmp_path / f"{cell}.onnx"
    torch.onnx.export(model, (torch.zeros(5, 2, 16),), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "t", 1: "n"}}, dynamo=False)
    for weights, tolerance in (("f32", 1e-5), ("int8", 0.05)):
        exe = compile_spatial(path, weights=weights)
        for t, n in ((1, 1), (6, 3)):
            x = rng.standard_normal((t, n, 16)).astype(np.float32)
            with torch.no_grad():
                expected = model(torch.from_numpy(x)).numpy()
            np.testing.assert_allclose(exe(x), expected, atol=tolerance, rtol=0)


# -- the lowering ---------------------------------------------------------------------------


def _lowered(path: Path, weights: str = "f32"):
    module = parse(path)
    run_stages(module, ["spatial"], {"lower-rnn-to-spatial": f"weights={weights}"})
    (program,) = spatial_programs(module)
    return module, program


@pytest.mark.parametrize("model,gates", [("lstm", [4]), ("gru", [3, 3])])
def test_one_loop_nest_per_step_with_gates_fused(model: str, gates: list[int]) -> None:
    _, program = _lowered(MODELS[model][0])
    (time_loop,) = [o for o in program.body.block.ops if isinstance(o, scf.ForOp)]
    reduces = [o for o in time_loop.walk() if isinstance(o, loop.ReduceOp)]
    assert [len(r.inits) for r in reduces] == gates
    # Weights are copied on chip once, before the time loop; states live in SRAM.
    before = [o for o in program.body.block.ops if isinstance(o, loop.AllocOp)]
    assert all(o.level.data == "sram" for o in before)
    names = {o.memref.name_hint for o in before}
    assert {"h0_state", "h0_next"} <= names


@pytest.mark.parametrize("weights,element", [("bf16", "bf16"), ("int8", "i8")])
def test_weight_precision_is_a_type_in_the_program(weights: str, element: str) -> None:
    _, program = _lowered(LSTM, weights)
    allocs = {o.memref.name_hint: o.memref.type for o in program.walk() if isinstance(o, loop.AllocOp)}
    assert str(allocs["w_sram"].get_element_type()) == element
    assert str(allocs["b_sram"].get_element_type()) == "f32"  # vectors stay f32
    assert ("w_scale" in allocs) == (weights == "int8")


def test_unknown_precision_is_an_error() -> None:
    with pytest.raises(SpatialLoweringError, match="int4"):
        _lowered(LSTM, "int4")


def test_models_without_recurrence_are_reported() -> None:
    with pytest.raises(SpatialError, match="no recurrence"):
        compile_spatial(EXAMPLES / "bert.nb")


def test_loop_that_is_not_a_recurrence_says_why() -> None:
    text = """
def @main(%x: f32[4], %n: index) -> f32[4] {
  let %i, %y = while (%i = index(1), %y = %x) cond { %i < %n } do { (%i + 1, %y * 2.0) }
  %y
}
"""
    module = parse(text, "loop.nb")
    run_stages(module, ["spatial"])
    (skipped,) = [o.attributes[SKIPPED_ATTR].data for o in module.walk() if SKIPPED_ATTR in o.attributes]
    assert "does not start at 0" in skipped


# -- the machine model ----------------------------------------------------------------------

COPY_AND_COMPUTE = """
loop.kernel @p(%a: memref<64xf32>, %b: memref<64xf32>) attributes {nimble.device = "spatial"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %s = loop.alloc sram : memref<64xf32>
  loop.foreach %i = %c0 to %c64 step %c1 schedule #loop.schedule<par = 16> {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %s[%i] : memref<64xf32>
    loop.yield
  }
  loop.foreach %i = %c0 to %c64 step %c1 schedule #loop.schedule<par = 8> {
    %x = memref.load %s[%i] : memref<64xf32>
    %y = arith.mulf %x, %x : f32
    %z = arith.addf %y, %x : f32
    memref.store %z, %b[%i] : memref<64xf32>
    loop.yield
  }
  loop.return
}
"""

WIDE_REDUCE = """
loop.kernel @r(%out: memref<1xf32>) attributes {nimble.device = "spatial"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %s = loop.alloc sram : memref<128xf32>
  %r = loop.reduce %k = %c0 to %c128 step %c1 combine(add) init(%zero) : f32 schedule #loop.schedule<par = 32> {
    %x = memref.load %s[%k] : memref<128xf32>
    %y = arith.mulf %x, %x : f32
    loop.yield %y : f32
  }
  memref.store %r, %out[%c0] : memref<1xf32>
  loop.return
}
"""


def _program(text: str):
    (program,) = spatial_programs(parse(text))
    return program


def test_model_on_a_hand_computed_copy_and_compute() -> None:
    e = estimate(_program(COPY_AND_COMPUTE))
    # Copy: 64 trips par 16 = 4 iterations, one per cycle; each a load and a store (2
    # cycles) after DRAM's 100-cycle latency: 3 + 102. It fills an SRAM copy of a
    # parameter: setup.
    assert e.setup_cycles == 105
    # Compute: 8 iterations; load, mul, add, store in a chain of 4: 7 + 4.
    assert e.run_cycles == 11
    # 2 float ops on 8 lanes: one PCU; 256 B at 64 B/cycle at most: one PMU.
    assert (e.pcus, e.pmus, e.sram_bytes, e.dram_bytes) == (1, 1, 256, 512)
    assert e.fits


def test_model_on_a_hand_computed_wide_reduction() -> None:
    e = estimate(_program(WIDE_REDUCE))
    # 128 trips par 32 = 4 iterations; load + mul = 2 deep; a tree of log2(32) = 5
    # levels, one hop (2 cycles) between the two PCUs, one cycle to accumulate.
    assert e.run_cycles == 3 + 2 + 5 + 2 + 1
    # The mul on 32 lanes: 2 PCUs, and one more for the add combining them.
    assert e.pcus == 3
    # 32 lanes read 4 B each per cycle = 128 B/cycle: two PMUs of 16 banks x 4 B.
    assert e.pmus == 2


def test_machine_and_sizes_errors() -> None:
    with pytest.raises(ValueError, match="unknown machine parameter 'cores'"):
        parse_machine("cores=4")
    with pytest.raises(ValueError, match="positive"):
        parse_machine("pcus=0")
    assert parse_machine("pmus=128").pmus == 128
    _, program = _lowered(LSTM)
    with pytest.raises(ModelError, match="no parameter named nope"):
        Sizes(program, {"nope": "3"})
    with pytest.raises(ModelError, match="does not match"):
        Sizes(program, {"xs": "4x1x32"})


# -- the search -----------------------------------------------------------------------------


@pytest.mark.parametrize("machine", [Machine(), Machine(pcus=16, pmus=16), Machine(pcus=128, pmus=128, lanes=32)])
def test_search_returns_only_designs_that_fit(machine: Machine) -> None:
    _, program = _lowered(LSTM, "int8")
    best, front, costed = search(program, machine, Sizes(program, {"steps": "25"}))
    assert best.estimate.fits and all(p.estimate.fits for p in front)
    assert costed >= len(front) >= 1
    # The program holds the chosen design: costing it again gives the same numbers.
    again = estimate(program, machine, Sizes(program, {"steps": "25"}))
    assert (again.run_cycles, again.pcus, again.pmus) == (best.estimate.run_cycles, best.estimate.pcus,
                                                          best.estimate.pmus)
    # The front is sorted by units with strictly falling latency; the choice is its fastest.
    assert [p.estimate.units for p in front] == sorted(p.estimate.units for p in front)
    cycles = [p.estimate.run_cycles for p in front]
    assert all(a > b for a, b in zip(cycles, cycles[1:])) and best.estimate.run_cycles == cycles[-1]


def test_search_is_deterministic() -> None:
    reports = []
    for _ in range(2):
        _, program = _lowered(GRU, "bf16")
        search(program, Machine(), Sizes(program, {"steps": "10"}))
        reports.append(program.attributes["nimble.spatial_report"].data)
    assert reports[0] == reports[1]


def test_search_moves_weights_off_chip_when_they_do_not_fit() -> None:
    _, program = _lowered(LSTM, "f32")  # 384 KiB of weights
    best, _, _ = search(program, Machine(pmus=8, pmu_kib=64), Sizes(program, {"steps": "4"}))
    assert best.dram == (True,)
    levels = {o.memref.name_hint: o.level.data for o in program.walk() if isinstance(o, loop.AllocOp)}
    assert levels["w_sram"] == "dram"


def test_search_fails_clearly_when_nothing_fits() -> None:
    _, program = _lowered(LSTM)
    with pytest.raises(SearchError, match="no design of @main_rnn_0 fits"):
        search(program, Machine(pcus=1, pmus=1), Sizes(program, {}))


# -- what the CPU backend runs them with -------------------------------------------------------

SEQUENTIAL_BF16 = (Path(__file__).resolve().parent.parent / "lit_tests" / "lowering" / "llvm"
                   / "loops-to-llvm-sequential.mlir")


def _bf16(x: np.ndarray) -> np.ndarray:
    """Round f32 to bf16 (nearest, ties to even) and back, in numpy."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def test_bf16_buffers_and_sequential_loops_compile(rng: np.random.Generator) -> None:
    from nimble.compile import compile_kernels

    kernel = compile_kernels(SEQUENTIAL_BF16)["seq"]
    # Values whose bf16 rounding differs from truncation, and exact ties.
    a = np.array([1.0 + 2 ** -8, 1.0 + 3 * 2 ** -9, 1.0 + 2 ** -9, -3.14159, 1e-3, 65504.0, -0.0, 7.0],
                 dtype=np.float32)
    for values in (a, rng.standard_normal(8).astype(np.float32)):
        out = np.zeros(1, np.float32)
        kernel(values, out)
        expected = np.float32(0)
        for v in _bf16(values):  # the loop's order, in f32
            expected = np.float32(expected + v)
        assert out[0] == expected


# -- nimble-opt ------------------------------------------------------------------------------

NO_SUCH_SIZE = """
loop.kernel @p(%a: memref<?xf32>) attributes {nimble.device = "spatial", nimble.spatial_sizes = "nope=3"} {
  loop.return
}
"""


@pytest.mark.parametrize("args,message", [
    (["-t", "spatial"], "no parameter named nope in @p"),
    (["-p", 'spatial-dse{machine="cores=3"}'], "unknown machine parameter 'cores'"),
    (["-p", 'spatial-dse{sizes="a=x"}'], "size of 'a' must be an integer"),
    (["-p", "lower-rnn-to-spatial{weights=fp4}"], "unknown weight precision 'fp4'"),
])
def test_tool_errors_are_diagnostics(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    from nimble.opt import main

    path = tmp_path / "p.mlir"
    path.write_text(NO_SUCH_SIZE)
    assert main([str(path), *args]) == 1
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err


DEPENDENT_REDUCES = """
loop.kernel @k(%a: memref<8xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = loop.reduce %i = %c0 to %c8 step %c1 combine(add) init(%zero) : f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    loop.yield %x : f32
  }
  %t = loop.reduce %j = %c0 to %c8 step %c1 combine(add) init(%s) : f32 {
    %y = memref.load %a[%j] : memref<8xf32>
    %z = arith.mulf %y, %y : f32
    loop.yield %z : f32
  }
  %u = loop.reduce %k = %c0 to %c8 step %c1 combine(max) init(%zero) : f32 {
    %w = memref.load %a[%k] : memref<8xf32>
    loop.yield %w : f32
  }
  %v = arith.addf %t, %u : f32
  memref.store %v, %out[%c0] : memref<1xf32>
  loop.return
}
"""


def test_gate_fusion_merges_independent_reductions_only() -> None:
    """The second reduction starts from the first one's result: it stays apart; the
    third is independent: it joins the first."""
    from nimble.lowering.spatial.loops import merge_reductions

    module = parse(DEPENDENT_REDUCES)
    (kernel,) = [o for o in module.ops]
    assert merge_reductions(kernel) == 1
    module.verify()
    reduces = [o for o in kernel.walk() if isinstance(o, loop.ReduceOp)]
    assert sorted(len(r.inits) for r in reduces) == [1, 2]
    from nimble.compile import compile_kernels

    a = np.arange(8, dtype=np.float32) - 3
    out = np.zeros(1, np.float32)
    compile_kernels(module)["k"](a, out)
    assert out[0] == np.float32(a.sum() + (a * a).sum() + a.max())
