"""OpenCL kernels and models against the LLVM backend, same shapes, same run.

    python benchmarks/opencl.py [--threads N] [--quick] [--device SPEC]

Kernels (GEMM, conv2d 3x3): the generated OpenCL kernel with its operands already in
device memory (launch + wait) against the LLVM kernel on host arrays (`--threads`
chunks; pocl uses every core of the machine). Models (ResNet-18, the detection head):
whole calls on the `llvm`, `opencl` and `hetero` targets, host arrays in and out (so the
device targets pay their copies), and on `opencl` with the weights kept on the device
(`Executable.to_device`) where every kernel runs there. A kernel on the device is also
timed `STREAM` launches at a time before one wait, as a model queues them. Ratios >1
mean OpenCL is faster.

The parent compiles every target and checks they agree; each target is then timed
alone in a process of its own (its module saved and loaded there), the targets taking
turns: in one process pocl's threads and the LLVM kernels' workers took each other's
cores (GEMM 512^3 on 2 threads: LLVM 1.12 ms after OpenCL calls against 0.59 alone).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402
from timing import best_time, isolated, machine  # noqa: E402

import nimble  # noqa: E402
from nimble.runtime.opencl import ClTensor  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


STREAM = 10
"""Launches queued back to back before one wait (`+stream`), as a model's run queues its
kernels: the per-launch cost of waking the driver's threads and waiting is then paid
once for all of them."""


def kernel_runner(exe: nimble.Executable, args: list[np.ndarray], out_shape: tuple[int, ...], launches: int = 1):
    """Launch the executable's one kernel directly (operands resident where it runs);
    on the device `launches` times, then wait. A CPU executable of several kernels (the
    LLVM conv: a Winograd weight transform, then the conv) is timed by whole calls."""
    if len(exe.vm.kernels) > 1 and all(k.device == "cpu" for k in exe.vm.kernels):
        made: list[np.ndarray] = []

        def call():
            made[:] = exe.run(*args)
        return call, lambda: np.asarray(made[0])
    (entry,) = exe.vm.kernels
    if entry.device == "opencl":
        runtime = entry.runtime
        inputs = [runtime.to_device(a) for a in args]
        out = ClTensor(runtime.alloc(int(np.prod(out_shape)) * 4), 0, out_shape, np.float32)

        def run():
            for _ in range(launches):
                entry.launch(inputs, [out], 1, None, None)
            runtime.queue.finish()
        return run, lambda: out.to_host()
    out = np.empty(out_shape, np.float32)
    return (lambda: entry.launch(args, [out], exe.vm.threads, exe.vm.pool, None)), (lambda: out)


def child(target: str, folder: str, repeat: int, device: str | None) -> None:
    """In a process of its own: time one target's saved module on the saved inputs
    (`TARGET+resident`: every argument but the first kept on the device; `+stream`:
    `STREAM` kernel launches queued before one wait, the time per launch)."""
    meta = json.loads(Path(folder, "case.json").read_text())
    args = list(np.load(Path(folder, "args.npz")).values())
    target, _, variant = target.partition("+")
    exe = nimble.load(Path(folder, f"{target}.nbc"), threads=THREADS, opencl_device=device)
    calls = 1
    if meta["kind"] == "kernel":
        run, _ = kernel_runner(exe, args, tuple(meta["out_shape"]), STREAM if variant == "stream" else 1)
        calls = STREAM if variant == "stream" else 1
    else:
        if variant == "resident":
            args = args[:1] + [exe.to_device(a) for a in args[1:]]

        def run():
            exe.run(*args)
    print(best_time(run, repeat, block=3) / calls)


def targets_isolated(exes: dict[str, nimble.Executable], args: list[np.ndarray], meta: dict, repeat: int,
                     device: str | None) -> dict[str, float]:
    """Best time of each target (and variant), each timed alone in a child process."""
    names = [*exes, *(f"{target}+{variant}" for variant in ("resident", "stream") for target in meta.get(variant, []))]
    with tempfile.TemporaryDirectory() as folder:
        for target, exe in exes.items():
            exe.save(Path(folder, f"{target}.nbc"))
        np.savez(Path(folder, "args.npz"), *args)
        Path(folder, "case.json").write_text(json.dumps(meta))
        return isolated(__file__, names, folder, THREADS, repeat, extra=["--device", device] if device else [])


def kernel_case(name: str, text: str, args: list[np.ndarray], out_shape: tuple[int, ...], flops: float,
                repeat: int, device: str | None) -> None:
    exes = {t: nimble.compile(text, target=t, threads=THREADS, opencl_device=device) for t in ("llvm", "opencl")}
    results = {}
    for target, exe in exes.items():
        run, result = kernel_runner(exe, args, out_shape)
        run()
        results[target] = result()
    np.testing.assert_allclose(results["opencl"], results["llvm"], rtol=1e-3, atol=1e-3)
    times = targets_isolated(exes, args, {"kind": "kernel", "out_shape": list(out_shape), "stream": ["opencl"]}, repeat,
                     device)
    llvm, ocl, stream = times["llvm"], times["opencl"], times["opencl+stream"]
    print(f"{name:24s} llvm {llvm * 1e3:7.3f} ms {flops / llvm / 1e9:5.1f} GF/s   opencl {ocl * 1e3:7.3f} ms "
          f"{flops / ocl / 1e9:5.1f} GF/s x{llvm / ocl:4.2f}   {STREAM} queued: {stream * 1e3:7.3f} ms each "
          f"x{llvm / stream:4.2f}", flush=True)


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
    # Weights kept on the device, as a server would: on `opencl` when every kernel is there.
    resident = ["opencl"] if all(k.device == "opencl" for k in exes["opencl"].program.kernels) else []
    times = targets_isolated(exes, args, {"kind": "model", "resident": resident}, repeat, device)
    on_device = {t: sum(k.device == "opencl" for k in exe.program.kernels) for t, exe in exes.items()}
    weights = (f"   opencl, weights on the device {times['opencl+resident'] * 1e3:8.2f} ms "
               f"(x{times['llvm'] / times['opencl+resident']:4.2f})") if resident else ""
    print(f"{name:30s} llvm {times['llvm'] * 1e3:8.2f} ms   opencl {times['opencl'] * 1e3:8.2f} ms "
          f"(x{times['llvm'] / times['opencl']:4.2f}, {on_device['opencl']} kernels on the device)   "
          f"hetero {times['hetero'] * 1e3:8.2f} ms (x{times['llvm'] / times['hetero']:4.2f}, "
          f"{on_device['hetero']} on the device){weights}", flush=True)


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
    parser.add_argument("--child", nargs=2, metavar=("TARGET", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        child(*a.child, a.repeat, a.device)
        return
    rng = np.random.default_rng(0)
    repeat = 3 if a.quick else 7
    from nimble.runtime.opencl import OpenCLRuntime

    print(f"OpenCL device: {OpenCLRuntime.get(a.device).description}; LLVM kernels on {THREADS} threads; {machine()}")
    for n in (128, 256) if a.quick else (128, 256, 512):
        gemm(n, repeat, a.device, rng)
    for c, size in ((32, 28),) if a.quick else ((32, 56), (64, 56)):
        conv(c, size, repeat, a.device, rng)
    model_case("resnet18", resnet_args(rng, 64 if a.quick else 224), repeat, a.device)
    model_case("detection", detection_args(rng, 16 if a.quick else 48), repeat, a.device)


if __name__ == "__main__":
    main()
