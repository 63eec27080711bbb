"""The default thread count on a loaded machine: never much slower than one thread.

    python benchmarks/under_load.py [--busy 2] [--calls 160] [--rounds 5]

Compiles the LSTM example with `threads=1` and with the default, then times `--calls`
small calls (batch 1-4, 5 time steps) of each, alternating, `--rounds` times: first on
an idle machine, then with `--busy` processes spinning on the CPU (as other jobs on a
shared host would). Prints the median time of each and the ratio default / threads=1,
with the CPU it ran on.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def calls(count: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((512, 192)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(512) * 0.1).astype(np.float32)
    out = []
    for i in range(count):
        n = 1 + i % 4
        out.append([rng.standard_normal(s).astype(np.float32) for s in [(5, n, 64), (n, 128), (n, 128)]] + [w, b])
    return out


def timed(exe, inputs) -> float:
    t = time.perf_counter()
    for args in inputs:
        exe.run(*args)
    return time.perf_counter() - t


def measure(exes: dict[str, object], inputs, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in exes}
    for r in range(rounds):
        for name in (list(exes) if r % 2 == 0 else list(exes)[::-1]):
            times[name].append(timed(exes[name], inputs))
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--busy", type=int, default=2)
    p.add_argument("--calls", type=int, default=160)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    import nimble
    from timing import machine

    print(machine())
    exes = {"threads=1": nimble.compile(EXAMPLES / "lstm.nb", threads=1),
            "default": nimble.compile(EXAMPLES / "lstm.nb")}
    inputs = calls(args.calls)
    for exe in exes.values():
        timed(exe, inputs)  # (warm: every shape recorded once)
    for load in (0, args.busy):
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
        try:
            time.sleep(0.5)
            result = measure(exes, inputs, args.rounds)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        print(f"{load} busy processes: threads=1 {result['threads=1'] * 1e3:.1f} ms, default (threads="
              f"{exes['default'].vm.threads}) {result['default'] * 1e3:.1f} ms for {args.calls} calls: "
              f"default / threads=1 = {result['default'] / result['threads=1']:.2f}")


if __name__ == "__main__":
    main()
