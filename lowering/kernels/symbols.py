"""Names of a module's symbols, and fresh ones for what a pass adds (kernels, recurrences)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import SymbolOpInterface


def symbol_names(module: ModuleOp) -> set[str]:
    """The names of the module's top-level symbols (host functions, kernels, ADTs, ...)."""
    names = set()
    for op in module.ops:
        trait = op.get_trait(SymbolOpInterface)
        if trait is not None:
            name = trait.get_sym_attr_name(op)
            if name is not None:
                names.add(name.data)
    return names


def first_free(stem: str, taken: set[str]) -> str:
    """`stem_0`, `stem_1`, ...: the first not in `taken` (the caller takes it)."""
    n = 0
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"
