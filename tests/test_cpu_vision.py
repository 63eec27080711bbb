"""The compiled CPU implementation of `graph.nms` (`runtime.cpu_vision`) against the
reference interpreter and an independent numpy NMS."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import NMS_SCORES, exact_overlap_boxes, nms_text, numpy_nms

import nimble
from nimble.dialects.graph.vision import NmsOp
from nimble.runtime import cpu_vision


@pytest.mark.parametrize("n", [0, 1, 2, 7, 33, 100, 301])
@pytest.mark.parametrize("iou", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("score_threshold, max_output", [(None, None), (0.05, 4), (-2.0, None), (None, 0)])
def test_compiled_nms_matches_the_reference_and_numpy(n, iou, score_threshold, max_output, rng, monkeypatch):
    """Boxes with IoUs exactly at the threshold; scores with ties, +-0, +-inf and NaN."""
    text = nms_text(iou, score_threshold, max_output)
    exe = nimble.compile(text, target="llvm")
    assert not exe.fallbacks, exe.fallbacks
    boxes = exact_overlap_boxes(rng, n)
    scores = rng.choice(NMS_SCORES, n) if n % 2 else rng.random(n).astype(np.float32)
    expected = nimble.interpret(nimble.parse(text), boxes, scores)[0]
    monkeypatch.setattr(NmsOp, "reference", None)  # the run below cannot fall back to it
    got = exe(boxes, scores)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, numpy_nms(boxes, scores, iou, score_threshold, max_output))


def test_compiled_nms_on_many_boxes(rng):
    from nimble.compile import compile_kernels
    from nimble.lowering.vm.native_kernels import NMS_KERNEL

    kernel = compile_kernels(NMS_KERNEL)["nms_cpu"]
    boxes, scores = _detections(rng, 5000)
    expected = numpy_nms(boxes, scores, 0.5, 0.05, 300)
    np.testing.assert_array_equal(cpu_vision.nms(kernel, boxes, scores, 0.5, 0.05, 300), expected)


def test_the_kernel_is_part_of_the_module(tmp_path, rng, monkeypatch):
    """Compiled with the module's kernels and saved with them: a loaded module runs it
    without LLVM optimising anything."""
    from nimble.runtime import llvm_jit

    text = nms_text(0.5, 0.05, 10)
    exe = nimble.compile(text, target="llvm")
    from nimble.runtime.vm_steps import native_kernel_of, outlined_op

    host = next(f for f in exe.vm.host_functions if native_kernel_of(f) == "nms_cpu")
    assert [k.name for k in exe.program.kernels] == ["nms_cpu"] and isinstance(outlined_op(host), NmsOp)
    assert exe.vm.native_kernels["nms_cpu"].fits(outlined_op(host))
    exe.save(tmp_path / "nms.nbc")
    boxes, scores = _detections(rng, 200)
    compiled = []
    original = llvm_jit.optimise
    monkeypatch.setattr(llvm_jit, "optimise", lambda *a, **k: compiled.append(1) or original(*a, **k))
    loaded = nimble.load(tmp_path / "nms.nbc")
    got = loaded(boxes, scores)
    assert not loaded.fallbacks and compiled == []
    np.testing.assert_array_equal(got, numpy_nms(boxes, scores, 0.5, 0.05, 10))


def test_other_dtypes_run_the_reference(rng):
    text = nms_text(0.5, dtype="f64")
    exe = nimble.compile(text, target="llvm")
    assert exe.fallbacks == ["host_0: graph.nms"]
    boxes, scores = _detections(rng, 50)
    boxes, scores = boxes.astype(np.float64), scores.astype(np.float64)
    np.testing.assert_array_equal(exe(boxes, scores), nimble.interpret(nimble.parse(text), boxes, scores)[0])


def _detections(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    xy = rng.uniform(0, 200, (n, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(4, 60, (n, 2))], 1).astype(np.float32)
    return boxes, rng.random(n).astype(np.float32)
