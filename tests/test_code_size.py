"""Small pieces: no module of the package over `MAX_LINES` lines and no function over
`MAX_FUNCTION_LINES` (a function's lines include its nested functions). An exception
must be listed below, and a listed one that fits again fails the test until it leaves
the list (the lists are empty now).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ("dialects", "frontend", "lowering", "nimble", "passes", "runtime")
MAX_LINES = 600
MAX_FUNCTION_LINES = 80

LARGE_FILES: set[str] = set()
LONG_FUNCTIONS: set[str] = set()


def sources() -> list[Path]:
    return sorted(p for folder in PACKAGE for p in (ROOT / folder).rglob("*.py"))


def test_no_module_over_the_limit():
    large = {str(p.relative_to(ROOT)) for p in sources() if len(p.read_text().splitlines()) > MAX_LINES}
    assert large - LARGE_FILES == set(), f"modules over {MAX_LINES} lines: split them"
    assert LARGE_FILES - large == set(), "these fit now: take them off LARGE_FILES"


def test_no_function_over_the_limit():
    long = set()
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                    and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long.add(f"{path.relative_to(ROOT)}:{node.name}")
    assert long - LONG_FUNCTIONS == set(), f"functions over {MAX_FUNCTION_LINES} lines: split them"
    assert LONG_FUNCTIONS - long == set(), "these fit now: take them off LONG_FUNCTIONS"


PLATFORM_CHECKS = {"runtime/jit_pool.py", "runtime/workers.py", "runtime/llvm_jit.py"}
"""Modules whose `hasattr` asks the platform (os.sched_getaffinity, libgcc's symbols)."""


def test_no_hasattr_duck_typing():
    """Types and objects are asked what they are (`isinstance`), not whether they happen
    to have an attribute."""
    found = {str(p.relative_to(ROOT)) for p in sources() if "hasattr(" in p.read_text()}
    assert found - PLATFORM_CHECKS == set()
