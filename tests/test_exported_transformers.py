"""Hugging Face transformers built from small configs (random weights, no network),
exported by PyTorch's TorchScript exporter with batch and sequence length as dynamic
axes, compiled once and compared with ONNX Runtime at several sizes, length 1 included.
Skipped where torch or transformers are not installed (CI does not install them)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import nimble

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
ort = pytest.importorskip("onnxruntime")

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)


def _bert():
    return transformers.BertModel(transformers.BertConfig(vocab_size=100, max_position_embeddings=64, **SMALL))


def _distilbert():
    return transformers.DistilBertModel(transformers.DistilBertConfig(
        vocab_size=100, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=64))


def _gpt2():
    return transformers.GPT2Model(transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100,
                                                          n_positions=64))


def _t5_encoder():
    return transformers.T5EncoderModel(transformers.T5Config(vocab_size=100, d_model=64, d_kv=16, d_ff=128,
                                                             num_layers=2, num_heads=4))


def _vit():
    return transformers.ViTModel(transformers.ViTConfig(image_size=32, patch_size=8, **SMALL))


class _LastHidden(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).last_hidden_state


@pytest.mark.parametrize("build, kind", [(_bert, "ids"), (_distilbert, "ids"), (_gpt2, "ids"), (_t5_encoder, "ids"),
                                         (_vit, "pixels")], ids=["bert", "distilbert", "gpt2", "t5-encoder", "vit"])
def test_transformer_from_the_exporter_matches_onnxruntime(build, kind, tmp_path):
    torch.manual_seed(0)
    model = _LastHidden(build().eval())
    example = torch.randint(0, 100, (2, 7)) if kind == "ids" else torch.randn(2, 3, 32, 32)
    axes = {"x": {0: "batch", 1: "sequence"}} if kind == "ids" else {"x": {0: "batch"}}
    path = tmp_path / "model.onnx"
    torch.onnx.export(model, (example,), str(path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes=axes, dynamo=False)
    exe = nimble.compile(str(path))
    session = ort.InferenceSession(onnx.load(str(path)).SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    sizes = [(1, 1), (2, 7), (3, 13)] if kind == "ids" else [(1, None), (3, None)]
    for batch, length in sizes:
        x = rng.integers(0, 100, (batch, length)) if kind == "ids" else \
            rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
        want = session.run(None, {"x": x})[0]
        np.testing.assert_allclose(exe.run(x)[0], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
