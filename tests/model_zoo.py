"""Models as people export them: Hugging Face transformers built from small configs
(random weights, no network) and PyTorch `nn` modules, exported to ONNX by either of
PyTorch's exporters with batch and lengths as dynamic axes.

Shared by tests/test_exported_models.py (each model against ONNX Runtime at several
sizes from one compiled module) and benchmarks/exported_models.py (the same, plus
latency against ONNX Runtime). Needs torch and transformers (onnxscript for the dynamo
exporter); import it only where they are installed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import transformers as hf
from transformers.models.whisper.modeling_whisper import WhisperEncoder

Inputs = Callable[[int, int, np.random.Generator], list[np.ndarray]]

SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
EXPORTERS = ("torchscript", "dynamo")
SIZES = [(1, 1), (2, 7), (3, 13)]
"""(batch, length) pairs each model runs at, length 1 included."""


class _LastHidden(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).last_hidden_state


class _First(torch.nn.Module):
    """An `nn` module's first output (an RNN's sequence, not its final states)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        y = self.model(x)
        return y[0] if isinstance(y, tuple) else y


class _CausalDecoderLayer(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        mask = torch.nn.Transformer.generate_square_subsequent_mask(x.shape[1])
        return self.model(x, x, tgt_mask=mask, tgt_is_causal=True)


class _T5Decoder(torch.nn.Module):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids, encoded):
        return self.model.decoder(input_ids=ids, encoder_hidden_states=encoded).last_hidden_state


class _GPT2WithPast(torch.nn.Module):
    """GPT-2 continuing from past keys and values (2 layers): the generation step."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids, k0, v0, k1, v1):
        cache = hf.DynamicCache()
        cache.update(k0, v0, 0)
        cache.update(k1, v1, 1)
        return self.model(ids, past_key_values=cache, use_cache=True).last_hidden_state


def _ids(b: int, s: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 100, (b, s)).astype(np.int64)


def _normal(*shape: int, rng: np.random.Generator) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _gpt2_config() -> hf.GPT2Config:
    return hf.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=64)


def _t5_config() -> hf.T5Config:
    return hf.T5Config(vocab_size=100, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4)


@dataclass(frozen=True)
class Model:
    build: Callable[[], torch.nn.Module]
    inputs: Inputs
    axes: list[dict[int, str]]
    """Each input's dynamic axes, by name (inputs sharing a name share the dim)."""
    limits: dict[str, str] = field(default_factory=dict)
    """Exporters that cannot write the model with these dynamic axes, and why."""
    longest: int = 60
    """The largest dynamic dim the dynamo exporter is told of (GPT-2 has 64 positions)."""


_BATCH_SEQ = [{0: "batch", 1: "sequence"}]
_BATCH = [{0: "batch"}]
_TORCHSCRIPT_MHA = ("the TorchScript exporter writes nn.MultiheadAttention's fast path with the example's "
                    "sequence length baked into a Reshape (ONNX Runtime fails at other lengths too); with the "
                    "fast path off, export fails ('is_causal' must be bool)")

