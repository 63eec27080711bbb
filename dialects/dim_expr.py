"""Symbolic dims: integer expressions over named symbols, in one canonical form.

A dim is an `Expr`: a polynomial with integer coefficients over *atoms* — symbols
(`batch`, `seq`) and the non-linear forms `floordiv`, `ceildiv`, `mod`, `min`, `max`
of other expressions. The constructors simplify as they build (constants fold, `(seq *
12 + 6) floordiv 12` is `seq`, `min(x, x + 1)` is `x`, nested floordivs merge, terms
are sorted), so two expressions that the rules can prove equal are the same object
value: `==` and `hash` decide dim equality. Symbols are dims, so never negative; every
rule holds for all values >= 0 of the symbols (`min(seq, 0)` is 0, `max(seq, 0)` is
`seq`), which the tests check by evaluating expressions before and after
simplification.

Text form (`str`, `parse`), as MLIR's affine expressions with names: `seq * 12`,
`batch * seq`, `seq floordiv 2 + 1`, `(seq + 1) ceildiv 2`, `n mod 4`, `min(a, b)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from xdsl.parser import BaseParser

Monomial = tuple["Atom", ...]
"""A product of atoms, sorted (an atom may repeat)."""


@dataclass(frozen=True)
class Atom:
    """A symbol (`kind` "sym", `name` set) or a non-linear form of `args`."""

    kind: str
    name: str = ""
    args: tuple[Expr, ...] = ()

    def evaluate(self, env: Mapping[str, int]) -> int:
        if self.kind == "sym":
            if self.name not in env:
                raise KeyError(f"no value for symbol '{self.name}'")
            return env[self.name]
        values = [a.evaluate(env) for a in self.args]
        return _INT_OPS[self.kind](*values)

    def __str__(self) -> str:
        if self.kind == "sym":
            return self.name
        if self.kind in ("min", "max"):
            return f"{self.kind}({', '.join(str(a) for a in self.args)})"
        lhs, rhs = (a.text(_ATOM_LEVEL) for a in self.args)
        return f"{lhs} {self.kind} {rhs}"


_SUM_LEVEL, _PRODUCT_LEVEL, _ATOM_LEVEL = 0, 1, 2
"""Binding strengths, for parentheses: `+ -` < `* floordiv ceildiv mod` < atoms."""

_INT_OPS: dict[str, Callable[..., int]] = {
    "floordiv": lambda a, b: a // b,
    "ceildiv": lambda a, b: -(-a // b),
    "mod": lambda a, b: a % b,
    "min": min,
    "max": max,
}


def _sort_key(x: object) -> str:
    return str(x)


@dataclass(frozen=True)
class Expr:
    """`constant + sum(coefficient * monomial)`: terms sorted, coefficients nonzero."""

    terms: tuple[tuple[Monomial, int], ...] = ()
    constant: int = 0

    # -- construction ------------------------------------------------------------------
    @staticmethod
    def symbol(name: str) -> Expr:
        return Expr((((Atom("sym", name),), 1),))

    @staticmethod
    def of(value: ExprLike) -> Expr:
        return value if isinstance(value, Expr) else Expr((), int(value))

    @staticmethod
    def _from(terms: Mapping[Monomial, int], constant: int) -> Expr:
        kept = sorted(((m, c) for m, c in terms.items() if c != 0), key=lambda t: _sort_key(t[0]))
        return Expr(tuple(kept), constant)

    # -- reading ---------------------------------------------------------------------------
    def as_int(self) -> int | None:
        """The value, if the expression is a constant."""
        return None if self.terms else self.constant

    def symbol_name(self) -> str | None:
        """The name, if the expression is one symbol alone."""
        if self.constant != 0 or len(self.terms) != 1:
            return None
        (monomial, coefficient), = self.terms
        return monomial[0].name if coefficient == 1 and len(monomial) == 1 and monomial[0].kind == "sym" else None

    def symbols(self) -> set[str]:
        found: set[str] = set()
        for monomial, _ in self.terms:
            for atom in monomial:
                if atom.kind == "sym":
                    found.add(atom.name)
                for a in atom.args:
                    found |= a.symbols()
        return found

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The value when each symbol has the value `env` gives it."""
        total = self.constant
        for monomial, c in self.terms:
            product = c
            for atom in monomial:
                product *= atom.evaluate(env)
            total += product
        return total

    # -- arithmetic --------------------------------------------------------------------------
    def __add__(self, other: ExprLike) -> Expr:
        other = Expr.of(other)
        terms = dict(self.terms)
        for m, c in other.terms:
            terms[m] = terms.get(m, 0) + c
        return Expr._from(terms, self.constant + other.constant)

    __radd__ = __add__

    def __neg__(self) -> Expr:
        return Expr(tuple((m, -c) for m, c in self.terms), -self.constant)

    def __sub__(self, other: ExprLike) -> Expr:
        return self + -Expr.of(other)

    def __rsub__(self, other: ExprLike) -> Expr:
        return Expr.of(other) - self

    def __mul__(self, other: ExprLike) -> Expr:
        other = Expr.of(other)
        terms: dict[Monomial, int] = {}
        own = [*self.terms, ((), self.constant)]
        theirs = [*other.terms, ((), other.constant)]
        for m1, c1 in own:
            for m2, c2 in theirs:
                m = tuple(sorted(m1 + m2, key=_sort_key))
                terms[m] = terms.get(m, 0) + c1 * c2
        constant = terms.pop((), 0)
        return Expr._from(terms, constant)

    __rmul__ = __mul__

    def __floordiv__(self, other: ExprLike) -> Expr:
        return floordiv(self, other)

    def __mod__(self, other: ExprLike) -> Expr:
        return mod(self, other)

    # -- text ------------------------------------------------------------------------------------
    def __str__(self) -> str:
        return self.text(_SUM_LEVEL)

    def text(self, level: int) -> str:
        """The expression, in parentheses if it binds less tightly than `level`."""
        parts: list[tuple[int, str]] = [(c, _monomial_text(m, abs(c))) for m, c in self.terms]
        if self.constant or not parts:
            parts.append((self.constant, str(abs(self.constant))))
        first = parts[0][1]
        if self.terms and parts[0][0] == -1 and len(self.terms[0][0]) == 1 \
                and self.terms[0][0][0].kind in _PRODUCT_OPS:
            first = f"({first})"  # a leading minus binds to the next factor only
        out = ("-" if parts[0][0] < 0 else "") + first
        for c, t in parts[1:]:
            out += f" {'-' if c < 0 else '+'} {t}"
        if len(parts) > 1 or parts[0][0] < 0:
            own = _SUM_LEVEL
        elif len(self.terms) == 1 and (self.terms[0][1] != 1 or len(self.terms[0][0]) > 1
                                       or self.terms[0][0][0].kind in _PRODUCT_OPS):
            own = _PRODUCT_LEVEL
        else:
            own = _ATOM_LEVEL
        return f"({out})" if own < level else out


