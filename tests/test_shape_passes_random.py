"""infer-shapes and reify-shapes on random models (hypothesis): the refined and reified
module verifies, every dynshape.bind holds at run time, and results do not change."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.passes import PassPipeline

from nimble import interpret
from nimble.dialects.graph.types import dims
from nimble.frontend import parse_nb
from nimble.registry import all_passes, make_context
from test_text_roundtrip import models


def check_pipeline_keeps_meaning(source: str, size: int, pipeline: str) -> None:
    """Run a random model before and after `pipeline` on the same inputs (every `?` dim
    set to `size`): the module must verify and give identical results."""
    module = parse_nb(source, "random.nb")
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([size if d is None else d for d in dims(a.type)]).astype(np.float32)
            for a in main.body.block.args]
    before = interpret(module, *args)
    PassPipeline.parse_spec(all_passes(), pipeline).apply(make_context(), module)
    module.verify()
    after = interpret(module, *args)  # also runs every dynshape.bind check
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(source=models(), size=st.sampled_from([1, 2, 5]))
def test_shape_passes_keep_meaning(source, size):
    check_pipeline_keeps_meaning(source, size, "infer-shapes,reify-shapes,canonicalize,cse")


@settings(max_examples=40, deadline=None)
@given(source=models(), size=st.sampled_from([1, 3]))
def test_fuse_ops_keeps_meaning(source, size):
    check_pipeline_keeps_meaning(source, size, "fuse-ops")


@st.composite
def index_chains(draw) -> str:
    """A host function of one index: a random chain of additions and subtractions of
    constants (either side) and floor/ceiling divisions by nonzero constants."""
    lines, value, consts = [], "%h", {}

    def const(n: int) -> str:
        if n not in consts:
            consts[n] = f"%k{len(consts)}"
            lines.insert(0, f"  {consts[n]} = arith.constant {n} : index")
        return consts[n]

    for i in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["addi", "addi_left", "subi", "floordivsi", "ceildivsi"]))
        c = draw(st.integers(-7, 7).filter(lambda n: n != 0) if kind.endswith("divsi") else st.integers(-7, 7))
        operands = f"{const(c)}, {value}" if kind == "addi_left" else f"{value}, {const(c)}"
        lines.append(f"  %v{i} = arith.{kind.removesuffix('_left')} {operands} : index")
        value = f"%v{i}"
    body = "\n".join(lines)
    return f"func.func @main(%h: index) -> index {{\n{body}\n  func.return {value} : index\n}}"


@settings(max_examples=60, deadline=None)
@given(source=index_chains())
def test_simplify_host_index_folds_keep_meaning(source):
    """simplify-host's offset folds (`FoldIndexOffsets`, `FoldOffsetIntoDivision`) give
    the same index as the chain they replace, negative values included."""
    from xdsl.parser import Parser

    module = Parser(make_context(), source).parse_module()
    before = [interpret(module, h) for h in range(-20, 21)]
    PassPipeline.parse_spec(all_passes(), "simplify-host").apply(make_context(), module)
    module.verify()
    assert [interpret(module, h) for h in range(-20, 21)] == before
