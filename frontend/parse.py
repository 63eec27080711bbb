"""`parse_nb`: text of a `.nb` model to a verified xdsl module, or a FrontendError that
lists every error found (syntax errors as far as lark can recover, then name, arity and
type errors from the builder)."""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from lark import Lark
from lark.exceptions import UnexpectedInput
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from nimble.frontend.builder import ModuleBuilder
from nimble.diagnostics import verify_module
from nimble.dialects.graph.base import GraphOp
from nimble.frontend.errors import FrontendError, SourceError, source_line, syntax_error
from nimble.registry import registry


@cache
def grammar() -> Lark:
    text = files("nimble.frontend").joinpath("nimble.lark").read_text()
    return Lark(text, parser="lalr", lexer="contextual", propagate_positions=True, maybe_placeholders=True)


@cache
def known_ops() -> dict[str, type[Operation]]:
    """Every op of every registered dialect, by full name (the op registry)."""
    return {op.name: op for factory in registry().dialects.values() for op in factory().operations}


def parse_nb(text: str, file: str = "<string>") -> ModuleOp:
    try:
        tree = grammar().parse(text)
    except UnexpectedInput:
        raise FrontendError(syntax_errors(text, file)) from None
    except Exception as e:  # defensive: lark met something it does not handle
        raise FrontendError([SourceError(file, 1, 1, f"cannot parse: {e}")]) from None
    builder = ModuleBuilder(known_ops(), text, file)
    try:
        module = builder.build(tree)  # (recursive per nesting level, but not along a chain of infix ops)
    except RecursionError:
        raise FrontendError([SourceError(file, 1, 1, "expressions are nested too deeply to build")]) from None
    if not builder.errors:
        # Whole-module checks (calls, control flow, ADTs) once everything is attached.
        # Graph ops were checked as they were built; the rest (calls, control flow,
        # ADTs) needs the whole module.
        for d in verify_module(module, text, skip=GraphOp):
            builder.errors.append(SourceError(file, d.line or 1, d.column or 1, d.message, source_line(text, d.line or 1)))
    if builder.errors:
        raise FrontendError(sorted(builder.errors, key=lambda e: (e.line, e.column)))
    return module


_ITEM_START = re.compile(r"^(def|type|kernel)\b", re.MULTILINE)


def syntax_errors(text: str, file: str) -> list[SourceError]:
    """The first syntax error of each top-level definition.

    Parsing each `def`/`type` on its own (padded with newlines, so line numbers stay
    those of the file) keeps an error in one definition from echoing into the next,
    which is what token-skipping recovery does. Only the error path pays for this.
    """
    parser = grammar()
    terminals = {t.name: t for t in parser.terminals}
    starts = [0] + [m.start() for m in _ITEM_START.finditer(text) if m.start() > 0]
    ends = starts[1:] + [len(text)]
    errors = []
    for start, end in zip(starts, ends):
        padded = "\n" * text.count("\n", 0, start) + text[start:end]
        try:
            parser.parse(padded)
        except UnexpectedInput as e:
            errors.append(syntax_error(e, padded, file, terminals))
    return errors or [SourceError(file, 1, 1, "cannot parse this file")]
