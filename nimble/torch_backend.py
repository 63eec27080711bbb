"""PyTorch models in: `torch.compile(model, backend="nimble")` and
`nimble.compile(module, example_inputs=..., dynamic_dims=...)`.

Both go through ONNX, whose graphs Nimble imports with their shapes computed inside
(`frontend/onnx`): a dim marked dynamic becomes a `?` dim of the compiled module, so one
compile serves every size. Either exporter of PyTorch's can bake a size into a graph
(the TorchScript tracer where Python arithmetic on a size hides it, as in
`multi_head_attention_forward`'s reshapes): every compile with dynamic dims is checked
against PyTorch at other sizes of them before it is used (`_check_other_sizes`).

- **`backend(gm, example_inputs)`**, the `torch._dynamo` backend (the `nimble` entry
  of the `torch_dynamo_backends` entry-point group: `torch.compile(model,
  backend="nimble")` finds it without an import). Dynamo hands over an FX graph whose
  placeholders are the call's tensors, the module's parameters and buffers, and one
  integer per dynamic dim (`torch._dynamo.mark_dynamic(x, 0)`, or a second size seen).
  The parameters and buffers become constants of the compiled module (inference: later
  changes to them are not seen); each dynamic-dim integer is read from the shape of the
  input it comes from, so the exported graph (by the TorchScript tracer: `torch.export`
  does not take dynamo's graphs) takes tensors only. The compiled function
  converts torch tensors to numpy and back (CPU). A graph Nimble cannot take (an op the
  importer lacks, an export failure) runs in PyTorch, with one `TorchFallbackWarning`
  saying why; dynamo's graph breaks leave the rest of the model to PyTorch as usual.
- **`compile_module(module, example_inputs, dynamic_dims)`**: an `nn.Module` exported
  by `torch.export` (the tracer where that fails; `dynamic_dims`: per input, the axes
  that vary), compiled to an `Executable` that takes numpy arrays (`nimble.compile`
  calls it for a module).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

OPSET = 17
"""The opset of the TorchScript exporter's graphs."""
OPSET_EXPORT = 18
"""The opset of `torch.export`'s (its ONNX translation starts at 18)."""


class TorchFallbackWarning(UserWarning):
    """A graph `torch.compile(..., backend="nimble")` leaves to PyTorch (and why)."""


def _export(module: Any, args: tuple, dynamic: Mapping[int, Mapping[int, str]], path: str,
            traced: bool = False) -> None:
    """`module(*args)` exported to ONNX at `path`, inputs `x0, x1, ...` with the named
    dynamic axes `dynamic[i]` (one name, one `?` dim): by `torch.export` (sizes stay
    symbolic through the arithmetic on them), or with `traced` by the TorchScript
    tracer (which takes more graphs, but bakes in a size Python arithmetic hides)."""
    import torch

    names = [f"x{i}" for i in range(len(args))]
    with warnings.catch_warnings():  # (the exporters' notices: deprecations, fallbacks)
        warnings.simplefilter("ignore")
        if traced:
            torch.onnx.export(module, args, path, input_names=names, opset_version=OPSET, dynamo=False,
                              dynamic_axes={names[i]: dict(axes) for i, axes in dynamic.items() if axes})
            return
        dims = {name: torch.export.Dim(name) for axes in dynamic.values() for name in axes.values()}
        shapes = tuple({a: dims[name] for a, name in dynamic.get(i, {}).items()} or None for i in range(len(args)))
        torch.onnx.export(module, args, path, input_names=names, opset_version=OPSET_EXPORT, dynamo=True,
                          dynamic_shapes=shapes, verbose=False)


def _check_other_sizes(reference: Callable[..., Any], examples: tuple, dynamic: Mapping[int, Mapping[int, str]],
                       exe: Any) -> None:
    """Compare the compiled module with PyTorch (`reference`) at other sizes of its
    dynamic dims (each one larger): a graph with a size baked in must not run at sizes
    it was not exported for. Raises `ValueError` if it fails there or answers otherwise."""
    import torch

    grown = []
    for pos, x in enumerate(examples):
        shape = [d + 1 if a in dynamic.get(pos, {}) else d for a, d in enumerate(x.shape)]
        grown.append(torch.randn(shape, dtype=x.dtype) if x.is_floating_point() else torch.zeros(shape, dtype=x.dtype))
    with torch.no_grad():
        expected = reference(*grown)
    expected = expected if isinstance(expected, tuple | list) else (expected,)
    try:
        got = exe.run(*[np.ascontiguousarray(t.numpy()) for t in grown])
    except Exception as e:  # noqa: BLE001 (a size baked in fails in many ways)
        raise ValueError(f"the exported graph does not run at other sizes of its dynamic dims ({e})") from None
    for want, have in zip(expected, got):
        want = want.detach().numpy()
        if want.shape != np.shape(have) or not np.allclose(have, want, rtol=1e-3, atol=1e-4, equal_nan=True):
            raise ValueError("the exported graph computes otherwise at other sizes of its dynamic dims (a size "
                             "baked in by the exporter)")


