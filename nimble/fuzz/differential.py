"""Differential fuzzing: random programs (`generate`) run by the reference interpreter
and by every compiled configuration must agree.

    nimble-fuzz-differential --time 600 --out fuzz-findings

Each program is compiled once per configuration (`CONFIGS`: LLVM on 1 and 2 threads, LLVM
for SSE4.2-only CPUs, OpenCL, the LLVM module saved to `.nbc` and loaded back, and LLVM
with every access checked, `runtime/bounds.py`: one out of bounds is an error) and run
at two bindings of its symbols (sizes among `SIZES`, 1 included). A result that differs
from the reference (shape, dtype, or values beyond `RTOL`/`ATOL` scaled by the result's
magnitude), a compiled run that fails where the reference ran (or runs where the reference
refused), and a compile error are findings: each is shrunk (outputs dropped, ops bypassed,
sizes lowered while it still fails the same way) and saved as a `.mlir` file whose first
line says how to rerun it. Programs run in a worker process, so a crash or a hang (past
`--timeout`) is a finding too, not the end of the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nimble import __version__

SIZES = (1, 2, 3, 5, 8, 17)
RTOL, ATOL = 1e-3, 1e-3
CONFIGS: dict[str, dict[str, Any]] = {
    "llvm": {"target": "llvm", "threads": 1},
    "llvm-2threads": {"target": "llvm", "threads": 2},
    "llvm-sse4.2": {"target": "llvm", "threads": 1, "cpu": "x86-64-v2"},
    "opencl": {"target": "opencl", "threads": 1},
    "nbc": {"target": "llvm", "threads": 2, "saved": True},
    "llvm-checked": {"target": "llvm", "threads": 2, "check_bounds": True},
}


@dataclass
class Finding:
    kind: str  # "mismatch", "compiled error", "compiled ran", "compile error", "reference crash", "crash", "hang"
    config: str
    sizes: dict[str, int]
    message: str


# -- running one program ------------------------------------------------------------------

def arguments(module: Any, sizes: dict[str, int], rng: np.random.Generator) -> list[np.ndarray]:
    """Random f32 inputs for `@main`'s parameters with the symbols bound to `sizes`."""
    from xdsl.dialects import func

    from nimble.dialects.shape_functions import symbolic_dims

    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    args = []
    for t in main.function_type.inputs.data:
        dims = [d if isinstance(d, int) else d.evaluate(sizes) for d in symbolic_dims(t)]
        args.append(rng.standard_normal(dims).astype(np.float32))
    return args


def compare(got: Sequence[Any], expected: Sequence[Any],
            excused: Sequence[np.ndarray] | None = None) -> str | None:
    """Why `got` is not `expected` (None: it is, within tolerance, or differs only where
    `excused`: per result, the elements the reference cannot pin down, `unstable`)."""
    if len(got) != len(expected):
        return f"{len(got)} results, the reference has {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return f"result #{i}: shape {g.shape}, the reference's is {e.shape}"
        if g.dtype != e.dtype:
            return f"result #{i}: dtype {g.dtype}, the reference's is {e.dtype}"
        close = _close(g, e)
        if excused is not None and excused[i].shape == close.shape:
            close |= excused[i]
        if not np.all(close):
            at = tuple(int(j) for j in np.argwhere(~close)[0])
            return f"result #{i} differs at {at}: {g[at]!r}, the reference has {e[at]!r} ({int((~close).sum())} of {e.size})"
    return None


