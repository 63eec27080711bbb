"""PyTorch models in (`nimble/torch_backend.py`): `torch.compile(model, backend="nimble")`
with dims marked dynamic compiles once for every size, and `nimble.compile` of an
`nn.Module`; each against eager PyTorch. Skipped without torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nimble

torch = pytest.importorskip("torch")

from nimble.torch_backend import TorchFallbackWarning, backend  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = torch.nn.Linear(16, 32), torch.nn.Linear(32, 4)

    def forward(self, x):
        return torch.softmax(self.l2(torch.relu(self.l1(x))), -1)


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.Linear(8, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


def _compiled(model):
    """`torch.compile(model)` by Nimble's backend, and the functions it compiled."""
    made = []

    def counted(gm, example_inputs):
        made.append(backend(gm, example_inputs))
        return made[-1]

    torch._dynamo.reset()
    return torch.compile(model, backend=counted), made


@pytest.mark.parametrize("model, shape, axes", [(MLP, (1, 16), [0]), (CNN, (2, 3, 1, 1), [2, 3])])
def test_torch_compile_compiles_once_for_every_size(model, shape, axes):
    torch.manual_seed(0)
    m = model().eval()
    f, made = _compiled(m)
    for size in (5, 2, 12):  # (not 1: dynamo specialises a dim of size 1, and compiles again)
        x = torch.randn([size if a in axes else d for a, d in enumerate(shape)])
        for a in axes:
            torch._dynamo.mark_dynamic(x, a)
        with warnings.catch_warnings():
            warnings.simplefilter("error", TorchFallbackWarning)
            got = f(x)
        torch.testing.assert_close(got, m(x), rtol=1e-5, atol=1e-5)
    assert len(made) == 1 and isinstance(made[0].executable, nimble.Executable)  # (one compile, Nimble's)


def test_the_backend_is_found_by_name():
    """The `torch_dynamo_backends` entry point: no import of Nimble needed."""
    from torch._dynamo import list_backends

    assert "nimble" in list_backends()
    torch._dynamo.reset()
    m = MLP().eval()
    x = torch.randn(3, 16)
    torch.testing.assert_close(torch.compile(m, backend="nimble")(x), m(x), rtol=1e-5, atol=1e-5)


def test_a_graph_nimble_cannot_take_runs_in_pytorch_with_one_warning():
    """Under `no_grad` an encoder layer takes PyTorch's fused fast path, an op ONNX lacks."""
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    f, made = _compiled(m)
    x = torch.randn(2, 5, 32)
    with torch.no_grad(), pytest.warns(TorchFallbackWarning, match="runs in PyTorch"):
        got = f(x)
        torch.testing.assert_close(got, m(x))
    assert len(made) == 1 and not hasattr(made[0], "executable")


def test_sizes_the_exporter_bakes_in_are_caught():
    """With gradients on, the encoder layer exports, but the attention's reshapes keep the
    traced sequence length: checked at another length, the graph is left to PyTorch."""
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    f, _ = _compiled(m)
    x = torch.randn(2, 5, 32)
    torch._dynamo.mark_dynamic(x, 1)
    with pytest.warns(TorchFallbackWarning, match="other sizes"):
        f(x)
    y = torch.randn(2, 9, 32)
    torch.testing.assert_close(f(y), m(y))


def test_nimble_compile_of_a_module_with_dynamic_dims():
    """An LSTM over a variable-length sequence and a transformer layer, exported as
    modules: one executable for every length."""
    torch.manual_seed(0)

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn, self.fc = torch.nn.LSTM(8, 16, batch_first=True), torch.nn.Linear(16, 3)

        def forward(self, x):
            return self.fc(self.rnn(x)[0])

    encoder = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    for m, features in ((Tagger(), 8), (encoder, 32)):
        m.train()
        exe = nimble.compile(m, example_inputs=(torch.randn(2, 5, features),), dynamic_dims={0: [1]})
        assert m.training  # (exported in eval mode, then put back)
        m.eval()
        for length in (1, 7, 13):
            x = torch.randn(2, length, features)
            with torch.no_grad():
                want = m(x).numpy()
            np.testing.assert_allclose(exe.run(x.numpy())[0], want, rtol=1e-4, atol=1e-5)


def test_a_module_needs_its_example_inputs():
    with pytest.raises(ValueError, match="example_inputs"):
        nimble.compile(MLP())
    with pytest.raises(ValueError, match="for a torch module"):
        nimble.compile("func.func @f() {\n  func.return\n}", dynamic_dims={0: [0]})
