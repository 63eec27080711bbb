"""Models as people export them (tests/model_zoo.py: Hugging Face transformers from
small configs, PyTorch `nn` modules), through both of PyTorch's ONNX exporters with
batch and lengths as dynamic axes: compiled once, then compared with ONNX Runtime at
several (batch, length) pairs, length 1 included. Skipped where torch or transformers
are not installed; the dynamo exporter also needs onnxscript.

CI runs every model through the TorchScript exporter and a few through dynamo (its
export takes 5-20 s a model); `pytest --sweep` runs them all."""

from __future__ import annotations

import numpy as np
import pytest

import nimble

pytest.importorskip("torch")
pytest.importorskip("transformers")
ort = pytest.importorskip("onnxruntime")

from model_zoo import EXPORTERS, MODELS, SIZES, export  # noqa: E402

DYNAMO_IN_CI = {"bert", "gpt2-past", "transformer-decoder-layer"}


def _cases():
    for name in MODELS:
        for exporter in EXPORTERS:
            marks = [pytest.mark.sweep] if exporter == "dynamo" and name not in DYNAMO_IN_CI else []
            yield pytest.param(name, exporter, id=f"{name}-{exporter}", marks=marks)


@pytest.mark.parametrize("name, exporter", list(_cases()))
def test_exported_model_matches_onnxruntime_at_every_size(name, exporter, tmp_path):
    limit = MODELS[name].limits.get(exporter)
    if limit:
        pytest.skip(limit)
    if exporter == "dynamo":
        pytest.importorskip("onnxscript")
    path = str(tmp_path / "model.onnx")
    names = export(name, exporter, path)
    exe = nimble.compile(path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    for batch, length in SIZES:
        inputs = MODELS[name].inputs(batch, length, rng)
        want = session.run(None, dict(zip(names, inputs)))[0]
        got = exe.run(*inputs)[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                   err_msg=f"batch {batch}, length {length}")
        # The second call of a signature records its launches, the third replays them
        # (`runtime/replay.py`): the same result, on new inputs of the same shapes.
        again = MODELS[name].inputs(batch, length, rng)
        want = session.run(None, dict(zip(names, again)))[0]
        for _ in range(2):
            np.testing.assert_allclose(exe.run(*again)[0], want, rtol=1e-4, atol=1e-4 * np.abs(want).max(),
                                       err_msg=f"batch {batch}, length {length}, recorded and replayed")
    assert any(exe.vm.replays.traces[exe.vm.index["main"]].values()), "no call replayed"
