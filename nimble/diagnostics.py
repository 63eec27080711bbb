"""Diagnostics with source locations, and MLIR-style `--verify-diagnostics` checking.

A test file states the diagnostics it expects in comments:

    // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast}}
    %c = graph.add %a, %b : ...

Forms: `expected-error|warning|note`, with no `@` (this line), `@+N`/`@-N` (relative),
`@above`/`@below` (the nearest line above/below that is not itself an expectation).
The text between `{{` and `}}` must occur in the diagnostic's message.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError

from nimble.dialects import discardable
from nimble.errors import CompileError
from nimble.parser import location_of

if TYPE_CHECKING:
    from nimble.frontend.errors import SourceError


class OpError(DiagnosticException, CompileError):
    """An error about one op, raised by a pass; tools report it at the op's location."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op


@dataclass(frozen=True)
class Diagnostic:
    """One message about the input: severity, where, what."""

    severity: str  # "error" | "warning" | "note"
    file: str
    line: int | None
    column: int | None
    message: str
    context: str = ""  # the source line with a caret, when known

    def format(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}:{self.column}"
        text = f"{where}: {self.severity}: {self.message}"
        return f"{text}\n{self.context}" if self.context else text


def _op_message(op: Operation, message: str) -> str:
    """Messages name the op the way MLIR does: `'graph.add' op ...`."""
    message = message.strip()
    return message if message.startswith(f"'{op.name}'") else f"'{op.name}' op {message}"


def op_diagnostic(op: Operation, message: str, severity: str = "error", source: str = "") -> Diagnostic:
    loc = location_of(op)
    if loc is None:
        return Diagnostic(severity, "<unknown>", None, None, _op_message(op, message))
    file, line, column = loc
    return Diagnostic(severity, file, line, column, _op_message(op, message), _context(source, line, column))


def _context(source: str, line: int, column: int) -> str:
    lines = source.splitlines()
    index = line - 1
    if not source or not 0 <= index < len(lines):
        return ""
    return f"{lines[index]}\n{' ' * (column - 1)}^"


def parse_error_diagnostic(error: ParseError, name: str) -> Diagnostic:
    loc = error.span.get_location()
    context = error.span.print_with_context().rstrip("\n")
    context = "\n".join(context.splitlines()[1:])  # drop the location line xdsl prints
    return Diagnostic("error", name, loc.line, loc.col, error.msg, context)


def source_diagnostic(error: "SourceError") -> Diagnostic:
    """A frontend error as a diagnostic (same fields, same format)."""
    context = f"{error.source_line}\n{' ' * (error.column - 1)}^" if error.source_line else ""
    return Diagnostic("error", error.file, error.line, error.column, error.message, context)


def verify_module(module: ModuleOp, source: str = "", skip: type | tuple[type, ...] = ()) -> list[Diagnostic]:
    """Verify every op on its own (but those of the `skip` classes), collecting one
    diagnostic per failing op."""
    diagnostics = []
    for op in module.walk():
        if skip and isinstance(op, skip):
            continue
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            diagnostics.append(op_diagnostic(op, str(e).removeprefix("Operation does not verify: "), source=source))
            continue
        wrong = discardable.check(op)
        if wrong is not None:
            diagnostics.append(op_diagnostic(op, wrong, source=source))
    return diagnostics


# -- expectations -----------------------------------------------------------------------

_EXPECTATION = re.compile(
    r"expected-(?P<severity>error|warning|note)\s*(?:@(?P<where>[+-]\d+|above|below))?\s*\{\{(?P<text>.*?)\}\}"
)


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    written_at: int
    matched: bool = field(default=False)


def parse_expectations(source: str, first_line: int = 1) -> list[Expectation]:
    """The expectations written in `source`, whose first line is `first_line`."""
    lines = source.splitlines()
    is_expectation = [_EXPECTATION.search(text) is not None for text in lines]
    result = []
    for index, text in enumerate(lines):
        for m in _EXPECTATION.finditer(text):
            target = _target_line(m.group("where"), index, is_expectation)
            result.append(Expectation(m.group("severity"), target + first_line, m.group("text"), index + first_line))
    return result


def _target_line(where: str | None, index: int, is_expectation: list[bool]) -> int:
    if where is None:
        return index
    if where in ("above", "below"):
        step = -1 if where == "above" else 1
        target = index + step
        while 0 <= target < len(is_expectation) and is_expectation[target]:
            target += step
        return target
    return index + int(where)


def check_expectations(diagnostics: Iterable[Diagnostic], expectations: list[Expectation], file: str) -> list[str]:
    """Problems found comparing produced diagnostics with expectations (empty: all good)."""
    problems = []
    for d in diagnostics:
        match = next(
            (e for e in expectations
             if not e.matched and e.severity == d.severity and e.line == d.line and e.text in d.message),
            None,
        )
        if match is None:
            problems.append(f"unexpected {d.format()}")
        else:
            match.matched = True
    for e in expectations:
        if not e.matched:
            problems.append(
                f"{file}:{e.written_at}: expected {e.severity} on line {e.line} was not produced: {{{{{e.text}}}}}"
            )
    return problems


# -- passes -----------------------------------------------------------------------------


class PassBrokeIR(Exception):
    """The IR stopped verifying after a pass (`--verify-each`, `run_stages(verify_each=True)`);
    the verifier's own error is the `__cause__`."""

    def __init__(self, pass_name: str, cause: Exception):
        first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
        super().__init__(f"the IR does not verify after pass '{pass_name}': {first}")
        self.pass_name = pass_name


class DominanceError(CompileError):
    """An operand used where its definition does not reach (xdsl's verifier does not check
    dominance)."""


class AttributeKeyError(CompileError):
    """A discardable attribute nobody declared, or one holding another class of value
    (`dialects/discardable.py`)."""


def check_discardable(module: Operation) -> None:
    """Raise `AttributeKeyError` at the first op whose discardable attributes are wrong."""
    for op in module.walk():
        wrong = discardable.check(op)
        if wrong is not None:
            raise AttributeKeyError(f"'{op.name}' op: {wrong}")


def check_dominance(op: Operation) -> None:
    """Raise `DominanceError` at the first operand of an op nested in `op` that is not
    defined before its use, in the use's block or in a block enclosing it (blocks of one
    region taken in order)."""
    defined: set[SSAValue] = set()

    def region(r: Region) -> None:
        added: list[SSAValue] = []
        for block in r.blocks:
            defined.update(block.args)
            added += block.args
            for o in block.ops:
                for value in o.operands:
                    if value not in defined:
                        where = value.owner.name if isinstance(value.owner, Operation) else "a block argument"
                        raise DominanceError(f"'{o.name}' uses a value (of {where}, {value.type}) that is not "
                                             f"defined before it in an enclosing block")
                for inner in o.regions:
                    region(inner)
                defined.update(o.results)
                added += o.results
        defined.difference_update(added)

    for r in op.regions:
        region(r)


def verify_after_pass(previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
    """A `PassPipeline` callback: verify the module after each pass (and that every use
    is dominated by its definition), naming the pass that broke it."""
    if previous is None:
        return
    try:
        module.verify()
        check_dominance(module)
        check_discardable(module)
    except (DiagnosticException, DominanceError, AttributeKeyError) as e:
        raise PassBrokeIR(previous.name, e) from e
