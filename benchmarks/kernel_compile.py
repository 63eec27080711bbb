"""Where a model's JIT time goes, kernel by kernel: IR sizes and each step's time.

    python benchmarks/kernel_compile.py [--top N] MODEL

MODEL: a `.nb`, `.mlir` or `.onnx` file, or `tv:NAME` (torchvision's model NAME, see
`torchvision_models.py`). Compiles the model's passes, then each CPU kernel alone, in
this process, one after the other (no cache, no workers), timing the steps of
`runtime/llvm_jit.py`: `lower` (loop-level IR to xdsl's `llvm` dialect), `convert`
(to llvmlite's IR and its text), `opt` (LLVM parses and optimises it at O2) and
`codegen` (object code). Sizes: the kernel's loop-level ops, its register tiles (reduce
loops carrying two or more vector accumulators: one per remainder variant of a
micro-kernel), LLVM instructions before and after optimisation, object bytes. Prints
the N slowest kernels (default 10) and the totals.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp, VectorType

INSTRUCTION = re.compile(r"^  +(?:%\S+ = )?[a-z]", re.M)


def measure(kernel, lower, cpu) -> dict[str, float]:
    from nimble.dialects import loop
    from nimble.runtime import llvm_jit

    row: dict[str, float] = {"ops": sum(1 for _ in kernel.walk())}
    row["tiles"] = sum(1 for o in kernel.walk() if isinstance(o, loop.ReduceOp)
                       and sum(isinstance(r.type, VectorType) for r in o.results) >= 2)
    t0 = time.perf_counter()
    module = lower(ModuleOp([kernel.clone()]))
    t1 = time.perf_counter()
    text = llvm_jit._realign_stacks(str(llvm_jit.to_llvmlite(module)), llvm_jit.kernel_names(module))
    t2 = time.perf_counter()
    ref = llvm_jit.optimise(text, cpu)
    t3 = time.perf_counter()
    code = llvm_jit._target_machine(cpu).emit_object(ref)
    t4 = time.perf_counter()
    row.update(lower=t1 - t0, convert=t2 - t1, opt=t3 - t2, codegen=t4 - t3,
               before=len(INSTRUCTION.findall(text)), after=len(INSTRUCTION.findall(str(ref))), object=len(code))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from timing import machine

    import nimble
    from nimble.dialects import loop
    from nimble.lowering.llvm.loops_to_llvm import lower_kernels
    from nimble.runtime.collector import fewer_collections

    with tempfile.TemporaryDirectory() as folder:
        model = args.model
        if model.startswith("tv:"):
            from torchvision_models import export

            model = str(export(model[3:], folder))
        exe = nimble.compile(model, jit="lazy")
    kernels = [k for k in loop.kernels_of(exe.module) if k.sym_name.data in set(exe.kernel_names)
               and loop.kernel_device(k) == "cpu"]
    print(f"{machine()}; {Path(args.model).stem}: {len(kernels)} CPU kernels, passes "
          f"{exe.stats.seconds_passes:.2f} s")
    with fewer_collections():  # (as the JIT runs)
        rows = {k.sym_name.data: measure(k, lower_kernels, exe.code.cpu) for k in kernels}
    steps = ("lower", "convert", "opt", "codegen")
    print(f"{'kernel':32s} {'ops':>6s} {'tiles':>5s} {'LLVM in':>8s} {'out':>7s} {'object':>8s}  "
          + " ".join(f"{s:>8s}" for s in steps) + f" {'total':>7s}")
    ranked = sorted(rows.items(), key=lambda kv: -sum(kv[1][s] for s in steps))
    for name, r in ranked[:args.top]:
        print(f"{name:32s} {r['ops']:6.0f} {r['tiles']:5.0f} {r['before']:8.0f} {r['after']:7.0f} {r['object']:8.0f}  "
              + " ".join(f"{r[s]:7.3f}s" for s in steps) + f" {sum(r[s] for s in steps):6.3f}s")
    total = {key: sum(r[key] for r in rows.values()) for key in next(iter(rows.values()))}
    print(f"{'all ' + str(len(rows)):32s} {total['ops']:6.0f} {total['tiles']:5.0f} {total['before']:8.0f} "
          f"{total['after']:7.0f} {total['object']:8.0f}  " + " ".join(f"{total[s]:7.2f}s" for s in steps)
          + f" {sum(total[s] for s in steps):6.2f}s")


if __name__ == "__main__":
    main()
