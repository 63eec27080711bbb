"""Models as people export them (tests/model_zoo.py), timed against ONNX Runtime.

    python benchmarks/exported_models.py [--threads N] [--exporter torchscript|dynamo] [--quick] [MODEL ...]

Each model is exported once with dynamic batch and lengths, compiled once by Nimble,
checked against ONNX Runtime at every size, then both are timed at each size, each
alone in a process of its own (see onnx_models.py: why), taking turns, best of N calls.
Prints the CPU, each model's times and the ratio (> 1: Nimble is faster), and the
geometric mean of the ratios. Needs torch and transformers (onnxscript for dynamo).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import nimble  # noqa: E402
from timing import best_time, isolated, machine  # noqa: E402

SIZES = [(1, 8), (4, 24)]
"""(batch, length) pairs timed (GPT-2 with past reads length + length + 2 of its 64 positions)."""


def child(runtime: str, folder: str, repeat: int, size: int) -> None:
    """In a process of its own: time one runtime on the model and inputs in `folder`."""
    inputs = dict(np.load(os.path.join(folder, f"inputs{size}.npz")))
    if runtime == "nimble":
        exe = nimble.load(os.path.join(folder, "model.nbc"), threads=THREADS)
        args = [inputs[f"input{k}"] for k in range(len(inputs))]
        fn = lambda: exe(*args)  # noqa: E731
    else:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options, providers=["CPUExecutionProvider"])
        fn = lambda: session.run(None, inputs)  # noqa: E731
    print(best_time(fn, repeat))


def bench(name: str, exporter: str, repeat: int) -> list[float]:
    """Ratios ONNX Runtime time / Nimble time at each size (empty if not exportable)."""
    import onnxruntime as ort

    from model_zoo import MODELS, export

    spec = MODELS[name]
    if exporter in spec.limits:
        print(f"{name:28s} not exported: {spec.limits[exporter]}", flush=True)
        return []
    ratios = []
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        names = export(name, exporter, path)
        exe = nimble.compile(path, threads=THREADS)
        exe.save(os.path.join(folder, "model.nbc"))
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        for k, (batch, length) in enumerate(SIZES):
            inputs = spec.inputs(batch, length, rng)
            want = session.run(None, dict(zip(names, inputs)))[0]
            np.testing.assert_allclose(exe.run(*inputs)[0], want, rtol=1e-3, atol=1e-3 * np.abs(want).max())
            np.savez(os.path.join(folder, f"inputs{k}.npz"), **dict(zip(names, inputs)))
            t = isolated(__file__, ["nimble", "ort"], folder, THREADS, repeat, extra=["--size", str(k)])
            shape = "x".join(str(d) for d in inputs[0].shape)
            ratio = t["ort"] / t["nimble"]
            ratios.append(ratio)
            print(f"{name:28s} {shape:12s} nimble {t['nimble'] * 1e3:8.3f} ms   onnxruntime {t['ort'] * 1e3:8.3f} ms"
                  f"   x{ratio:5.2f}", flush=True)
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="models of tests/model_zoo.py (default: all)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--exporter", choices=("torchscript", "dynamo"), default="torchscript")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("RUNTIME", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        child(*a.child, a.repeat, a.size)
        return
    # The zoo beside the tests; this folder off the path (its kernels.py would shadow the
    # `kernels` package transformers imports).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.path.insert(0, os.path.join(here, "..", "tests"))
    from model_zoo import MODELS

    print(f"{machine()}; threads: {THREADS}, exporter: {a.exporter}")
    ratios = [r for name in a.models or list(MODELS) for r in bench(name, a.exporter, 15 if a.quick else 60)]
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"geometric mean of ONNX Runtime time / Nimble time over {len(ratios)} runs: x{mean:.2f}")


if __name__ == "__main__":
    main()
