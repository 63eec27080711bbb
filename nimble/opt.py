"""`nimble-opt`: xdsl's `xdsl-opt` driver with Nimble's dialects and passes, plus what
MLIR users expect of an `-opt` tool: real `--verify-diagnostics`, `--list-passes`,
located error messages, and exit status 1 (never a traceback) on bad input."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from io import BytesIO
from typing import IO, Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from nimble import __version__
from nimble.diagnostics import (
    Diagnostic,
    OpError,
    PassBrokeIR,
    check_expectations,
    op_diagnostic,
    parse_error_diagnostic,
    parse_expectations,
    source_diagnostic,
    verify_after_pass,
    verify_module,
)
from nimble.dialects import loop
from nimble.dialects.device import Device
from nimble.dialects.target import set_target
from nimble.errors import InputError
from nimble.frontend import parse_nb
from nimble.frontend.errors import FrontendError
from nimble.frontend.printer import PrintError, print_nb
from nimble.parser import parse_mlir
from nimble.registry import all_dialects, all_passes, registry
from nimble.runtime import cpu_target
from nimble.runtime.cpu_target import TargetError

_SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.MULTILINE)


def split_chunks(text: str) -> list[tuple[str, int]]:
    """Split at `// -----` lines: (chunk, number of lines before it)."""
    chunks, start, line = [], 0, 0
    for m in _SPLIT_MARKER.finditer(text):
        chunk = text[start : m.start()]
        chunks.append((chunk, line))
        line += chunk.count("\n")
        start = m.end()
    chunks.append((text[start:], line))
    return chunks


def pass_summary(pass_class: type) -> str:
    """`name  summary  {option: type = default ...}` for `--list-passes`."""
    doc = (pass_class.__doc__ or "").strip().splitlines()
    summary = doc[0] if doc else ""
    options = []
    if dataclasses.is_dataclass(pass_class):
        for f in dataclasses.fields(pass_class):
            default = "" if f.default is dataclasses.MISSING else f" = {f.default!r}"
            type_name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            options.append(f"{f.name}: {type_name}{default}")
    text = f"  {pass_class.name:<36} {summary}"
    if options:
        text += "\n" + "\n".join(f"  {'':<36}   --{o}" for o in options)
    return text


def _boolean(text: str) -> bool:
    """`true`/`false` (and 1/0, yes/no) for options such as `--verify-each=false`."""
    value = text.strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")


def _emit_llvm(module: ModuleOp, out: IO[str]) -> None:
    """LLVM IR of the module's kernels. A graph-level module is first compiled through
    the default graph and loop stages; an `llvm`-dialect module is printed as is."""
    from nimble.compile import run_stages
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime.llvm_jit import to_llvmlite

    has_kernels = bool(loop.kernels_of(module))
    if has_kernels or any(isinstance(o, func.FuncOp) for o in module.ops):
        if not has_kernels:
            run_stages(module, ["graph", "loops"])
        module = lower_kernels(module)
    out.write(str(to_llvmlite(module)))


def _emit_opencl(module: ModuleOp, out: IO[str]) -> None:
    """The OpenCL C of a module's kernels. Graph-level input is first placed and lowered
    for the OpenCL target (`graph`, `place{default=opencl}`, `loops`): kernels the backend
    cannot express stay CPU kernels and are listed in a comment."""
    from nimble.compile import TARGET_OPTIONS, run_stages
    from nimble.lowering.opencl.to_opencl import opencl_sources, program_text

    if not loop.kernels_of(module) and any(isinstance(o, func.FuncOp) for o in module.ops):
        run_stages(module, ["graph", "place", "loops"], TARGET_OPTIONS["opencl"])
        kernels = loop.kernels_of(module, Device.OPENCL)
    else:
        kernels = loop.kernels_of(module)  # a hand-written loop-level module: every kernel
    on_cpu = [k.sym_name.data for k in loop.kernels_of(module) if k not in kernels]
    if on_cpu:
        out.write(f"// kept on the CPU: {', '.join(on_cpu)}\n")
    out.write(program_text(opencl_sources(kernels)))


def _emit_spatial(module: ModuleOp, out: IO[str]) -> None:
    """The spatial programs of a module as a Spatial-like listing. A module without
    spatial programs is first compiled through the `spatial` stage (recurrences lowered,
    searched at size 1 for every `?` on the default machine): run the passes yourself
    (`-p ...,spatial-dse{sizes=...}`) for other sizes."""
    from nimble.compile import run_stages
    from nimble.lowering.spatial.to_spatial import spatial_listing

    if not loop.kernels_of(module, Device.SPATIAL) and any(
            isinstance(o, func.FuncOp) for o in module.ops):
        run_stages(module, ["spatial"])
    out.write(spatial_listing(module))


def _emit_dot(module: ModuleOp, out: IO[str]) -> None:
    """The module as a Graphviz graph (`--view-op-graph`, `nimble/op_graph.py`)."""
    from nimble.op_graph import op_graph

    out.write(op_graph(module))


def _emit_vm_asm(module: ModuleOp, out: IO[str]) -> None:
    """The VM listing; a module above the VM level is first compiled to it."""
    from nimble.compile import to_vm
    from nimble.dialects.vm import listing

    out.write(listing(to_vm(module)))


class ToolError(InputError):
    """A use of the tool that cannot work (a target that does not take Nimble's IR, a
    binary target without `-o`): `nimble-opt: error: ...`, exit status 1."""


def _emit_nb(module: ModuleOp, out: IO[str]) -> None:
    out.write(print_nb(module))


EMITTERS: dict[str, Callable[[ModuleOp, IO[str]], None]] = {
    "nb": _emit_nb, "dot": _emit_dot, "llvm": _emit_llvm, "vm-asm": _emit_vm_asm, "opencl": _emit_opencl,
    "spatial": _emit_spatial}
"""Nimble's targets that print what they make (`-t`)."""
NIMBLE_TARGETS = ("mlir", *EMITTERS, "vm")
"""The targets that take Nimble's IR: xdsl's MLIR printer, `EMITTERS`, and `vm`, which
writes a bytecode file (`-o`: `NimbleOptMain._emit_bytecode`). xdsl's other targets are
for its own dialects."""
GENERIC_PASSES = ("canonicalize", "cse", "dce")
"""xdsl's passes that work on any dialect's IR, listed with Nimble's (`--help`, `--list-passes`)."""


