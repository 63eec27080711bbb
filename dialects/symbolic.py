"""The `nimble` dialect: symbolic dims on builtin tensor types.

`#nimble.dims<[batch, seq * 12, 768]>` rides in a `tensor<...>`'s encoding and names
what each dim is (dialects/dim_expr.py: expressions over named symbols, in canonical
form): `tensor<?x?x768xf32, #nimble.dims<[batch, seq, 768]>>`. The shape keeps `?`
where the expression is not a constant, so every tool that reads builtin tensor types
reads these too (upstream MLIR keeps an encoding it does not know as an opaque
attribute). `check_dims_encoding` is the rule a type with one must follow.
"""

from __future__ import annotations

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute, Data, Dialect
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from nimble.dialects import dim_expr
from nimble.dialects.dim_expr import Expr
from nimble.dialects.interfaces import PlainForm
from nimble.dialects.target import CpuAttr


@irdl_attr_definition
class DimsAttr(Data[tuple[Expr | None, ...]], PlainForm):
    """The dims of a tensor type as expressions over named symbols (`?`: a dim with no
    name).

    Example: `tensor<?x?x?x64xf32, #nimble.dims<[batch, ?, seq floordiv 2, 64]>>`
    """

    name = "nimble.dims"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[Expr | None, ...]:
        def dim() -> Expr | None:
            return None if parser.parse_optional_punctuation("?") else dim_expr.parse(parser)

        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim)
        return tuple(dims)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<[{', '.join('?' if d is None else str(d) for d in self.data)}]>")

    def plain(self) -> tuple:
        return tuple(None if d is None else dim_expr.plain(d) for d in self.data)

    @classmethod
    def from_plain(cls, value: object) -> DimsAttr:
        if not isinstance(value, tuple):
            raise ValueError(f"not a tuple of dims: {value!r}")
        return cls(tuple(None if d is None else dim_expr.from_plain(d) for d in value))


def named_dims(t: Attribute) -> tuple[Expr | None, ...]:
    """The expressions `#nimble.dims` gives a tensor type's dims (None for each dim where
    it gives none, or where the type has no such encoding)."""
    if not isinstance(t, TensorType):
        return ()
    rank = len(t.get_shape())
    if isinstance(t.encoding, DimsAttr) and len(t.encoding.data) == rank:
        return t.encoding.data
    return (None,) * rank


def check_dims_encoding(t: Attribute) -> str | None:
    """Why tensor type `t`'s `#nimble.dims` does not fit its shape (None if it does, or
    if it has none): one expression per dim, a constant where the shape has a number,
    `?` in the shape where the expression is not a constant."""
    if not isinstance(t, TensorType) or not isinstance(t.encoding, DimsAttr):
        return None
    shape, exprs = t.get_shape(), t.encoding.data
    if len(exprs) != len(shape):
        return f"{t}: #nimble.dims has {len(exprs)} dims for a shape of rank {len(shape)}"
    if all(e is None or e.as_int() is not None for e in exprs):
        return f"{t}: #nimble.dims names no dim (leave it out)"
    for i, (d, e) in enumerate(zip(shape, exprs)):
        if e is None:
            if d != DYNAMIC_INDEX:
                return f"{t}: dim {i} is {d} in the shape but ? in #nimble.dims"
            continue
        value = e.as_int()
        if value is None and d != DYNAMIC_INDEX:
            return f"{t}: dim {i} is {d} in the shape but '{e}' in #nimble.dims"
        if value is not None and d != value:
            shown = "?" if d == DYNAMIC_INDEX else d
            return f"{t}: dim {i} is {shown} in the shape but {value} in #nimble.dims"
        if value is not None and value < 0:
            return f"{t}: dim {i} is {value} (negative)"
    return None


Nimble = Dialect("nimble", [], [DimsAttr, CpuAttr])