MODELS: dict[str, Model] = {
    "bert": Model(lambda: _LastHidden(hf.BertModel(hf.BertConfig(vocab_size=100, max_position_embeddings=64,
                                                                 **SMALL))), lambda b, s, r: [_ids(b, s, r)],
                  _BATCH_SEQ),
    "distilbert": Model(lambda: _LastHidden(hf.DistilBertModel(hf.DistilBertConfig(
        vocab_size=100, dim=64, n_layers=2, n_heads=4, hidden_dim=128, max_position_embeddings=64))),
        lambda b, s, r: [_ids(b, s, r)], _BATCH_SEQ),
    "roberta": Model(lambda: _LastHidden(hf.RobertaModel(hf.RobertaConfig(vocab_size=100, max_position_embeddings=70,
                                                                          **SMALL))),
                     lambda b, s, r: [_ids(b, s, r)], _BATCH_SEQ),
    "gpt2": Model(lambda: _LastHidden(hf.GPT2Model(_gpt2_config())), lambda b, s, r: [_ids(b, s, r)], _BATCH_SEQ),
    "gpt2-past": Model(lambda: _GPT2WithPast(hf.GPT2Model(_gpt2_config())),
                       lambda b, s, r: [_ids(b, s, r)] + [_normal(b, 4, s + 2, 16, rng=r) for _ in range(4)],
                       _BATCH_SEQ + [{0: "batch", 2: "past"}] * 4),
    "t5-encoder": Model(lambda: _LastHidden(hf.T5EncoderModel(_t5_config())), lambda b, s, r: [_ids(b, s, r)],
                        _BATCH_SEQ, {"dynamo": "torch.onnx's decomposition fails: 'Cannot view a tensor with shape "
                                               "[s77, s27, 4, 16] and strides (64*s27, 16, 16*s27, 1)'"}),
    "t5-decoder": Model(lambda: _T5Decoder(hf.T5Model(_t5_config())),
                        lambda b, s, r: [_ids(b, s, r), _normal(b, s + 3, 64, rng=r)],
                        _BATCH_SEQ + [{0: "batch", 1: "encoded"}],
                        {"dynamo": "torch.onnx's decomposition fails as for the T5 encoder"}),
    "vit": Model(lambda: _LastHidden(hf.ViTModel(hf.ViTConfig(image_size=32, patch_size=8, **SMALL))),
                 lambda b, s, r: [_normal(b, 3, 32, 32, rng=r)], _BATCH),
    "whisper-encoder": Model(lambda: _LastHidden(WhisperEncoder(hf.WhisperConfig(
        vocab_size=100, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1, num_mel_bins=16,
        d_model=64, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128, max_source_positions=20))),
        # Whisper's encoder takes exactly 2 x max_source_positions frames: the batch is dynamic.
        lambda b, s, r: [_normal(b, 16, 40, rng=r)], _BATCH),
    "wav2vec2": Model(lambda: _LastHidden(hf.Wav2Vec2Model(hf.Wav2Vec2Config(
        conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4, feat_extract_norm="group", **SMALL))),
        lambda b, s, r: [_normal(b, 100 + 37 * s, rng=r)], [{0: "batch", 1: "samples"}],
        {"dynamo": "torch.export fails on the model (a guard on the feature extractor's lengths)"}, longest=4096),
    "gru": Model(lambda: _First(torch.nn.GRU(64, 32, num_layers=2, bidirectional=True, batch_first=True)),
                 lambda b, s, r: [_normal(b, s, 64, rng=r)], _BATCH_SEQ),
    "lstm": Model(lambda: _First(torch.nn.LSTM(64, 32, num_layers=2, bidirectional=True, batch_first=True)),
                  lambda b, s, r: [_normal(b, s, 64, rng=r)], _BATCH_SEQ),
    "transformer-encoder-layer": Model(lambda: torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True),
                                       lambda b, s, r: [_normal(b, s, 64, rng=r)], _BATCH_SEQ,
                                       {"torchscript": _TORCHSCRIPT_MHA}),
    "transformer-decoder-layer": Model(lambda: _CausalDecoderLayer(torch.nn.TransformerDecoderLayer(
        64, 4, 128, batch_first=True)), lambda b, s, r: [_normal(b, s, 64, rng=r)], _BATCH_SEQ,
        {"torchscript": _TORCHSCRIPT_MHA}),
}


def export(name: str, exporter: str, path: str, example: tuple[int, int] = (2, 7)) -> list[str]:
    """Export model `name` (seeded, eval mode) to `path`; returns its input names."""
    torch.manual_seed(0)
    spec = MODELS[name]
    model = spec.build().eval()
    args = tuple(torch.from_numpy(a) for a in spec.inputs(*example, np.random.default_rng(0)))
    names = [f"input{k}" for k in range(len(args))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "torchscript":
            axes = {n: dict(a) for n, a in zip(names, spec.axes)}
            torch.onnx.export(model, args, path, input_names=names, output_names=["output"], opset_version=17,
                              dynamic_axes=axes, dynamo=False)
        else:
            dims: dict[str, torch.export.Dim] = {}

            def dim(axis_name: str) -> torch.export.Dim:
                if axis_name not in dims:
                    dims[axis_name] = torch.export.Dim(axis_name, min=1, max=spec.longest)
                return dims[axis_name]

            shapes = tuple({k: dim(a) for k, a in axes.items()} for axes in spec.axes)
            torch.onnx.export(model, args, path, input_names=names, output_names=["output"], opset_version=18,
                              dynamic_shapes=shapes, dynamo=True, verbose=False)
    return names