def _foreign_target(name: str) -> Callable[[ModuleOp, IO[str]], None]:
    def refuse(module: ModuleOp, out: IO[str]) -> None:
        raise ToolError(f"target '{name}' is xdsl's, for IR of its own dialects, not Nimble's; Nimble's targets: "
                        f"{', '.join(NIMBLE_TARGETS)}")
    return refuse


class NimbleOptMain(xDSLOptMain):
    """The `nimble-opt` tool."""

    version_format = f"nimble-opt {__version__} (xdsl {{xdsl_version}})"
    cpu: Any = None
    """The `--cpu` target (`run` resolves it; None: the module's own, or the host)."""

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="Nimble modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        for name, factory in all_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        # `.nb` files (and `-f nb`) go through Nimble's own frontend, with its diagnostics.
        self.available_frontends["nb"] = lambda stream: parse_nb(stream.read().decode(), "<stdin>")

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets.update(EMITTERS)
        self.available_targets["vm"] = self._emit_bytecode
        for name in self.available_targets:
            if name not in NIMBLE_TARGETS:
                self.available_targets[name] = _foreign_target(name)

    def _emit_bytecode(self, module: ModuleOp, out: IO[str]) -> None:
        """`-t vm -o model.nbc`: the bytecode module (binary, so `-o` is required)."""
        from nimble.compile import Executable, to_vm
        from nimble.lowering.vm.vm_program import program_from_module

        if self.args.output_file is None:
            raise ToolError("-t vm writes a binary bytecode module: give the file with -o")
        to_vm(module)
        exe = Executable.from_program(program_from_module(module, self._base_dir()), module)
        exe.save(self.args.output_file)

    def _base_dir(self) -> str:
        name = self.args.input_file
        return os.path.dirname(os.path.abspath(name)) if name else "."

    def register_all_passes(self) -> None:
        for name, factory in all_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--list-passes", action="store_true",
            help="List Nimble's passes (and xdsl's that work on any IR) with their summaries and options"
        )
        arg_parser.add_argument("--all", action="store_true", help="With --list-passes: xdsl's other passes too")
        arg_parser.add_argument(
            "--view-op-graph", action="store_true",
            help="Print the module after the passes as a Graphviz graph (the same as -t dot)"
        )
        arg_parser.add_argument(
            "--traceback", action="store_true", help="Show Python tracebacks of internal errors"
        )
        arg_parser.add_argument(
            "--verify-each", type=_boolean, nargs="?", const=True, default=True, metavar="BOOL",
            help="Verify the IR after every pass and name the pass that broke it (default: true, as "
                 "in mlir-opt; --verify-each=false verifies the input and the result only)",
        )
        arg_parser.add_argument(
            "--cpu", metavar="NAME",
            help="The CPU to schedule and compile for (`host`, `haswell`, `znver3`, `x86-64-v2`, "
                 "`skylake-avx512`, ...): sets the module's `nimble.target` before the passes run",
        )
        arg_parser.add_argument(
            "--cpu-features", default="", metavar="LIST",
            help="Feature overrides for --cpu (`-avx512f,+fma`)",
        )
        for action in arg_parser._actions:
            if action.dest == "passes":
                action.help = (f"Comma-separated passes, options in braces (`place-devices{{default=opencl}}`): "
                               f"{', '.join(sorted(registry().passes))}, and xdsl's {', '.join(GENERIC_PASSES)} "
                               f"(`--list-passes` describes them; `--list-passes --all` lists xdsl's others)")
            elif action.dest == "target":
                action.help = (f"Output: {', '.join(NIMBLE_TARGETS)} (mlir by default; vm, a bytecode "
                               f"module, needs -o; dot is --view-op-graph)")
            elif action.dest == "verify_diagnostics":
                action.help = (
                    "Check the diagnostics against `expected-error/warning/note` comments "
                    "in the input; exit 1 on any mismatch"
                )

    def setup_pipeline(self) -> None:
        """The passes of `-p`, with a callback between passes for `--time-passes`,
        `--print-between-passes` and `--verify-each` (which names the pass that broke
        the IR, where xdsl's own callback only reports the broken op)."""
        started = time.perf_counter()

        def between(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
            nonlocal started
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - started} seconds")
            if (following is None or self.args.verify_each) and not self.args.disable_verify:
                verify_after_pass(previous, module, following)  # the input is verified when parsed
            if previous is not None and following is not None and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            if self.args.time_passes:
                started = time.perf_counter()

        self.pipeline = PassPipeline.parse_spec(self.available_passes, self.args.passes, between)

    # -- running ------------------------------------------------------------------------
    def run(self) -> int:  # type: ignore[override]
        if self.args.view_op_graph:
            self.args.target = "dot"
        if self.args.list_passes:
            shown = [n for n in sorted(self.available_passes)
                     if self.args.all or n in registry().passes or n in GENERIC_PASSES]
            print("Available passes:" if self.args.all else "Nimble's passes (and xdsl's that work on any IR; "
                  "--all lists xdsl's others):")
            for name in shown:
                print(pass_summary(self.available_passes[name]()))
            return 0
        name = self.args.input_file or "<stdin>"
        try:
            self.cpu = cpu_target.resolve(self.args.cpu, self.args.cpu_features) \
                if self.args.cpu or self.args.cpu_features else None
        except TargetError as e:
            print(f"nimble-opt: error: {e}", file=sys.stderr)
            return 1
        if self.args.input_file is not None and self.frontend_for(name) == "onnx":
            # A binary model: imported, then processed as the MLIR text of its graph IR.
            from nimble.frontend.onnx import OnnxImportError, import_onnx

            try:
                text = str(import_onnx(self.args.input_file))
            except OnnxImportError as e:
                print(f"nimble-opt: error: {name}: {e}", file=sys.stderr)
                return 1
            self.args.frontend = "mlir"
        else:
            try:
                if self.args.input_file is None:
                    text = sys.stdin.read()
                else:
                    with open(self.args.input_file, encoding="utf-8") as f:
                        text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                print(f"nimble-opt: error: cannot read input '{name}': {e}", file=sys.stderr)
                return 1
        frontend = self.frontend_for(name)
        if frontend != "mlir" and frontend not in self.available_frontends:
            known = ", ".join(sorted({"mlir", *self.available_frontends}))
            print(f"nimble-opt: error: no frontend for '{name}' (known: {known}; choose one with -f)", file=sys.stderr)
            return 1
        chunks = split_chunks(text) if self.args.split_input_file else [(text, 0)]
        outputs: list[str] = []
        ok = True
        for chunk, offset in chunks:
            diagnostics, output = self.process_chunk(chunk, offset, name, text)
            if self.args.verify_diagnostics:
                expectations = parse_expectations(chunk, first_line=offset + 1)
                problems = check_expectations(diagnostics, expectations, name)
                for p in problems:
                    print(p, file=sys.stderr)
                ok = ok and not problems
            else:
                for d in diagnostics:
                    print(d.format(), file=sys.stderr)
                ok = ok and not any(d.severity == "error" for d in diagnostics)
            if output is not None:
                outputs.append(output)
        self.write_output("// -----\n".join(outputs))
        return 0 if ok else 1

    def write_output(self, text: str) -> None:
        if self.args.target == "vm":
            return  # the target wrote the binary file itself
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        with open(self.args.output_file, "w", encoding="utf-8") as f:
            f.write(text)

    def frontend_for(self, name: str) -> str:
        if self.args.frontend:
            return self.args.frontend
        if name == "<stdin>" or "." not in name:
            return "mlir"
        return name.rsplit(".", 1)[-1]

    def parse_text(self, chunk: str, offset: int, name: str) -> ModuleOp | None:
        frontend = self.frontend_for(name)
        if frontend == "mlir":
            return parse_mlir(self.ctx, chunk, name, offset)
        if frontend == "nb":
            # Leading newlines keep the chunk's line numbers those of the whole file.
            return parse_nb("\n" * offset + chunk, name)
        return self.parse_chunk(BytesIO(chunk.encode()), frontend, offset)

    def process_chunk(self, chunk: str, offset: int, name: str, source: str) -> tuple[list[Diagnostic], str | None]:
        """Parse, verify, transform and print one chunk; diagnostics instead of exceptions."""
        try:
            module = self.parse_text(chunk, offset, name)
        except ParseError as e:
            e.span = dataclasses.replace(e.span, line_offset=offset)
            return [parse_error_diagnostic(e, name)], None
        except FrontendError as e:
            return [source_diagnostic(err) for err in e.errors], None
        except Exception as e:  # the parser met input it does not handle gracefully
            return [Diagnostic("error", name, None, None, f"cannot parse input: {e}")], None
        if module is None:
            return [], None
        diagnostics = verify_module(module, source)
        if any(d.severity == "error" for d in diagnostics):
            return diagnostics, None
        if self.cpu is not None:
            set_target(module, self.cpu)
        try:
            self.apply_passes(module)
        except OpError as e:
            return [op_diagnostic(e.op, str(e), source=source)], None
        except PassBrokeIR as e:
            found = verify_module(module, source)
            if not found:  # a structural problem no single op reports (e.g. a dangling use)
                return [Diagnostic("error", name, None, None, str(e))], None
            return [dataclasses.replace(d, message=f"{d.message} (the IR does not verify after pass "
                                                   f"'{e.pass_name}')") for d in found], None
        except DiagnosticException as e:
            found = verify_module(module, source)
            return found or [Diagnostic("error", name, None, None, str(e).splitlines()[0])], None
        try:
            return diagnostics, self.output_resulting_program(module)
        except PrintError as e:
            return [Diagnostic("error", name, None, None, f"cannot print as .nb: {e}")], None
        except DiagnosticException as e:  # a target that compiles further first (-t spatial)
            return [Diagnostic("error", name, None, None, str(e).splitlines()[0])], None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    show_traceback = "--traceback" in arguments
    try:
        tool = NimbleOptMain(args=arguments)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # xdsl's ArgSpecParseError derives from BaseException
        if show_traceback:
            traceback.print_exc()
        print(f"nimble-opt: error: {e}", file=sys.stderr)
        return 1
    try:
        return tool.run()
    except BrokenPipeError:  # the reader went away (e.g. `| head`): not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except (KeyboardInterrupt, SystemExit):
        raise
    except ToolError as e:
        print(f"nimble-opt: error: {e}", file=sys.stderr)
        return 1
    except BaseException as e:
        if show_traceback:
            traceback.print_exc()
        print(
            f"nimble-opt: internal error: {type(e).__name__}: {e}\n"
            "(this is a bug in Nimble or a plugin; rerun with --traceback for details)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
