"""The docs agree with the code: docs/design.md's pipeline table names every stage and
every pass of `nimble/pipelines.py` (in the stage's row), docs/bytecode.md gives the
format version the code writes, and the README and docs point only at files that exist
in the repository."""

from __future__ import annotations

import re
from pathlib import Path

from nimble.pipelines import STAGES, TARGETS

ROOT = Path(__file__).resolve().parent.parent


def _pipeline_rows() -> dict[str, str]:
    text = (ROOT / "docs" / "design.md").read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z]+)` \| ([^|]+) \|", text, re.M)}


def test_the_pipeline_table_names_every_stage_and_pass():
    rows = _pipeline_rows()
    assert set(rows) == set(STAGES), "docs/design.md's pipeline table and nimble/pipelines.py differ in stages"
    for stage, passes in STAGES.items():
        listed = [p.strip() for p in rows[stage].split(",")]
        assert {p.split("{")[0] for p in passes} == set(listed), f"stage {stage}: {passes} vs {listed}"


def test_the_bytecode_doc_gives_the_format_version():
    from nimble.runtime.bytecode import FORMAT_VERSION

    text = (ROOT / "docs" / "bytecode.md").read_text()
    assert re.findall(r"format version \((\d+)\)", text) == [str(FORMAT_VERSION)]


def test_the_targets_line_names_their_stages():
    text = (ROOT / "docs" / "design.md").read_text()
    assert f"`llvm` = {', '.join(TARGETS['llvm'])}" in text
    assert f"`hetero` = {', '.join(TARGETS['hetero'])}" in text


def test_paths_in_the_docs_exist():
    """Every `folder/file.py`-like path the README and docs name in backquotes is in the
    checkout (a moved module leaves no stale pointer)."""
    missing = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for path in re.findall(r"`((?:dialects|lowering|passes|runtime|frontend|nimble|tests|benchmarks|docs|scripts|"
                                r"examples|lit_tests)/[\w/.-]+)`", doc.read_text()):
            module = re.sub(r"\.\w+$", ".py", path)  # `runtime/cpu_target.CpuTarget`: a name in a module
            if not (ROOT / path.rstrip("/")).exists() and not (ROOT / module).exists():
                missing.append(f"{doc.name}: {path}")
    assert not missing, missing
