"""OpenCL kernels and models against the LLVM backend, same shapes, same run.

    python benchmarks/opencl.py [--threads N] [--quick] [--device SPEC]

Kernels (GEMM, conv2d 3x3): the generated OpenCL kernel with its operands already in
device memory (launch + wait) against the LLVM kernel on host arrays (`--threads`
chunks; pocl uses every core of the machine). Models (ResNet-18, the detection head):
whole calls on the `llvm`, `opencl` and `hetero` targets, host arrays in and out (so the
device targets pay their copies). Ratios >1 mean OpenCL is faster.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import nimble  # noqa: E402
from nimble.runtime.opencl import ClTensor  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def best_of(fns: dict[str, object], repeat: int, block: int = 3) -> dict[str, float]:
    """Best time of each function, the functions taking turns in blocks of `block`
    calls (drift hits all alike; a block lets a runtime's worker threads, which sleep
    while the other side runs, wake up before the calls that count)."""
    best = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            for _ in range(block):
                t = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t)
    return best


def kernel_runner(exe: nimble.Executable, args: list[np.ndarray], out_shape: tuple[int, ...]):
    """Launch the executable's one kernel directly (operands resident where it runs)."""
    (entry,) = exe.vm.kernels
    if entry.device == "opencl":
        runtime = entry.runtime
        inputs = [runtime.to_device(a) for a in args]
        out = ClTensor(runtime.alloc(int(np.prod(out_shape)) * 4), 0, out_shape, np.float32)

        def run():
            entry.launch(inputs, [out], 1, None, None)
            runtime.queue.finish()
        return run, lambda: out.to_host()
    out = np.empty(out_shape, np.float32)
    return (lambda: entry.launch(args, [out], exe.vm.threads, exe.vm.pool, None)), (lambda: out)


def kernel_case(name: str, text: str, args: list[np.ndarray], out_shape: tuple[int, ...], flops: float,
                repeat: int, device: str | None) -> None:
    runners = {}
    results = {}
    for target in ("llvm", "opencl"):
        exe = nimble.compile(text, target=target, threads=THREADS, opencl_device=device)
        run, result = kernel_runner(exe, args, out_shape)
        runners[target] = run
        results[target] = result
    times = best_of(runners, repeat)
    for target in runners:
        runners[target]()
    np.testing.assert_allclose(results["opencl"](), results["llvm"](), rtol=1e-3, atol=1e-3)
    llvm, ocl = times["llvm"], times["opencl"]
    print(f"{name:30s} llvm {llvm * 1e3:8.3f} ms {flops / llvm / 1e9:6.1f} GF/s   opencl {ocl * 1e3:8.3f} ms "
          f"{flops / ocl / 1e9:6.1f} GF/s   opencl/llvm speed x{llvm / ocl:5.2f}", flush=True)


def gemm(n: int, repeat: int, device: str | None, rng) -> None:
    text = f"""func.func @main(%a: tensor<?x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<?x{n}xf32> {{
  %c = graph.matmul %a, %b : (tensor<?x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<?x{n}xf32>
  func.return %c : tensor<?x{n}xf32>
}}"""
    args = [rng.standard_normal((n, n)).astype(np.float32) for _ in range(2)]
    kernel_case(f"gemm {n}x{n}x{n}", text, args, (n, n), 2.0 * n**3, repeat, device)


def conv(c: int, size: int, repeat: int, device: str | None, rng) -> None:
    text = f"""func.func @main(%x: tensor<1x{c}x?x?xf32>, %w: tensor<{c}x{c}x3x3xf32>) -> tensor<1x{c}x?x?xf32> {{
  %y = graph.conv2d %x, %w {{strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, groups = 1 : i64}} : (tensor<1x{c}x?x?xf32>, tensor<{c}x{c}x3x3xf32>) -> tensor<1x{c}x?x?xf32>
  func.return %y : tensor<1x{c}x?x?xf32>
}}"""
    args = [rng.standard_normal((1, c, size, size)).astype(np.float32),
            (rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32)]
    kernel_case(f"conv3x3 {c}ch {size}x{size}", text, args, (1, c, size, size), 2.0 * c * c * 9 * size * size,
                repeat, device)


def model_case(name: str, args: list, repeat: int, device: str | None) -> None:
    exes = {t: nimble.compile(EXAMPLES / f"{name}.nb", target=t, threads=THREADS, opencl_device=device)
            for t in ("llvm", "opencl", "hetero")}
    outputs = {t: exe.run(*args) for t, exe in exes.items()}
    for t in ("opencl", "hetero"):
        for got, want in zip(outputs[t], outputs["llvm"]):
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    times = best_of({t: (lambda e=exe: e.run(*args)) for t, exe in exes.items()}, repeat)
    on_device = {t: sum(k.device == "opencl" for k in exe.program.kernels) for t, exe in exes.items()}
    print(f"{name:30s} llvm {times['llvm'] * 1e3:8.2f} ms   opencl {times['opencl'] * 1e3:8.2f} ms "
          f"(x{times['llvm'] / times['opencl']:4.2f}, {on_device['opencl']} kernels on the device)   "
          f"hetero {times['hetero'] * 1e3:8.2f} ms (x{times['llvm'] / times['hetero']:4.2f}, "
          f"{on_device['hetero']} on the device)", flush=True)


def resnet_args(rng, size: int) -> list[np.ndarray]:
    shapes = [(64, 3, 7, 7), (64,)] + [(64, 64, 3, 3), (64,)] * 4
    for cin, cout in ((64, 128), (128, 256), (256, 512)):
        shapes += [(cout, cin, 3, 3), (cout,), (cout, cout, 3, 3), (cout,), (cout, cin, 1, 1), (cout,)]
        shapes += [(cout, cout, 3, 3), (cout,)] * 2
    shapes += [(1000, 512), (1000,)]
    image = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    return [image] + [(rng.standard_normal(s) * math.sqrt(2 / max(1, np.prod(s[1:])))).astype(np.float32)
                      for s in shapes]


def detection_args(rng, size: int) -> list[np.ndarray]:
    feat = rng.standard_normal((1, 64, size, size)).astype(np.float32)
    anchors = (np.abs(rng.standard_normal((size * size, 4))) * size).astype(np.float32)
    anchors[:, 2:] += anchors[:, :2]
    w = [(rng.standard_normal(s) * 0.05).astype(np.float32) for s in ((1, 64, 3, 3), (1,), (4, 64, 3, 3), (4,))]
    return [feat, anchors, *w]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default=None, help="OpenCL device (P:D or part of its name)")
    a = parser.parse_args()
    rng = np.random.default_rng(0)
    repeat = 3 if a.quick else 7
    from nimble.runtime.opencl import OpenCLRuntime

    print(f"OpenCL device: {OpenCLRuntime.get(a.device).description}; LLVM kernels on {THREADS} threads")
    for n in (128, 256) if a.quick else (128, 256, 512):
        gemm(n, repeat, a.device, rng)
    for c, size in ((32, 28),) if a.quick else ((32, 56), (64, 56)):
        conv(c, size, repeat, a.device, rng)
    model_case("resnet18", resnet_args(rng, 64 if a.quick else 224), repeat, a.device)
    model_case("detection", detection_args(rng, 16 if a.quick else 48), repeat, a.device)


if __name__ == "__main__":
    main()
