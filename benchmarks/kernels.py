"""Compiled kernels against numpy/OpenBLAS (and PyTorch CPU when installed), same run.

    python benchmarks/kernels.py [--threads 1|2] [--quick] [--remainder auto|peeled|masked|all]
                                 [--cpu host|haswell|znver3|x86-64-v2|...]

Prints, per workload: Nimble's time, the reference's, the ratio (>1: Nimble faster),
GFLOP/s, the compile time (the passes, `nimble.compile`, and the JIT of the kernels the
calls launched, each compiled on its first launch, with their number) and the ISA level
Nimble compiled for. BLAS threads are pinned to `--threads` before numpy loads, so both
sides use the same number of cores; with `--cpu` naming a smaller ISA than the host's
(AVX2 code on an AVX-512 host), OpenBLAS, MKL and oneDNN are kept to that ISA too
(`timing.ISA_LIMITS`), so both sides use the same vector width.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

THREADS = 1
REMAINDER = "auto"
CPU = sys.argv[sys.argv.index("--cpu") + 1] if "--cpu" in sys.argv else None
if "--threads" in sys.argv:
    THREADS = int(sys.argv[sys.argv.index("--threads") + 1])
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import nimble  # noqa: E402
from nimble.runtime import cpu_target  # noqa: E402
from timing import ISA_LIMITS, limit_references_to, machine  # noqa: E402

ISA = cpu_target.resolve(CPU).isa
LIMITED = {k: os.environ[k] for k in ISA_LIMITS.get(ISA, {}) if k in os.environ}
if CPU is not None and limit_references_to(ISA):
    # The BLAS libraries read these when they load (numpy has loaded one): start again.
    os.execv(sys.executable, [sys.executable, *sys.argv])

try:  # optional: PyTorch CPU as a second reference
    import torch  # noqa: E402

    torch.set_num_threads(THREADS)
except ImportError:
    torch = None


def interleaved(fns: dict[str, object], repeat: int = 9, turn: int = 3) -> dict[str, float]:
    """Best time of each function, the functions taking turns of `turn` calls (a machine
    whose speed drifts during the run then affects all of them alike; within a turn, the
    threads another library leaves spinning after its calls, OpenMP's, OpenBLAS's or
    Nimble's workers, have gone quiet after the first call)."""
    best = {name: float("inf") for name in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            for _ in range(turn):
                t = time.perf_counter()
                fn()
                best[name] = min(best[name], time.perf_counter() - t)
    return best


def report(name: str, flops: float, nimble_s: float, refs: dict[str, float], compile_s: float,
           exe: nimble.Executable) -> None:
    ratios = "  ".join(f"{k} {v * 1e3:8.3f} ms (x{v / nimble_s:5.2f})" for k, v in refs.items())
    print(f"{name:34s} nimble {nimble_s * 1e3:8.3f} ms {flops / nimble_s / 1e9:7.1f} GF/s  {ratios}  "
          f"compile {compile_s:.2f} s + JIT {exe.seconds_jit:.2f} s ({len(exe.code.compiled)} kernels)  "
          f"[{exe.code.cpu.cpu}, {exe.code.cpu.isa}]", flush=True)


def gemm(m: int, k: int, n: int) -> None:
    text = f"""func.func @main(%a: tensor<?x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<?x{n}xf32> {{
  %c = graph.matmul %a, %b : (tensor<?x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<?x{n}xf32>
  func.return %c : tensor<?x{n}xf32>
}}"""
    t = time.perf_counter()
    exe = nimble.compile(text, threads=THREADS, remainder=REMAINDER, cpu=CPU)
    compile_s = time.perf_counter() - t
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-3, atol=1e-3)
    fns = {"nimble": lambda: exe(a, b), "numpy": lambda: a @ b}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fns["torch"] = lambda: ta @ tb
    times = interleaved(fns)
    report(f"gemm {m}x{k}x{n}", 2.0 * m * k * n, times.pop("nimble"), times, compile_s, exe)


DENSE_LAYERS = [(32, 256, 1024), (128, 256, 768), (128, 256, 1024), (128, 1024, 256), (128, 768, 3072),
                (128, 3072, 768)]
"""x @ W^T + b with a few rows (tokens): BERT's projections and feed-forward layers, 4 x
256 and 2 x 768, at 32 and 128 tokens."""


def dense(m: int, k: int, n: int) -> None:
    """A dense layer with its weight a constant of the module (as imported models have
    it), the rows known at run time."""
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    text = f"""func.func @main(%x: tensor<?x{k}xf32>, %b: tensor<{n}xf32>) -> tensor<?x{n}xf32> {{
  %w = graph.constant dense<"0x{w.tobytes().hex().upper()}"> : tensor<{n}x{k}xf32>
  %y = graph.dense %x, %w, %b : (tensor<?x{k}xf32>, tensor<{n}x{k}xf32>, tensor<{n}xf32>) -> tensor<?x{n}xf32>
  func.return %y : tensor<?x{n}xf32>
}}"""
    t = time.perf_counter()
    exe = nimble.compile(text, threads=THREADS, remainder=REMAINDER, cpu=CPU)
    compile_s = time.perf_counter() - t
    x = rng.standard_normal((m, k)).astype(np.float32)
    wt = np.ascontiguousarray(w.T)
    np.testing.assert_allclose(exe(x, b), x @ wt + b, rtol=1e-3, atol=1e-3)
    fns = {"nimble": lambda: exe(x, b), "numpy": lambda: x @ wt + b}
    if torch is not None:
        tx, tw, tb = torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)
        fns["torch"] = lambda: torch.nn.functional.linear(tx, tw, tb)
    times = interleaved(fns)
    report(f"dense {m}x{k}->{n}", 2.0 * m * k * n, times.pop("nimble"), times, compile_s, exe)


