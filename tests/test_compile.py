"""nimble.compile: the executable's checks, fused groups against the unfused reference,
stored machine code, threads, and the nimble-run / nimble-opt -t llvm tools."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

import nimble
from nimble.compile import compile_kernels
from nimble.dialects import loop
from nimble.reference import InterpreterError
from nimble.runtime import jit_pool

ROOT = Path(__file__).resolve().parent.parent

CELL = """func.func @main(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %y: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %d = graph.dense %x, %w, %b : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %t = graph.tanh %d : tensor<?x16xf32> -> tensor<?x16xf32>
  %s = graph.add %t, %y : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %p = graph.softmax %s : tensor<?x16xf32> -> tensor<?x16xf32>
  func.return %p : tensor<?x16xf32>
}"""


def inputs(rng, n, m=None):
    m = n if m is None else m
    return (rng.standard_normal((n, 8)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32),
            rng.standard_normal(16).astype(np.float32), rng.standard_normal((m, 16)).astype(np.float32))


@pytest.mark.parametrize("n", [1, 7, 16, 33, 100, 5000])
def test_fused_groups_match_unfused_reference(n, rng):
    exe = nimble.compile(CELL)
    # Two groups, dense+tanh+add and softmax; the first also as its variant for rows that
    # do not stretch (the residual's rows could stretch the product's).
    assert exe.kernel_names == ["main_dense_0", "main_dense_0_ns", "main_softmax_0"]
    args = inputs(rng, n)
    expected = nimble.interpret(nimble.parse(CELL), *args)[0]
    np.testing.assert_allclose(exe(*args), expected, rtol=1e-5, atol=1e-6)


def test_shape_mismatch_is_an_error_not_a_read_out_of_bounds(rng):
    exe = nimble.compile(CELL)
    # %y has 9 rows where %x has 8: the shape IR before the kernel launch fails, at the op.
    with pytest.raises(InterpreterError, match=r"<string>:4:3: 'dynshape.assert' op failed at run time: dim 0 cannot be broadcast \(8 vs 9\)"):
        exe(*inputs(rng, 8, 9))


def test_a_dynamic_reshape_against_its_static_result_dims_is_an_error(rng):
    """The kernel's loops assume the result type's static dims: a target shape that
    contradicts them fails in the shape IR (it was garbage) and in the interpreter."""
    text = """func.func @main(%x: tensor<?x256xf32>, %t: !dynshape.shape<3>) -> tensor<4x?x64xf32> {
  %y = graph.dynamic_reshape %x, %t : (tensor<?x256xf32>, !dynshape.shape<3>) -> tensor<?x4x64xf32>
  %z = graph.transpose %y [1, 0, 2] : tensor<?x4x64xf32> -> tensor<4x?x64xf32>
  func.return %z : tensor<4x?x64xf32>
}"""
    x = rng.standard_normal((7, 256)).astype(np.float32)
    exe = nimble.compile(text)
    np.testing.assert_array_equal(exe(x, (7, 4, 64)), x.reshape(7, 4, 64).transpose(1, 0, 2))
    message = r"failed at run time: target dim 1 is not the result type's \(2 vs 4\)"
    with pytest.raises(InterpreterError, match=message):
        exe(x, (7, 2, 128))
    with pytest.raises(InterpreterError, match="'graph.dynamic_reshape' op " + message):
        nimble.interpret(nimble.parse(text), x, (7, 2, 128))


def test_single_thread_and_two_threads_agree(rng):
    args = inputs(rng, 5000)
    one = nimble.compile(CELL, threads=1)(*args)
    two = nimble.compile(CELL, threads=2)(*args)
    np.testing.assert_array_equal(one, two)


def test_object_code_reloads_without_recompiling(rng, tmp_path):
    exe = nimble.compile(CELL)
    exe.save(tmp_path / "cell.nbc")
    again = nimble.load(tmp_path / "cell.nbc")
    assert again.kernel_names == exe.kernel_names
    args = inputs(rng, 13)
    np.testing.assert_array_equal(again(*args), exe(*args))


def test_lazy_kernels_compile_on_their_first_launch(rng, tmp_path):
    """`nimble.compile(jit="lazy")` JIT-compiles no kernel; a call compiles the ones it
    launches (here the no-stretch variant, the residual's rows equal to the product's),
    and a save compiles the rest: the file holds the three objects, and its kernels run
    as they did."""
    exe = nimble.compile(CELL, jit="lazy")
    assert exe.seconds_jit == 0.0
    args = inputs(rng, 13)
    first = exe(*args)
    assert exe.seconds_jit > 0.0
    assert exe.code.compiled == ["main_dense_0_ns", "main_softmax_0"]
    exe.save(tmp_path / "cell.nbc")
    again = nimble.load(tmp_path / "cell.nbc")
    assert len(again.program.object_code) == 3  # one per kernel
    np.testing.assert_array_equal(again(*args), first)
    stretched = inputs(rng, 13, 1)  # the residual's one row stretched: the general kernel
    np.testing.assert_array_equal(again(*stretched), exe(*stretched))
    fresh = nimble.compile(CELL, jit="lazy")
    softmax = next(k for k in fresh.vm.kernels if k.name == "main_softmax_0")
    softmax.ready()  # what a profiled launch does before its timer starts
    assert fresh.code.compiled == ["main_softmax_0"]


@pytest.mark.skipif(jit_pool.cores() < 2, reason="kernels compile during the passes on a core they leave free")
def test_kernels_compile_while_the_passes_make_the_next(rng, monkeypatch):
    """An eager compile hands each kernel to the JIT when the loops stage has finished
    it: every kernel compiles in a forked child (no LLVM in this process), and the
    results are the lazily compiled executable's."""
    from nimble.runtime import llvm_jit

    monkeypatch.setenv("NIMBLE_CACHE_DIR", "")
    calls = []
    object_code = llvm_jit.object_code
    monkeypatch.setattr(llvm_jit, "object_code", lambda *a: calls.append(1) or object_code(*a))
    exe = nimble.compile(CELL)
    assert calls == [] and exe.code.compiled == exe.kernel_names
    assert set(exe.code.streamed) <= set(exe.code.compiled)
    args = inputs(rng, 5)
    np.testing.assert_array_equal(exe(*args), nimble.compile(CELL, jit="lazy")(*args))


