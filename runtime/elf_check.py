"""Structural checks of an ELF relocatable object before LLVM's loader sees it.

LLVM's RuntimeDyld trusts the object it loads: a symbol's name past the end of its
string table, a relocation outside its section or naming a symbol that does not exist,
or a section outside the file is an assertion failure or a wild write, not an error.
`check_object` reads every header, section, symbol and relocation of the object and
refuses (`ElfError`) anything out of bounds or of a kind Nimble's own objects never hold
(x86-64 `ET_REL` objects as LLVM emits them: code, read-only data, string and symbol
tables, RELA relocations, unwind tables). What the code then does is not checked: object
code is code (see docs/reliability.md, "Trust").
"""

from __future__ import annotations

import struct

from nimble.errors import InputError

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
SHDR = struct.Struct("<IIQQQQIIQQ")  # name, type, flags, addr, offset, size, link, info, addralign, entsize
SYM = struct.Struct("<IBBHQQ")  # name, info, other, shndx, value, size
RELA = struct.Struct("<QQq")  # offset, info, addend

ET_REL = 1
MACHINES = {62: "x86-64"}
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS = 0, 1, 2, 3, 4, 7, 8
SECTION_TYPES = {SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS,
                 0x70000001,  # SHT_X86_64_UNWIND (.eh_frame)
                 0x6FFF4C03}  # SHT_LLVM_ADDRSIG
RELOCATION_WIDTHS = {1: 8, 2: 4, 4: 4, 9: 4, 10: 4, 11: 4, 24: 8, 41: 4, 42: 4}
"""x86-64 relocation types LLVM emits, and how many bytes each writes (64, PC32, PLT32,
GOTPCREL, 32, 32S, PC64, GOTPCRELX, REX_GOTPCRELX)."""
SHN_UNDEF, SHN_ABS, SHN_COMMON = 0, 0xFFF1, 0xFFF2
SYMBOL_TYPES = {0, 1, 2, 3, 4}  # NOTYPE, OBJECT, FUNC, SECTION, FILE
SYMBOL_BINDINGS = {0, 1, 2}  # LOCAL, GLOBAL, WEAK
RELOCATED_TYPES = {0, 1, 2, 3}
"""Symbol types a relocation may name (RuntimeDyld aborts on another: "Unresolved symbol type")."""
MAX_SECTIONS = 1 << 12
MAX_ALIGN = 1 << 16
MAX_NOBITS = 1 << 26


class ElfError(InputError, ValueError):
    """The object is not one LLVM's loader may be given."""


def check_object(blob: bytes) -> None:
    """Raise ElfError unless `blob` is a well-formed x86-64 ELF relocatable object."""
    if len(blob) < EHDR.size or blob[:4] != b"\x7fELF":
        raise ElfError("not ELF object code")
    ident = blob[:16]
    if ident[4] != 2 or ident[5] != 1 or ident[6] != 1:
        raise ElfError("not a 64-bit little-endian ELF (version 1) object")
    (_, e_type, machine, version, _, _, shoff, _, ehsize, _, phnum, shentsize, shnum,
     shstrndx) = EHDR.unpack_from(blob)
    if e_type != ET_REL or version != 1 or phnum != 0 or ehsize != EHDR.size:
        raise ElfError(f"not a relocatable object (type {e_type}, {phnum} program headers)")
    if machine not in MACHINES:
        raise ElfError(f"object code for machine {machine}, not {', '.join(MACHINES.values())}")
    if shentsize != SHDR.size or not 1 <= shnum <= MAX_SECTIONS or shoff + shnum * SHDR.size > len(blob):
        raise ElfError("the section header table is outside the object")
    sections = [SHDR.unpack_from(blob, shoff + i * SHDR.size) for i in range(shnum)]
    if sections[0][1] != SHT_NULL:
        raise ElfError("section 0 is not the null section")
    for i, (_, kind, _, _, offset, size, link, _, align, _) in enumerate(sections[1:], 1):
        if kind not in SECTION_TYPES or kind == SHT_NULL:
            raise ElfError(f"section {i} has type {kind:#x}")
        if (kind == SHT_NOBITS and size > MAX_NOBITS) or (kind != SHT_NOBITS and offset + size > len(blob)):
            raise ElfError(f"section {i} ({size} bytes at {offset}) is outside the object")
        if align > MAX_ALIGN or align & (align - 1):
            raise ElfError(f"section {i} has alignment {align}")
        if link >= shnum:
            raise ElfError(f"section {i} links to section {link}, of {shnum}")
    names = _strings(blob, sections, shstrndx, "section names")
    for i, section in enumerate(sections):
        if section[0] >= len(names):
            raise ElfError(f"section {i}'s name is past the end of the section name table")
    for i, section in enumerate(sections):
        if section[1] == SHT_SYMTAB:
            _check_symbols(blob, sections, i)
        elif section[1] == SHT_RELA:
            _check_relocations(blob, sections, i)


