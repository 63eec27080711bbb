"""`nimble`: the tools as one command. `nimble run model.onnx ...` is `nimble-run
model.onnx ...`, and so for every `nimble-*` console script the package installs (run,
compile, opt, interpret, onnx-conformance, fuzz-differential, fuzz-coverage: read from
its entry points, not listed here); `nimble --version` names Nimble's version and those
of the libraries its code depends on."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from importlib.metadata import EntryPoint, entry_points, version

from nimble import __version__


def tools() -> dict[str, EntryPoint]:
    """The package's `nimble-<name>` scripts by `<name>` (their entry points, unloaded)."""
    return {ep.name.removeprefix("nimble-"): ep for ep in entry_points(group="console_scripts")
            if ep.name.startswith("nimble-") and ep.dist is not None and ep.dist.name == "nimble"}


def main(argv: Sequence[str] | None = None) -> int:
    found = tools()
    p = argparse.ArgumentParser(prog="nimble", description=__doc__.splitlines()[0].strip("`:").strip(),
                                epilog=f"commands: {', '.join(sorted(found))}; `nimble COMMAND --help` for each")
    p.add_argument("--version", action="version",
                   version=f"nimble {__version__} (xdsl {version('xdsl')}, llvmlite {version('llvmlite')})")
    p.add_argument("command", choices=sorted(found), metavar="COMMAND")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the command's own arguments")
    args = p.parse_args(argv)
    return found[args.command].load()(args.args)