@pytest.mark.parametrize("example", sorted(p.stem for p in (ROOT / "examples").glob("*.nb")))
def test_kernels_are_final_when_the_loops_stage_hands_them_over(example):
    """What `run_stages(on_kernel=...)` hands over is each CPU kernel's final IR: no
    later stage changes a kernel (the streamed JIT compiles that IR and keeps its text
    as the kernel's). The kernels of host ops (`device.native_kernel`: the detection
    example's NMS) come later, with the host functions (`lower-to-vm`), and compile
    after the passes, as added."""
    from nimble.compile import TARGETS, run_stages
    from nimble.runtime.vm_steps import native_kernel_of

    module = nimble.api.parse(ROOT / "examples" / f"{example}.nb")
    handed: dict[str, str] = {}
    run_stages(module, [s for s in TARGETS["llvm"] if s != "llvm"],
               on_kernel=lambda k: handed.setdefault(k.sym_name.data, str(k)))
    native = {native_kernel_of(f) for f in module.ops if isinstance(f, func.FuncOp)} - {None}
    final = {k.sym_name.data: str(k) for k in loop.kernels_of(module) if k.sym_name.data not in native}
    assert handed and set(final) <= set(handed) and not native & set(handed)
    assert all(handed[name] == text for name, text in final.items())
    assert (example == "detection") == (native == {"nms_cpu"})