def _close(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per element, whether `got` matches `expected` (floats within `RTOL`, and `ATOL`
    scaled by the largest finite magnitude; NaN matches NaN; others equal)."""
    if expected.dtype.kind == "f":
        finite = np.abs(expected[np.isfinite(expected)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        return np.isclose(got, expected, rtol=RTOL, atol=ATOL * scale, equal_nan=True)
    return np.asarray(got == expected)


PERTURBATIONS, PERTURBATION, ULPS = 6, 1e-5, 2
"""How many nudged runs of the reference `unstable` makes, how far it moves the inputs
(relative: ~100 float32 ulps), and by how many units in the last place at most it moves
each float result of each op."""


def unstable(module: Any, args: Sequence[np.ndarray], expected: Sequence[Any], seed: int) -> list[np.ndarray]:
    """Per result, the elements where the reference itself moves beyond tolerance when
    its inputs move by `PERTURBATION` and each op's results by up to `ULPS` ulps: an
    ill-conditioned element (a comparison near a tie, `floor` of a value one ulp below an
    integer, `cos(exp(exp(x)))`), where two correct float32 computations (another libm,
    an FMA, another summation order) may differ. A compiled result that differs only
    there is not a finding (found 2026-12-06: `equal(gelu(exp(x)), exp(x))`,
    `floor(tanh(pow(x, x)))`, `cos(exp(exp(x)))`)."""
    from nimble.reference import Interpreter

    class Nudged(Interpreter):
        def _evaluate(self, op: Any, values: list[Any]) -> Sequence[Any]:
            return [_nudge(r, rng) for r in super()._evaluate(op, values)]

    rng = np.random.default_rng([seed, 2])
    masks = [np.zeros(np.shape(e), bool) for e in expected]
    for _ in range(PERTURBATIONS):
        nudged = [(a * (1 + PERTURBATION * rng.uniform(-1, 1, a.shape))).astype(a.dtype) for a in args]
        try:
            again = Nudged(module).call("main", nudged)
        except Exception:  # noqa: BLE001, S112 (refused at a nudged input: says nothing about this one)
            continue
        for mask, a, e in zip(masks, again, expected):
            a, e = np.asarray(a), np.asarray(e)
            if a.shape == e.shape and a.dtype == e.dtype:
                mask |= ~_close(a, e)
    return masks


def _nudge(value: Any, rng: np.random.Generator) -> Any:
    """A float array moved by up to `ULPS` ulps per element (infinities and NaNs kept)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        return value
    steps = rng.integers(-ULPS, ULPS + 1, value.shape) * np.spacing(np.abs(value))
    return np.where(np.isfinite(value), value + steps.astype(value.dtype), value)


def check(text: str, config: str, bindings: Sequence[dict[str, int]], seed: int) -> Finding | None:
    """The first way `config` disagrees with the reference on `text` at `bindings`."""
    import nimble
    from nimble.api import parse

    module = parse(text)
    try:
        exe = _compiled(text, config)
    except Exception as e:  # noqa: BLE001 (every exception is the finding)
        return Finding("compile error", config, {}, f"{type(e).__name__}: {_first_line(e)}")
    for sizes in bindings:
        args = arguments(module, sizes, np.random.default_rng(seed))
        try:
            expected = nimble.interpret(module, *[a.copy() for a in args])
        except Exception as e:  # noqa: BLE001
            if not _clear(e):
                return Finding("reference crash", "reference", sizes, f"{type(e).__name__}: {_first_line(e)}")
            try:
                exe.run(*args)
            except Exception:  # noqa: BLE001, S112 (both refuse: they agree)
                continue
            return Finding("compiled ran", config, sizes, f"the reference refused: {_first_line(e)}")
        try:
            got = exe.run(*args)
        except Exception as e:  # noqa: BLE001
            return Finding("compiled error", config, sizes, f"{type(e).__name__}: {_first_line(e)}")
        if compare(got, expected) is not None:
            why = compare(got, expected, unstable(module, args, expected, seed))
            if why is not None:
                return Finding("mismatch", config, sizes, why)
    return None


def _compiled(text: str, config: str) -> Any:
    import nimble

    options = dict(CONFIGS[config])
    saved = options.pop("saved", False)
    checked = options.pop("check_bounds", False)
    before = os.environ.get("NIMBLE_CHECK_BOUNDS")
    os.environ["NIMBLE_CHECK_BOUNDS"] = "1" if checked else "0"  # (every access checked: runtime/bounds.py)
    try:
        exe = nimble.compile(text, **options)
    finally:
        if before is None:
            del os.environ["NIMBLE_CHECK_BOUNDS"]
        else:
            os.environ["NIMBLE_CHECK_BOUNDS"] = before
    if not saved:
        return exe
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "program.nbc")
        exe.save(path)
        return nimble.load(path, threads=options.get("threads"))


def _clear(e: Exception) -> bool:
    """Whether `e` is one of Nimble's own errors (not a stray Python exception)."""
    return type(e).__module__.startswith(("nimble.", "xdsl.utils.exceptions"))


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else type(e).__name__


# -- shrinking ----------------------------------------------------------------------------

