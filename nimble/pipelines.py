"""The compile pipelines as tables: the passes of each stage, the stages of each target,
the JIT modes (pass names only: `nimble.compile` runs them; the CLIs read the names
without importing a pass)."""

from __future__ import annotations

STAGES: dict[str, list[str]] = {
    "graph": ["infer-shapes", "widen-halves", "canonicalize", "cse", "matmul-to-dense", "flatten-dense-rows", "fuse-ops"],
    "recurrences": ["lower-rnn-to-kernels"],
    "layout": ["pad-weight-rows"],
    "place": ["place-devices"],
    "loops": ["lower-graph-to-loops", "expand-math", "hoist-invariant", "split-index-sets", "canonicalize", "cse",
              "schedule-loops", "tile-vectorize", "cse", "share-packs", "int-range-optimizations"],
    "memory": ["manifest-alloc", "simplify-host{cse=true}", "int-range-optimizations{kernels=false}", "simplify-host",
               "host-licm", "plan-memory", "simplify-host", "verify-memory-plan"],
    "vm": ["lower-to-vm"],
    "llvm": ["lower-loops-to-llvm"],
    # Recurrences as spatial-accelerator programs (`nimble.spatial`).
    "spatial": ["infer-shapes", "canonicalize", "cse", "fuse-ops", "lower-rnn-to-spatial", "expand-math",
                "canonicalize", "cse", "spatial-dse"],
    # Hand-written kernels: realise the schedules they carry (no default schedules).
    "realize": ["expand-math", "tile-vectorize", "canonicalize", "cse", "share-packs"],
}
PER_KERNEL: dict[str, int] = {"loops": 1}
"""Stages whose passes from this index on work inside each kernel and nowhere else: they
run kernel by kernel (a module of the kernel alone), then canonicalize and CSE the host
functions (`simplify-host{cse=true}`), so that a kernel is final, and can compile, while
the passes go on with the next (`run_stages(on_kernel=...)`). After them nothing changes
a kernel (the memory stage's passes work on the host functions only): the code compiled
then is the kernel's (tests/test_compile.py checks it on every example)."""
TARGETS: dict[str, list[str]] = {
    "llvm": ["graph", "recurrences", "layout", "loops", "memory", "vm", "llvm"],
    "opencl": ["graph", "place", "loops", "memory", "vm", "llvm"],
    "hetero": ["graph", "place", "loops", "memory", "vm", "llvm"],
}
"""The stages of each target; `llvm` (the kernels' own lowering) runs on the CPU kernels
only. OpenCL kernels are generated from their loop-level IR when the program is loaded."""
PIPELINES: dict[str, list[str]] = {**TARGETS, "spatial": ["spatial", "realize"]}
"""Every pipeline a model goes through: the targets of `compile`, and `compile_spatial`'s
(recurrences as spatial programs, their schedules realised before the JIT). The tests
that check every stage's output (verified, printed and parsed back) run these."""
JIT_MODES = ("eager", "lazy")
TARGET_OPTIONS: dict[str, dict[str, str]] = {
    "opencl": {"place-devices": "default=opencl"},
    "hetero": {"place-devices": f"default=opencl min_work={1 << 18}"},
}
"""Pass options each target sets: `opencl` puts every group it can on the device;
`hetero` keeps groups whose estimated work is under 2^18 multiply-adds on the CPU
(where a launch and the copies around it cost more than the device saves)."""
