"""nimble-opt as users run it: diagnostics checking, pass listing, and bad input."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from nimble.opt import main

ROOT = Path(__file__).resolve().parent.parent
BAD_ADD = """func.func @f(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast}}
  %c = graph.add %a, %b : (tensor<3x4xf32>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}
"""


def run(args, tmp_path, text, capsys):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    code = main([str(path), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_verify_diagnostics_passes_on_right_expectation(tmp_path, capsys):
    code, _, err = run(["--verify-diagnostics"], tmp_path, BAD_ADD, capsys)
    assert code == 0, err


@pytest.mark.parametrize("wrong", [
    BAD_ADD.replace("@+1", "@+2"),                        # wrong line
    BAD_ADD.replace("cannot be broadcast", "is fine"),   # wrong message
    BAD_ADD.replace("error", "warning", 1),               # wrong severity
    BAD_ADD.replace("  // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast}}\n", ""),  # missing
])
def test_verify_diagnostics_fails_on_wrong_expectation(wrong, tmp_path, capsys):
    code, _, err = run(["--verify-diagnostics"], tmp_path, wrong, capsys)
    assert code == 1
    assert "Traceback" not in err


def test_expectation_without_error_fails(tmp_path, capsys):
    text = "// expected-error @below {{nothing wrong here}}\nfunc.func @f() {\n  func.return\n}\n"
    code, _, err = run(["--verify-diagnostics"], tmp_path, text, capsys)
    assert code == 1 and "was not produced" in err


def test_split_chunks_keep_file_lines(tmp_path, capsys):
    text = "func.func @ok() {\n  func.return\n}\n\n// -----\n\n\n" + BAD_ADD.replace("  // expected-error @+1 {{'graph.add' op dim 1 cannot be broadcast}}\n", "")
    code, _, err = run(["--split-input-file"], tmp_path, text, capsys)
    assert code == 1
    assert "in.mlir:9:3: error: 'graph.add' op dim 1 cannot be broadcast" in err
    assert "  %c = graph.add %a, %b" in err  # the context line is the op's own line


def test_parse_error_has_location_and_caret(tmp_path, capsys):
    code, _, err = run([], tmp_path, "func.func @f() {\n  %x = graph.nosuch : tensor<f32>\n}\n", capsys)
    assert code == 1
    assert "in.mlir:2:" in err and "graph.nosuch is not registered" in err and "^" in err


def test_list_passes(capsys):
    assert main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    for name in ("canonicalize", "cse", "dce"):
        assert f"  {name} " in out


@pytest.mark.parametrize("spec", ["no-such-pass", "canonicalize{", "cse{bogus=1}"])
def test_bad_pipeline_is_a_clean_error(spec, tmp_path, capsys):
    code, _, err = run(["-p", spec], tmp_path, "func.func @f() {\n  func.return\n}\n", capsys)
    assert code == 1 and "nimble-opt: error:" in err and "Traceback" not in err


def test_cli_entry_point_exit_status(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(BAD_ADD)
    tool = Path(sys.executable).parent / "nimble-opt"
    proc = subprocess.run([str(tool), str(path)], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_fuzzed_inputs_never_crash(tmp_path, capsys):
    """Truncations and random mutations of valid IR: a diagnostic, never an internal error."""
    source = (ROOT / "lit_tests/dialects/graph/ops.mlir").read_text()
    source = "\n".join(l for l in source.splitlines() if not l.startswith("//"))
    rnd = random.Random(1234)
    alphabet = "%@:<>(){}[],=x?0123456789 \n\"-abcdefgijklmnoprstuy.#^!"
    inputs = [source[: rnd.randrange(len(source))] for _ in range(150)]
    for _ in range(150):
        chars = list(source[: rnd.randrange(200, 3000)])
        for _ in range(rnd.randrange(1, 8)):
            chars[rnd.randrange(len(chars))] = rnd.choice(alphabet)
        inputs.append("".join(chars))
    inputs += ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 300))) for _ in range(100)]
    for text in inputs:
        code, _, err = run([], tmp_path, text, capsys)
        assert code in (0, 1)
        assert "internal error" not in err, f"input:\n{text}\nerror:\n{err}"


def test_version_names_nimble(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("nimble-opt ")


@pytest.mark.parametrize("args", [
    ["lit_tests/frontend/errors.nb"],          # a model with errors
    ["missing-model.nb"],                       # a file that is not there
    ["examples/tree_lstm.nb"],                  # an ADT input cannot be made up
    ["examples/bert.nb", "--entry", "nope"],   # no such function
])
def test_interpret_cli_errors_are_messages(args, capsys):
    from nimble.interpret_cli import main as interpret_main

    assert interpret_main([str(ROOT / args[0]), *args[1:]]) == 1
    err = capsys.readouterr().err
    assert err.startswith("nimble-interpret: error:") and "Traceback" not in err


def test_string_literal_lexing_matches_its_definition():
    """The lexer's string-literal pattern (`nimble.parser`: plain runs between escapes,
    linear without an alternative per character) matches what the per-character
    definition matches, on random strings of quotes, escapes, newlines and hex digits."""
    import re

    from xdsl.utils.mlir_lexer import MLIRLexer

    import nimble.parser  # noqa: F401  (installs the pattern)

    definition = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
    rnd = random.Random(7)
    alphabet = ['"', "\\", "\n", "\f", "a", "n", "t", "q", "0", "F", "g", " "]
    for _ in range(3000):
        text = '"' + "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 12)))
        got, want = MLIRLexer._unescaped_characters_regex.match(text), definition.match(text)
        assert (got and got.span()) == (want and want.span()), repr(text)


def test_large_hex_constant_parses():
    """A weight written as a hex literal (an imported layer's, several MB) parses to its values."""
    import numpy as np

    from nimble.api import interpret, parse

    w = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    text = f"""func.func @main() -> tensor<512x1024xf32> {{
  %w = graph.constant dense<"0x{w.tobytes().hex().upper()}"> : tensor<512x1024xf32>
  func.return %w : tensor<512x1024xf32>
}}"""
    np.testing.assert_array_equal(interpret(parse(text))[0], w)


def test_unterminated_string_is_a_located_error(tmp_path, capsys):
    code, _, err = run([], tmp_path, 'func.func @f() attributes {s = "abc\\"d\n  func.return\n}\n', capsys)
    assert code == 1 and "in.mlir:1:" in err and "closing string literal" in err


def test_list_passes_shows_nimbles_and_all_shows_xdsls_others(capsys):
    assert main(["--list-passes"]) == 0
    short = capsys.readouterr().out
    assert "  tile-vectorize " in short and "  place-devices " in short
    assert "convert-arith-to-riscv" not in short
    assert main(["--list-passes", "--all"]) == 0
    assert "convert-arith-to-riscv" in capsys.readouterr().out


@pytest.mark.parametrize("target", ["x86-asm", "wgsl", "riscv-asm"])
def test_a_target_for_xdsls_own_dialects_is_refused_in_one_line(target, tmp_path, capsys):
    code, out, err = run(["-t", target], tmp_path, "func.func @f() {\n  func.return\n}\n", capsys)
    assert code == 1 and not out
    assert err.strip() == (f"nimble-opt: error: target '{target}' is xdsl's, for IR of its own dialects, not "
                           f"Nimble's; Nimble's targets: mlir, nb, dot, llvm, vm-asm, opencl, spatial, vm")


def test_bytecode_target_without_an_output_file_is_a_usage_error(tmp_path, capsys):
    code, _, err = run(["-t", "vm"], tmp_path, "func.func @f() {\n  func.return\n}\n", capsys)
    assert code == 1 and "give the file with -o" in err and "internal error" not in err
