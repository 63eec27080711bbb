"""Parsing MLIR text with source locations on every op.

xdsl's parser keeps an op's location only when the text spells `loc(...)`. Nimble's
diagnostics (`--verify-diagnostics`, verifier errors) need `file:line:col`, so this
parser attaches a `FileLineColLoc` to each op it parses, as MLIR does.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError
from xdsl.utils.mlir_lexer import MLIRLexer

# xdsl 0.75's string-literal regex nests quantifiers, `"(?:[^"...]+|...)*"`, and
# backtracks exponentially on an unterminated string: `nimble-opt` hung on truncated
# input. The same language as a run of plain characters, then escapes each followed by
# such a run, matches in linear time without trying an alternative per character (a
# weight's 19 MB hex literal: 4.6 s -> 0.03 s).
MLIRLexer._unescaped_characters_regex = re.compile(
    r'"[^"\\\n\v\f]*(?:\\(?:["nt\\]|[0-9A-Fa-f]{2})[^"\\\n\v\f]*)*"'
)


class _BitPattern(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal. For a float element type MLIR reads it as
    the value's bits (its printer writes inf and NaN so: `dense<0xFF800000> : vector<16xf32>`
    is -inf); xdsl 0.75 reads the integer's value instead (4.29e9)."""

    def to_type(self, parser, type):  # noqa: ANN001, ANN201 (xdsl's signature)
        if isinstance(type, AnyFloat) and isinstance(self.value, int) and not self.is_negative:
            if self.value.bit_length() > type.bitwidth:
                parser.raise_error("hexadecimal float constant out of range for type", at_position=self.span)
            return next(type.iter_unpack(self.value.to_bytes(type.compile_time_size, "little")))
        return super().to_type(parser, type)


class LocatingParser(Parser):
    """An xdsl `Parser` that records where each op starts (and reads hexadecimal floats in
    dense literals as MLIR does)."""

    def __init__(self, ctx: Context, text: str, name: str = "<stdin>", line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._name = StringAttr(name)
        self._line_offset = line_offset
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        hexadecimal = self._current_token.text[:2] in ("0x", "0X")
        element = super()._parse_tensor_literal_element()
        if hexadecimal:
            return _BitPattern(element.is_negative, element.value, element.span)
        return element

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            line = bisect_right(self._line_starts, start)
            column = start - self._line_starts[line - 1] + 1
            op.location = FileLineColLoc(
                self._name, IntAttr(line + self._line_offset), IntAttr(column)
            )
        return op


def parse_mlir(ctx: Context, text: str, name: str = "<stdin>", line_offset: int = 0) -> ModuleOp:
    """Parse MLIR text (generic or custom form) into a module; raises xdsl's ParseError
    (also for regions nested deeper than Python's recursion limit lets xdsl's recursive
    parser go, at the op where it stopped)."""
    parser = LocatingParser(ctx, text, name, line_offset)
    try:
        return parser.parse_module()
    except RecursionError:
        raise ParseError(parser._current_token.span, "regions are nested too deeply to parse") from None


def location_of(op: Operation) -> tuple[str, int, int] | None:
    """(file, line, column) of an op, if it has a file location."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return loc.filename.data, loc.line.data, loc.column.data
    return None
