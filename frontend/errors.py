"""Frontend diagnostics: `file:line:col: error: message`, the source line and a caret,
with what lark expected spelled in words rather than token names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from nimble.errors import CompileError

if TYPE_CHECKING:  # (lark is imported where a syntax error is described: the CLIs catch these errors
    from lark import Token  # without parsing `.nb` text)
    from lark.exceptions import UnexpectedInput

# Words for the named terminals of nimble.lark; literal tokens are shown quoted.
TERMINAL_WORDS = {
    "VALUE": "a value like %x",
    "FUNC": "a function name like @f",
    "NAME": "a name",
    "TYPENAME": "a type or constructor name",
    "NUMBER": "a number",
    "INT": "an integer",
    "DTYPE": "an element type (f32, i64, ...)",
    "STRING": "a string",
    "$END": "the end of the file",
}


@dataclass(frozen=True)
class SourceError:
    """One error at a place in the source."""

    file: str
    line: int
    column: int
    message: str
    source_line: str = ""

    def format(self) -> str:
        caret = f"\n{self.source_line}\n{' ' * (self.column - 1)}^" if self.source_line else ""
        return f"{self.file}:{self.line}:{self.column}: error: {self.message}{caret}"


class FrontendError(CompileError):
    """One or more errors in a `.nb` source; `str()` lists them all."""

    def __init__(self, errors: list[SourceError]):
        super().__init__("\n".join(e.format() for e in errors))
        self.errors = errors


def source_line(text: str, line: int) -> str:
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def describe_terminal(name: str, terminals: dict[str, object]) -> str:
    if name in TERMINAL_WORDS:
        return TERMINAL_WORDS[name]
    term = terminals.get(name)
    pattern = getattr(term, "pattern", None)
    from lark.lexer import PatternStr

    if isinstance(pattern, PatternStr):
        return f"'{pattern.value}'"
    return name.lower()


def _expected(names: set[str], terminals: dict[str, object]) -> str:
    words = sorted({describe_terminal(n, terminals) for n in names})
    if not words:
        return ""
    if len(words) == 1:
        return f"; expected {words[0]}"
    return f"; expected one of: {', '.join(words)}"


def _found(token: Token, terminals: dict[str, object]) -> str:
    if token.type == "$END":
        return "end of file"
    return f"'{token.value}'"


def syntax_error(e: UnexpectedInput, text: str, file: str, terminals: dict[str, object]) -> SourceError:
    """A lark error as a SourceError whose message says what was expected, in words."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(e, UnexpectedCharacters):
        message = f"unexpected character '{text[e.pos_in_stream]}'"
        line, column = e.line, e.column
    elif isinstance(e, UnexpectedToken):
        message = f"unexpected {_found(e.token, terminals)}{_expected(e.expected, terminals)}"
        if e.token.type == "$END":
            line, column = _end_position(text)
        else:
            line, column = e.line, e.column
    elif isinstance(e, UnexpectedEOF):
        message = f"unexpected end of file{_expected(set(e.expected), terminals)}"
        line, column = _end_position(text)
    else:
        message, line, column = str(e), getattr(e, "line", 1), getattr(e, "column", 1)
    line = max(line, 1)
    column = max(column, 1)
    return SourceError(file, line, column, message, source_line(text, line))


def _end_position(text: str) -> tuple[int, int]:
    """Where the end of the file is reported: just after the last character."""
    lines = text.splitlines() or [""]
    return len(lines), len(lines[-1]) + 1
