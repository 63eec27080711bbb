"""Shared helpers: build one-op modules from MLIR text and run them in the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from nimble import interpret, parse

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--sweep", action="store_true",
                     help="also run the long sweeps (every lit test's input through every pipeline, ~12 min)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sweep: a long sweep over many inputs; runs with --sweep")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--sweep"):
        return
    skip = pytest.mark.skip(reason="a long sweep: run with --sweep")
    for item in items:
        if "sweep" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def kernel_cache_of_this_run(tmp_path_factory: pytest.TempPathFactory):
    """Compiled kernels cached in a directory of this test run only (runtime/kernel_cache.py):
    the tests go through the cache like any user, and never read a build of another run."""
    import os

    from nimble.runtime.kernel_cache import DIRECTORY_VARIABLE

    saved = os.environ.get(DIRECTORY_VARIABLE)
    os.environ[DIRECTORY_VARIABLE] = str(tmp_path_factory.mktemp("kernel-cache"))
    yield
    if saved is None:
        del os.environ[DIRECTORY_VARIABLE]
    else:
        os.environ[DIRECTORY_VARIABLE] = saved


SIZES = [1, 7, 16, 33]
"""Dynamic sizes every numeric test uses: 1, odd, a vector width, and one past it."""


def run_mlir(text: str, *args, entry: str = "main"):
    return interpret(parse(text), *args, entry=entry)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


_COMPILED: dict[tuple[str, str], object] = {}


def compile_mlir(text: str, target: str = "llvm"):
    """`nimble.compile` of `text` for `target`, once per text and target in a test run."""
    from nimble import compile

    if (text, target) not in _COMPILED:
        _COMPILED[text, target] = compile(text, target=target)
    return _COMPILED[text, target]


def run_compiled(text: str, *args, entry: str = "main", target: str = "llvm"):
    exe = compile_mlir(text, target)
    assert not exe.fallbacks, f"ops left to the host: {exe.fallbacks}"
    if target == "opencl":
        on_cpu = [k.name for k in exe.program.kernels if k.device != "opencl"]
        assert not on_cpu, f"kernels left on the CPU: {on_cpu}"
    return exe.run(*args)


@pytest.fixture(params=["reference", "llvm", "opencl"])
def run(request):
    """Run an MLIR module's `main` on the reference interpreter, or compiled for LLVM or
    for OpenCL (every kernel on the OpenCL device: pocl here)."""
    if request.param == "reference":
        return run_mlir
    return lambda text, *args, entry="main": run_compiled(text, *args, entry=entry, target=request.param)


def numpy_nms(boxes, scores, iou, score_threshold=None, max_output=None):
    """An independent greedy NMS: the whole IoU matrix first, then one pass."""
    b = boxes.astype(np.float64)
    x1, y1 = np.minimum(b[:, 0], b[:, 2]), np.minimum(b[:, 1], b[:, 3])
    x2, y2 = np.maximum(b[:, 0], b[:, 2]), np.maximum(b[:, 1], b[:, 3])
    iw = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    ih = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    inter = iw * ih
    area = (x2 - x1) * (y2 - y1)
    union = area[:, None] + area[None] - inter
    overlap = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0) > iou
    order = sorted(range(len(scores)), key=lambda i: (np.isnan(scores[i]), -scores[i] if not np.isnan(scores[i]) else 0, i))
    if score_threshold is not None:
        order = [i for i in order if scores[i] > np.float32(score_threshold)]
    keep, removed = [], np.zeros(len(scores), bool)
    for i in order:
        if max_output is not None and len(keep) >= max_output:
            break
        if not removed[i]:
            keep.append(i)
            removed |= overlap[i]
    return np.array(keep, np.int64)


NMS_SCORES = np.array([0.0, -0.0, 0.5, 0.9, 0.05, -1.0, np.inf, -np.inf, np.nan], np.float32)
"""Scores that test an NMS's order: ties, +-0, +-inf, NaN."""


def nms_text(iou: float, score_threshold: float | None = None, max_output: int | None = None,
             dtype: str = "f32") -> str:
    """A module whose `main` is one `graph.nms` over `dtype` boxes and scores."""
    extra = ("" if score_threshold is None else f", score_threshold = {score_threshold} : f64") + \
        ("" if max_output is None else f", max_output = {max_output} : i64")
    return f"""func.func @main(%boxes: tensor<?x4x{dtype}>, %scores: tensor<?x{dtype}>) -> tensor<?xi64> {{
  %keep = graph.nms %boxes, %scores {{iou_threshold = {iou} : f64{extra}}} : (tensor<?x4x{dtype}>, tensor<?x{dtype}>) -> tensor<?xi64>
  func.return %keep : tensor<?xi64>
}}"""


def exact_overlap_boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    """Integer boxes, either diagonal, some empty: IoUs of exactly 0.5 and 1.0 happen (an
    NMS threshold's knife edge)."""
    xy = rng.integers(0, 12, (n, 2))
    return np.concatenate([xy, xy + rng.integers(-2, 6, (n, 2))], 1).astype(np.float32)