def compile_module(module: Any, example_inputs: Sequence[Any], dynamic_dims: Mapping[int, Sequence[int]] | None = None,
                   **options: Any) -> Any:
    """`module` (a `torch.nn.Module`, evaluated on `example_inputs`) compiled by Nimble;
    `dynamic_dims[i]` lists the axes of input `i` that may change (each its own `?` dim,
    named `x<i>_<axis>`). Exported by `torch.export`, else by the tracer; either way
    checked against the module at other sizes of the dynamic dims (`ValueError`)."""
    import nimble

    args = tuple(example_inputs)
    dynamic = {i: {a: f"x{i}_{a}" for a in axes} for i, axes in (dynamic_dims or {}).items()}
    training = module.training
    module.eval()
    try:
        with tempfile.TemporaryDirectory(prefix="nimble-torch-") as folder:
            path = os.path.join(folder, "module.onnx")
            try:
                _export(module, args, dynamic, path)
            except Exception:  # noqa: BLE001 (what torch.export cannot take, the tracer may)
                _export(module, args, dynamic, path, traced=True)
            exe = nimble.compile(path, **options)
        if any(dynamic.values()):
            _check_other_sizes(module, args, dynamic, exe)
    finally:
        module.train(training)
    return exe


class _Tensors:
    """How a dynamo graph's placeholders are fed: which are the call's tensors (`inputs`),
    which are constants (`constants`: parameters and buffers), and where each dynamic
    dim's integer comes from (`sizes`: placeholder -> (input position, axis))."""

    def __init__(self, gm: Any, example_inputs: Sequence[Any]):
        import torch

        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(example_inputs):
            raise ValueError("the graph's inputs do not match the example inputs")
        self.count = len(placeholders)
        self.inputs: list[int] = []
        self.constants: dict[int, Any] = {}
        self.sizes: dict[int, tuple[int, int]] = {}
        symbols: dict[int, str] = {}
        for i, (node, example) in enumerate(zip(placeholders, example_inputs)):
            if isinstance(example, torch.SymInt | int):
                symbols[i] = str(node.meta.get("example_value", example))
            elif not isinstance(example, torch.Tensor):
                raise ValueError(f"input '{node.name}' is a {type(example).__name__}, not a tensor")
            elif _is_state(node, example):
                self.constants[i] = example.detach()
            else:
                self.inputs.append(i)
        fake = {i: node.meta.get("example_value") for i, node in enumerate(placeholders)}
        self.dynamic: dict[int, dict[int, str]] = {}
        for i, symbol in symbols.items():
            found = next(((pos, axis) for pos, j in enumerate(self.inputs)
                          for axis, d in enumerate(fake[j].shape) if str(d) == symbol), None)
            if found is None:
                raise ValueError(f"the dynamic size {symbol} is not a dim of an input")
            self.sizes[i] = found
            self.dynamic.setdefault(found[0], {})[found[1]] = symbol

    def graph_args(self, tensors: Sequence[Any]) -> list[Any]:
        """The graph's arguments from the call's input tensors (sizes read from them)."""
        args: list[Any] = [None] * self.count
        for pos, i in enumerate(self.inputs):
            args[i] = tensors[pos]
        for i, c in self.constants.items():
            args[i] = c
        for i, (pos, axis) in self.sizes.items():
            args[i] = tensors[pos].size(axis)
        return args


def _is_state(node: Any, example: Any) -> bool:
    """Whether a placeholder is a parameter or a buffer of the module (dynamo names its
    source `...._parameters['w']` / `...._buffers['b']`), not a tensor of the call."""
    import torch

    grapharg = node.meta.get("grapharg")
    source = str(grapharg.source.name) if grapharg is not None and grapharg.source is not None else ""
    return isinstance(example, torch.nn.Parameter) or "._parameters[" in source or "._buffers[" in source


def _graph_module(gm: Any, feeds: _Tensors) -> Any:
    """`gm` as a module of the call's tensors alone (constants held, sizes read)."""
    import torch

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gm = gm

        def forward(self, *tensors: Any) -> Any:
            return self.gm(*feeds.graph_args(tensors))

    return Graph()


def backend(gm: Any, example_inputs: Sequence[Any]) -> Callable[..., Any]:
    """The `torch._dynamo` backend: `gm` compiled by Nimble, or `gm.forward` (PyTorch)
    with a `TorchFallbackWarning` when it cannot be."""
    import torch

    try:
        outputs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
        if not all(isinstance(o, torch.fx.Node) and isinstance(o.meta.get("example_value"), torch.Tensor)
                   for o in outputs):
            raise ValueError("the graph returns values that are not tensors")
        feeds = _Tensors(gm, example_inputs)
        examples = tuple(example_inputs[i] for i in feeds.inputs)
        with tempfile.TemporaryDirectory(prefix="nimble-torch-") as folder:
            path = os.path.join(folder, "graph.onnx")
            _export(_graph_module(gm, feeds), examples, feeds.dynamic, path, traced=True)
            import nimble

            exe = nimble.compile(path)
        if len(exe.outputs()) != len(outputs):
            raise ValueError(f"the exported graph has {len(exe.outputs())} outputs, not {len(outputs)}")
        if feeds.dynamic:
            _check_other_sizes(lambda *tensors: gm(*feeds.graph_args(tensors)), examples, feeds.dynamic, exe)
    except Exception as e:  # noqa: BLE001 (whatever fails, PyTorch runs the graph)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        warnings.warn(f"nimble: this graph runs in PyTorch ({type(e).__name__}: {first})", TorchFallbackWarning,
                      stacklevel=2)
        return gm.forward

    def run(*args: Any) -> tuple[Any, ...]:
        arrays = [np.ascontiguousarray(args[i].detach().cpu().numpy()) for i in feeds.inputs]
        return tuple(torch.from_numpy(np.asarray(y)) for y in exe.run(*arrays))

    run.executable = exe  # type: ignore[attr-defined] (the compiled module, for inspection)
    return run