def undefined_symbols(blob: bytes) -> set[str]:
    """The names of the symbols a well-formed object (`check_object`) refers to but does
    not define: what the loader must bind."""
    (_, _, _, _, _, _, shoff, _, _, _, _, _, shnum, _) = EHDR.unpack_from(blob)
    sections = [SHDR.unpack_from(blob, shoff + i * SHDR.size) for i in range(shnum)]
    names: set[str] = set()
    for section in sections:
        if section[1] != SHT_SYMTAB:
            continue
        _, _, _, _, offset, size, link, *_ = section
        strings = _strings(blob, sections, link, "symbol names")
        for j in range(1, size // SYM.size):
            name, _, _, shndx, _, _ = SYM.unpack_from(blob, offset + j * SYM.size)
            if shndx == SHN_UNDEF and name:
                names.add(strings[name:strings.index(b"\0", name)].decode("utf-8", "replace"))
    return names


def _strings(blob: bytes, sections: list[tuple], index: int, what: str) -> bytes:
    if not 0 < index < len(sections) or sections[index][1] != SHT_STRTAB:
        raise ElfError(f"the {what} are not in a string table")
    _, _, _, _, offset, size, *_ = sections[index]
    table = blob[offset:offset + size]
    if size and table[-1] != 0:
        raise ElfError(f"the {what} table does not end with a NUL")
    return table


def _check_symbols(blob: bytes, sections: list[tuple], index: int) -> None:
    _, _, _, _, offset, size, link, info, _, entsize = sections[index]
    if entsize != SYM.size or size % SYM.size or info > size // SYM.size:
        raise ElfError(f"symbol table (section {index}) has entries of {entsize} bytes in {size}")
    strings = _strings(blob, sections, link, "symbol names")
    for j in range(size // SYM.size):
        name, info, _, shndx, value, length = SYM.unpack_from(blob, offset + j * SYM.size)
        if name >= max(len(strings), 1):
            raise ElfError(f"symbol {j}'s name is past the end of its string table")
        if info & 0xF not in SYMBOL_TYPES or info >> 4 not in SYMBOL_BINDINGS:
            raise ElfError(f"symbol {j} has type {info & 0xF} and binding {info >> 4}")
        if shndx in (SHN_UNDEF, SHN_ABS, SHN_COMMON):
            continue
        if shndx >= len(sections):
            raise ElfError(f"symbol {j} is in section {shndx}, of {len(sections)}")
        if value + length > sections[shndx][5]:
            raise ElfError(f"symbol {j} ({length} bytes at {value}) is outside its section {shndx}")


def _check_relocations(blob: bytes, sections: list[tuple], index: int) -> None:
    _, _, _, _, offset, size, link, target, _, entsize = sections[index]
    if entsize != RELA.size or size % RELA.size:
        raise ElfError(f"relocation section {index} has entries of {entsize} bytes in {size}")
    if not 0 < link < len(sections) or sections[link][1] != SHT_SYMTAB:
        raise ElfError(f"relocation section {index} does not link to a symbol table")
    if not 0 < target < len(sections) or sections[target][1] not in (SHT_PROGBITS, 0x70000001):
        raise ElfError(f"relocation section {index} applies to section {target}, which holds no code or data")
    symbols = sections[link][5] // SYM.size
    room = sections[target][5]
    for j in range(size // RELA.size):
        at, info, _ = RELA.unpack_from(blob, offset + j * RELA.size)
        symbol, kind = info >> 32, info & 0xFFFFFFFF
        width = RELOCATION_WIDTHS.get(kind)
        if width is None:
            raise ElfError(f"relocation {j} of section {index} has type {kind}")
        if symbol >= symbols:
            raise ElfError(f"relocation {j} of section {index} names symbol {symbol}, of {symbols}")
        symbol_info = blob[sections[link][4] + symbol * SYM.size + 4]
        if symbol_info & 0xF not in RELOCATED_TYPES:
            raise ElfError(f"relocation {j} of section {index} names symbol {symbol}, of type {symbol_info & 0xF}")
        if at + width > room:
            raise ElfError(f"relocation {j} of section {index} writes at {at}, past its section's {room} bytes")