ExprLike = Expr | int


def _monomial_text(m: Monomial, coefficient: int) -> str:
    """A product of atoms, the coefficient last (`seq * 12`); a floordiv, ceildiv or mod
    in parentheses unless it is the whole term (the product operators associate left)."""
    whole = len(m) == 1 and coefficient == 1
    factors = [str(a) if a.kind not in _PRODUCT_OPS or whole else f"({a})" for a in m]
    if coefficient != 1:
        factors.append(str(coefficient))
    return " * ".join(factors)


def symbol(name: str) -> Expr:
    return Expr.symbol(name)


def symbol_name(text: str) -> str:
    """`text` made a symbol that the text form reads back (an identifier, not one of
    the operator words): ONNX's `dim_param`s are free-form (`batch size`, `2d`)."""
    name = re.sub(r"[^A-Za-z0-9_$.]", "_", text)
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = "_" + name
    return name + "_" if name in (*_PRODUCT_OPS, "min", "max") else name


def _atom(kind: str, *args: Expr) -> Expr:
    return Expr((((Atom(kind, args=args),), 1),))


def _split(p: Expr, c: int) -> tuple[Expr, Expr]:
    """`p = c * q + r` with `r`'s coefficients and constant in [0, c)."""
    q_terms = {m: coef // c for m, coef in p.terms}
    r_terms = {m: coef % c for m, coef in p.terms}
    return Expr._from(q_terms, p.constant // c), Expr._from(r_terms, p.constant % c)


def _cancel(a: Expr, b: Expr) -> tuple[Expr, int] | None:
    """`(a', c)` with `a = a' * m` and `b = c * m` for a product `m` of nonnegative atoms
    (so `m > 0` wherever `b` is not 0): `a floordiv b` is then `a' floordiv c`, and the
    same for ceildiv (`batch * seq * 64 floordiv (batch * seq * 16)` is 4: an ONNX
    reshape's -1 computed from dims the reshape keeps)."""
    if b.constant != 0 or len(b.terms) != 1 or a.constant != 0:
        return None
    (m, c), = b.terms
    if not all(_nonnegative_atom(atom) for atom in m):
        return None
    terms: dict[Monomial, int] = {}
    for monomial, coefficient in a.terms:
        rest = list(monomial)
        for atom in m:
            if atom not in rest:
                return None
            rest.remove(atom)
        terms[tuple(rest)] = coefficient
    constant = terms.pop((), 0)
    return Expr._from(terms, constant), c


def floordiv(a: ExprLike, b: ExprLike) -> Expr:
    a, b = Expr.of(a), Expr.of(b)
    c = b.as_int()
    if c is None:
        cancelled = _cancel(a, b)
        return floordiv(*cancelled) if cancelled is not None else _atom("floordiv", a, b)
    if c == 0:
        raise ZeroDivisionError("floordiv by 0 in a dim")
    if c < 0:
        return floordiv(-a, -c)
    if c == 1:
        return a
    q, r = _split(a, c)
    if r.as_int() is not None:
        return q + r.constant // c
    inner = r.terms[0][0][0] if len(r.terms) == 1 and r.constant == 0 and r.terms[0][1] == 1 \
        and len(r.terms[0][0]) == 1 else None
    if inner is not None and inner.kind == "floordiv" and inner.args[1].as_int() is not None \
            and inner.args[1].as_int() > 0:  # (x floordiv m) floordiv c = x floordiv (m * c)
        return q + floordiv(inner.args[0], inner.args[1].as_int() * c)
    return q + _atom("floordiv", r, Expr.of(c))


def ceildiv(a: ExprLike, b: ExprLike) -> Expr:
    a, b = Expr.of(a), Expr.of(b)
    c = b.as_int()
    if c is None:
        cancelled = _cancel(a, b)
        return ceildiv(*cancelled) if cancelled is not None else _atom("ceildiv", a, b)
    if c == 0:
        raise ZeroDivisionError("ceildiv by 0 in a dim")
    if c < 0:
        return ceildiv(-a, -c)
    return floordiv(a + (c - 1), c)  # ceil(a / c) = floor((a + c - 1) / c) for c > 0


def mod(a: ExprLike, b: ExprLike) -> Expr:
    a, b = Expr.of(a), Expr.of(b)
    c = b.as_int()
    if c is None:
        return _atom("mod", a, b)
    if c == 0:
        raise ZeroDivisionError("mod by 0 in a dim")
    if c < 0:  # x mod -c = -((-x) mod c)
        return -mod(-a, -c)
    _, r = _split(a, c)
    if r.as_int() is not None:
        return Expr.of(r.constant % c)
    return _atom("mod", r, Expr.of(c))


def _nonnegative_atom(atom: Atom) -> bool:
    if atom.kind == "sym":
        return True  # a dim
    if atom.kind == "mod":
        return (atom.args[1].as_int() or 0) > 0
    if atom.kind in ("floordiv", "ceildiv", "min"):
        return all(nonnegative(a) for a in atom.args) if atom.kind == "min" else \
            nonnegative(atom.args[0]) and (atom.args[1].as_int() or 0) > 0
    return any(nonnegative(a) for a in atom.args)  # max


def nonnegative(e: Expr) -> bool:
    """Whether `e` >= 0 for every value of its symbols (dims, >= 0): a sum of a
    nonnegative constant and terms with positive coefficients over nonnegative atoms."""
    return e.constant >= 0 and all(c > 0 and all(_nonnegative_atom(a) for a in m) for m, c in e.terms)


def _extremum(kind: str, a: ExprLike, b: ExprLike) -> Expr:
    a, b = Expr.of(a), Expr.of(b)
    gap = (a - b).as_int()
    if gap is not None:
        return a if (gap <= 0) == (kind == "min") else b
    if nonnegative(b - a):  # a <= b
        return a if kind == "min" else b
    if nonnegative(a - b):
        return b if kind == "min" else a
    return _atom(kind, *sorted((a, b), key=_sort_key))


def minimum(a: ExprLike, b: ExprLike) -> Expr:
    return _extremum("min", a, b)


def maximum(a: ExprLike, b: ExprLike) -> Expr:
    return _extremum("max", a, b)


BINARY: dict[str, Callable[[ExprLike, ExprLike], Expr]] = {
    "add": lambda a, b: Expr.of(a) + b,
    "sub": lambda a, b: Expr.of(a) - b,
    "mul": lambda a, b: Expr.of(a) * b,
    "floordiv": floordiv,
    "ceildiv": ceildiv,
    "mod": mod,
    "max": maximum,
    "min": minimum,
}
"""The dim algebra's binary operations (`shape_functions.INT_BINARY`'s keys)."""


# -- plain values (the binary IR form, runtime/ir_binary.py) ------------------------------

def plain(e: Expr) -> tuple:
    """`e` as nested tuples of ints and strings: `(constant, (coefficient, atoms), ...)`,
    an atom `(name,)` for a symbol or `(kind, args...)`."""
    return (e.constant, *((c, tuple((a.name,) if a.kind == "sym" else (a.kind, *map(plain, a.args)) for a in m))
                          for m, c in e.terms))


def from_plain(value: object) -> Expr:
    """The expression `plain` gave, rebuilt by the constructors (so in canonical form
    whatever the value says); ValueError if it is not one."""
    if not isinstance(value, tuple) or not value or not isinstance(value[0], int):
        raise ValueError(f"not a dim expression: {value!r}")
    total = Expr.of(value[0])
    for term in value[1:]:
        if not (isinstance(term, tuple) and len(term) == 2 and isinstance(term[0], int)
                and isinstance(term[1], tuple)):
            raise ValueError(f"not a term of a dim expression: {term!r}")
        product = Expr.of(term[0])
        for atom in term[1]:
            product = product * _atom_from_plain(atom)
        total = total + product
    return total


def _atom_from_plain(atom: object) -> Expr:
    if isinstance(atom, tuple) and len(atom) == 1 and isinstance(atom[0], str):
        if symbol_name(atom[0]) != atom[0]:
            raise ValueError(f"'{atom[0]}' is not a symbol's name")
        return symbol(atom[0])
    if isinstance(atom, tuple) and len(atom) == 3 and atom[0] in (*_PRODUCT_OPS, "min", "max"):
        return BINARY[atom[0]](from_plain(atom[1]), from_plain(atom[2]))
    raise ValueError(f"not an atom of a dim expression: {atom!r}")


# -- text ---------------------------------------------------------------------------------

_PRODUCT_OPS = ("floordiv", "ceildiv", "mod")


def parse(parser: BaseParser) -> Expr:
    """An expression from an xdsl parser: `+ -` over `* floordiv ceildiv mod` over
    integers, names, `min(a, b)`, `max(a, b)`, `-x` and parentheses."""
    result = _parse_product(parser)
    while True:
        if parser.parse_optional_punctuation("+"):
            result = result + _parse_product(parser)
        elif parser.parse_optional_punctuation("-"):
            result = result - _parse_product(parser)
        else:
            return result


def _parse_product(parser: BaseParser) -> Expr:
    result = _parse_factor(parser)
    while True:
        if parser.parse_optional_punctuation("*"):
            result = result * _parse_factor(parser)
            continue
        kind = parser.parse_optional_keyword_in(_PRODUCT_OPS)
        if kind is None:
            return result
        result = BINARY[kind](result, _parse_factor(parser))


def _parse_factor(parser: BaseParser) -> Expr:
    if parser.parse_optional_punctuation("-"):
        return -_parse_factor(parser)
    if parser.parse_optional_punctuation("("):
        inner = parse(parser)
        parser.parse_punctuation(")")
        return inner
    value = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if value is not None:
        return Expr.of(value)
    name = parser.parse_optional_identifier()
    if name is None:
        parser.raise_error("expected a dim: an integer, a name, min(...), max(...) or (...)")
    if name in ("min", "max") and parser.parse_optional_punctuation("("):
        a = parse(parser)
        parser.parse_punctuation(",")
        b = parse(parser)
        parser.parse_punctuation(")")
        return BINARY[name](a, b)
    if name in _PRODUCT_OPS:
        parser.raise_error(f"'{name}' needs an operand before it")
    return symbol(name)


def parse_text(text: str) -> Expr:
    """An expression from text (`"seq * 12"`)."""
    from xdsl.context import Context
    from xdsl.parser import Parser

    from xdsl.utils.mlir_lexer import MLIRTokenKind

    parser = Parser(Context(), text)
    result = parse(parser)
    if parser._current_token.kind != MLIRTokenKind.EOF:
        parser.raise_error("unexpected text after the dim")
    return result
