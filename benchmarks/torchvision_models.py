"""torchvision's models as ONNX files, the way a user would export them.

    from torchvision_models import export
    path = export("resnet50", folder)   # folder/resnet50.onnx, batch a dynamic axis

Built from the constructors with random weights (no download), exported with the
TorchScript exporter at opset 17, the batch axis dynamic (`N`). Needs torch and
torchvision; `available()` says whether they import.

torchvision's wheel here is built against CUDA torch: its C++ ops do not load on the
CPU torch, and its fake-kernel registrations then fail at import for want of the ops'
schemas (`operator torchvision::nms does not exist`). `_define_ops` declares the two
schemas that import needs; classification models use none of the C++ ops. Installed
beside transformers, that wheel breaks `import transformers` (which imports torchvision
first): install it apart, `pip install --no-deps --target DIR torchvision`, and run the
benchmarks with `PYTHONPATH=DIR`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")


@cache
def _torchvision():
    import torch

    try:
        import torchvision
    except RuntimeError:  # the CUDA build's ops missing: declare their schemas, retry
        _define_ops(torch)
        import torchvision
    return torchvision


_LIBRARIES: list = []  # (a torch.library.Library's definitions last as long as it does)


def _define_ops(torch) -> None:
    import sys

    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]  # (the failed import's half-initialised modules)
    library = torch.library.Library("torchvision", "FRAGMENT")
    for schema in _SCHEMAS:
        if not hasattr(torch.ops.torchvision, schema.split("(")[0]):
            library.define(schema)
    _LIBRARIES.append(library)


def available() -> bool:
    try:
        _torchvision()
    except ImportError:
        return False
    return True


def export(name: str, folder: str | Path, size: int = 224, batch: int = 1) -> Path:
    """`torchvision.models.<name>()` exported to `folder/<name>.onnx` (input `x`,
    N x 3 x size x size, N dynamic); an existing file is reused."""
    import torch

    path = Path(folder) / f"{name}.onnx"
    if path.exists():
        return path
    model = getattr(_torchvision().models, name)(weights=None).eval()
    x = torch.randn(batch, 3, size, size)
    torch.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}}, dynamo=False)
    return path
