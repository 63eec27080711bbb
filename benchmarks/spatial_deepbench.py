"""DeepBench inference RNN tasks on the spatial accelerator model, against this CPU.

    python benchmarks/spatial_deepbench.py [--quick] [--error-steps N] [--machine SPEC]

For each task (batch 1; DeepBench's inference LSTM and GRU kernels, input size = hidden
size) and each weight precision (f32, bf16, int8):

- the model is compiled for the spatial target (`nimble.spatial.compile_spatial`) with the
  search at the task's size; printed: the chosen design (par of the hidden loop and of
  the reduction, where the weights live), PCUs and PMUs used, and the *estimated*
  latency of one run (the model's cycles at its clock; weights already on chip);
- its numerical error against the f32 reference interpreter, from functional execution
  of the program (CPU backend) over the first `--error-steps` steps (all of them when
  the task is shorter): max |h - h_ref| and that over max |h_ref|;
- the same task compiled for the CPU backend (`nimble.compile(target="llvm")`, f32) and
  *measured* (best of up to 3 runs), and the estimated speedup of the accelerator over
  this CPU; the geometric mean per precision closes the table.

Estimated and measured numbers are labelled as such: the accelerator is a model.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import nimble
from timing import machine
from nimble import interpret, parse
from nimble.lowering.spatial.dse import REPORT_ATTR
from nimble.lowering.spatial.model import estimate, parse_machine
from nimble.spatial import compile_spatial

# DeepBench (github.com/baidu-research/DeepBench), inference RNN kernels at batch 1:
# (cell, hidden, time steps).
TASKS = [("lstm", 512, 25), ("lstm", 1024, 25), ("lstm", 2048, 25), ("lstm", 1536, 50), ("lstm", 256, 150),
         ("gru", 512, 1), ("gru", 1024, 1500), ("gru", 1536, 375), ("gru", 2048, 375), ("gru", 2560, 375),
         ("gru", 2816, 750)]
QUICK = [("lstm", 512, 25), ("gru", 512, 1), ("lstm", 256, 150)]
PRECISIONS = ("f32", "bf16", "int8")


def lstm_text(h: int, i: int) -> str:
    return f"""
def @cell(%x: f32[1, {i}], %h: f32[1, {h}], %c: f32[1, {h}], %w: f32[{4 * h}, {i + h}], %b: f32[{4 * h}]) -> (f32[1, {h}], f32[1, {h}]) {{
  let %i, %f, %o, %u = split(dense(concat(%x, %h, axis=1), %w, %b), axis=1, num=4)
  let %c2 = sigmoid(%f) * %c + sigmoid(%i) * tanh(%u)
  (sigmoid(%o) * tanh(%c2), %c2)
}}

def @main(%xs: f32[t, 1, {i}], %h0: f32[1, {h}], %c0: f32[1, {h}], %w: f32[{4 * h}, {i + h}], %b: f32[{4 * h}]) -> f32[1, {h}] {{
  let %steps = dynshape.dim(%xs, 0)
  let %k, %h, %c = while (%k = index(0), %h = %h0, %c = %c0) cond {{ %k < %steps }} do {{
    let %h2, %c2 = @cell(%xs[%k], %h, %c, %w, %b)
    (%k + 1, %h2, %c2)
  }}
  %h
}}
"""


def gru_text(h: int, i: int) -> str:
    return f"""
def @cell(%x: f32[1, {i}], %h: f32[1, {h}], %wx: f32[{3 * h}, {i}], %wh: f32[{3 * h}, {h}], %bx: f32[{3 * h}], %bh: f32[{3 * h}]) -> f32[1, {h}] {{
  let %rx, %zx, %nx = split(dense(%x, %wx, %bx), axis=1, num=3)
  let %rh, %zh, %nh = split(dense(%h, %wh, %bh), axis=1, num=3)
  let %r = sigmoid(%rx + %rh)
  let %z = sigmoid(%zx + %zh)
  (1.0 - %z) * tanh(%nx + %r * %nh) + %z * %h
}}

