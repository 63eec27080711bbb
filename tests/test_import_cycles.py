"""No import cycles in the package, function-local imports included (a local import that
closes a cycle hides it from Python, not from a reader). Imports under
`if TYPE_CHECKING:` are for annotations and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"nimble": "nimble", "dialects": "nimble.dialects", "passes": "nimble.passes",
            "lowering": "nimble.lowering", "runtime": "nimble.runtime", "frontend": "nimble.frontend"}

def modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            if folder == "nimble" and parts and parts[0] in PACKAGES:
                continue
            found[".".join([package, *parts])] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[ast.AST]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skipped.update(ast.walk(node))
    return skipped


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree)
    out = set()
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("nimble"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("nimble"))
    return {m for m in out if m in known and m != name}


def cycles() -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    found = cycles()
    assert found == [], f"import cycles: {[sorted(c) for c in found]}"


def test_the_checker_sees_a_local_import():
    """`runtime/executable.py` imports the LLVM lowering inside a function (a module whose
    code is for another CPU compiles its kernels again): the checker must see it, and
    not an import under `if TYPE_CHECKING:` (`c_groups` names `CEmitter` for annotations)."""
    known = modules()
    assert "nimble.lowering.llvm.loops_to_llvm" in imports(
        "nimble.runtime.executable", known["nimble.runtime.executable"], known)
    assert "nimble.lowering.opencl.c_emitter" not in imports(
        "nimble.lowering.opencl.c_groups", known["nimble.lowering.opencl.c_groups"], known)