def lstm_cell(hidden: int) -> None:
    text = f"""func.func @main(%x: tensor<?x{hidden}xf32>, %h: tensor<?x{hidden}xf32>, %c: tensor<?x{hidden}xf32>,
                     %w: tensor<{4 * hidden}x{hidden}xf32>, %u: tensor<{4 * hidden}x{hidden}xf32>, %b: tensor<{4 * hidden}xf32>)
    -> (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>) {{
  %gx = graph.dense %x, %w, %b : (tensor<?x{hidden}xf32>, tensor<{4 * hidden}x{hidden}xf32>, tensor<{4 * hidden}xf32>) -> tensor<?x{4 * hidden}xf32>
  %gh = graph.dense %h, %u : (tensor<?x{hidden}xf32>, tensor<{4 * hidden}x{hidden}xf32>) -> tensor<?x{4 * hidden}xf32>
  %g = graph.add %gx, %gh : (tensor<?x{4 * hidden}xf32>, tensor<?x{4 * hidden}xf32>) -> tensor<?x{4 * hidden}xf32>
  %i, %f, %o, %z = graph.split %g {{axis = 1 : i64, num = 4 : i64}} : tensor<?x{4 * hidden}xf32> -> (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>)
  %si = graph.sigmoid %i : tensor<?x{hidden}xf32> -> tensor<?x{hidden}xf32>
  %sf = graph.sigmoid %f : tensor<?x{hidden}xf32> -> tensor<?x{hidden}xf32>
  %so = graph.sigmoid %o : tensor<?x{hidden}xf32> -> tensor<?x{hidden}xf32>
  %tz = graph.tanh %z : tensor<?x{hidden}xf32> -> tensor<?x{hidden}xf32>
  %fc = graph.mul %sf, %c : (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>) -> tensor<?x{hidden}xf32>
  %iz = graph.mul %si, %tz : (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>) -> tensor<?x{hidden}xf32>
  %c2 = graph.add %fc, %iz : (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>) -> tensor<?x{hidden}xf32>
  %tc = graph.tanh %c2 : tensor<?x{hidden}xf32> -> tensor<?x{hidden}xf32>
  %h2 = graph.mul %so, %tc : (tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>) -> tensor<?x{hidden}xf32>
  func.return %h2, %c2 : tensor<?x{hidden}xf32>, tensor<?x{hidden}xf32>
}}"""
    t = time.perf_counter()
    exe = nimble.compile(text, threads=THREADS, remainder=REMAINDER, cpu=CPU)
    compile_s = time.perf_counter() - t
    groups = {k.group for k in exe.vm.kernels}  # a no-stretch variant is the same group compiled twice
    assert len(groups) == 1, exe.kernel_names  # the whole cell is one kernel
    rng = np.random.default_rng(0)
    x, h, c = (rng.standard_normal((1, hidden)).astype(np.float32) for _ in range(3))
    w, u = (rng.standard_normal((4 * hidden, hidden)).astype(np.float32) * 0.05 for _ in range(2))
    b = rng.standard_normal(4 * hidden).astype(np.float32)

    def numpy_cell():
        g = x @ w.T + b + h @ u.T
        i, f, o, z = np.split(g, 4, axis=1)
        sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        c2 = sig(f) * c + sig(i) * np.tanh(z)
        return sig(o) * np.tanh(c2), c2

    h2, c2 = exe(x, h, c, w, u, b)
    np.testing.assert_allclose(h2, numpy_cell()[0], rtol=1e-4, atol=1e-5)
    fns = {"nimble": lambda: exe(x, h, c, w, u, b), "numpy": numpy_cell}
    if torch is not None:
        tx, th, tc, tw, tu, tb = (torch.from_numpy(v) for v in (x, h, c, w, u, b))

        def torch_cell():
            g = tx @ tw.T + tb + th @ tu.T
            i, f, o, z = g.chunk(4, 1)
            c2 = torch.sigmoid(f) * tc + torch.sigmoid(i) * torch.tanh(z)
            return torch.sigmoid(o) * torch.tanh(c2)

        fns["torch"] = torch_cell
    times = interleaved(fns, 21)
    report(f"lstm cell hidden {hidden} batch 1", 2.0 * 2 * 4 * hidden * hidden, times.pop("nimble"), times, compile_s, exe)