def @main(%xs: f32[t, 1, {i}], %h0: f32[1, {h}], %wx: f32[{3 * h}, {i}], %wh: f32[{3 * h}, {h}], %bx: f32[{3 * h}], %bh: f32[{3 * h}]) -> f32[1, {h}] {{
  let %steps = dynshape.dim(%xs, 0)
  let %k, %h = while (%k = index(0), %h = %h0) cond {{ %k < %steps }} do {{
    (%k + 1, @cell(%xs[%k], %h, %wx, %wh, %bx, %bh))
  }}
  %h
}}
"""


def inputs(cell: str, h: int, steps: int, rng: np.random.Generator) -> list[np.ndarray]:
    """PyTorch's initialisation: weights uniform in +-1/sqrt(hidden); inputs N(0, 1)."""
    bound = 1 / math.sqrt(h)

    def u(*shape: int) -> np.ndarray:
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    xs = rng.standard_normal((steps, 1, h)).astype(np.float32)
    h0 = np.zeros((1, h), np.float32)
    if cell == "lstm":
        return [xs, h0, np.zeros((1, h), np.float32), u(4 * h, 2 * h), u(4 * h)]
    return [xs, h0, u(3 * h, h), u(3 * h, h), u(3 * h), u(3 * h)]


def _short(design: str) -> str:
    """`foreach(1) par 1, foreach(512) par 64, reduce(1024) par 2, w_sram in SRAM` ->
    `hu 64, ru 2, w SRAM` (the batch loop of size 1 left out)."""
    pars = [int(p) for t, p in re.findall(r"foreach\((\d+)\) par (\d+)", design) if t != "1"]
    rus = re.findall(r"reduce\(\d+\) par (\d+)", design)
    places = re.findall(r"(\w+?)(?:_sram)? in (SRAM|DRAM)", design)
    where = ", ".join(f"{n} {w}" for n, w in places)
    return f"hu {','.join(map(str, pars))}, ru {','.join(rus)}, {where}"


def timed(fn, limit: float = 3.0, repeat: int = 3) -> float:
    best, spent = float("inf"), 0.0
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        took = time.perf_counter() - t
        best, spent = min(best, took), spent + took
        if spent > limit:
            break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="three small tasks")
    parser.add_argument("--error-steps", type=int, default=25, help="steps over which the error is measured")
    parser.add_argument("--machine", default="", help="machine parameters, e.g. pcus=128,pmus=128")
    args = parser.parse_args()
    accelerator = parse_machine(args.machine)
    print(f"accelerator model: {accelerator.describe()}")
    print(f"{machine()}; {os.cpu_count()} cores, nimble.compile(target='llvm'), f32, measured\n")
    header = (f"{'task':<16} {'weights':<5} {'design (par hidden, par reduce, weights)':<44} {'PCU':>4} {'PMU':>4} "
              f"{'est. us':>10} {'max err':>9} {'rel err':>8} {'CPU ms':>9} {'est. speedup':>12}")
    print(header)
    print("-" * len(header))
    speedups: dict[str, list[float]] = {p: [] for p in PRECISIONS}
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        for cell, hidden, steps in (QUICK if args.quick else TASKS):
            path = Path(tmp) / f"{cell}_{hidden}.nb"
            path.write_text((lstm_text if cell == "lstm" else gru_text)(hidden, hidden))
            values = inputs(cell, hidden, steps, rng)
            cpu = nimble.compile(path, target="llvm")
            cpu_s = timed(lambda: cpu(*values))
            short = [values[0][:min(steps, args.error_steps)], *values[1:]]
            reference = interpret(parse(path), *short)[0]
            for precision in PRECISIONS:
                exe = compile_spatial(path, weights=precision, machine=args.machine,
                                      sizes={"steps": steps, "xs": (steps, 1, hidden)})
                (program,) = exe.programs
                report = program.attributes[REPORT_ATTR].data
                design = next(line for line in report.splitlines() if line.startswith("chosen: "))[8:]
                est = estimate(program, accelerator, {"steps": str(steps), "xs": f"{steps}x1x{hidden}"})
                got = exe(*short)
                err = float(np.abs(got - reference).max())
                rel = err / float(np.abs(reference).max())
                speedup = cpu_s / (est.run_us * 1e-6)
                speedups[precision].append(speedup)
                design = _short(design)
                print(f"{cell} {hidden}/{steps:<7} {precision:<5} {design:<44} {est.pcus:>4} {est.pmus:>4} "
                      f"{est.run_us:>10.1f} {err:>9.2e} {rel:>8.1e} {cpu_s * 1e3:>9.2f} {speedup:>11.1f}x",
                      flush=True)
    print()
    for precision, values in speedups.items():
        geo = math.exp(sum(math.log(v) for v in values) / len(values))
        print(f"geometric mean of the estimated speedup over this CPU, {precision} weights: {geo:.1f}x")
    print("\nThe seed paper (Plasticine, DeepBench inference RNNs) reports a 30x geometric-mean speedup over")
    print("a V100 GPU and 2x over an FPGA design (Brainwave); these numbers are against this CPU, from a model.")


if __name__ == "__main__":
    sys.exit(main())
