"""Pictures of the IR (`nimble/op_graph.py`): `nimble-opt --view-op-graph` / `-t dot` and
`nimble.visualize`: a node per op and block argument, an edge per use labelled with the
value's type, a cluster per function and per op with regions, devices as colours."""

from __future__ import annotations

import contextlib
import io
import re
import shutil

import pytest

import nimble
from nimble import parse
from nimble.compile import TARGET_OPTIONS, run_stages
from nimble.op_graph import COLOURS, op_graph
from nimble.opt import main as nimble_opt

MODEL = """
def @main(%x: f32[n, 8], %w: f32[4, 8], %k: index) -> f32[n, 4] {
  let %y = relu(dense(%x, %w))
  let %z = if (%k > index(1)) { %y * %y } else { %y }
  softmax(%z, axis=1)
}
"""


def _nodes_and_edges(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    nodes = dict(re.findall(r"^\s*(n\d+) \[label=\"([^\"]*)\"", text, re.M))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+) \[label=\"([^\"]*)\"\]", text, re.M)
    return nodes, edges


def test_every_op_is_a_node_and_every_use_an_edge():
    module = parse(MODEL, "m.nb")
    run_stages(module, ["graph"])
    text = op_graph(module)
    nodes, edges = _nodes_and_edges(text)
    ops = [op for f in module.ops for op in f.walk() if op is not f]
    assert sorted(n for n in nodes.values() if not n.startswith("%")) == sorted(op.name for op in ops)
    assert len(edges) == sum(len(op.operands) for op in ops)
    assert all(src in nodes and dst in nodes for src, dst, _ in edges)
    assert {label for _, _, label in edges} >= {"tensor<?x8xf32>", "tensor<4x8xf32>", "index", "i1"}
    assert "label=\"function @main\"" in text and "label=\"graph.fused\"" in text and "label=\"graph.if\"" in text


def test_devices_are_colours():
    module = parse(MODEL, "m.nb")
    run_stages(module, ["graph", "place"], TARGET_OPTIONS["opencl"])
    text = op_graph(module)
    assert f'fillcolor="{COLOURS["opencl"]}"' in text  # the fused group placed on the device
    assert "device.copy" in text


def test_nimble_opt_view_op_graph_is_the_dot_target(tmp_path):
    model = tmp_path / "m.nb"
    model.write_text(MODEL)
    outputs = []
    for flags in (["--view-op-graph"], ["-t", "dot"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert nimble_opt([str(model), "-p", "fuse-ops", *flags]) == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1] and outputs[0].startswith("digraph module {")


def test_a_function_by_name():
    module = parse(MODEL, "m.nb")
    assert "function @main" in op_graph(module, "main")
    with pytest.raises(ValueError, match="no function @nope"):
        op_graph(module, "nope")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_visualize_renders_with_dot(tmp_path, suffix):
    path = nimble.visualize(parse(MODEL, "m.nb"), tmp_path / f"m{suffix}")
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG") if suffix == ".png" else b"<svg" in data


def test_visualize_without_dot_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match="Graphviz's `dot`"):
        nimble.visualize(parse(MODEL, "m.nb"), tmp_path / "m.svg")
    model = tmp_path / "m.nb"
    model.write_text(MODEL)
    assert nimble.visualize(model, tmp_path / "m.dot").read_text().startswith("digraph module {")
