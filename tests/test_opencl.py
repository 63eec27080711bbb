"""The OpenCL runtime and backend: device choice, the program cache, build errors,
checked launches, and generated kernels run under oclgrind (no out-of-bounds access,
no race). Numerics of every op on OpenCL are in test_graph_reference.py and
test_compiled_ops.py (the `opencl` target), the example models in test_examples.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import NMS_SCORES, exact_overlap_boxes, nms_text, numpy_nms

import nimble
from nimble.reference import InterpreterError
from nimble.runtime.kernels import LaunchError
from nimble.runtime.opencl import OpenCLError, OpenCLRuntime, choose_device, list_devices

ROOT = Path(__file__).resolve().parent.parent

DENSE = """func.func @main(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %y = graph.dense %x, %w, %b : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %r = graph.relu %y : tensor<?x32xf32> -> tensor<?x32xf32>
  func.return %r : tensor<?x32xf32>
}"""


def test_a_device_is_found_and_chosen_by_index_or_name():
    found = list_devices()
    assert found, "no OpenCL device: run scripts/install-system-packages.sh"
    label, device = found[0]
    assert choose_device(label.split(" ")[0]) == device
    assert choose_device(device.name.strip()[:6]) is not None
    with pytest.raises(OpenCLError, match="no OpenCL device matches 'no-such-device'"):
        choose_device("no-such-device")


def test_programs_are_cached_on_disk_by_source(tmp_path):
    source = "__kernel void twice(__global float *a) { a[get_global_id(0)] *= 2.0f; }"
    first = OpenCLRuntime(choose_device(), tmp_path)
    first.program(source)
    assert first.builds == 1 and len(list(tmp_path.glob("*.bin"))) == 1
    second = OpenCLRuntime(choose_device(), tmp_path)  # a new process would see the same
    program = second.program(source)
    assert second.builds == 0
    data = np.arange(4, dtype=np.float32)
    tensor = second.to_device(data)
    program.twice(second.queue, (4,), None, tensor.storage.buffer)
    np.testing.assert_array_equal(tensor.to_host(), data * 2)
    second.program(source + "\n")  # another source: another build
    assert second.builds == 1


def test_a_damaged_cache_entry_is_rebuilt(tmp_path):
    source = "__kernel void k(__global float *a) { a[0] = 1.0f; }"
    OpenCLRuntime(choose_device(), tmp_path).program(source)
    for entry in tmp_path.glob("*.bin"):
        entry.write_bytes(b"not a binary")
    runtime = OpenCLRuntime(choose_device(), tmp_path)
    runtime.program(source)
    assert runtime.builds == 1


def test_build_errors_name_the_kernels_and_show_the_log(tmp_path):
    runtime = OpenCLRuntime(choose_device(), tmp_path)
    with pytest.raises(OpenCLError) as e:
        runtime.program("__kernel void broken(__global float *a) { a[0] = undefined_name; }", kernels=["broken"])
    assert "broken" in str(e.value) and "undefined_name" in str(e.value)


def test_bad_shapes_on_the_device_are_an_error_not_a_crash(rng):
    exe = nimble.compile(DENSE, target="opencl")
    x = rng.standard_normal((3, 64)).astype(np.float32)
    w, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    with pytest.raises(InterpreterError, match="tensor<32x64xf32>"):
        exe(x, w[:, :63].copy(), b)
    np.testing.assert_allclose(exe(x, w, b), np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-5)


def test_empty_inputs_run_on_the_device_target(rng):
    exe = nimble.compile(DENSE, target="opencl")
    w, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    assert exe(np.zeros((0, 64), np.float32), w, b).shape == (0, 32)


def test_the_device_can_be_chosen_at_compile_and_load(tmp_path, rng):
    label = list_devices()[0][0].split(" ")[0]
    exe = nimble.compile(DENSE, target="opencl", opencl_device=label)
    exe.save(tmp_path / "m.nbc")
    loaded = nimble.load(tmp_path / "m.nbc", opencl_device=label)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    w, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    np.testing.assert_array_equal(loaded(x, w, b), exe(x, w, b))
    with pytest.raises(OpenCLError, match="no OpenCL device matches"):
        nimble.load(tmp_path / "m.nbc", opencl_device="no-such-device")


TILED = """func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %p = graph.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = graph.add %p, %c : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = graph.tanh %c : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %s, %t : tensor<?x?xf32>, tensor<?x?xf32>
}"""


@pytest.mark.parametrize("rows", [1, 8, 17])
@pytest.mark.parametrize("lanes", [1, 16, 32, 48, 53, 77])
def test_register_tiles_at_every_edge(rows, lanes, rng):
    """A thread's tile is 8 rows x 32 lanes (two vectors of 16): whole tiles, tiles
    overhanging the lanes (one-vector tiles, then scalar code) and the rows (scalar)."""
    exe = nimble.compile(TILED, target="opencl")
    assert all(k.device == "opencl" for k in exe.program.kernels)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((rows, 5), (5, lanes), (rows, lanes)))
    got, tanh = exe(a, b, c)
    np.testing.assert_allclose(got, a @ b + c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tanh, np.tanh(c), rtol=1e-5, atol=1e-6)


EXTREMES = """func.func @main(%x: tensor<?x3x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %m = graph.reduce_max %x {axes = array<i64: 1>} : tensor<?x3x?xf32> -> tensor<?x?xf32>
  %n = graph.reduce_min %x {axes = array<i64: 1>} : tensor<?x3x?xf32> -> tensor<?x?xf32>
  %e = graph.maximum %m, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %f = graph.minimum %n, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %e, %f : tensor<?x?xf32>, tensor<?x?xf32>
}"""


@pytest.mark.parametrize("rows, lanes", [(1, 1), (9, 33), (8, 50)])
def test_register_tiles_propagate_nan(rows, lanes, rng):
    """Max and min in a tile, as vector accumulators and as vector ops, propagate NaN
    lane by lane as numpy does (OpenCL's fmax/fmin would drop it)."""
    exe = nimble.compile(EXTREMES, target="opencl")
    assert all(k.device == "opencl" for k in exe.program.kernels)
    assert "vload16" in exe.program.opencl_program
    x = rng.standard_normal((rows, 3, lanes)).astype(np.float32)
    y = rng.standard_normal((rows, lanes)).astype(np.float32)
    x.reshape(-1)[::7] = np.nan
    y.reshape(-1)[::5] = np.nan
    most, least = exe(x, y)
    np.testing.assert_array_equal(most, np.maximum(x.max(axis=1), y))
    np.testing.assert_array_equal(least, np.minimum(x.min(axis=1), y))


CONV = """func.func @main(%x: tensor<?x5x?x?xf32>, %w: tensor<13x5x3x3xf32>, %b: tensor<13xf32>) -> tensor<?x13x?x?xf32> {
  %y = graph.conv2d %x, %w, %b {strides = array<i64: STRIDE, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x5x?x?xf32>, tensor<13x5x3x3xf32>, tensor<13xf32>) -> tensor<?x13x?x?xf32>
  %r = graph.relu %y : tensor<?x13x?x?xf32> -> tensor<?x13x?x?xf32>
  func.return %r : tensor<?x13x?x?xf32>
}"""


@pytest.mark.parametrize("items", [1, 3])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv_panels_run_as_work_groups(items, stride, rng, monkeypatch):
    """A conv's im2col rows are staged per panel of 64 pixels in a work-group's own
    buffer: any number of panels (1 to 7, the last partial), groups splitting a panel's
    tiles when there are few panels, and work-items sharing a group (3: the staging and
    the tiles dealt out between barriers) all match the reference."""
    import nimble.runtime.opencl as ocl

    monkeypatch.setattr(ocl, "CPU_GROUP_ITEMS", items)
    text = CONV.replace("STRIDE", str(stride))
    exe = nimble.compile(text, target="opencl")
    assert all(k.device == "opencl" for k in exe.program.kernels) and not exe.fallbacks
    (plan,) = exe.opencl.kernels.values()
    assert [p.group for p in plan.phases] == [True] and "barrier(" in exe.opencl.text
    module = nimble.parse(text)
    for n, h, w in ((1, 1, 1), (1, 7, 9), (2, 20, 21), (1, 9, 40)):
        x = rng.standard_normal((n, 5, h, w)).astype(np.float32)
        wt, b = rng.standard_normal((13, 5, 3, 3)).astype(np.float32), rng.standard_normal(13).astype(np.float32)
        np.testing.assert_allclose(exe(x, wt, b), nimble.interpret(module, x, wt, b)[0], rtol=1e-4, atol=1e-4,
                                   err_msg=f"{(n, h, w)}")


def test_sram_buffers_are_work_group_memory(rng):
    """A loop-level kernel whose panels stage a `dram` buffer (a scratch slice per
    work-group) and a `sram` one (`__local`), built and run on the device with 3
    work-items per group and fewer groups than panels, against numpy."""
    from nimble.api import parse
    from nimble.dialects.loop import kernels_of
    from nimble.lowering.opencl.to_opencl import opencl_sources, program_text

    text = (ROOT / "lit_tests" / "lowering" / "opencl" / "loops-to-opencl-groups.mlir").read_text().split("// -----")[0]
    (source,) = opencl_sources(kernels_of(parse(text)))
    (phase,) = source.phases
    assert phase.group and phase.split and "__local float" in source.text
    runtime = OpenCLRuntime.get()
    kernel = runtime.program(program_text([source])).panels_p0
    for n in (1, 64, 150):
        x, w = rng.standard_normal((n, 64)).astype(np.float32), rng.standard_normal((16, 64)).astype(np.float32)
        groups = 2  # panels: ceil(n / 64), up to 3; two groups split along axis 1 too
        scratch = runtime.alloc(groups * 2 * 64 * 64 * 4)
        xd, wd, y = runtime.to_device(x), runtime.to_device(w), runtime.to_device(np.zeros((16, n), np.float32))
        kernel(runtime.queue, (groups * 3, 2), (3, 1), xd.storage.buffer, np.int64(0), np.int64(n), wd.storage.buffer,
               np.int64(0), y.storage.buffer, np.int64(0), np.int64(n), scratch.buffer)
        np.testing.assert_allclose(y.to_host(), w @ x.T + x[:, 0], rtol=1e-4, atol=1e-4, err_msg=f"n={n}")


def test_arguments_can_stay_on_the_device(rng):
    """`Executable.to_device`: weights a caller keeps in device memory are not copied
    again; host kernels given one raise (they cannot read device memory)."""
    exe = nimble.compile(DENSE, target="opencl")
    w, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
    resident = exe.to_device(w)
    for n in (1, 5):
        x = rng.standard_normal((n, 64)).astype(np.float32)
        np.testing.assert_allclose(exe(x, resident, b), np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(resident.to_host(), w)  # not written by the calls
    on_host = nimble.compile(DENSE, target="llvm")
    with pytest.raises(ValueError, match="no kernel on an OpenCL device"):
        on_host.to_device(w)
    with pytest.raises(InterpreterError, match=r"argument #1 \(%w\): expected tensor<32x64xf32>, got ClTensor"):
        on_host(x, resident, b)
    (kernel,) = on_host.vm.kernels  # a CPU kernel handed one directly
    with pytest.raises(LaunchError, match="input #1: expected tensor<32x64xf32> in cpu memory, got ClTensor"):
        kernel.launch([x, resident, b], [np.empty((len(x), 32), np.float32)], 1, None, None)


# Generated kernels under oclgrind: every kind of loop nest the backend emits, at sizes
# that are 1 and not multiples of anything.
_UNDER_OCLGRIND = textwrap.dedent('''
    import numpy as np, nimble
    rng = np.random.default_rng(0)
    models = {
        "dense": (%r, lambda n: [rng.standard_normal((n, 64)), rng.standard_normal((32, 64)), rng.standard_normal(32)]),
        "conv": ("""func.func @main(%%x: tensor<1x3x?x?xf32>, %%w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
      %%y = graph.conv2d %%x, %%w {strides = array<i64: 2, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
      %%p = graph.max_pool2d %%y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
      func.return %%p : tensor<1x4x?x?xf32>
    }""", lambda n: [rng.standard_normal((1, 3, n + 2, n + 4)), rng.standard_normal((4, 3, 3, 3))]),
        "norms": ("""func.func @main(%%x: tensor<?x?xf32>, %%g: tensor<?xf32>, %%b: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) {
      %%s = graph.softmax %%x {axis = -1 : i64} : tensor<?x?xf32> -> tensor<?x?xf32>
      %%l = graph.layer_norm %%x, %%g, %%b {epsilon = 1.0e-05 : f64} : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
      %%m = graph.reduce_max %%x {axes = array<i64: 0>} : tensor<?x?xf32> -> tensor<?xf32>
      func.return %%s, %%l, %%m : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>
    }""", lambda n: [rng.standard_normal((n, n + 6)), rng.standard_normal(n + 6), rng.standard_normal(n + 6)]),
        "layout": ("""func.func @main(%%x: tensor<?x5xf32>, %%y: tensor<?x3xf32>) -> (tensor<?x8xf32>, tensor<5x?xf32>) {
      %%c = graph.concat %%x, %%y {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x3xf32>) -> tensor<?x8xf32>
      %%t = graph.transpose %%x [1, 0] : tensor<?x5xf32> -> tensor<5x?xf32>
      func.return %%c, %%t : tensor<?x8xf32>, tensor<5x?xf32>
    }""", lambda n: [rng.standard_normal((n, 5)), rng.standard_normal((n, 3))]),
        "tiles": (%r, lambda n: [rng.standard_normal((8 + n, 5)), rng.standard_normal((5, 45 + n)),
                                 rng.standard_normal((8 + n, 45 + n))]),
        "nms": ("""func.func @main(%%b: tensor<?x4xf32>, %%s: tensor<?xf32>) -> tensor<?xi64> {
      %%k = graph.nms %%b, %%s {iou_threshold = 3.0e-01 : f64, max_output = 5 : i64} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
      func.return %%k : tensor<?xi64>
    }""", lambda n: [np.concatenate([c := rng.uniform(0, 4, (5 * n, 2)), c + 2], 1), rng.random(5 * n)]),
    }
    import nimble.runtime.opencl as ocl
    import nimble.runtime.opencl_vision as vision
    vision.SORT_FROM = 8  # the 15-box NMS runs sort their candidates in a work-group
    runs = 0
    for name, (text, make) in models.items():
        exe = nimble.compile(text, target="opencl")
        module = nimble.parse(text)
        assert all(k.device == "opencl" for k in exe.program.kernels), (name, exe.program.kernels)
        assert not exe.fallbacks, (name, exe.fallbacks)
        # Work-group phases (conv panels), the NMS sort (15 boxes) and keyed picks (35
        # boxes, at most 5 kept) with one work-item per group, then three (two for the
        # picks' tree) sharing a group's buffers between barriers.
        for ocl.CPU_GROUP_ITEMS in (1, 3) if name in ("conv", "nms") else (1,):
            exe = nimble.load(exe.to_bytes())  # a fresh plan: launch shapes are memoised
            for n in (1, 3, 7):
                args = [a.astype(np.float32) for a in make(n)]
                for got, want in zip(exe.run(*args), nimble.interpret(module, *args)):
                    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=name)
            runs += 1
    print("ran", runs, "model runs")
''') % (DENSE, TILED)
_OCLGRIND_ERRORS = ("Invalid read", "Invalid write", "data race", "FATAL", "Work-group divergence", "error")


def test_generated_kernels_have_no_out_of_bounds_access_or_race(tmp_path):
    assert shutil.which("oclgrind"), "oclgrind is missing: run scripts/install-system-packages.sh"
    script = tmp_path / "kernels.py"
    script.write_text(_UNDER_OCLGRIND)
    done = subprocess.run(["oclgrind", "--data-races", sys.executable, str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    # oclgrind exits 0 even when it reports errors: its report is on stderr. (Its
    # --uninitialized check stops at LLVM's `freeze` instruction, which pocl's and
    # oclgrind's own front ends emit for ordinary loops: out of bounds and races only.)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ran 8 model runs" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    found = [line for line in done.stderr.splitlines() if any(e in line for e in _OCLGRIND_ERRORS)]
    assert not found, done.stderr[-5000:]


NMS = """func.func @main(%boxes: tensor<?x4xf32>, %logits: tensor<?xf32>) -> tensor<?xi64> {{
  %scores = graph.sigmoid %logits : tensor<?xf32> -> tensor<?xf32>
  %keep = graph.nms %boxes, %scores {{iou_threshold = {iou} : f64{extra}}} : (tensor<?x4xf32>, tensor<?xf32>) -> tensor<?xi64>
  func.return %keep : tensor<?xi64>
}}"""


@pytest.mark.parametrize("n", [1, 2, 31, 33, 100, 257, 600])  # 600: sorted, not ranked (SORT_FROM)
@pytest.mark.parametrize("extra", ["", ", score_threshold = 0.4 : f64, max_output = 7 : i64"])
def test_nms_on_the_device_matches_the_reference_and_numpy(n, extra, rng):
    text = NMS.format(iou=0.45, extra=extra)
    exe = nimble.compile(text, target="opencl")
    assert not exe.fallbacks, exe.fallbacks  # nms runs on the device, not by the reference
    xy = rng.uniform(0, 20, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(1, 8, (n, 2))], 1).astype(np.float32)
    boxes[::5] = boxes[::5, [2, 3, 0, 1]]  # some boxes given by the other diagonal
    logits = rng.standard_normal(n).astype(np.float32)
    logits[1::7] = logits[0]  # ties: kept in index order
    if n > 3:
        logits[3] = np.nan  # NaN scores sort last (and never pass a threshold)
    got = exe(boxes, logits)
    expected = nimble.interpret(nimble.parse(text), boxes, logits)[0]
    np.testing.assert_array_equal(got, expected)
    scores = 1 / (1 + np.exp(-logits.astype(np.float32)))
    threshold, limit = (0.4, 7) if extra else (None, None)
    np.testing.assert_array_equal(got, numpy_nms(boxes, scores, 0.45, threshold, limit))


@pytest.mark.parametrize("n", [7, 33, 301, 700])
@pytest.mark.parametrize("greedy", [False, True])
def test_nms_on_the_device_with_ties_and_exact_overlaps(n, greedy, rng):
    """Integer boxes (IoUs of exactly the threshold), scores with ties, +-0, +-inf, NaN;
    the bit matrix, or with `max_output` N / 4 the keyed greedy pass."""
    threshold, limit = (0.05, n // 4) if greedy else (None, None)
    text = nms_text(0.5, threshold, limit)
    exe = nimble.compile(text, target="opencl")
    assert not exe.fallbacks, exe.fallbacks
    boxes = exact_overlap_boxes(rng, n)
    scores = rng.choice(NMS_SCORES, n)
    got = exe(boxes, scores)
    np.testing.assert_array_equal(got, nimble.interpret(nimble.parse(text), boxes, scores)[0])
    np.testing.assert_array_equal(got, numpy_nms(boxes, scores, 0.5, threshold, limit))


def test_nms_with_no_boxes_on_the_device():
    exe = nimble.compile(NMS.format(iou=0.5, extra=""), target="opencl")
    assert exe(np.zeros((0, 4), np.float32), np.zeros(0, np.float32)).shape == (0,)


def test_constants_go_to_the_device_once(rng):
    text = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = graph.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5], [0.0, 1.0, 0.0, 1.0], [2.0, 0.0, 2.0, 0.0]]> : tensor<4x4xf32>
  %y = graph.matmul %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}"""
    exe = nimble.compile(text, target="opencl")
    expected_w = nimble.interpret(nimble.parse(text), np.eye(4, dtype=np.float32))[0]
    for n in (1, 5, 3):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_allclose(exe(x), x @ expected_w, rtol=1e-5, atol=1e-6)
    assert len(exe.vm.resident_constants) == 1


def test_profile_times_copies_and_ops_run_by_their_own_implementation(rng):
    """`--profile` lists device copies and nms (device or CPU implementation) beside the
    kernels, so 'outside kernels' is the VM's own time."""
    text = NMS.format(iou=0.5, extra=", max_output = 3 : i64")
    boxes = np.concatenate([c := rng.uniform(0, 9, (40, 2)), c + 2], 1).astype(np.float32)
    logits = rng.standard_normal(40).astype(np.float32)
    for target, expected in (("opencl", {"copy cpu -> opencl", "copy opencl -> cpu", "graph.nms (opencl)"}),
                             ("llvm", {"graph.nms (cpu)"})):
        exe = nimble.compile(text, target=target)
        profile = exe.vm.start_profile()
        exe(boxes, logits)
        assert expected <= set(profile), (target, sorted(profile))
        assert all(len(times) >= 1 and min(times) > 0 for times in profile.values())
