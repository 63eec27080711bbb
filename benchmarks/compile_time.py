"""Time from `nimble.compile` to the first answer, with a cold and a warm kernel cache.

    python benchmarks/compile_time.py [--threads 1|2] [MODEL ...]

MODEL: a `.nb`, `.mlir` or `.onnx` file (default: the examples `lstm`, `bert`,
`resnet18`); `--dim N` sizes their `?` dims (default 1). Each model runs in a new
process twice: first with an empty kernel cache (cold: every kernel it launches
JIT-compiled), then with the cache the first filled (warm: a new process, as a user's
next run). Prints per run: `nimble.compile` (the passes), the first call (JIT of the
kernels it launches + the run), their sum, the JIT time and how many kernels came from
the cache.
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


def child(path: str, threads: int, dim: int) -> None:
    t0 = time.perf_counter()
    import nimble
    from nimble.run_cli import build_inputs

    t1 = time.perf_counter()
    exe = nimble.compile(path, threads=threads)
    t2 = time.perf_counter()
    values = build_inputs(exe, exe.entry, argparse.Namespace(input=[], dim=[str(dim)], seed=0, file=path))
    t3 = time.perf_counter()
    exe.run(*values)
    t4 = time.perf_counter()
    print(t1 - t0, t2 - t1, t4 - t3, exe.seconds_jit, len(exe.code.compiled), len(exe.code.from_cache))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=[str(EXAMPLES / f"{m}.nb") for m in ("lstm", "bert", "resnet18")])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--dim", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.models[0], args.threads, args.dim)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import machine

    print(f"{machine()}; threads: {args.threads}")
    print(f"{'model':16s} {'cache':5s} {'import':>7s} {'compile':>8s} {'1st call':>9s} {'total':>7s} {'JIT':>7s}  kernels")
    for model in args.models:
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "NIMBLE_CACHE_DIR": cache}
            for state in ("cold", "warm"):
                out = subprocess.run([sys.executable, __file__, "--child", model, "--threads", str(args.threads),
                                      "--dim", str(args.dim)], env=env, check=True, capture_output=True,
                                     text=True).stdout.split()
                imported, compiled, first, jit = map(float, out[:4])
                launched, cached = map(int, out[4:6])
                print(f"{Path(model).stem:16s} {state:5s} {imported:6.2f}s {compiled:7.2f}s {first:8.2f}s "
                      f"{compiled + first:6.2f}s {jit:6.2f}s  {launched} launched, {cached} from the cache", flush=True)


if __name__ == "__main__":
    main()
