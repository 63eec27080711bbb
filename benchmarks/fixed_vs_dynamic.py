"""One BERT compiled for every sequence length against BERT exported at each length fixed.

    python benchmarks/fixed_vs_dynamic.py [--threads N] [--lengths 8,128,512] [--hidden 64] [--layers 2]

Builds a Hugging Face BERT from a small config (random weights, no network, 512
positions), exports it once with batch and sequence length dynamic and once per length
with every dim fixed (TorchScript exporter, opset 17), compiles each with Nimble, checks
they agree, then times them in this process taking turns (best of N calls, batch 1).
Prints the CPU, each length's times and dynamic / fixed (<= 1.1: within 10%).
Needs torch and transformers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import nimble  # noqa: E402
from timing import best_time, machine  # noqa: E402


def export(model, ids: np.ndarray, path: str, dynamic: bool) -> None:
    import torch

    axes = {"ids": {0: "batch", 1: "sequence"}} if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.from_numpy(ids),), path, input_names=["ids"], output_names=["out"],
                          opset_version=17, dynamic_axes=axes, dynamo=False)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--lengths", default="8,128,512")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    # This folder off the path: its kernels.py would shadow the `kernels` package
    # transformers imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    import torch
    import transformers as hf

    torch.manual_seed(0)
    config = hf.BertConfig(vocab_size=100, max_position_embeddings=512, hidden_size=args.hidden,
                           num_hidden_layers=args.layers, num_attention_heads=4, intermediate_size=2 * args.hidden)

    class LastHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = hf.BertModel(config)

        def forward(self, ids):
            return self.model(ids).last_hidden_state

    model = LastHidden().eval()
    lengths = [int(v) for v in args.lengths.split(",")]
    rng = np.random.default_rng(0)
    print(f"{machine()}; threads: {args.threads}, BERT hidden {args.hidden}, {args.layers} layers, batch 1")
    with tempfile.TemporaryDirectory() as folder:
        dynamic_path = os.path.join(folder, "dynamic.onnx")
        export(model, rng.integers(0, 100, (2, 7)), dynamic_path, True)
        dynamic = nimble.compile(dynamic_path, threads=args.threads)
        for length in lengths:
            ids = rng.integers(0, 100, (1, length))
            fixed_path = os.path.join(folder, f"fixed{length}.onnx")
            export(model, ids, fixed_path, False)
            fixed = nimble.compile(fixed_path, threads=args.threads)
            want = fixed(ids)
            np.testing.assert_allclose(dynamic(ids), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
            best = {"dynamic": float("inf"), "fixed": float("inf")}
            for _ in range(args.turns):
                best["dynamic"] = min(best["dynamic"], best_time(lambda: dynamic(ids), args.repeat))
                best["fixed"] = min(best["fixed"], best_time(lambda: fixed(ids), args.repeat))
            print(f"length {length:4d}   dynamic {best['dynamic'] * 1e3:8.3f} ms   fixed {best['fixed'] * 1e3:8.3f} ms"
                  f"   dynamic / fixed x{best['dynamic'] / best['fixed']:.3f}", flush=True)


if __name__ == "__main__":
    main()
