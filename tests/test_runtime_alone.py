"""A saved model loads and runs with the runtime alone: no frontend, no lark, no pass and
no lowering is imported, and no MLIR text is parsed (issue: a runtime that needs no
compiler)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import nimble

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
COMPILER = ("lark", "onnx", "nimble.frontend", "nimble.passes", "nimble.lowering", "nimble.compile",
            "nimble.fuzz")


def test_a_saved_model_runs_without_importing_the_compiler(tmp_path):
    for name in ("lstm", "resnet18"):
        nimble.compile(EXAMPLES / f"{name}.nb").save(tmp_path / f"{name}.nbc")
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import nimble.runtime
        import xdsl.parser

        def parsed(*args, **kwargs):
            raise AssertionError("loading parsed MLIR text")

        xdsl.parser.Parser.__init__ = parsed  # the host functions are read in binary form

        rng = np.random.default_rng(0)
        lstm = nimble.runtime.load({str(tmp_path / "lstm.nbc")!r})
        xs = rng.standard_normal((3, 2, 64)).astype(np.float32)
        h0 = rng.standard_normal((2, 128)).astype(np.float32)
        w = rng.standard_normal((512, 192)).astype(np.float32) * 0.1
        (h,) = lstm.run(xs, h0, h0, w, np.zeros(512, np.float32))
        assert h.shape == (2, 128) and np.all(np.isfinite(h))
        resnet = nimble.runtime.load({str(tmp_path / "resnet18.nbc")!r})
        args = [rng.standard_normal([1 if d < 0 else d for d in t.get_shape()]).astype(np.float32) * 0.1
                for t in resnet.signatures["main"][0].inputs.data]
        args[0] = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
        (y,) = resnet.run(*args)
        assert y.shape == (1, 1000)
        print(" ".join(m for m in sorted(sys.modules) if m.startswith({COMPILER!r})))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)  # (not the checkout: its `nimble/` would shadow the installed package)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "", f"imported: {result.stdout.strip()}"


def test_a_saved_model_runs_its_host_ops_kernels_without_the_compiler(tmp_path):
    """`graph.nms` on the CPU runs its kernel (`lowering/vm/native_kernels.py`), compiled
    with the module and saved in it: loading and running needs no compiler."""
    from conftest import nms_text

    nimble.compile(nms_text(0.5, 0.05, 10)).save(tmp_path / "nms.nbc")
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import nimble.runtime
        import xdsl.parser

        def parsed(*args, **kwargs):
            raise AssertionError("loading parsed MLIR text")

        xdsl.parser.Parser.__init__ = parsed  # the host functions are read in binary form

        exe = nimble.runtime.load({str(tmp_path / "nms.nbc")!r})
        corners = np.random.default_rng(0).random((40, 2)).astype(np.float32)
        (keep,) = exe.run(np.concatenate([corners, corners + 0.2], 1), np.linspace(1, 0, 40, dtype=np.float32))
        assert keep[0] == 0 and 1 <= len(keep) <= 10 and exe.fallbacks == []
        print(" ".join(m for m in sorted(sys.modules) if m.startswith({COMPILER!r})))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "", f"imported: {result.stdout.strip()}"


def test_a_saved_opencl_model_runs_without_importing_the_compiler(tmp_path):
    """The module holds the OpenCL C source and each kernel's launch plan
    (`runtime/opencl_plan.py`): loading generates no code and parses no IR."""
    pytest.importorskip("pyopencl")
    exe = nimble.compile(EXAMPLES / "resnet18.nb", target="opencl")
    assert {k.device for k in exe.program.kernels} == {"opencl"}
    exe.save(tmp_path / "resnet18.nbc")
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([1 if d < 0 else d for d in t.get_shape()]).astype(np.float32) * 0.1
            for t in exe.signatures["main"][0].inputs.data]
    args[0] = rng.standard_normal((2, 3, 19, 23)).astype(np.float32)
    np.savez(tmp_path / "args.npz", *args)
    (expected,) = exe.run(*args)
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import nimble.runtime
        import xdsl.parser

        def parsed(*args, **kwargs):
            raise AssertionError("loading parsed MLIR text")

        xdsl.parser.Parser.__init__ = parsed  # the host functions are read in binary form

        exe = nimble.runtime.load({str(tmp_path / "resnet18.nbc")!r})
        args = np.load({str(tmp_path / "args.npz")!r})
        (y,) = exe.run(*(args[f"arr_{{k}}"] for k in range(len(args.files))))
        np.save({str(tmp_path / "y.npy")!r}, y)
        print(" ".join(m for m in sorted(sys.modules) if m.startswith({COMPILER!r})))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "", f"imported: {result.stdout.strip()}"
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), expected)


def test_the_package_names_still_resolve():
    import nimble.compile  # noqa: F401 (the module of the same name as the function)

    assert callable(nimble.compile) and nimble.compile.__name__ == "compile"
    assert nimble.load.__module__ == "nimble.runtime.executable"
    assert {"compile", "load", "parse", "interpret", "Executable"} <= set(dir(nimble))


def test_nimble_run_of_a_saved_model_imports_no_compiler(tmp_path):
    """`nimble-run model.nbc` loads no parser and no pass (the frontend's error classes,
    which it reports, are plain Python)."""
    nimble.compile(EXAMPLES / "lstm.nb").save(tmp_path / "lstm.nbc")
    script = textwrap.dedent(f"""
        import sys
        from nimble.run_cli import main
        assert main([{str(tmp_path / "lstm.nbc")!r}, "--dim", "3"]) == 0
        allowed = {{"nimble.frontend", "nimble.frontend.errors"}}
        print("imported:", " ".join(m for m in sorted(sys.modules) if m.startswith({COMPILER!r}) and m not in allowed))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("imported:"), result.stdout[-2000:]
