"""Timing helpers shared by the benchmarks that time each runtime in a process of its own.

`best_time` warms a function up for `WARM_SECONDS` before timing it: pocl's threads
took ~100 launches to settle (a 3 x 3 conv, 64 channels at 56 x 56: launch + wait
0.66-0.84 ms over the first 50 launches, 0.55 after), and a server times the steady
state. `isolated` runs a script's `--child NAME FOLDER` mode once per name and turn,
the names taking turns, and keeps each name's best time (the last number the child
prints).
"""

from __future__ import annotations

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