def shrink(text: str, finding: Finding, seed: int, fails: Callable[[str, dict[str, int]], bool] | None = None,
           ) -> tuple[str, dict[str, int]]:
    """A smaller program (and sizes) that still fails as `finding` did: outputs dropped,
    ops bypassed (their result replaced by an operand or a parameter of its type), sizes
    lowered, while `fails` holds."""
    from xdsl.dialects import func

    from nimble.api import parse

    if fails is None:
        def fails(candidate: str, sizes: dict[str, int]) -> bool:
            try:
                again = check(candidate, finding.config, [sizes] if sizes else _bindings(seed), seed)
            except Exception:  # noqa: BLE001 (a candidate the parser or verifier refuses)
                return False
            return again is not None and again.kind == finding.kind
    sizes = dict(finding.sizes)
    progress = True
    while progress:
        progress = False
        for candidate in _smaller(parse(text), func):
            if fails(candidate, sizes):
                text, progress = candidate, True
                break
        for name, value in list(sizes.items()):
            for smaller in (s for s in SIZES if s < value):
                if fails(text, {**sizes, name: smaller}):
                    sizes[name], progress = smaller, True
                    break
    return text, sizes


def _smaller(module: Any, func: Any) -> Any:
    """Programs one step smaller than `module`, as text: each with one output dropped, or
    one op's uses sent to a value of the same type defined before it, and dead ops gone."""
    from xdsl.dialects.builtin import TensorType

    main = _main(module, func)
    ret = main.body.block.last_op
    for i in range(len(ret.operands)):
        if len(ret.operands) > 1:
            yield _rewritten(module, lambda m, i=i: _drop_output(m, func, i))
    ops = list(main.body.block.ops)[:-1]
    for position in range(len(ops) - 1, -1, -1):
        op = ops[position]
        if len(op.results) != 1 or not isinstance(op.results[0].type, TensorType):
            continue  # (an index or a shape replaced would change types downstream that stay as they were)
        earlier = [v for o in ops[:position] for v in o.results] + list(main.body.block.args)
        for value in [v for v in earlier if v.type == op.results[0].type][-2:]:
            yield _rewritten(module, lambda m, p=position, v=value, e=earlier: _bypass(m, func, p, e.index(v)))


def _rewritten(module: Any, change: Callable[[Any], None]) -> str:
    copy = module.clone()
    change(copy)
    _dead_code(copy)
    return str(copy)


def _main(module: Any, func: Any) -> Any:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")


def _drop_output(module: Any, func: Any, index: int) -> None:
    main = _main(module, func)
    ret = main.body.block.last_op
    values = [v for i, v in enumerate(ret.operands) if i != index]
    ret.operands = values
    main.function_type = func.FunctionType.from_lists(main.function_type.inputs.data, [v.type for v in values])


def _bypass(module: Any, func: Any, position: int, replacement: int) -> None:
    main = _main(module, func)
    ops = list(main.body.block.ops)[:-1]
    earlier = [v for o in ops[:position] for v in o.results] + list(main.body.block.args)
    ops[position].results[0].replace_all_uses_with(earlier[replacement])


def _dead_code(module: Any) -> None:
    from xdsl.traits import is_side_effect_free

    changed = True
    while changed:
        changed = False
        for op in list(module.walk(reverse=True)):
            if op.results and all(not r.uses for r in op.results) and is_side_effect_free(op) and op.parent_op() is not None:
                op.detach()
                op.erase()
                changed = True


# -- the campaign -------------------------------------------------------------------------

def _bindings(seed: int) -> list[dict[str, int]]:
    from nimble.fuzz.values import SYMBOLS

    rng = np.random.default_rng([seed, 1])
    first = {s: int(rng.choice(SIZES)) for s in SYMBOLS}
    second = {s: int(rng.choice([v for v in SIZES if v != first[s]])) for s in SYMBOLS}
    return [first, second]


def run_one(seed: int, configs: Sequence[str], out: Path | None, max_ops: int) -> dict[str, Any]:
    """Generate program `seed`, check it in every configuration; findings shrunk and saved."""
    from nimble.fuzz.generate import ProgramGenerator

    program = ProgramGenerator(np.random.default_rng(seed), max_ops).program()
    text = program.text
    findings = []
    for config in configs:
        finding = check(text, config, _bindings(seed), seed)
        if finding is None:
            continue
        if finding.kind == "reference crash":
            small, sizes = text, finding.sizes
        else:
            small, sizes = shrink(text, finding, seed)
        findings.append({"kind": finding.kind, "config": finding.config, "message": finding.message,
                         "file": save(out, seed, finding, small, sizes) if out else None})
        if finding.kind == "reference crash":
            break
    return {"seed": seed, "ops": sorted(program.ops), "findings": findings}


def save(out: Path, seed: int, finding: Finding, text: str, sizes: dict[str, int]) -> str:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{seed}-{finding.config}.mlir"
    header = (f"// nimble-fuzz-differential --replay {path.name} --config {finding.config} "
              f"--sizes {json.dumps(sizes, separators=(',', ':'))}\n// {finding.kind}: {finding.message}\n")
    path.write_text(header + text + "\n")
    return str(path)


