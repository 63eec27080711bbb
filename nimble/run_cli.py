"""nimble-run: compile a model (or load a bytecode module) and run it.

    nimble-run examples/lstm.nb --dim 5 --check
    nimble-run model.nbc --input xs=xs.npy --random-inputs --repeat 100 --profile

Inputs not given with `--input NAME=FILE.npy` are random (`--random-inputs` says so
explicitly); their `?` dims are `--dim N` (every one), `--dim NAME=N` (a named dim, or
`PARAM.AXIS=N`). Timed runs (`--repeat`, `--profile`) come after `--warmup` untimed
ones (default 1: the first run builds each kernel's launch plan and may start the
worker threads, which a steady state does not pay).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ShapedType
from xdsl.utils.exceptions import DiagnosticException, ParseError

from nimble import __version__, adt_values
from nimble.dialects.device import Device
from nimble.dialects.graph.adt import AdtOp, AdtType
from nimble.frontend.errors import FrontendError
from nimble.interpret_cli import print_results, random_value
from nimble.diagnostics import OpError
from nimble.pipelines import JIT_MODES, TARGETS
from nimble.reference import InterpreterError, where
from nimble.runtime.executable import Executable, load
from nimble.runtime.opencl import OpenCLError
from nimble.dialects import vm
from nimble.runtime.bytecode import BytecodeError, dtype_of

BYTECODE_SUFFIX = ".nbc"


def _errors() -> tuple[type[Exception], ...]:
    """What is reported in one line, not as a traceback: the errors of bad input. (The
    ONNX importer's, only if it was imported: running a `.nbc` imports no compiler.)"""
    errors = [ParseError, DiagnosticException, FrontendError, InterpreterError, BytecodeError, ValueError, OSError,
              OpenCLError]
    onnx = sys.modules.get("nimble.frontend.onnx.common")
    return (*errors, onnx.OnnxImportError) if onnx is not None else tuple(errors)


def compile(*args: Any, **kwargs: Any) -> Executable:  # noqa: A001 (nimble.compile, imported when used)
    from nimble.compile import compile as compile_model

    return compile_model(*args, **kwargs)


def _located(e: Exception) -> str:
    """An error's message, with the source location of the op when it names one."""
    return f"{where(e.op)}{e}" if isinstance(e, OpError) else str(e)


def _dims(items: Sequence[str]) -> tuple[int, dict[str, int]]:
    default, named = 7, {}
    for item in items:
        name, equals, value = item.rpartition("=")
        if not value.isdigit() or (equals and not name):
            raise ValueError(f"--dim takes N or NAME=N (N at least 0), not '{item}'")
        if name:
            named[name] = int(value)
        else:
            default = int(value)
    return default, named


def build_inputs(exe: Executable, entry: str, args: argparse.Namespace) -> list[Any]:
    """The entry's arguments from `--input` files, else random values."""
    if entry not in exe.signatures:
        raise InterpreterError(f"no function @{entry} with a known signature in {args.file}")
    signature, names, dim_names = exe.signatures[entry]
    for item in args.input:
        if "=" not in item or item.startswith("="):
            raise ValueError(f"--input takes NAME=FILE.npy or NAME=SHAPExTYPE[=VALUES], not '{item}'")
    given = dict(item.split("=", 1) for item in args.input)
    default, sized = _dims(args.dim)
    ranks = [len(t.get_shape()) if isinstance(t, ShapedType) else 0 for t in signature.inputs.data]
    known = set(dim_names.values()) | {f"{name}.{a}" for name, rank in zip(names, ranks) for a in range(rank)}
    for unknown in (name for name in sized if name not in known):
        listed = ", ".join(sorted(set(dim_names.values()))) or "none"
        raise InterpreterError(
            f"--dim {unknown}=...: @{entry} has no dim '{unknown}' (named dims: {listed}; any dim is also "
            f"PARAM.AXIS, e.g. {names[0] if names else 'x'}.0)")
    rng = np.random.default_rng(args.seed)
    values = []
    for i, (t, name, rank) in enumerate(zip(signature.inputs.data, names, ranks)):
        if isinstance(t, AdtType):
            values.append(_adt_input(exe, t, name, given.pop(name, None), default, rng))
            continue
        if name in given:
            values.append(input_value(name, given.pop(name)))
            continue
        sizes = [sized.get(dim_names.get(f"{i}.{a}", ""), sized.get(f"{name}.{a}", default)) for a in range(rank)]
        values.append(random_value(t, default, rng, sizes))
    if given:
        raise InterpreterError(f"@{entry} has no parameter named {', '.join(given)}")
    return values


def _adt_input(exe: Executable, t: AdtType, name: str, spec: str | None, size: int, rng: np.random.Generator) -> Any:
    """An ADT input: from the JSON file `spec` (`nimble/adt_values.py`), else a random
    value of about `size` constructors."""
    host = exe.vm.interpreter.module if exe.vm.interpreter is not None else None
    adts = {op.sym_name.data: op for op in (host.ops if host is not None else ()) if isinstance(op, AdtOp)}
    if spec is None:
        return adt_values.random(adts, t, size, rng, lambda field: random_value(field, size, rng))
    if not spec.endswith(".json"):
        raise ValueError(f"--input {name}: an input of type {t} is a .json file, not '{spec}'")
    try:
        with open(spec) as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"--input {name}: {spec}:{e.lineno}:{e.colno}: {e.msg}") from None
    return adt_values.from_json(adts, t, data, name, input_value)


