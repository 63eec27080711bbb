"""`parse_nb`: text of a `.nb` model to a verified xdsl module, or a FrontendError that
lists every error found (syntax errors as far as lark can recover, then name, arity and
type errors from the builder)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from nimble.frontend.builder import ModuleBuilder
from nimble.diagnostics import verify_module
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
    parser = grammar()
    terminals = {t.name: t for t in parser.terminals}
    errors: list[SourceError] = []

    def recover(e: UnexpectedInput) -> bool:
        error = syntax_error(e, text, file, terminals)
        at_end = isinstance(e, UnexpectedToken) and e.token.type == "$END"
        # One error per line, and none for the end of a file already known broken:
        # those are echoes of the first error, not news.
        if not (errors and (errors[-1].line == error.line or at_end)):
            errors.append(error)
        return len(errors) < 20

    try:
        tree = parser.parse(text, on_error=recover)
    except UnexpectedInput as e:
        if not errors or errors[-1].line != e.line:
            errors.append(syntax_error(e, text, file, terminals))
        raise FrontendError(errors) from None
    except Exception as e:  # lark's recovery can fail on badly broken input
        if not errors:
            errors.append(SourceError(file, 1, 1, f"cannot parse: {e}"))
        raise FrontendError(errors) from None
    if errors:
        raise FrontendError(errors)
    builder = ModuleBuilder(known_ops(), text, file)
    module = builder.build(tree)
    if not builder.errors:
        # Whole-module checks (calls, control flow, ADTs) once everything is attached.
        for d in verify_module(module, text):
            builder.errors.append(SourceError(file, d.line or 1, d.column or 1, d.message, source_line(text, d.line or 1)))
    if builder.errors:
        raise FrontendError(sorted(builder.errors, key=lambda e: (e.line, e.column)))
    return module
