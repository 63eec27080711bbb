"""Models imported from ONNX, timed against ONNX Runtime in the same run.

    python benchmarks/onnx_models.py [--threads N] [--quick]

Each model is exported to ONNX (always: an MLP and a CNN built with onnx.helper; from
PyTorch when it is installed, the hand-written examples' models: an LSTM over a dynamic
time axis (hidden 256 and 1024, 25 and 100 steps), BERT-style encoders with a dynamic
sequence axis (4 layers, hidden 256, 4 heads; 2 layers, hidden 768, 12 heads; sequences
of 32 and 128), ResNet-18 at 224x224, and a feed-forward block), imported by Nimble,
compiled for LLVM, checked against ONNX Runtime on the same inputs, then both are timed,
each alone in a process of its own (the compiled module saved and loaded there), the two
taking turns (best of N calls over all turns). Ratios > 1 mean Nimble is faster.

Why processes of their own: ONNX Runtime's thread pool spins after each run, and in one
process its spinning threads took the second core from Nimble's next call (BERT 4 x 256,
2 threads: Nimble 3.50 ms beside it, 2.56-2.78 alone); without the spinning (its
`session.intra_op.allow_spinning` off) ONNX Runtime itself took 3.24-3.30 ms instead of
2.53-2.66. A server runs one of them, not both.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import tempfile

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import nimble  # noqa: E402
from nimble.frontend.onnx import import_onnx  # noqa: E402
from timing import best_time, isolated, machine  # noqa: E402


def child(runtime: str, folder: str, repeat: int) -> None:
    """In a process of its own: time one runtime on the model and input in `folder`."""
    x = np.load(os.path.join(folder, "x.npy"))
    if runtime == "nimble":
        exe = nimble.load(os.path.join(folder, "model.nbc"), threads=THREADS)
        fn = lambda: exe(x)  # noqa: E731
    else:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = THREADS
        session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        fn = lambda: session.run(None, feed)  # noqa: E731
    print(best_time(fn, repeat))


def helper_mlp(rng) -> onnx.ModelProto:
    inits = [("w1", rng.standard_normal((512, 1024))), ("b1", rng.standard_normal(1024)),
             ("w2", rng.standard_normal((256, 1024))), ("b2", rng.standard_normal(256))]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h"]), helper.make_node("Gemm", ["h", "w2", "b2"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 512])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 256])],
                              [numpy_helper.from_array((a * 0.05).astype(np.float32), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def helper_cnn(rng) -> onnx.ModelProto:
    inits = [("w1", rng.standard_normal((32, 3, 3, 3)) * 0.2), ("w2", rng.standard_normal((64, 32, 3, 3)) * 0.05)]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("GlobalAveragePool", ["r2"], ["y"])]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 1, 1])],
                              [numpy_helper.from_array(a.astype(np.float32), n) for n, a in inits])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def torch_models():
    """(name, model proto, input shape) exported from PyTorch, if installed."""
    try:
        import torch
    except ImportError:
        return []
    out = []

    class Block(torch.nn.Module):  # a transformer feed-forward block with a residual and layer norm
        def __init__(self):
            super().__init__()
            self.up, self.down, self.norm = torch.nn.Linear(256, 1024), torch.nn.Linear(1024, 256), torch.nn.LayerNorm(256)

        def forward(self, x):
            return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))

    class Lstm(torch.nn.Module):  # the final hidden state, as examples/lstm.nb returns
        def __init__(self, hidden=256):
            super().__init__()
            self.lstm = torch.nn.LSTM(hidden, hidden)

        def forward(self, x):
            return self.lstm(x)[1][0]

    class Encoder(torch.nn.Module):  # BERT layers (post-LayerNorm), reshapes at run-time sizes
        def __init__(self, layers=4, d=256, heads=4):
            super().__init__()
            self.heads = heads
            self.blocks = torch.nn.ModuleList(torch.nn.ModuleDict({
                "qkv": torch.nn.Linear(d, 3 * d), "out": torch.nn.Linear(d, d), "ln1": torch.nn.LayerNorm(d),
                "ff1": torch.nn.Linear(d, 4 * d), "ff2": torch.nn.Linear(4 * d, d), "ln2": torch.nn.LayerNorm(d),
            }) for _ in range(layers))

        def forward(self, x):
            s, d = x.shape
            for b in self.blocks:
                q, k, v = (z.reshape(s, self.heads, d // self.heads).transpose(0, 1) for z in b["qkv"](x).chunk(3, -1))
                att = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
                x = b["ln1"](x + b["out"]((att @ v).transpose(0, 1).reshape(s, d)))
                x = b["ln2"](x + b["ff2"](torch.nn.functional.gelu(b["ff1"](x))))
            return x

    def resnet18() -> torch.nn.Module:  # torchvision's ResNet-18, written out (torchvision is optional)
        nn = torch.nn

        class Basic(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
                self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
                self.down = None if stride == 1 and cin == cout else nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
                return torch.relu(y + (x if self.down is None else self.down(x)))

        stages, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            stages += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
            cin = cout
        return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                             nn.MaxPool2d(3, 2, 1), *stages, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000))

    for name, net, shape, axes in [("lstm h256 T=25 (torch)", Lstm(), (25, 1, 256), {0: "t"}),
                                   ("lstm h256 T=100 (torch)", Lstm(), (100, 1, 256), {0: "t"}),
                                   ("lstm h1024 T=25 (torch)", Lstm(1024), (25, 1, 1024), {0: "t"}),
                                   ("lstm h1024 T=100 (torch)", Lstm(1024), (100, 1, 1024), {0: "t"}),
                                   ("bert 4x256 S=32 (torch)", Encoder(), (32, 256), {0: "s"}),
                                   ("bert 4x256 S=128 (torch)", Encoder(), (128, 256), {0: "s"}),
                                   ("bert 2x768 S=32 (torch)", Encoder(2, 768, 12), (32, 768), {0: "s"}),
                                   ("bert 2x768 S=128 (torch)", Encoder(2, 768, 12), (128, 768), {0: "s"}),
                                   ("resnet-18 (torch)", resnet18(), (1, 3, 224, 224), {2: "h", 3: "w"}),
                                   ("ffn block (torch)", Block(), (64, 256), {0: "s"})]:
        buffer = io.BytesIO()
        torch.onnx.export(net.eval(), (torch.randn(*shape),), buffer, input_names=["x"], output_names=["y"],
                          opset_version=17, dynamic_axes={"x": axes}, dynamo=False)
        out.append((name, onnx.load_from_string(buffer.getvalue()), shape))
    return out


def run(name: str, model: onnx.ModelProto, shape, repeat: int, rng) -> None:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    exe = nimble.compile(import_onnx(model), threads=THREADS)
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(exe(x), session.run(None, {session.get_inputs()[0].name: x})[0], rtol=1e-3, atol=1e-3)
    with tempfile.TemporaryDirectory() as folder:
        onnx.save(model, os.path.join(folder, "model.onnx"))
        exe.save(os.path.join(folder, "model.nbc"))
        np.save(os.path.join(folder, "x.npy"), x)
        t = isolated(__file__, ["nimble", "ort"], folder, THREADS, repeat)
    print(f"{name:28s} {str(list(shape)):18s} nimble {t['nimble'] * 1e3:8.3f} ms   onnxruntime {t['ort'] * 1e3:8.3f} ms"
          f"   x{t['ort'] / t['nimble']:5.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("RUNTIME", "FOLDER"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        child(*a.child, a.repeat)
        return
    rng = np.random.default_rng(0)
    repeat = 15 if a.quick else 60
    print(f"{machine()}; threads: {THREADS}")
    for batch in (1, 32):
        run("mlp 512-1024-256 (helper)", helper_mlp(rng), (batch, 512), repeat, rng)
    for size in (32, 64) if a.quick else (32, 112):
        run("cnn 2 convs (helper)", helper_cnn(rng), (1, 3, size, size), repeat, rng)
    for name, model, shape in torch_models():
        run(name, model, shape, repeat, rng)


if __name__ == "__main__":
    main()