INPUT_TYPES = {name: dtype_of(name) for name in vm.DTYPES if name != "index"}
"""Element types an inline `--input` names (the VM's tensor types, spelled as
iree-run-module spells them)."""
INLINE = re.compile(r"^((?:\d+x)*)(" + "|".join(INPUT_TYPES) + r")(?:=(.*))?$")


def input_value(name: str, spec: str) -> Any:
    """An `--input NAME=...` value: a `.npy` file; `SHAPExTYPE[=VALUES]` written inline as
    iree-run-module takes it (`2x3xf32=1,2,3,4,5,6`, `4x8xf32=0.5` fills, `4xi64` zeros,
    `f32=2` a 0-d array); or an integer (an index parameter)."""
    m = INLINE.match(spec)
    if m is None:
        if re.fullmatch(r"-?\d+", spec):
            return int(spec)
        if not os.path.isfile(spec):
            raise ValueError(f"--input {name}: '{spec}' is neither a .npy file, nor SHAPExTYPE[=VALUES] "
                             f"(types: {', '.join(INPUT_TYPES)}), nor an integer")
        return np.load(spec, allow_pickle=False)
    shape = tuple(int(d) for d in m.group(1).split("x") if d)
    dtype = INPUT_TYPES[m.group(2)]
    if m.group(3) is None:
        return np.zeros(shape, dtype)
    try:
        items = [float(v) for v in m.group(3).split(",")]
    except ValueError:
        raise ValueError(f"--input {name}: the values '{m.group(3)}' are not numbers") from None
    count = int(np.prod(shape, dtype=np.int64))
    if len(items) == 1:
        return np.full(shape, items[0], dtype)
    if len(items) != count:
        raise ValueError(f"--input {name}: {len(items)} values for shape {list(shape)} ({count} elements)")
    return np.array(items).astype(dtype).reshape(shape)


def progress_line(quiet: bool) -> Callable[[int, int], None] | None:
    """A line on the terminal counting the kernels compiled (none off a terminal)."""
    if quiet or not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\rcompiling kernels: {done}/{total}", end=end, file=sys.stderr, flush=True)

    return show