def _worker(args: argparse.Namespace) -> int:
    """Read seeds from stdin, one per line; write one JSON line per program."""
    out = Path(args.out) if args.out else None
    for line in sys.stdin:
        seed = int(line)
        try:
            result = run_one(seed, args.config, out, args.max_ops)
        except Exception as e:  # noqa: BLE001 (the fuzzer's own slip: reported, and the run goes on)
            result = {"seed": seed, "ops": [], "findings": [{"kind": "fuzzer error", "config": "?",
                                                              "message": f"{type(e).__name__}: {_first_line(e)}"}]}
        print(json.dumps(result), flush=True)
    return 0


class _Worker:
    def __init__(self, args: argparse.Namespace):
        command = [sys.executable, "-m", "nimble.fuzz.differential", "--worker", "--max-ops", str(args.max_ops),
                   *(["--out", os.path.abspath(args.out)] if args.out else []), *(f"--config={c}" for c in args.config)]
        # (run from the temporary directory: in a checkout's root its `nimble/` folder would
        # shadow the installed package)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())

    def run(self, seed: int, timeout: float) -> dict[str, Any]:
        import select

        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(f"{seed}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.close()
            return {"seed": seed, "ops": [], "findings": [{"kind": "hang", "config": "?", "message": f"no answer in {timeout:.0f} s"}]}
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            return {"seed": seed, "ops": [], "findings": [{"kind": "crash", "config": "?", "message": f"the worker died (exit {code})"}]}
        return json.loads(line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nimble-fuzz-differential", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--count", type=int, help="programs to run (default: until --time)")
    p.add_argument("--time", type=float, default=60.0, help="seconds to run (default 60)")
    p.add_argument("--seed", type=int, default=0, help="the first program's seed")
    p.add_argument("--config", action="append", choices=sorted(CONFIGS), help="configurations (default: all)")
    p.add_argument("--max-ops", type=int, default=10)
    p.add_argument("--out", help="folder for shrunk findings (.mlir)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds one program may take")
    p.add_argument("--replay", metavar="FILE.mlir", help="check one saved program (with --config and --sizes)")
    p.add_argument("--sizes", type=json.loads, default=None, help='the symbols\' sizes, as JSON: {"n":3,"m":1}')
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.config = args.config or list(CONFIGS)
    if args.worker:
        return _worker(args)
    if args.replay:
        return _replay(args)
    from nimble.dialects.graph import Graph
    from nimble.fuzz.samplers import NOT_GENERATED

    start, worker, programs, covered = time.perf_counter(), None, 0, Counter()
    findings: list[dict[str, Any]] = []
    seed = args.seed
    try:
        while (args.count is None or programs < args.count) and \
                (args.count is not None or time.perf_counter() - start < args.time):
            worker = worker or _Worker(args)
            result = worker.run(seed, args.timeout)
            if any(f["kind"] in ("crash", "hang") for f in result["findings"]):
                worker = None
            programs += 1
            covered.update(result["ops"])
            for f in result["findings"]:
                findings.append({"seed": seed, **f})
                print(f"seed {seed}: {f['kind']} ({f['config']}): {f['message']}" + (f" -> {f['file']}" if f.get("file") else ""),
                      flush=True)
            seed += 1
    except KeyboardInterrupt:
        pass
    finally:
        if worker is not None:
            worker.close()
    elapsed = time.perf_counter() - start
    total = len(list(Graph.operations))
    print(f"{programs} programs in {elapsed:.0f} s ({programs / max(elapsed, 1e-9):.2f}/s), seeds {args.seed}-{seed - 1}, "
          f"configs {', '.join(args.config)}")
    print(f"op coverage: {len(covered)} of {total} graph ops ({100 * len(covered) / total:.0f}%); not generated: "
          f"({', '.join(f'{k}: {v}' for k, v in NOT_GENERATED.items())})")
    print(f"findings: {len(findings)}" + "".join(f"\n  seed {f['seed']}: {f['kind']} ({f['config']}): {f['message']}"
                                                 for f in findings))
    return 1 if findings else 0


def _replay(args: argparse.Namespace) -> int:
    text = Path(args.replay).read_text()
    failed = 0
    for config in args.config:
        finding = check(text, config, [args.sizes] if args.sizes else _bindings(args.seed), args.seed)
        print(f"{config}: " + ("agrees with the reference" if finding is None else f"{finding.kind}: {finding.message}"))
        failed += finding is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
