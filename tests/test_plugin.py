"""An out-of-tree dialect and pass plugged in through the `nimble.plugins` entry point,
following docs/adding-a-dialect.md: nimble-opt parses the new op and runs the new pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = toy.double %x : tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


def install_plugin_metadata(site: Path) -> None:
    """What `pip install` of a package declaring the entry point writes."""
    dist = site / "toy_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[nimble.plugins]\ntoy = plugin_example.toy:register\n")


def test_plugin_dialect_and_pass_in_nimble_opt(tmp_path):
    install_plugin_metadata(tmp_path)
    model = tmp_path / "toy.mlir"
    model.write_text(SOURCE)
    env_path = f"{tmp_path}:{HERE}"
    code = (
        "import sys; from nimble.opt import main; "
        f"sys.exit(main([{str(model)!r}, '-p', 'lower-toy-to-graph']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": env_path, "PATH": ""}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "graph.add %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>" in proc.stdout

    listing = subprocess.run([sys.executable, "-c", "import sys; from nimble.opt import main; sys.exit(main(['--list-passes']))"],
                             capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": ""}, cwd=tmp_path)
    assert "lower-toy-to-graph" in listing.stdout and "Rewrite toy.double" in listing.stdout


def test_without_plugin_the_op_is_unknown(tmp_path):
    model = tmp_path / "toy.mlir"
    model.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-c", f"import sys; from nimble.opt import main; sys.exit(main([{str(model)!r}]))"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1
    assert "toy.double is not registered" in proc.stderr


def test_plugin_op_in_the_text_format(tmp_path):
    install_plugin_metadata(tmp_path)
    model = tmp_path / "toy.nb"
    model.write_text("def @main(%x: f32[?]) -> f32[?] { tanh(toy.double(%x)) }\n")
    env = {"PYTHONPATH": f"{tmp_path}:{HERE}", "PATH": ""}
    code = f"import sys; from nimble.opt import main; sys.exit(main([{str(model)!r}, '-p', 'lower-toy-to-graph']))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "graph.add %x, %x" in proc.stdout and "graph.tanh" in proc.stdout
