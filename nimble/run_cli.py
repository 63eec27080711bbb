"""nimble-run: compile a model for a target and run it on given or random inputs."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np
from xdsl.utils.exceptions import DiagnosticException, ParseError

from nimble.api import parse
from nimble.compile import TARGETS, compile
from nimble.frontend.errors import FrontendError
from nimble.interpret_cli import build_inputs, print_results
from nimble.reference import Interpreter, InterpreterError


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nimble-run", description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--target", default="llvm", choices=sorted(TARGETS))
    p.add_argument("--entry", default="main")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("--dynamic-size", type=int, default=7, help="size of every ? dim of random inputs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true", help="compare with the reference interpreter")
    args = p.parse_args(argv)
    try:
        module = parse(args.file)
        values = build_inputs(module, args)
        exe = compile(args.file, target=args.target, entry=args.entry)
        start = time.perf_counter()
        results = exe.run(*values)
        elapsed = time.perf_counter() - start
    except (ParseError, DiagnosticException, FrontendError, InterpreterError, ValueError, OSError) as e:
        print(f"nimble-run: error: {e}", file=sys.stderr)
        return 1
    print_results(results)
    print(f"compiled {len(exe.kernel_names)} kernels in {exe.stats.seconds_passes + exe.stats.seconds_llvm:.2f} s; "
          f"ran in {elapsed * 1e3:.2f} ms; host fallbacks: {len(exe.fallbacks)}")
    if args.check:
        expected = Interpreter(module, exe.host.base_dir).call(args.entry, values)
        worst = max((float(np.max(np.abs(np.asarray(r, np.float64) - np.asarray(e, np.float64))))
                     for r, e in zip(results, expected) if isinstance(r, np.ndarray) and r.size), default=0.0)
        print(f"max abs difference from the reference interpreter: {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