# ResNet-18's convolutions at batch 1, 224 x 224: (in, out, kernel, stride, input size).
RESNET18_CONVS = [(3, 64, 7, 2, 224), (64, 64, 3, 1, 56), (64, 128, 3, 2, 56), (64, 128, 1, 2, 56),
                  (128, 128, 3, 1, 28), (128, 256, 3, 2, 28), (128, 256, 1, 2, 28), (256, 256, 3, 1, 14),
                  (256, 512, 3, 2, 14), (256, 512, 1, 2, 14), (512, 512, 3, 1, 7)]


def conv(cin: int, cout: int, kernel: int, stride: int, size: int) -> None:
    """conv2d + bias + relu with "same" padding (kernel // 2), dynamic height and width."""
    pad = kernel // 2
    text = f"""func.func @main(%x: tensor<1x{cin}x?x?xf32>, %w: tensor<{cout}x{cin}x{kernel}x{kernel}xf32>, %b: tensor<{cout}xf32>) -> tensor<1x{cout}x?x?xf32> {{
  %y = graph.conv2d %x, %w, %b {{strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, {pad}>}} : (tensor<1x{cin}x?x?xf32>, tensor<{cout}x{cin}x{kernel}x{kernel}xf32>, tensor<{cout}xf32>) -> tensor<1x{cout}x?x?xf32>
  %r = graph.relu %y : tensor<1x{cout}x?x?xf32> -> tensor<1x{cout}x?x?xf32>
  func.return %r : tensor<1x{cout}x?x?xf32>
}}"""
    t = time.perf_counter()
    exe = nimble.compile(text, threads=THREADS, remainder=REMAINDER, cpu=CPU)
    compile_s = time.perf_counter() - t
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, cin, size, size)).astype(np.float32)
    w = (rng.standard_normal((cout, cin, kernel, kernel)) * 0.05).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    out = (size + 2 * pad - kernel) // stride + 1

    def numpy_conv():  # im2col + BLAS
        p = np.pad(x[0], ((0, 0), (pad, pad), (pad, pad)))
        cols = np.lib.stride_tricks.sliding_window_view(p, (kernel, kernel), axis=(1, 2))  # C,H,W,k,k
        cols = cols[:, ::stride, ::stride].transpose(0, 3, 4, 1, 2).reshape(cin * kernel * kernel, out * out)
        return np.maximum(w.reshape(cout, -1) @ cols + b[:, None], 0).reshape(1, cout, out, out)

    np.testing.assert_allclose(exe(x, w, b), numpy_conv(), rtol=1e-3, atol=1e-3)
    fns = {"nimble": lambda: exe(x, w, b), "numpy im2col": numpy_conv}
    if torch is not None:
        tx, tw, tb = (torch.from_numpy(v) for v in (x, w, b))
        fns["torch"] = lambda: torch.relu(torch.nn.functional.conv2d(tx, tw, tb, stride=stride, padding=pad))
    flops = 2.0 * cout * cin * kernel * kernel * out * out
    times = interleaved(fns)
    name = f"conv{kernel}x{kernel}/{stride} {cin}->{cout} {size}x{size}"
    report(name, flops, times.pop("nimble"), times, compile_s, exe)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--remainder", choices=["auto", "peeled", "masked", "all"], default="auto",
                        help="how vector loops finish sizes that are not a multiple of the width")
    parser.add_argument("--cpu", help="the CPU to compile for (default: the host)")
    args = parser.parse_args()
    global REMAINDER
    for remainder in (["auto", "peeled", "masked"] if args.remainder == "all" else [args.remainder]):
        REMAINDER = remainder
        run(args)


def run(args: argparse.Namespace) -> None:
    limits = " ".join(f"{k}={v}" for k, v in LIMITED.items())
    print(f"{machine(CPU)}\nthreads={args.threads} remainder={REMAINDER} numpy {np.__version__} "
          f"torch {torch.__version__ if torch else 'not installed'}{'; references limited: ' + limits if limits else ''}")
    sizes = [(256, 256, 256)] if args.quick else [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (1000, 777, 513)]
    for m, k, n in sizes:
        gemm(m, k, n)
    for shape in ([(128, 256, 1024)] if args.quick else DENSE_LAYERS):
        dense(*shape)
    for hidden in ([256] if args.quick else [256, 1024]):
        lstm_cell(hidden)
    for shape in ([(64, 64, 3, 1, 14)] if args.quick else RESNET18_CONVS):
        conv(*shape)


if __name__ == "__main__":
    main()