def test_a_streamed_kernel_is_printed_once_and_compiled_once(monkeypatch):
    """`KernelCode.compile_all(stream=...)` takes the stream's object code (compiled in a
    child: no LLVM in this process) and text."""
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime import llvm_jit

    exe = nimble.compile(CELL, jit="lazy")
    kernel = next(k for k in loop.kernels_of(exe.module) if k.sym_name.data == "main_softmax_0")
    calls = []
    object_code = llvm_jit.object_code
    monkeypatch.setattr(llvm_jit, "object_code", lambda *a: calls.append(1) or object_code(*a))
    stream = llvm_jit.KernelStream(lower_kernels, cache=None)
    stream.add(kernel)
    code = llvm_jit.KernelCode([kernel], lower_kernels, cache=None)
    code.compile_all(stream=stream)
    assert code.compiled == ["main_softmax_0"] and code.kernels_text().count("loop.kernel") == 1
    assert code._texts["main_softmax_0"] is stream.texts["main_softmax_0"]
    assert len(calls) == (0 if jit_pool.cores() > 1 else 1)
    assert str(kernel) == stream.texts["main_softmax_0"]  # (compiling lowers a copy)


def test_a_kernel_that_fails_to_compile_fails_every_launch():
    from nimble.runtime.llvm_jit import KernelCode

    exe = nimble.compile(CELL)
    kernels = [k.clone() for k in loop.kernels_of(exe.module) if k.sym_name.data == "main_softmax_0"]

    def broken(module):
        raise ValueError("no lowering for this op")

    code = KernelCode(kernels, broken, cache=None)  # (a cached build of it would need no lowering)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="kernel 'main_softmax_0' failed to compile: ValueError: no lowering"):
            code.address("main_softmax_0")
    assert "main_softmax_0" in code and code.compiled == []


def test_unknown_target_and_entry():
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        nimble.compile(CELL, target="cuda")
    with pytest.raises(ValueError, match="no function @nope"):
        nimble.compile(CELL, entry="nope")


def test_compile_kernels_requires_nothing_but_kernels():
    assert compile_kernels("func.func @host() { func.return }") == {}


def run_tool(module, *args):
    # Run from outside the checkout, so that the installed package is the one imported.
    code = f"import sys; from {module} import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT.parent)


def test_nimble_run_checks_against_the_reference():
    result = run_tool("nimble.run_cli", str(ROOT / "examples/lstm.nb"), "--dynamic-size", "3", "--check")
    assert result.returncode == 0, result.stderr
    assert "result #0: float32[3, 128]" in result.stdout
    difference = float(result.stdout.rsplit(":", 1)[1])
    assert difference < 1e-4


def test_nimble_run_check_fails_beyond_its_tolerance():
    """`--check` exits 1 when a result is off by more than --rtol/--atol (it printed the
    difference and exited 0 before); an absurd tolerance is refused by argparse."""
    tight = run_tool("nimble.run_cli", str(ROOT / "examples/gru.nb"), "--dim", "2", "--check", "--rtol", "0",
                     "--atol", "0")
    assert tight.returncode == 1
    assert "nimble-run: check failed: result #0 differs at" in tight.stderr and "rtol 0, atol 0" in tight.stderr
    assert run_tool("nimble.run_cli", str(ROOT / "examples/gru.nb"), "--dim", "2", "--check").returncode == 0
    bad = run_tool("nimble.run_cli", str(ROOT / "examples/gru.nb"), "--check", "--atol", "nan")
    assert bad.returncode == 2 and "not a tolerance" in bad.stderr


@pytest.mark.parametrize("got,want,why", [
    ([np.array([1.0, np.nan])], [np.array([1.0005, np.nan])], None),
    ([np.array([1e20, 0.0])], [np.array([1e20, 1e15])], None),  # (atol scales with the magnitude)
    ([np.array([1.0, 2.0])], [np.array([1.0, 2.1])], "result #0 differs at [1]"),
    ([np.ones((2, 3))], [np.ones((3, 2))], "shape [2, 3]"),
    ([np.array([1, 2])], [np.array([1, 3])], "result #0 differs at 1"),
])
def test_check_results(got, want, why):
    from nimble.run_cli import check_results

    message = check_results(got, want, 1e-3, 1e-3)
    assert message is None if why is None else why in message


