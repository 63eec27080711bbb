"""torchvision's classification families against ONNX Runtime, in one run.

    PYTHONPATH=DIR python benchmarks/zoo.py [--threads N] [--batch B ...] [--quick] [MODEL ...]

(DIR: where torchvision is installed apart, see `torchvision_models.py`.) Each model is
built from its constructor with random weights and exported with batch as a dynamic
axis (TorchScript exporter, opset 17), imported and compiled by Nimble (compile time
printed, kernel cache off), checked against ONNX Runtime on the same input at every
batch size (largest difference relative to the output's largest magnitude, which must
stay under 1e-4), then both are timed on it, each alone in a process of its own, the
two taking turns (best of N calls over all turns; `onnx_models.py` says why). Prints a
line per model and batch size with Nimble / ONNX Runtime time (< 1: Nimble faster),
then the geometric mean and the worst of those ratios. A model whose export, import or
compile fails, or whose answer differs, is listed with the reason and left out of them.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import traceback

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)
os.environ.setdefault("NIMBLE_CACHE_DIR", "")  # (cold compiles: the time printed is the whole compile)

import numpy as np

import nimble
from timing import isolated, machine

MODELS: dict[str, int] = {
    "resnet50": 224, "resnext50_32x4d": 224, "wide_resnet50_2": 224, "vgg16": 224, "squeezenet1_1": 224,
    "googlenet": 224, "inception_v3": 299, "mobilenet_v2": 224, "mobilenet_v3_small": 224, "mnasnet1_0": 224,
    "shufflenet_v2_x1_0": 224, "efficientnet_b0": 224, "efficientnet_v2_s": 224, "regnet_y_400mf": 224,
    "densenet121": 224, "convnext_tiny": 224, "vit_b_16": 224, "swin_t": 224, "maxvit_t": 224,
}
"""Model constructor -> image size: every family the real-vision-models issue names."""
TOLERANCE = 1e-4


def _first_line(e: BaseException) -> str:
    text = " ".join(line.strip() for line in str(e).strip().splitlines())
    return f"{type(e).__name__}: {text}"[:200]


def run(name: str, size: int, batches: list[int], folder: str, repeat: int) -> list[float]:
    """Nimble / ONNX Runtime time of `name` at each batch size (none if it fails)."""
    import onnxruntime as ort
    from torchvision_models import export

    try:
        path = export(name, folder, size)
    except Exception as e:  # noqa: BLE001 (the exporter's failures, whatever they are)
        print(f"{name:20s} exporter failed: {_first_line(e)}", flush=True)
        return []
    t0 = time.perf_counter()
    try:
        exe = nimble.compile(str(path), threads=THREADS)
    except Exception as e:  # noqa: BLE001 (an import or compile failure is this benchmark's result)
        print(f"{name:20s} Nimble failed: {_first_line(e)}", flush=True)
        if os.environ.get("ZOO_TRACEBACK"):
            traceback.print_exc()
        return []
    seconds = time.perf_counter() - t0
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    ratios = []
    rng = np.random.default_rng(0)
    for batch in batches:
        x = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
        want = session.run(None, {session.get_inputs()[0].name: x})[0]
        got = np.asarray(exe.run(x)[0])
        difference = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
        if got.shape != want.shape or not difference < TOLERANCE:
            print(f"{name:20s} batch {batch}: wrong answer (relative difference {difference:.2e})", flush=True)
            return []
        with tempfile.TemporaryDirectory() as work:
            os.symlink(path.resolve(), os.path.join(work, "model.onnx"))
            exe.save(os.path.join(work, "model.nbc"))
            np.save(os.path.join(work, "x.npy"), x)
            t = isolated(os.path.join(os.path.dirname(__file__), "onnx_models.py"), ["nimble", "ort"], work, THREADS,
                         repeat)
        ratios.append(t["nimble"] / t["ort"])
        # (Random weights can leave a model's answer independent of its input: ViT's zeroed
        # head; then the difference checks only the last layer.)
        weak = " (the same answer for every image: a weak check)" if batch > 1 and \
            float(np.max(np.ptp(want, axis=0))) <= 1e-6 * max(float(np.max(np.abs(want))), 1e-30) else ""
        print(f"{name:20s} batch {batch}: nimble {t['nimble'] * 1e3:8.2f} ms  onnxruntime {t['ort'] * 1e3:8.2f} ms  "
              f"nimble/ort {ratios[-1]:5.2f}  (compile {seconds:5.1f} s, difference {difference:.1e}){weak}", flush=True)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"default: {' '.join(MODELS)}")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--quick", action="store_true", help="fewer timed calls")
    parser.add_argument("--folder", help="where the exported models are kept (default: a temporary folder)")
    a = parser.parse_args()
    unknown = [m for m in a.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    print(f"{machine()}; threads: {THREADS}; batch sizes: {a.batch}", flush=True)
    ratios: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in a.models or list(MODELS):
            ratios[name] = run(name, MODELS[name], a.batch, a.folder or scratch, 5 if a.quick else 20)
    timed = [r for rs in ratios.values() for r in rs]
    left_out = [n for n, rs in ratios.items() if not rs]
    if timed:
        mean = math.exp(sum(map(math.log, timed)) / len(timed))
        worst = max((r, n) for n, rs in ratios.items() for r in rs)
        print(f"nimble/ort over {len(timed)} (model, batch) pairs: geometric mean {mean:.2f}, worst {worst[0]:.2f} "
              f"({worst[1]})")
    if left_out:
        print(f"left out: {', '.join(left_out)}")


if __name__ == "__main__":
    main()
