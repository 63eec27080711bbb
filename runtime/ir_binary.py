"""A binary form of xdsl IR, read back without a parser: how a bytecode module holds its
host functions (docs/bytecode.md, "host functions").

The VM runs its host functions (CPU fallbacks, the kernels' fusion groups whose shape
functions check every launch, the signatures) as IR. Saving them as MLIR text meant
parsing it at every load (a 10,000-op model's host text took 5 s); like MLIR's own
bytecode, this form is a table of attributes and a tree of ops that `decode` rebuilds
by constructing the objects directly.

Layout: a little-endian u32 word stream, then a blob of bytes. The words are

    blobs:  count, then (offset, length) into the blob per entry  (names, strings, bytes)
    attrs:  count, then per attribute a kind and its fields; an attribute refers only
            to blobs and to attributes before it
    root:   the root op: name, operands (value ids), result types (attribute ids),
            properties and attributes ((name blob, attribute id) pairs), regions (per
            block: argument types and ops); a value's type comes with its name in the
            text form (a blob index plus one, 0 for none)

Values are numbered in the order `decode` defines them: a block's arguments when the
block starts, an op's results after its regions. A value used before its definition
(or a successor) has no encoding: `encode` raises `IRBinaryError`. `Data` attributes
are written by kind (ints, strings, floats, arrays, dictionaries, bytes, enums, flag
sets, and a `PlainForm`'s nested tuples, Nimble's symbolic dims); one of a class that
none of these covers is written as text and parsed (no attribute of a compiled model
needs that: tests/test_ir_binary.py).

`decode` checks every index and every count against the words left and turns any
error of xdsl's constructors into `IRBinaryError`; the caller verifies the module.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Attribute, Block, Data, Operation, ParametrizedAttribute, Region, SSAValue
from xdsl.printer import Printer

from nimble.dialects.interfaces import PlainForm
from nimble.errors import InputError

_KINDS = ("param", "int", "str", "float", "array", "dict", "bytes", "enum", "flags", "plain", "text")
(_PARAM, _INT, _STR, _FLOAT, _ARRAY, _DICT, _BYTES, _ENUM, _FLAGS, _PLAIN, _TEXT) = range(len(_KINDS))
_NONE, _PLAIN_INT, _PLAIN_STR, _TUPLE = range(4)  # a plain value's tags (`PlainForm`)
MAX_DEPTH = 200
"""Regions nested deeper than this are refused (a compiled model nests a few)."""


class IRBinaryError(InputError):
    """IR that has no binary form, or bytes that are not one."""


def _builtin_classes() -> dict[str, type[Attribute]]:
    return {c.__name__: c for c in vars(builtin).values()
            if isinstance(c, type) and issubclass(c, Attribute) and c.__module__ == builtin.__name__}


_BUILTIN = _builtin_classes()


def _class_key(cls: type[Attribute]) -> str:
    """How the class of an attribute is named in the file: `builtin:ClassName` for the
    builtin dialect (whose names lack a prefix and repeat), else its `dialect.name`."""
    return f"builtin:{cls.__name__}" if cls.__module__ == builtin.__name__ else cls.name


def _attribute_class(ctx: Context, key: str) -> type[Attribute] | None:
    if key.startswith("builtin:"):
        return _BUILTIN.get(key.removeprefix("builtin:"))
    if "." not in key:
        return None
    return ctx.get_optional_attr(key) or ctx.get_optional_type(key)


# -- encoding ---------------------------------------------------------------------------


class _Encoder:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.blob_ids: dict[bytes, int] = {}
        self.blobs: list[bytes] = []
        self.attr_words: list[int] = []
        self.attr_ids: dict[Attribute, int] = {}
        self.op_words: list[int] = []
        self.values: dict[SSAValue, int] = {}

    def blob(self, data: bytes | str) -> int:
        if isinstance(data, str):
            data = data.encode()
        at = self.blob_ids.get(data)
        if at is None:
            at = self.blob_ids[data] = len(self.blobs)
            self.blobs.append(data)
        return at

    def hint(self, v: SSAValue) -> int:
        """A value's name in the text form (`%gates`), as a blob index plus one; 0: none."""
        return 0 if v.name_hint is None else self.blob(v.name_hint) + 1

    def attr(self, a: Attribute) -> int:
        at = self.attr_ids.get(a)
        if at is not None:
            return at
        fields = self._fields(a)
        at = self.attr_ids[a] = len(self.attr_ids)
        self.attr_words.extend(fields)
        return at

    def _fields(self, a: Attribute) -> list[int]:
        cls = type(a)
        key = _class_key(cls)
        if isinstance(a, ParametrizedAttribute):
            if _attribute_class(self.ctx, key) is not cls:
                raise IRBinaryError(f"attribute class {cls.__name__} is not registered as '{key}'")
            params = [self.attr(p) for p in a.parameters]
            return [_PARAM, self.blob(key), len(params), *params]
        if not isinstance(a, Data):
            raise IRBinaryError(f"attribute {a} is neither data nor parametrized")
        data = a.data
        if cls is builtin.IntAttr:
            return [_INT, self.blob(str(int(data)))]
        if cls is builtin.StringAttr:
            return [_STR, self.blob(data)]
        if cls is builtin.FloatData:
            return [_FLOAT, self.blob(float(data).hex())]
        if cls is builtin.BytesAttr:
            return [_BYTES, self.blob(data)]
        if cls is builtin.ArrayAttr:
            items = [self.attr(x) for x in data]
            return [_ARRAY, len(items), *items]
        if cls is builtin.DictionaryAttr:
            pairs = [(self.blob(k), self.attr(v)) for k, v in data.items()]
            return [_DICT, len(pairs), *[w for p in pairs for w in p]]
        if _attribute_class(self.ctx, key) is cls:
            if isinstance(data, Enum) and _enum_type(cls) is type(data):
                return [_ENUM, self.blob(key), self.blob(data.name)]
            if isinstance(data, frozenset) and _flags_class(cls):
                flags = sorted(str(f) for f in data)
                return [_FLAGS, self.blob(key), len(flags), *[self.blob(f) for f in flags]]
            if isinstance(a, PlainForm):
                return [_PLAIN, self.blob(key), *self.plain(a.plain())]
        return [_TEXT, self.blob(_print_attribute(a))]

    def plain(self, value: Any) -> list[int]:
        if value is None:
            return [_NONE]
        if isinstance(value, bool) or not isinstance(value, int | str | tuple):
            raise IRBinaryError(f"a plain value holds {type(value).__name__} {value!r}")
        if isinstance(value, int):
            return [_PLAIN_INT, self.blob(str(value))]
        if isinstance(value, str):
            return [_PLAIN_STR, self.blob(value)]
        return [_TUPLE, len(value), *[w for x in value for w in self.plain(x)]]

    def op(self, op: Operation, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise IRBinaryError(f"regions nested deeper than {MAX_DEPTH}")
        if self.ctx.get_optional_op(op.name) is not type(op):
            raise IRBinaryError(f"op '{op.name}' is not registered as its class {type(op).__name__}")
        if op.successors:
            raise IRBinaryError(f"'{op.name}' op: successors have no binary form")
        w = self.op_words
        w.append(self.blob(op.name))
        w.append(len(op.operands))
        for v in op.operands:
            if v not in self.values:
                raise IRBinaryError(f"'{op.name}' op uses a value before its definition")
            w.append(self.values[v])
        w.append(len(op.results))
        for r in op.results:
            w += [self.attr(r.type), self.hint(r)]
        for table in (op.properties, op.attributes):
            pairs = [(self.blob(k), self.attr(v)) for k, v in table.items()]
            w.append(len(pairs))
            w.extend(x for p in pairs for x in p)
        w.append(len(op.regions))
        for region in op.regions:
            w.append(len(region.blocks))
            for block in region.blocks:
                w.append(len(block.args))
                for arg in block.args:
                    self.values[arg] = len(self.values)
                    w += [self.attr(arg.type), self.hint(arg)]
                w.append(len(block.ops))
                for inner in block.ops:
                    self.op(inner, depth + 1)
        for r in op.results:
            self.values[r] = len(self.values)

    def bytes(self) -> bytes:
        words = [len(self.blobs)]
        offset = 0
        for b in self.blobs:
            words += [offset, len(b)]
            offset += len(b)
        words += [len(self.attr_ids), *self.attr_words, *self.op_words]
        if offset >= 1 << 32 or max(words) >= 1 << 32:
            raise IRBinaryError("IR too large for its binary form (4 GiB)")
        return array("I", [len(words)]).tobytes() + array("I", words).tobytes() + b"".join(self.blobs)


def _enum_type(cls: type[Attribute]) -> type[Enum] | None:
    if cls is builtin.SignednessAttr:
        return builtin.Signedness
    return getattr(cls, "enum_type", None)


def _flags_class(cls: type[Attribute]) -> bool:
    from xdsl.dialects.utils.bit_enum_attribute import BitEnumAttribute

    return issubclass(cls, BitEnumAttribute)


def _print_attribute(a: Attribute) -> str:
    import io

    out = io.StringIO()
    Printer(stream=out).print_attribute(a)
    return out.getvalue()


def encode(op: Operation, ctx: Context) -> bytes:
    """The binary form of `op` (usually a module) and everything in it."""
    if sys.byteorder != "little":
        raise IRBinaryError("the binary IR form is little-endian")  # (as the rest of the bytecode module)
    e = _Encoder(ctx)
    e.op(op)
    return e.bytes()


# -- decoding ---------------------------------------------------------------------------


class _Decoder:
    def __init__(self, data: bytes, ctx: Context):
        if len(data) < 4:
            raise IRBinaryError("truncated: no word count")
        n = int.from_bytes(data[:4], "little")
        if 4 + 4 * n > len(data):
            raise IRBinaryError(f"truncated: {n} words do not fit in {len(data) - 4} bytes")
        self.words = array("I")
        self.words.frombytes(data[4:4 + 4 * n])
        self.blob = memoryview(data)[4 + 4 * n:]
        self.pos = 0
        self.ctx = ctx
        self.values: list[SSAValue] = []
        self.ops: dict[int, type[Operation]] = {}

    def word(self) -> int:
        if self.pos >= len(self.words):
            raise IRBinaryError(f"truncated at word {self.pos}")
        self.pos += 1
        return self.words[self.pos - 1]

    def count(self, per_item: int) -> int:
        n = self.word()
        if n * per_item > len(self.words) - self.pos:
            raise IRBinaryError(f"word {self.pos - 1}: a count of {n} exceeds the words left")
        return n

    def index(self, table: list[Any], what: str) -> Any:
        i = self.word()
        if i >= len(table):
            raise IRBinaryError(f"word {self.pos - 1}: {what} {i} is not defined (there are {len(table)})")
        return table[i]

    def read_blobs(self) -> None:
        self.blobs: list[bytes] = []
        for _ in range(self.count(2)):
            offset, length = self.word(), self.word()
            if offset + length > len(self.blob):
                raise IRBinaryError(f"blob [{offset}, {offset + length}) is outside the {len(self.blob)} bytes")
            self.blobs.append(bytes(self.blob[offset:offset + length]))

    def text(self) -> str:
        try:
            return self.index(self.blobs, "blob").decode()
        except UnicodeDecodeError:
            raise IRBinaryError(f"word {self.pos - 1}: a name or string is not UTF-8") from None

    def attribute_class(self) -> type[Attribute]:
        key = self.text()
        cls = _attribute_class(self.ctx, key)
        if cls is None:
            raise IRBinaryError(f"unknown attribute class '{key}'")
        return cls

    def read_attrs(self) -> None:
        self.attrs: list[Attribute] = []
        for _ in range(self.count(2)):
            kind = self.word()
            if kind >= len(_READ):
                raise IRBinaryError(f"word {self.pos - 1}: unknown attribute kind {kind}")
            self.attrs.append(_READ[kind](self))

    def plain_value(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise IRBinaryError(f"a plain value nested deeper than {MAX_DEPTH}")
        tag = self.word()
        if tag == _NONE:
            return None
        if tag == _PLAIN_INT:
            return int(self.text())
        if tag == _PLAIN_STR:
            return self.text()
        if tag == _TUPLE:
            return tuple(self.plain_value(depth + 1) for _ in range(self.count(1)))
        raise IRBinaryError(f"word {self.pos - 1}: unknown plain value tag {tag}")

    def pairs(self) -> dict[str, Attribute]:
        return {self.text(): self.index(self.attrs, "attribute") for _ in range(self.count(2))}

    def op(self, depth: int = 0) -> Operation:
        if depth > MAX_DEPTH:
            raise IRBinaryError(f"regions nested deeper than {MAX_DEPTH}")
        name = self.text()
        cls = self.ctx.get_optional_op(name)
        if cls is None:
            raise IRBinaryError(f"unknown op '{name}'")
        operands = [self.index(self.values, "value") for _ in range(self.count(1))]
        results = [self.typed() for _ in range(self.count(2))]
        properties, attributes = self.pairs(), self.pairs()
        regions = []
        for _ in range(self.count(1)):
            blocks = []
            for _ in range(self.count(2)):
                args = [self.typed() for _ in range(self.count(2))]
                block = Block(arg_types=[t for t, _ in args])
                self.named(block.args, args)
                block.add_ops([self.op(depth + 1) for _ in range(self.count(5))])
                blocks.append(block)
            regions.append(Region(blocks))
        op = cls.create(operands=operands, result_types=[t for t, _ in results], properties=properties,
                        attributes=attributes, regions=regions)
        self.named(op.results, results)
        return op

    def typed(self) -> tuple[Attribute, str | None]:
        """A value's type and name hint."""
        type_ = self.index(self.attrs, "attribute")
        hint = self.word()
        if hint > len(self.blobs):
            raise IRBinaryError(f"word {self.pos - 1}: name {hint - 1} is not a blob")
        return type_, None if hint == 0 else self.blobs[hint - 1].decode(errors="replace")

    def named(self, values: Sequence[SSAValue], typed: list[tuple[Attribute, str | None]]) -> None:
        for v, (_, hint) in zip(values, typed):
            if hint is not None:
                v.name_hint = hint
        self.values.extend(values)


def _read_param(d: _Decoder) -> Attribute:
    cls = d.attribute_class()
    if not issubclass(cls, ParametrizedAttribute):
        raise IRBinaryError(f"attribute class {cls.__name__} takes no parameters")
    return cls.new([d.index(d.attrs, "attribute") for _ in range(d.count(1))])


def _read_enum(d: _Decoder) -> Attribute:
    cls = d.attribute_class()
    enum = _enum_type(cls)
    if enum is None:
        raise IRBinaryError(f"attribute class {cls.__name__} is not an enum")
    name = d.text()
    if name not in enum.__members__:
        raise IRBinaryError(f"{enum.__name__} has no member '{name}'")
    return cls(enum[name])


def _read_flags(d: _Decoder) -> Attribute:
    cls = d.attribute_class()
    if not _flags_class(cls):
        raise IRBinaryError(f"attribute class {cls.__name__} is not a set of flags")
    return cls([d.text() for _ in range(d.count(1))])


def _read_plain(d: _Decoder) -> Attribute:
    cls = d.attribute_class()
    if not issubclass(cls, PlainForm):
        raise IRBinaryError(f"attribute class {cls.__name__} has no plain form")
    return cls.from_plain(d.plain_value())


def _read_text(d: _Decoder) -> Attribute:
    from xdsl.parser import Parser

    return Parser(d.ctx, d.text(), "<attribute>").parse_attribute()


_READ: tuple[Callable[[_Decoder], Attribute], ...] = (
    _read_param,
    lambda d: builtin.IntAttr(int(d.text())),
    lambda d: builtin.StringAttr(d.text()),
    lambda d: builtin.FloatData(float.fromhex(d.text())),
    lambda d: builtin.ArrayAttr([d.index(d.attrs, "attribute") for _ in range(d.count(1))]),
    lambda d: builtin.DictionaryAttr(d.pairs()),
    lambda d: builtin.BytesAttr(d.index(d.blobs, "blob")),
    _read_enum,
    _read_flags,
    _read_plain,
    _read_text,
)


def decode(data: bytes, ctx: Context) -> Operation:
    """The op `encode` wrote (not verified: the caller verifies it); `IRBinaryError`
    for anything that is not a well-formed encoding."""
    d = _Decoder(data, ctx)
    try:
        d.read_blobs()
        d.read_attrs()
        root = d.op()
    except IRBinaryError:
        raise
    except Exception as e:  # an xdsl constructor refusing what the words say
        raise IRBinaryError(f"word {d.pos}: {type(e).__name__}: {e}") from None
    if d.pos != len(d.words):
        raise IRBinaryError(f"{len(d.words) - d.pos} words after the root op")
    return root