def test_nimble_run_times_after_untimed_warmup_runs():
    """`--warmup N` runs (default 1) come before the timed ones and are said to; the
    profile covers the timed runs alone (the same instruction count whatever N), and the
    result is the same."""
    outputs = []
    for extra in ([], ["--warmup", "0"], ["--warmup", "3"]):
        result = run_tool("nimble.run_cli", str(ROOT / "examples/lstm.nb"), "--dim", "n=2", "--dim", "xs.0=3",
                          "--repeat", "2", "--profile", *extra)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        timing = next(line for line in lines if "ran in" in line)
        warm = {(): "after 1 untimed", ("--warmup", "0"): None, ("--warmup", "3"): "after 3 untimed"}[tuple(extra)]
        assert ("untimed" not in timing) if warm is None else (f"(median of 2, {warm})" in timing), timing
        steps = next(line for line in lines if "VM instructions" in line).split()[0]
        outputs.append((next(line for line in lines if line.startswith("result #0")), steps))
    assert len(set(outputs)) == 1  # the same result, and the profile counts the 2 timed runs alone


def test_nimble_run_reports_errors_without_traceback(tmp_path):
    bad = tmp_path / "bad.nb"
    bad.write_text("def @main(%x: f32[n]) -> f32[n] { return %x + }\n")
    result = run_tool("nimble.run_cli", str(bad))
    assert result.returncode == 1 and "nimble-run: error:" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("tool", ["run_cli:main", "run_cli:compile_main", "opt:main", "interpret_cli:main"])
def test_regions_nested_too_deeply_are_a_parse_error(tool, tmp_path):
    """xdsl's parser recurses per nested region: 3,000 nested modules are an error at the
    op where it stopped, from every tool, not a RecursionError traceback."""
    nested = tmp_path / "nested.mlir"
    nested.write_text("builtin.module {\n" * 3000 + "}\n" * 3000)
    module, function = tool.split(":")
    code = f"import sys; from nimble.{module} import {function}; sys.exit({function}(sys.argv[1:]))"
    result = subprocess.run([sys.executable, "-c", code, str(nested)], capture_output=True, text=True,
                            cwd=ROOT.parent)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "regions are nested too deeply to parse" in result.stderr and "nested.mlir:" in result.stderr


def test_nimble_compile_reports_a_bytecode_error_without_traceback(tmp_path, monkeypatch, capsys):
    """A BytecodeError while writing the module (here: the OpenCL code cannot be
    generated) is one line from nimble-compile, as from nimble-run (it was a traceback)."""
    from nimble.run_cli import compile_main
    from nimble.runtime.bytecode import BytecodeError

    def refuse(*args, **kwargs):
        raise BytecodeError("device kernels: NoDeviceLowering: a planted failure")

    monkeypatch.setattr(sys.modules["nimble.run_cli"], "compile", refuse)
    code = compile_main([str(ROOT / "examples/mlp.mlir"), "-o", str(tmp_path / "mlp.nbc")])
    assert code == 1
    err = capsys.readouterr().err
    assert "nimble-compile: error: device kernels: NoDeviceLowering: a planted failure" in err
    assert "Traceback" not in err


def test_nimble_run_takes_every_named_dim_and_rejects_others():
    """ResNet's `n` names only the image's batch dim (nothing checks it against another):
    `--dim n=2` sizes it. A name the model does not use is an error listing those it does
    and the way that always works (`image.0`)."""
    result = run_tool("nimble.run_cli", str(ROOT / "examples/resnet18.nb"), "--dim", "n=2", "--dim", "image.2=9",
                      "--dim", "image.3=9")
    assert result.returncode == 0, result.stderr
    assert "result #0: float32[2, 1000]" in result.stdout
    result = run_tool("nimble.run_cli", str(ROOT / "examples/resnet18.nb"), "--dim", "q=2")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "no dim 'q'" in result.stderr and "named dims: n" in result.stderr and "image.0" in result.stderr
    result = run_tool("nimble.run_cli", str(ROOT / "examples/lstm.nb"), "--dim", "n=2", "--dim", "xs.0=3")
    assert result.returncode == 0, result.stderr
    assert "result #0: float32[2, 128]" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--repeat", "0"], "argument --repeat: 0 is out of range: at least 1"),
    (["--warmup", "-1"], "argument --warmup: -1 is out of range: at least 0"),
    (["--threads", "-2"], "argument --threads: -2 is out of range: from 1 to 1024"),
    (["--threads", "100000"], "argument --threads: 100000 is out of range"),
    (["--dim", "=5"], "--dim takes N or NAME=N (N at least 0), not '=5'"),
    (["--dim", "n=-3"], "--dim takes N or NAME=N (N at least 0), not 'n=-3'"),
    (["--input", "xs"], "--input takes NAME=FILE.npy or NAME=SHAPExTYPE[=VALUES], not 'xs'"),
    (["--dim", "n=1000000000000"], "more than 268,435,456: give smaller sizes"),
])
def test_nimble_run_refuses_bad_options(args, message, capsys):
    """Out-of-range counts, malformed sizes and inputs, and random inputs too large to
    make are errors that say so (not silently taken, not a traceback or MemoryError)."""
    from nimble.run_cli import main

    try:
        code = main([str(ROOT / "examples/lstm.nb"), "--jit", "lazy", *args])
    except SystemExit as e:  # (argparse's own errors)
        code = e.code
    assert code in (1, 2)
    assert message in capsys.readouterr().err


