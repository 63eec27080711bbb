"""The binary IR form (runtime/ir_binary.py): what a bytecode module's host functions
are saved as, read back without a parser."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest
from xdsl.ir import Operation

import nimble
from nimble.api import parse
from nimble.diagnostics import verify_module
from nimble.dialects import dim_expr
from nimble.dialects.symbolic import DimsAttr
from nimble.registry import make_context
from nimble.runtime import ir_binary
from nimble.runtime.bytecode import BytecodeError, decode_host_module
from nimble.runtime.ir_binary import IRBinaryError

ROOT = Path(__file__).resolve().parent.parent
CTX = make_context()


def _lit_modules() -> list[tuple[str, Operation]]:
    """Every case of the lit tests that parses and verifies."""
    modules = []
    for path in sorted((ROOT / "lit_tests").rglob("*.mlir")):
        for i, case in enumerate(path.read_text().split("// -----")):
            try:
                modules.append((f"{path.relative_to(ROOT)}#{i}", parse(case, str(path))))
            except Exception:  # (invalid-IR cases, cases in the .nb syntax)
                continue
    return modules


@pytest.fixture
def no_text(monkeypatch):
    """Fail a test that would write an attribute as text (to be parsed at load)."""
    def refuse(a):
        raise AssertionError(f"{type(a).__name__} written as text")
    monkeypatch.setattr(ir_binary, "_print_attribute", refuse)


def test_every_lit_case_round_trips_without_text(no_text):
    modules = _lit_modules()
    assert len(modules) > 200
    for where, module in modules:
        back = ir_binary.decode(ir_binary.encode(module, CTX), CTX)
        assert str(back) == str(module), where  # (value names included)
        assert verify_module(back) == [], where


def test_compiled_host_functions_round_trip_without_text(no_text, tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch size", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch size", 8])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Mul", ["t", "t"], ["y"])],
                              "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "sym.onnx")
    for source in (ROOT / "examples" / "lstm.nb", ROOT / "examples" / "detection.nb", tmp_path / "sym.onnx"):
        host = nimble.compile(source).program.host_module
        assert str(ir_binary.decode(ir_binary.encode(host, CTX), CTX)) == str(host), source
    assert "#nimble.dims<[batch_size, 8]>" in str(host)


def test_dims_are_rebuilt_in_canonical_form():
    seq, batch = dim_expr.symbol("seq"), dim_expr.symbol("batch")
    for e in (seq, seq * 12 + 6, dim_expr.floordiv(seq, 2) + 1, dim_expr.mod(batch * seq, 4),
              dim_expr.minimum(seq, batch * 3), dim_expr.ceildiv(seq + 1, batch), dim_expr.Expr.of(-3)):
        assert dim_expr.from_plain(dim_expr.plain(e)) == e
    # Written out of canonical order, a value still comes back canonical: 2 + seq*1 + seq*1.
    assert dim_expr.from_plain((2, (1, (("seq",),)), (1, (("seq",),)))) == seq * 2 + 2
    attr = DimsAttr((seq * 2, None, dim_expr.Expr.of(64)))
    assert DimsAttr.from_plain(attr.plain()) == attr
    for bad in ((), ("x",), (1, (1, (("not a name",),))), (0, (1, (("pow", (1,), (2,)),))),
                (0, (1, (("floordiv", (1,), (0,)),)))):
        with pytest.raises((ValueError, ZeroDivisionError)):
            dim_expr.from_plain(bad)


def test_what_has_no_binary_form_is_refused():
    with_successor = parse("""
        func.func @f(%c: i1) {
          cf.cond_br %c, ^a, ^b
        ^a:
          func.return
        ^b:
          func.return
        }""")
    with pytest.raises(IRBinaryError, match="successors"):
        ir_binary.encode(with_successor, CTX)


def _host_bytes() -> bytes:
    return ir_binary.encode(nimble.compile(ROOT / "examples" / "lstm.nb").program.host_module, CTX)


def _with_words(data: bytes, change) -> bytes:
    n = int.from_bytes(data[:4], "little")
    words = array("I")
    words.frombytes(data[4:4 + 4 * n])
    change(words)
    return data[:4] + words.tobytes() + data[4 + 4 * n:]


def test_unknown_names_are_refused_by_name():
    data = _host_bytes()
    for old, new, message in ((b"graph.concat", b"graph.concal", "unknown op 'graph.concal'"),
                              (b"builtin:TensorType", b"builtin:TensorTyqe", "unknown attribute class")):
        assert old in data
        with pytest.raises(IRBinaryError, match=message):
            ir_binary.decode(data.replace(old, new), CTX)


def test_truncated_or_mutated_bytes_are_an_error_or_a_module():
    """Each prefix, and random changes of words and blob bytes: `IRBinaryError` when
    decoded, `BytecodeError` or a verified module when loaded; never another exception."""
    data = _host_bytes()
    for end in range(0, len(data), 7):
        with pytest.raises(IRBinaryError):
            ir_binary.decode(data[:end], CTX)
    rng = random.Random(0)
    n = int.from_bytes(data[:4], "little")
    decoded = 0
    for _ in range(600):
        def change(words):
            for _ in range(rng.randint(1, 3)):
                words[rng.randrange(len(words))] = rng.choice([0, 1, 2, 3, 9, 255, 1 << 31, rng.getrandbits(32),
                                                               words[rng.randrange(len(words))]])
        mutated = bytearray(_with_words(data, change))
        if rng.random() < 0.3:  # and a byte of the blob
            at = 4 + 4 * n + rng.randrange(len(data) - 4 - 4 * n)
            mutated[at] = rng.randrange(256)
        try:
            ir_binary.decode(bytes(mutated), CTX)
        except IRBinaryError:
            pass
        try:  # as a module loads: decoded and verified
            decode_host_module(bytes(mutated))
        except BytecodeError:
            continue
        decoded += 1
    assert decoded < 600
