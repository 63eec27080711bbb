"""ADT inputs for the tools (`nimble/adt_values.py`): `nimble-run --input t=tree.json`
and random trees; a JSON value that does not fit its ADT is an error naming where."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from nimble.run_cli import main

TREE_LSTM = str(Path(__file__).resolve().parent.parent / "examples" / "tree_lstm.nb")


def _leaf(value: float) -> dict:
    return {"Leaf": [[[value] * 64]]}


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main([TREE_LSTM, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_tree_from_json_runs_and_matches_the_reference(tmp_path, capsys):
    x = tmp_path / "x.npy"
    np.save(x, np.full((1, 64), 0.25, np.float32))
    tree = {"Node": [[[0.1] * 64], _leaf(0.5), {"Node": [str(x), _leaf(-1.0), {"Leaf": ["1x64xf32=0.3"]}]}]}
    (tmp_path / "tree.json").write_text(json.dumps(tree))
    code, out, err = _run(capsys, "--input", f"t={tmp_path / 'tree.json'}", "--check")
    assert code == 0, err
    assert "result #0: float32[1, 150]" in out
    assert float(out.rsplit(":", 1)[1]) < 1e-4


def test_without_an_input_a_tree_is_drawn_at_random(capsys):
    code, out, err = _run(capsys, "--dim", "9", "--check")
    assert code == 0, err
    assert float(out.rsplit(":", 1)[1]) < 1e-4


@pytest.mark.parametrize("tree, message", [
    ({"Twig": [[[0.0] * 64]]}, "t: no constructor Twig (known: Leaf, Node)"),
    ({"Node": [[[0.0] * 64], _leaf(1.0)]}, "t.Node: expected a list of 3 fields"),
    ({"Node": [[[0.0] * 64], _leaf(1.0), {"Leaf": [[[0.0] * 63]]}]}, "t.Node.2.Leaf.0: expected tensor<1x64xf32>, got float32[1, 63]"),
    ([1, 2], "t: expected"),
    ({"Leaf": [[["a"] * 64]]}, "t.Leaf.0: not a tensor<1x64xf32>"),
])
def test_a_tree_that_does_not_fit_says_where(tree, message, tmp_path, capsys):
    (tmp_path / "tree.json").write_text(json.dumps(tree))
    code, _, err = _run(capsys, "--input", f"t={tmp_path / 'tree.json'}")
    assert code == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_file_that_is_not_json(tmp_path, capsys):
    (tmp_path / "tree.json").write_text('{"Leaf": [')
    code, _, err = _run(capsys, "--input", f"t={tmp_path / 'tree.json'}")
    assert code == 1 and "tree.json:1:" in err
    code, _, err = _run(capsys, "--input", f"t={tmp_path / 'tree.npy'}")
    assert code == 1 and "is a .json file" in err
