"""A module's functions as a Graphviz graph (as MLIR's `--view-op-graph` draws them):
ops are nodes, each use of a value an edge from the op or block argument that defines it,
labelled with the value's type; an op with regions (a fusion group, a loop, a branch) is
a cluster holding its body; an op's device (`device.placement`, a kernel's
`nimble.device`) is its colour. `nimble-opt --view-op-graph` (or `-t dot`) prints the
graph of the module at any point of a pipeline; `nimble.visualize(module, "out.svg")`
renders it with Graphviz's `dot`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from nimble.dialects.device import Device, placement_of
from nimble.dialects.loop import DEVICE_MARK, KernelOp, is_kernel

COLOURS = {Device.CPU: "lightblue", Device.OPENCL: "orange", Device.SPATIAL: "palegreen"}
"""Fill colour of an op placed on a device (ops with no placement are white)."""
LABEL_LENGTH = 60
"""Longest node or edge label; longer ones are cut with an ellipsis."""


def _quote(text: str) -> str:
    text = text if len(text) <= LABEL_LENGTH else text[:LABEL_LENGTH - 3] + "..."
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Graph:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids: dict[object, str] = {}

    def node_id(self, thing: object) -> str:
        if thing not in self.ids:
            self.ids[thing] = f"n{len(self.ids)}"
        return self.ids[thing]

    def source(self, value: SSAValue) -> str:
        """The node that defines `value` (its op, or its block argument's node)."""
        owner = value.owner
        return self.node_id(owner if isinstance(owner, Operation) else value)

    def function(self, f: func.FuncOp | KernelOp, indent: str) -> None:
        device = _device(f)
        kind = "kernel" if is_kernel(f) else "function"
        self.lines.append(f"{indent}subgraph cluster_{self.node_id(f)} {{")
        self.lines.append(f"{indent}  label={_quote(f'{kind} @{f.sym_name.data}')};")
        if device is not None:
            self.lines.append(f'{indent}  style=filled; fillcolor="{COLOURS.get(device, "white")}"; color=gray40;')
        for block in f.body.blocks:
            self.block(block, indent + "  ", device)
        self.lines.append(f"{indent}}}")

    def block(self, block: Block, indent: str, device: str | None) -> None:
        for arg in block.args:
            name = f"%{arg.name_hint or arg.index}: {arg.type}"
            self.lines.append(f"{indent}{self.node_id(arg)} [label={_quote(name)}, shape=ellipse];")
        for op in block.ops:
            self.op(op, indent, _device(op) or device)

    def op(self, op: Operation, indent: str, device: str | None) -> None:
        colour = COLOURS.get(device, "white") if device is not None else "white"
        if op.regions:
            self.lines.append(f"{indent}subgraph cluster_{self.node_id(op)}_body {{")
            self.lines.append(f"{indent}  label={_quote(op.name)}; style=dashed;")
            self.lines.append(f'{indent}  {self.node_id(op)} [label={_quote(op.name)}, shape=box, style=filled, '
                              f'fillcolor="{colour}"];')
            for region in op.regions:
                for block in region.blocks:
                    self.block(block, indent + "  ", device)
            self.lines.append(f"{indent}}}")
        else:
            self.lines.append(f'{indent}{self.node_id(op)} [label={_quote(op.name)}, shape=box, style=filled, '
                              f'fillcolor="{colour}"];')
        for operand in op.operands:
            self.lines.append(f"{indent}{self.source(operand)} -> {self.node_id(op)} "
                              f"[label={_quote(str(operand.type))}];")


def _device(op: Operation) -> str | None:
    """Where `op` is placed (`device.placement_of`), or the device a kernel is for."""
    attr = op.attributes.get(DEVICE_MARK)
    return placement_of(op) or (attr.data if isinstance(attr, StringAttr) else None)


def op_graph(module: ModuleOp, function: str | None = None) -> str:
    """The Graphviz (dot) text of the module's functions (only `function`, if named)."""
    graph = _Graph()
    found = False
    for op in module.ops:
        if isinstance(op, func.FuncOp | KernelOp) and (function is None or op.sym_name.data == function):
            graph.function(op, "  ")
            found = True
    if function is not None and not found:
        raise ValueError(f"the module has no function @{function}")
    return "\n".join(["digraph module {", "  compound=true; rankdir=TB; node [fontname=monospace];",
                      "  edge [fontname=monospace, fontsize=9];", *graph.lines, "}"]) + "\n"


def visualize(module: ModuleOp, path: str | Path, function: str | None = None) -> Path:
    """Render the module's graph to `path` (the format from its suffix: .svg, .png, .pdf,
    or .dot for the text) with Graphviz's `dot`."""
    path = Path(path)
    text = op_graph(module, function)
    if path.suffix == ".dot":
        path.write_text(text)
        return path
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("rendering needs Graphviz's `dot` program (apt install graphviz, brew install graphviz); "
                           "write a .dot file instead to render it elsewhere")
    run = subprocess.run([dot, f"-T{path.suffix.lstrip('.') or 'svg'}", "-o", str(path)], input=text, text=True,
                         capture_output=True, timeout=300)
    if run.returncode:
        raise RuntimeError(f"dot failed: {run.stderr.strip()}")
    return path
