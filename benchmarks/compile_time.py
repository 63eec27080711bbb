"""Time from `nimble.compile` to the first answer: cold, warm, and from a saved module.

    python benchmarks/compile_time.py [--threads 1|2] [--jit eager|lazy] [MODEL ...]

MODEL: a `.nb`, `.mlir` or `.onnx` file, `tv:NAME` for torchvision's model NAME
exported to ONNX (`torchvision_models.py`; batch dynamic), or `chain:N` for a chain of N
elementwise ops drawn at random from tanh, relu, neg and sigmoid (fusion cuts it into
kernels of at most 256 ops, each different); default: the examples
`lstm`, `bert`, `resnet18`, and ResNet-50, EfficientNet-B0 and DenseNet-121 when
torchvision imports. `--dim N` sizes their `?` dims (default 1). Each model runs in a
new process three times: with an empty cache (cold: every kernel compiled), with the
cache the first filled (warm: a new process, as a user's next run), and as
`nimble-run` of the bytecode module the cold run saved (ahead: no compiler, no JIT).
Prints per run: the import of Nimble, `nimble.compile` (passes, and the JIT in eager
mode), the first call, their sum (import excluded), the JIT time (eager: what the JIT
took after the passes; it begins during them, on the cores they leave free), how many
kernels began compiling during the passes and how many came from the cache; for
`ahead`, the whole `nimble-run` process (import included).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def child(path: str, threads: int, dim: int, jit: str, save: str) -> None:
    t0 = time.perf_counter()
    import nimble
    from nimble.run_cli import build_inputs

    t1 = time.perf_counter()
    exe = nimble.compile(path, threads=threads, jit=jit)
    t2 = time.perf_counter()
    values = build_inputs(exe, exe.entry, argparse.Namespace(input=[], dim=[str(dim)], seed=0, file=path))
    t3 = time.perf_counter()
    exe.run(*values)
    t4 = time.perf_counter()
    print(t1 - t0, t2 - t1, t4 - t3, exe.seconds_jit, len(exe.code.compiled), len(exe.code.from_cache),
          len(exe.code.streamed))
    if save:
        exe.save(save)


def default_models() -> list[str]:
    models = [str(EXAMPLES / f"{m}.nb") for m in ("lstm", "bert", "resnet18")]
    from torchvision_models import available

    return models + ([f"tv:{m}" for m in TORCHVISION] if available() else [])


TORCHVISION = ("resnet50", "efficientnet_b0", "densenet121")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=1)
    parser.add_argument("--jit", choices=("eager", "lazy"), default="eager")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--save", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.models[0], args.threads, args.dim, args.jit, args.save)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import machine

    print(f"{machine()}; threads: {args.threads}; jit: {args.jit}")
    print(f"{'model':16s} {'cache':5s} {'import':>7s} {'compile':>8s} {'1st call':>9s} {'total':>7s} {'JIT':>7s}  kernels")
    with tempfile.TemporaryDirectory() as folder:
        for model in args.models or default_models():
            if model.startswith("tv:"):
                from torchvision_models import export

                model = str(export(model[3:], folder))
            elif model.startswith("chain:"):
                model = chain(int(model[6:]), folder)
            bench(model, folder, args)


def chain(n: int, folder: str) -> str:
    import numpy as np

    ops = ["graph.tanh", "graph.relu", "graph.neg", "graph.sigmoid"]
    pattern = np.random.default_rng(0).integers(0, len(ops), n)
    lines = [f"  %x{i + 1} = {ops[k]} %x{i} : tensor<?x8xf32> -> tensor<?x8xf32>" for i, k in enumerate(pattern)]
    path = Path(folder) / f"chain{n}.mlir"
    path.write_text("func.func @main(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {\n" + "\n".join(lines)
                    + f"\n  func.return %x{n} : tensor<?x8xf32>\n}}\n")
    return str(path)


def bench(model: str, folder: str, args: argparse.Namespace) -> None:
    name = Path(model).stem
    saved = os.path.join(folder, f"{name}.nbc")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NIMBLE_CACHE_DIR": cache}
        for state in ("cold", "warm"):
            out = subprocess.run([sys.executable, __file__, "--child", model, "--threads", str(args.threads),
                                  "--dim", str(args.dim), "--jit", args.jit, "--save", saved if state == "cold" else ""],
                                 env=env, check=True, capture_output=True, text=True).stdout.split()
            imported, compiled, first, jit = map(float, out[:4])
            launched, cached, during = map(int, out[4:7])
            print(f"{name:16s} {state:5s} {imported:6.2f}s {compiled:7.2f}s {first:8.2f}s "
                  f"{compiled + first:6.2f}s {jit:6.2f}s  {launched} compiled or loaded ({during} begun during the "
                  f"passes), {cached} from the cache", flush=True)
    run = [sys.executable, "-c", "import sys; from nimble.run_cli import main; sys.exit(main(sys.argv[1:]))", saved,
           "--dim", str(args.dim), "--warmup", "0", "--threads", str(args.threads)]
    t0 = time.perf_counter()
    subprocess.run(run, check=True, capture_output=True, cwd=folder)
    print(f"{name:16s} {'ahead':5s} nimble-run {Path(saved).name}: {time.perf_counter() - t0:.2f}s from start to "
          f"answer ({os.path.getsize(saved) / 1e6:.0f} MB)", flush=True)


if __name__ == "__main__":
    main()