def _tolerance(text: str) -> float:
    """An argparse type: a finite number at least 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a tolerance (a finite number at least 0)")
    return value


def _at_least(least: int, most: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [least, most]."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
        if value < least or (most is not None and value > most):
            bound = f"from {least} to {most}" if most is not None else f"at least {least}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: {bound}")
        return value

    return parse


MAX_THREADS = 1024


def _summary(exe: Executable, args: argparse.Namespace, bytecode: bool, t_compile: float, times: list[float]) -> str:
    """The line after the results: how the executable was made, how long a run took."""
    if bytecode:
        what = "loaded"
    elif exe.stats.from_program_cache:
        what = f"{len(exe.kernel_names)} kernels from the program cache"
    else:
        what = f"compiled {len(exe.kernel_names)} kernels"
    if exe.opencl is not None:
        on_device = sum(k.device == Device.OPENCL for k in exe.program.kernels)
        what += f" ({on_device} on OpenCL: {exe.opencl.runtime.description})"
    warm = f", after {args.warmup} untimed" if args.warmup > 0 else ""
    cached = f", {len(exe.code.from_cache)} of them from the kernel cache" if exe.code.from_cache else ""
    when = " at first launch" if args.jit == "lazy" else ""
    jit = "" if bytecode or exe.stats.from_program_cache else \
        f" ({len(exe.code.compiled)} JIT-compiled{when} in {exe.seconds_jit:.2f} s{cached})"
    if exe.code.streamed and jit:
        jit = f" ({len(exe.code.compiled)} JIT-compiled: {len(exe.code.streamed)} begun during the passes, " \
              f"{exe.seconds_jit:.2f} s after them{cached})"
    return f"{what} in {t_compile:.2f} s{jit}; ran in {np.median(times) * 1e3:.3f} ms (median of {len(times)}{warm}); " \
           f"host fallbacks: {len(exe.fallbacks)}"


def _compile_options(p: argparse.ArgumentParser) -> None:
    """The options nimble-run and nimble-compile share: what to compile for, and how to
    report it."""
    p.add_argument("--target", default="llvm", choices=sorted(TARGETS))
    p.add_argument("--cpu", metavar="NAME",
                   help="the CPU to compile for: host (the default, unless $NIMBLE_CPU names one), haswell, znver3, "
                        "x86-64-v2, skylake-avx512, ...")
    p.add_argument("--cpu-features", default="", metavar="LIST", help="feature overrides for --cpu (-avx512f,+fma)")
    p.add_argument("--timings", action="store_true", help="the time of each compile step")
    p.add_argument("--quiet", action="store_true", help="no progress line while kernels compile")


def _run_parser() -> argparse.ArgumentParser:
    """nimble-run's options."""
    p = argparse.ArgumentParser(prog="nimble-run", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("file", help="a model (.nb, .mlir, .onnx) or a bytecode module (.nbc)")
    _compile_options(p)
    p.add_argument("--entry", default="main")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy|SHAPExTYPE[=VALUES]",
                   help="a parameter from a .npy file, or inline as iree-run-module takes it: 2x3xf32=1,2,3,4,5,6, "
                        "4x8xf32=0.5 (filled), 4xi64 (zeros), or an integer; an ADT value (a tree) from a .json "
                        "file: {\"Node\": [field, ...]}, tensor fields as nested lists, .npy paths or inline "
                        "(random: about --dim constructors)")
    p.add_argument("--random-inputs", action="store_true", help="random values for inputs not given (the default)")
    p.add_argument("--dim", action="append", default=[], metavar="[NAME=]N", help="size of ? dims of random inputs")
    p.add_argument("--dynamic-size", type=_at_least(0), help="same as --dim N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=_at_least(1), default=1, help="run N times and report the median time")
    p.add_argument("--warmup", type=_at_least(0), default=1, metavar="N",
                   help="untimed runs first (the first run builds each kernel's launch plan and may start the "
                        "worker threads); default 1")
    p.add_argument("--profile", action="store_true", help="time per kernel and VM overhead")
    p.add_argument("--output-dir", metavar="DIR|FILE.npz",
                   help="write each result as DIR/<output name>.npy (an ONNX model's names, else result_<i>; a "
                        "scalar as a 0-d array), or all of them in FILE.npz under those names")
    p.add_argument("--trace", metavar="FILE.json",
                   help="write a trace of one more call, after the timed ones, for https://ui.perfetto.dev or "
                        "chrome://tracing: each VM instruction, kernel launch, allocation and device copy")
    p.add_argument("--threads", type=_at_least(1, MAX_THREADS))
    p.add_argument("--check", action="store_true",
                   help="compare with the reference interpreter; exit 1 if a result differs beyond --rtol/--atol")
    p.add_argument("--rtol", type=_tolerance, default=1e-3, help="--check's relative tolerance (default 1e-3)")
    p.add_argument("--atol", type=_tolerance, default=1e-3,
                   help="--check's absolute tolerance, times the result's largest magnitude if over 1 (default 1e-3)")
    p.add_argument("--untrusted", action="store_true",
                   help="a .nbc from someone else: compile its kernels from the IR it holds, not load its object code")
    p.add_argument("--opencl-device", metavar="SPEC", help="OpenCL device: P:D indices or part of its name "
                   "(default: the first GPU, else the first device)")
    p.add_argument("--jit", choices=JIT_MODES, default="eager",
                   help="eager: compile every kernel before the first run, on every core (the default); lazy: "
                        "each kernel at its first launch")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _run_parser().parse_args(argv)
    if args.dynamic_size is not None:
        args.dim.insert(0, str(args.dynamic_size))
    try:
        t0 = time.perf_counter()
        bytecode = args.file.endswith(BYTECODE_SUFFIX)
        exe = load(args.file, args.threads, args.entry, args.opencl_device,
                   trust_object_code=not args.untrusted) if bytecode else \
            compile(args.file, target=args.target, entry=args.entry, threads=args.threads,
                    opencl_device=args.opencl_device, cpu=args.cpu, cpu_features=args.cpu_features, jit=args.jit,
                    progress=progress_line(args.quiet))
        t_compile = time.perf_counter() - t0
        values = build_inputs(exe, exe.entry, args)
        for _ in range(args.warmup):
            exe.run(*values)
        times = []
        profile = exe.vm.start_profile() if args.profile else None
        for _ in range(args.repeat):
            start = time.perf_counter()
            results = exe.run(*values)
            times.append(time.perf_counter() - start)
        if args.trace:
            exe.run(*values, trace=args.trace)
        if args.check:
            if bytecode:
                raise ValueError("--check needs the model's source (.nb or .mlir), not a bytecode module")
            from nimble.api import interpret, parse

            expected = interpret(parse(args.file), *values, entry=exe.entry)
    except _errors() as e:
        print(f"nimble-run: error: {_located(e)}", file=sys.stderr)
        return 1
    print_results(results)
    if args.output_dir:
        problem = save_results(results, args.output_dir, [o.name for o in exe.outputs()])
        if problem is not None:
            print(f"nimble-run: error: {problem}", file=sys.stderr)
            return 1
    print(_summary(exe, args, bytecode, t_compile, times))
    if args.timings and exe.stats is not None:
        print("compile steps:\n" + exe.stats.report(exe.code))
    if profile is not None:
        print(exe.vm.profile_report(profile, sum(times)))
    if args.check:
        worst = max((float(np.max(np.abs(np.asarray(r, np.float64) - np.asarray(e, np.float64))))
                     for r, e in zip(results, expected) if isinstance(r, np.ndarray) and r.size), default=0.0)
        print(f"max abs difference from the reference interpreter: {worst:.3g}")
        problem = check_results(results, expected, args.rtol, args.atol)
        if problem is not None:
            print(f"nimble-run: check failed: {problem}", file=sys.stderr)
            return 1
    return 0


def save_results(results: Sequence[Any], folder: str, names: Sequence[str] = ()) -> str | None:
    """Each result as `folder/<name>.npy` (`names`: the model's output names; where they
    are missing, repeat or are not plain file names, `result_<i>`; the folder made if
    needed), or all in one archive where `folder` ends in `.npz` (its keys the same
    names); why not, if one is not an array or a number (an ADT value, a tuple), or the
    folder cannot be written (None: all written)."""
    plain = len(names) == len(results) and len(set(names)) == len(names) \
        and all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", n) for n in names)
    arrays = []
    for i, r in enumerate(results):
        if not isinstance(r, np.ndarray | int | float | np.generic):
            return f"result #{i} is a {type(r).__name__}, not an array: --output-dir writes arrays only"
        arrays.append(np.asarray(r))
    keys = [names[i] if plain else f"result_{i}" for i in range(len(arrays))]
    try:
        if folder.endswith(".npz"):
            np.savez(folder, **dict(zip(keys, arrays)))
            return None
        os.makedirs(folder, exist_ok=True)
        for key, a in zip(keys, arrays):
            np.save(os.path.join(folder, f"{key}.npy"), a, allow_pickle=False)
    except OSError as e:
        return f"cannot write the results to {folder}: {e.strerror}"
    return None


def check_results(results: Sequence[Any], expected: Sequence[Any], rtol: float, atol: float) -> str | None:
    """Why `results` are not the reference's `expected` (None: they are): a shape, or a
    value beyond `rtol` and `atol` times the largest finite magnitude of the expected
    result if over 1 (NaN matches NaN)."""
    for i, (got, want) in enumerate(zip(results, expected)):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            return f"result #{i} has shape {list(got.shape)}, the reference's is {list(want.shape)}"
        if want.dtype.kind not in "fc":
            if not np.array_equal(got, want):
                return f"result #{i} differs at {int(np.argmax(got.ravel() != want.ravel()))} (flat index)"
            continue
        finite = np.abs(want[np.isfinite(want)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        close = np.isclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True)
        if not close.all():
            at = tuple(int(j) for j in np.argwhere(~close)[0])
            return (f"result #{i} differs at {list(at)}: {got[at]!r} against {want[at]!r} "
                    f"({int((~close).sum())} of {want.size} beyond rtol {rtol:g}, atol {atol:g} x {scale:.3g})")
    return None


def compile_main(argv: Sequence[str] | None = None) -> int:
    """nimble-compile: compile a model into one bytecode file."""
    p = argparse.ArgumentParser(prog="nimble-compile", description="Compile a model into a bytecode module (.nbc).")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("file")
    p.add_argument("-o", "--output", help="output path (default: the model's name with .nbc)")
    _compile_options(p)
    p.add_argument("--entry")
    p.add_argument("--opencl-device", metavar="SPEC", help="OpenCL device to build the kernels for while compiling")
    args = p.parse_args(argv)
    output = args.output or args.file.rsplit(".", 1)[0] + BYTECODE_SUFFIX
    try:
        exe = compile(args.file, target=args.target, entry=args.entry, opencl_device=args.opencl_device,
                      cpu=args.cpu, cpu_features=args.cpu_features, progress=progress_line(args.quiet))
        exe.save(output)
    except _errors() as e:
        print(f"nimble-compile: error: {_located(e)}", file=sys.stderr)
        return 1
    on_device = sum(k.device != Device.CPU for k in exe.program.kernels)
    print(f"wrote {output}: {len(exe.program.functions)} functions, {len(exe.kernel_names)} kernels "
          f"({on_device} OpenCL), {len(exe.program.constants)} constants; CPU code for {exe.code.cpu.describe()}")
    if args.timings:
        print("compile steps:\n" + exe.stats.report(exe.code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
