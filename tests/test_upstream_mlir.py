"""Upstream MLIR reads Nimble's IR: the generic form of what every lit test's `nimble-opt`
run prints parses and verifies in upstream `mlir-opt` (version 22, Nimble's own dialects
taken as unregistered ones). The examples at every stage of every pipeline are checked
by tests/test_ir_integrity.py (`assert_parses_upstream`). Skipped where `mlir-opt-22` is
not installed (`scripts/install-system-packages.sh` installs it from Debian's
`mlir-22-tools`; `$NIMBLE_MLIR_OPT` names another binary).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from test_ir_integrity import MLIR_OPT

from nimble.opt import main as nimble_opt

ROOT = Path(__file__).resolve().parent.parent
RUN = re.compile(r"^(?://|#) RUN: nimble-opt (%s[^|\n]*)", re.M)
NOT_MLIR = ("--verify-diagnostics", "-t", "--target", "--print-between-passes", "--time-passes")


def mlir_runs() -> list[tuple[Path, list[str]]]:
    """(lit test, nimble-opt's arguments) for every RUN line whose output is MLIR."""
    runs = []
    for path in sorted((ROOT / "lit_tests").rglob("*")):
        if path.suffix not in (".mlir", ".nb"):
            continue
        for m in RUN.finditer(path.read_text()):
            args = shlex.split(m.group(1).replace("%s", str(path)))
            if not any(a in NOT_MLIR or a.startswith(("-t=", "--target=")) for a in args):
                runs.append((path, args))
    return runs


@pytest.mark.skipif(MLIR_OPT is None, reason="upstream mlir-opt-22 is not installed")
@pytest.mark.parametrize("path, args", mlir_runs(), ids=lambda x: str(x.relative_to(ROOT / "lit_tests"))
                         if isinstance(x, Path) else " ".join(a for a in x if not a.startswith("/")))
def test_lit_output_parses_upstream(path, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = nimble_opt([*args, "--print-op-generic"])
    assert code == 0
    split = ["--split-input-file"] if "--split-input-file" in args else []
    run = subprocess.run([MLIR_OPT, "--allow-unregistered-dialect", *split, "-o", os.devnull],
                         input=out.getvalue(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"upstream mlir-opt rejects the output of nimble-opt {' '.join(args)}:\n" \
                                f"{run.stderr[:3000]}"


def test_every_lit_test_has_an_mlir_run():
    """The collection above sees the lit tests (a RUN syntax change would empty it)."""
    assert len({p for p, _ in mlir_runs()}) >= 40