def test_nimble_opt_prints_llvm_ir():
    result = run_tool("nimble.opt", str(ROOT / "examples/mlp.mlir"), "-t", "llvm")
    assert result.returncode == 0, result.stderr
    assert "define void @" in result.stdout and "noalias" in result.stdout


@pytest.mark.parametrize("shapes", [[(0, 4), (4, 5)], [(3, 0), (0, 5)], [(3, 4), (4, 0)]])
def test_empty_dims(shapes, rng):
    """Zero-sized dims: loops run no iteration, a sum over nothing is 0."""
    text = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = graph.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = graph.softmax %y : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}"""
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    got = nimble.compile(text)(*args)
    np.testing.assert_array_equal(got, nimble.interpret(nimble.parse(text), *args)[0])


PRODUCTS = """func.func @main(%x: tensor<?x33xf32>, %s: tensor<?x?x70xf32>, %v: tensor<70xf32>) -> (tensor<?x70xf32>, tensor<?x?x33xf32>, tensor<33xf32>) {
  %w = graph.constant dense<WEIGHT> : tensor<33x70xf32>
  %t = graph.transpose %w [1, 0] : tensor<33x70xf32> -> tensor<70x33xf32>
  %y = graph.matmul %x, %w : (tensor<?x33xf32>, tensor<33x70xf32>) -> tensor<?x70xf32>
  %r = graph.relu %y : tensor<?x70xf32> -> tensor<?x70xf32>
  %z = graph.matmul %s, %t : (tensor<?x?x70xf32>, tensor<70x33xf32>) -> tensor<?x?x33xf32>
  %u = graph.matmul %v, %t : (tensor<70xf32>, tensor<70x33xf32>) -> tensor<33xf32>
  func.return %r, %z, %u : tensor<?x70xf32>, tensor<?x?x33xf32>, tensor<33xf32>
}"""


@pytest.mark.parametrize("n", [1, 7, 16, 33, 100, 600])
def test_products_by_constant_matrices_are_dense_layers(n, rng):
    """`matmul-to-dense`: a matrix, a batch of them and a vector times a constant (or its
    transpose) run as dense layers, and give the products' values at any rows."""
    weight = rng.standard_normal((33, 70)).astype(np.float32)
    text = PRODUCTS.replace("WEIGHT", str(weight.tolist()))
    exe = nimble.compile(text)
    assert not [k for k in exe.kernel_names if "matmul" in k], exe.kernel_names
    args = (rng.standard_normal((n, 33)).astype(np.float32), rng.standard_normal((2, n, 70)).astype(np.float32),
            rng.standard_normal(70).astype(np.float32))
    for got, want in zip(exe.run(*args), nimble.interpret(nimble.parse(text), *args)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(exe.run(*args)[0], np.maximum(args[0] @ weight, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_constants_round_trip_through_their_bytes(dtype):
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    from nimble.dialects.graph.folding import array_to_dense, dense_to_array
    from nimble.dialects.graph.types import element_type_of

    array = (np.arange(12).reshape(3, 4) / 7).astype(dtype)
    t = TensorType(element_type_of(array.dtype), [3, 4])
    attr = array_to_dense(array, t)
    assert attr == DenseIntOrFPElementsAttr.from_list(t, array.reshape(-1).tolist())
    np.testing.assert_array_equal(dense_to_array(attr), array)
    splat = nimble.parse("func.func @main() -> tensor<2x3xf32> {\n  %c = graph.constant dense<1.5> : tensor<2x3xf32>\n"
                         "  func.return %c : tensor<2x3xf32>\n}")
    constant = next(op for op in splat.walk() if op.name == "graph.constant")
    np.testing.assert_array_equal(dense_to_array(constant.value), np.full((2, 3), 1.5, np.float32))


def test_compile_collects_young_objects_less_often_and_restores_the_collector():
    """Compiling raises the collector's young-generation threshold (IR is built and dropped
    by the hundred thousand ops) and puts the caller's back afterwards, after an error too."""
    import gc

    from nimble.compile import COMPILE_GC_THRESHOLD, fewer_collections

    before = gc.get_threshold()
    raised = (max(before[0], COMPILE_GC_THRESHOLD), *before[1:])
    with fewer_collections():
        assert gc.get_threshold() == raised
        with fewer_collections():  # another compile meanwhile (a kernel's JIT in another thread)
            assert gc.get_threshold() == raised
        assert gc.get_threshold() == raised  # restored only when the last one ends
    assert gc.get_threshold() == before
    nimble.compile("""func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = graph.relu %x : tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}""")
    assert gc.get_threshold() == before
    with pytest.raises(ValueError):
        nimble.compile("func.func @main() {\n  func.return\n}", target="nowhere")
    assert gc.get_threshold() == before


def test_compile_leaves_older_objects_out_of_full_collections():
    """The objects alive before a compile are frozen while it runs (a full collection
    would walk a compiled model's IR each time) and unfrozen when the last compile ends;
    objects a caller froze itself stay frozen, and nothing more is frozen then."""
    import gc

    from nimble.compile import fewer_collections

    assert gc.get_freeze_count() == 0
    with fewer_collections():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        made_meanwhile = [[] for _ in range(1000)]  # (tracked objects a freeze now would take)
        with fewer_collections():
            # (frozen objects may still be freed: another thread's, pytest-xdist's I/O thread's)
            assert frozen - 100 < gc.get_freeze_count() <= frozen
        assert frozen - 100 < gc.get_freeze_count() <= frozen  # unfrozen only when the last one ends
    assert gc.get_freeze_count() == 0 and made_meanwhile
    gc.freeze()  # a caller's own freeze (a server about to fork)
    try:
        theirs = gc.get_freeze_count()
        newer = [[] for _ in range(1000)]
        with fewer_collections():
            assert theirs - 100 < gc.get_freeze_count() <= theirs
        assert theirs - 100 < gc.get_freeze_count() <= theirs and newer
    finally:
        gc.unfreeze()


def test_identical_groups_share_one_kernel(rng, tmp_path):
    """Three dense + relu layers of one shape, their weights arguments (an imported model's
    repeated layers): one kernel serves all three groups, and a fourth group of another
    shape has its own; results match numpy at several row counts (none, one, odd), also
    after a save and load."""
    layer = "(tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>"
    relu = "tensor<?x16xf32> -> tensor<?x16xf32>"
    text = f"""func.func @main(%x: tensor<?x16xf32>, %w1: tensor<16x16xf32>, %b1: tensor<16xf32>, %w2: tensor<16x16xf32>, %b2: tensor<16xf32>, %w3: tensor<16x16xf32>, %b3: tensor<16xf32>, %w4: tensor<8x16xf32>) -> tensor<?x8xf32> {{
  %d1 = graph.dense %x, %w1, %b1 : {layer}
  %h1 = graph.relu %d1 : {relu}
  %d2 = graph.dense %h1, %w2, %b2 : {layer}
  %h2 = graph.relu %d2 : {relu}
  %d3 = graph.dense %h2, %w3, %b3 : {layer}
  %h3 = graph.relu %d3 : {relu}
  %y = graph.dense %h3, %w4 : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}}"""
    exe = nimble.compile(text)
    stems = {name.removesuffix("_ns") for name in exe.kernel_names}
    assert len(stems) == 2, exe.kernel_names
    params = []
    for _ in range(3):
        params += [rng.standard_normal((16, 16)).astype(np.float32) * 0.3, rng.standard_normal(16).astype(np.float32)]
    w4 = rng.standard_normal((8, 16)).astype(np.float32)
    path = tmp_path / "layers.nbc"
    exe.save(path)
    loaded = nimble.load(path)
    for n in (0, 1, 7, 33):
        x = rng.standard_normal((n, 16)).astype(np.float32)
        h = x
        for w, b in zip(params[::2], params[1::2]):
            h = np.maximum(h @ w.T + b, 0)
        for e in (exe, loaded):
            np.testing.assert_allclose(e(x, *params, w4), h @ w4.T, rtol=1e-4, atol=1e-4)


def test_nimble_run_runs_a_saved_module_on_npy_inputs_and_writes_npy_outputs(tmp_path, capsys):
    """The user's loop: compile once to a .nbc, then run it on arrays from files and keep
    the results as files (the same values `Executable.run` gives)."""
    from nimble.run_cli import compile_main, main

    module = tmp_path / "mlp.nbc"
    assert compile_main([str(ROOT / "examples/mlp.mlir"), "-o", str(module), "--quiet"]) == 0
    exe = nimble.load(module)
    rng = np.random.default_rng(3)
    names, inputs = exe.vm.signatures[exe.entry][1], []
    for name, t in zip(names, exe.vm.signatures[exe.entry][0].inputs.data):
        shape = [5 if d < 0 else d for d in t.get_shape()]
        inputs.append(rng.standard_normal(shape).astype(np.float32))
        np.save(tmp_path / f"{name}.npy", inputs[-1])
    feeds = [f"--input={name}={tmp_path / f'{name}.npy'}" for name in names]
    assert main([str(module), *feeds, "--output-dir", str(tmp_path / "out"), "--quiet"]) == 0
    expected = exe.run(*inputs)
    written = sorted((tmp_path / "out").iterdir())
    assert [p.name for p in written] == [f"result_{i}.npy" for i in range(len(expected))]
    for path, want in zip(written, expected):
        np.testing.assert_array_equal(np.load(path), want)


def test_nimble_run_output_dir_refuses_what_is_not_an_array(tmp_path, capsys):
    from nimble.run_cli import save_results

    assert "result #1 is a tuple" in save_results([np.zeros(2), (1, 2)], str(tmp_path / "out"))
    assert save_results([np.zeros(2), 3], str(tmp_path / "out")) is None
    assert np.load(tmp_path / "out" / "result_1.npy") == 3


def test_nimble_run_takes_inputs_inline_as_iree_run_module_does(tmp_path, capsys):
    """`--input NAME=SHAPExTYPE=VALUES` (listed, or one value filling the tensor),
    `SHAPExTYPE` (zeros), an integer; a wrong spec is an error that says what is wrong."""
    from nimble.run_cli import input_value, main

    np.testing.assert_array_equal(input_value("x", "2x3xf32=1,2,3,4,5,6"),
                                  np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(input_value("x", "2x2xf16=0.5"), np.full((2, 2), 0.5, np.float16))
    assert input_value("x", "4xi64").dtype == np.int64 and not input_value("x", "4xi64").any()
    assert input_value("k", "7") == 7 and input_value("s", "f32=2").shape == ()
    for bad, message in [("2x3xf32=1,2", "2 values for shape [2, 3]"), ("2xf32=a", "not numbers"),
                         ("missing.npy", "neither a .npy file")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            input_value("x", bad)
    assert main([str(ROOT / "examples/mlp.mlir"), "--input=x=3x64xf32=0.25", "--output-dir", str(tmp_path / "out"),
                 "--quiet"]) == 0
    assert np.load(tmp_path / "out" / "result_0.npy").shape[0] == 3
