"""infer-shapes and reify-shapes on random models (hypothesis): the refined and reified
module verifies, every shape.bind holds at run time, and results do not change."""

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
    after = interpret(module, *args)  # also runs every shape.bind check
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
