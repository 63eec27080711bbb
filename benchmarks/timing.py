"""Timing helpers shared by the benchmarks that time each runtime in a process of its own.

`best_time` warms a function up for `WARM_SECONDS` before timing it: pocl's threads
took ~100 launches to settle (a 3 x 3 conv, 64 channels at 56 x 56: launch + wait
0.66-0.84 ms over the first 50 launches, 0.55 after), and a server times the steady
state. `isolated` runs a script's `--child NAME FOLDER` mode once per name and turn,
the names taking turns, and keeps each name's best time (the last number the child
prints). `machine` names the CPU a run measured and the one Nimble compiled for.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence

WARM_SECONDS = 0.3


def best_time(fn: Callable[[], object], repeat: int, block: int = 1) -> float:
    """Best time of `repeat` x `block` calls, after calls for `WARM_SECONDS` (one at least)."""
    end = time.perf_counter() + WARM_SECONDS
    fn()
    while time.perf_counter() < end:
        fn()
    best = float("inf")
    for _ in range(repeat * block):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def isolated(script: str, names: Iterable[str], folder: str, threads: int, repeat: int, turns: int = 3,
             extra: Sequence[str] = ()) -> dict[str, float]:
    """Best time of each name, each timed alone by `script --child NAME FOLDER` in a process
    of its own, the names taking turns."""
    best = {name: float("inf") for name in names}
    for _ in range(turns):
        for name in best:
            command = [sys.executable, script, "--threads", str(threads), "--child", name, folder,
                       "--repeat", str(repeat), *extra]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            best[name] = min(best[name], float(out.split()[-1]))
    return best


def cpu_name() -> str:
    """The host CPU's marketing name (`/proc/cpuinfo`)."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def machine(cpu: str | None = None) -> str:
    """`cpu: <name> (<LLVM's name>, <ISA level>); nimble target: <target>`: what a
    benchmark line measured on and compiled for (`cpu`: the target, default the host)."""
    from nimble.runtime import cpu_target

    host, target = cpu_target.host(), cpu_target.resolve(cpu)
    return f"cpu: {cpu_name()} ({host.cpu}, {host.isa}); nimble target: {target.describe()}"


ISA_LIMITS: dict[str, dict[str, str]] = {
    "x86-64-v3": {"OPENBLAS_CORETYPE": "Haswell", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "avx": {"OPENBLAS_CORETYPE": "Sandybridge", "MKL_ENABLE_INSTRUCTIONS": "AVX", "ONEDNN_MAX_CPU_ISA": "AVX"},
    "x86-64-v2": {"OPENBLAS_CORETYPE": "Nehalem", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41"},
}
"""Environment that keeps OpenBLAS, MKL and oneDNN to an ISA level: the references then
run the same vector width as Nimble's code for that level (set before numpy loads)."""


def limit_references_to(isa: str) -> dict[str, str]:
    """Keep the reference libraries to `isa` (where they are not limited already);
    returns the variables set."""
    wanted = {k: v for k, v in ISA_LIMITS.get(isa, {}).items() if k not in os.environ}
    os.environ.update(wanted)
    return wanted
