"""Discardable attributes are declared once, typed, and checked wherever IR is verified
(`dialects/discardable.py`): here the mechanism; every stage of every pipeline of the
examples and lit inputs is checked by tests/test_ir_integrity.py (`verify_each`), bad
keys in text by lit_tests/dialects/discardable/invalid.mlir."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64

import nimble
from nimble.diagnostics import PassBrokeIR, verify_after_pass
from nimble.dialects import discardable, loop


def test_the_marks_are_declared_once_with_their_classes():
    assert discardable.DECLARED[loop.DEVICE_MARK] == (StringAttr,)
    with pytest.raises(ValueError, match="declared twice"):
        discardable.declare(loop.DEVICE_MARK, StringAttr)


def test_a_pass_that_writes_a_misspelt_or_mistyped_mark_is_named():
    module = nimble.parse("func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
                          "  %y = graph.relu %x : tensor<?xf32> -> tensor<?xf32>\n  func.return %y : tensor<?xf32>\n}")
    main = module.body.block.first_op

    class Writer:
        name = "writer"

    for key, value, message in (("nimble.kernal", UnitAttr(), "unknown discardable attribute 'nimble.kernal'"),
                                (loop.WORK_MARK, StringAttr("12"), "'nimble.work' holds")):
        main.attributes[key] = value
        with pytest.raises(PassBrokeIR, match=f"after pass 'writer'.*{message}"):
            verify_after_pass(Writer(), module, None)
        del main.attributes[key]
    main.attributes[loop.WORK_MARK] = IntegerAttr(12, i64)
    verify_after_pass(Writer(), module, None)
