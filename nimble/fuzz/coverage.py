"""Coverage-guided fuzzing (atheris, libFuzzer's engine) of every input format Nimble reads.

    nimble-fuzz-coverage TARGET [--runs N] [--time SECONDS] [--out FOLDER]

Targets (`TARGETS`): `nb` (the .nb parser and frontend), `mlir` (MLIR text through
nimble-opt's path: parse, verify, the graph passes), `onnx` (the importer, on
protobuf-level mutations of small models), `nbc` (the bytecode loader, and the VM on
what loads) and `kernel-cache` (the kernel cache's entry reader). Each starts from a
seed corpus (the examples and lit inputs, small models compiled or exported on the
spot); an input may end in one of the target's `expected` errors (a clear error is
correct handling); any other exception, a crash or a hang is a finding, which atheris
reports with the input that caused it (saved as `crash-<sha1>` in `--out`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nimble import __version__


def _checkout(given: str | None = None) -> Path:
    """The source checkout whose examples and lit inputs seed the corpora: `--checkout`,
    the current directory, or the one this module was installed from (editable)."""
    candidates = [Path(given)] if given else [Path.cwd(), Path(__file__).resolve().parent.parent.parent]
    for folder in candidates:
        if (folder / "examples").is_dir() and (folder / "lit_tests").is_dir():
            return folder
    raise SystemExit("nimble-fuzz-coverage: give a Nimble checkout with --checkout (its examples seed the corpora)")


ROOT = Path(".")
"""The checkout (`main` sets it)."""


@dataclass
class Target:
    run: Callable[[bytes], None]
    """One input through the reader; an unexpected exception propagates."""
    seeds: Callable[[], list[bytes]]


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


# -- .nb ----------------------------------------------------------------------------------

def _nb(data: bytes) -> None:
    from nimble.frontend import parse_nb
    from nimble.frontend.errors import FrontendError

    with contextlib.suppress(FrontendError):
        module = parse_nb(_text(data), "fuzz.nb")
        str(module)  # (what nimble-opt prints)


def _nb_seeds() -> list[bytes]:
    files = sorted((ROOT / "examples").glob("*.nb")) + sorted((ROOT / "lit_tests" / "frontend").glob("*.nb"))
    return [p.read_bytes() for p in files]


# -- MLIR through nimble-opt -----------------------------------------------------------------

_OPT = None


def _mlir(data: bytes) -> None:
    global _OPT
    if _OPT is None:
        from nimble.opt import NimbleOptMain

        _OPT = NimbleOptMain(args=["-p", "infer-shapes,canonicalize,cse,fuse-ops"])
    text = _text(data)
    with contextlib.redirect_stdout(io.StringIO()):
        _OPT.process_chunk(text, 0, "fuzz.mlir", text)  # (diagnostics, not exceptions)


def _mlir_seeds() -> list[bytes]:
    seeds = [(ROOT / "examples" / "mlp.mlir").read_bytes()]
    for path in sorted((ROOT / "lit_tests" / "passes").glob("*.mlir")) + sorted((ROOT / "lit_tests" / "dialects" / "graph").glob("*.mlir")):
        seeds += [chunk.encode() for chunk in path.read_text().split("// -----") if "func.func" in chunk]
    return seeds


# -- ONNX -------------------------------------------------------------------------------------

def _onnx(data: bytes) -> None:
    from nimble.frontend.onnx import OnnxImportError, import_onnx

    with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
        f.write(data)
        f.flush()
        with contextlib.suppress(OnnxImportError):
            import_onnx(f.name)


def _onnx_seeds() -> list[bytes]:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def init(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])
    mlp = helper.make_graph([helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
                             helper.make_node("Relu", ["h"], ["r"]),
                             helper.make_node("Softmax", ["r"], ["y"], axis=1)],
                            "mlp", [x], [y], [init("w", 4, 8), init("b", 4)])
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["n", 3, 8, 8])
    pooled = helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["n", 4, 1, 1])
    cnn = helper.make_graph([helper.make_node("Conv", ["image", "k"], ["c"], pads=[1, 1, 1, 1]),
                             helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["bn"]),
                             helper.make_node("MaxPool", ["bn"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                             helper.make_node("GlobalAveragePool", ["p"], ["pooled"])],
                            "cnn", [image], [pooled],
                            [init("k", 4, 3, 3, 3), init("s", 4), init("o", 4), init("m", 4),
                             numpy_helper.from_array(np.ones(4, np.float32), "v")])
    return [helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
            for g in (mlp, cnn)]


# -- .nbc and the VM -------------------------------------------------------------------------

_TRUSTED: list[list[bytes]] = []
"""The seeds' object code: the VM runs a module only when its code is one of these
(object code is code: a mutated one may do anything; see docs/reliability.md, Trust)."""


def _nbc(data: bytes) -> None:
    import nimble
    from nimble.reference import InterpreterError
    from nimble.run_cli import build_inputs
    from nimble.runtime.bytecode import HEADER, BytecodeError
    from nimble.runtime.vm import VMError

    if len(data) >= HEADER.size:  # the digest made to match, as a hostile writer would: validation is reached
        magic, version, sections, producer, _ = HEADER.unpack_from(data)
        data = HEADER.pack(magic, version, sections, producer, hashlib.sha256(data[HEADER.size:]).digest()) + \
            data[HEADER.size:]
    try:
        exe = nimble.load(data)
    except BytecodeError:
        return
    if exe.program.object_code not in _TRUSTED:
        return
    exe.vm.max_steps = 10_000
    try:
        args = build_inputs(exe, exe.entry, argparse.Namespace(input=[], dim=["2"], seed=0, file="fuzz.nbc"))
    except ValueError:  # (an input type the harness cannot make at random)
        return
    with contextlib.suppress(InterpreterError, VMError):
        exe.run(*args)


def _nbc_seeds() -> list[bytes]:
    import nimble

    seeds = [nimble.compile(ROOT / "examples" / name).to_bytes() for name in ("mlp.mlir", "lstm.nb", "detection.nb")]
    _TRUSTED.extend(nimble.load(s).program.object_code for s in seeds)
    return seeds


# -- the kernel cache --------------------------------------------------------------------------

_CACHE: list = []


def _kernel_cache(data: bytes) -> None:
    from nimble.runtime.kernel_cache import SUFFIX, KernelCache

    if not _CACHE:
        _CACHE.append(tempfile.mkdtemp(prefix="nimble-fuzz-cache-"))
    cache = KernelCache(_CACHE[0])
    key = bytes(32)
    cache._path(key, SUFFIX).write_bytes(data)
    cache.get(key)  # (a miss or the object: never an exception)


def _kernel_cache_seeds() -> list[bytes]:
    from nimble.runtime.kernel_cache import SUFFIX, KernelCache

    folder = tempfile.mkdtemp(prefix="nimble-fuzz-cache-")
    cache = KernelCache(folder)
    cache.put(bytes(32), b"\x7fELF" + bytes(60))
    return [cache._path(bytes(32), SUFFIX).read_bytes()]


TARGETS: dict[str, Target] = {
    "nb": Target(_nb, _nb_seeds),
    "mlir": Target(_mlir, _mlir_seeds),
    "onnx": Target(_onnx, _onnx_seeds),
    "nbc": Target(_nbc, _nbc_seeds),
    "kernel-cache": Target(_kernel_cache, _kernel_cache_seeds),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="nimble-fuzz-coverage", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("target", choices=sorted(TARGETS))
    p.add_argument("--runs", type=int, default=-1, help="inputs to run (default: until --time)")
    p.add_argument("--time", type=int, default=60, help="seconds to run (default 60)")
    p.add_argument("--out", default=".", help="folder for the inputs that crash")
    p.add_argument("--corpus", help="a corpus folder to read and grow (default: a temporary one)")
    p.add_argument("--checkout", help="the Nimble checkout whose examples seed the corpora (default: this directory)")
    p.add_argument("--no-instrument", action="store_true",
                   help="no coverage instrumentation (a quick smoke run: mutations without guidance)")
    args = p.parse_args(argv)
    global ROOT
    ROOT = _checkout(args.checkout)
    import atheris

    target = TARGETS[args.target]
    corpus = args.corpus or tempfile.mkdtemp(prefix=f"nimble-fuzz-{args.target}-")
    os.makedirs(corpus, exist_ok=True)
    for i, seed in enumerate(target.seeds()):
        Path(corpus, f"seed-{i}").write_bytes(seed)
    if not args.no_instrument:
        atheris.instrument_all()
    flags = [sys.argv[0], f"-runs={args.runs}", f"-max_total_time={args.time}", f"-artifact_prefix={args.out}/",
             "-rss_limit_mb=8192", "-timeout=60", "-print_final_stats=1", corpus]
    atheris.Setup(flags, target.run)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
