"""Dynamic models end to end through the VM, against PyTorch (when installed), same run.

    python benchmarks/models.py [--threads 1|2] [--quick]

Models: LSTM (hidden 256/1024, 25/100 steps, batch 1), a child-sum Tree-LSTM (~50 nodes),
BERT encoders (4x256 and 2x768, sequence 32 and 128), ResNet-18 (1x3x224x224).
Per model: Nimble's median time (compiled to bytecode, saved, loaded, run by the VM),
PyTorch eager's on the same weights and inputs, measured in alternating turns of three
calls (the machine's speed drifts; both see the same drift), the ratio (>1: Nimble
faster), the VM's time outside kernels per instruction (launch overhead included, and
the interpreter running on the caches the kernels left) and its time per instruction
with the kernel launches skipped (the VM's own work), and memory: the allocator's peak
of live bytes against the sum of every allocation (what each tensor
owning its own buffer would hold) with the plan-memory statistics of the compiled
functions. Results are checked against each other before timing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable

THREADS = 1
if "--threads" in sys.argv:
    THREADS = int(sys.argv[sys.argv.index("--threads") + 1])
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(THREADS)

import numpy as np  # noqa: E402

import nimble  # noqa: E402
from timing import machine  # noqa: E402
from nimble.dialects.graph.adt import AdtValue  # noqa: E402

try:
    import torch  # noqa: E402

    torch.set_num_threads(THREADS)
    torch.set_grad_enabled(False)  # inference only
except ImportError:
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")


def lstm_source(hidden: int, inputs: int) -> str:
    """The LSTM example at another size (input and hidden widths)."""
    gates, width = 4 * hidden, inputs + hidden
    return f"""
def @cell(%x: f32[n, {inputs}], %h: f32[n, {hidden}], %c: f32[n, {hidden}], %w: f32[{gates}, {width}], %b: f32[{gates}]) -> (f32[n, {hidden}], f32[n, {hidden}]) {{
  let %gates = dense(concat(%x, %h, axis=1), %w, %b)
  let %i, %f, %o, %u = split(%gates, axis=1, num=4)
  let %c2 = sigmoid(%f) * %c + sigmoid(%i) * tanh(%u)
  (sigmoid(%o) * tanh(%c2), %c2)
}}

def @main(%xs: f32[t, n, {inputs}], %h0: f32[n, {hidden}], %c0: f32[n, {hidden}], %w: f32[{gates}, {width}], %b: f32[{gates}]) -> f32[n, {hidden}] {{
  let %steps = dynshape.dim(%xs, 0)
  let %i, %h, %c = while (%i = index(0), %h = %h0, %c = %c0) cond {{ %i < %steps }} do {{
    let %h2, %c2 = @cell(%xs[%i], %h, %c, %w, %b)
    (%i + 1, %h2, %c2)
  }}
  %h
}}
"""


def median_times(fns: dict[str, Callable[[], object]], repeat: int, turn: int = 3) -> dict[str, float]:
    """The median time of each function, about `repeat` calls each (three turns at
    least), taken in turns of `turn` calls (a drift of the machine's speed then affects
    every function alike)."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(max(3, repeat // turn)):
        for k, fn in fns.items():
            for _ in range(turn):
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


def report(name: str, times: dict[str, float]) -> str:
    line = f"{name}  nimble {times['nimble'] * 1e3:8.3f} ms"
    if "pytorch" in times:
        line += f"  pytorch {times['pytorch'] * 1e3:8.3f} ms (x{times['pytorch'] / times['nimble']:5.2f})"
    return line


def through_bytecode(source: str, name: str) -> nimble.Executable:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.nb")
        with open(path, "w") as f:
            f.write(source)
        exe = nimble.compile(path, threads=THREADS)
        plans = [f.attributes["device.memory_plan"] for f in exe.module.ops if "device.memory_plan" in f.attributes]
        exe.save(os.path.join(tmp, f"{name}.nbc"))
        loaded = nimble.load(os.path.join(tmp, f"{name}.nbc"), threads=THREADS)
        loaded.plans = plans
        return loaded


def vm_alone(exe: nimble.Executable, args: list, repeat: int) -> float:
    """Seconds a run takes with every kernel launch skipped (results left unwritten): the
    VM's own work, instructions and argument checks, without the launches' cost or the
    caches the kernels leave cold for the interpreter (which the time outside kernels in
    a real run includes)."""
    for entry in exe.vm.kernels:
        entry.launch = lambda *args: None
    try:
        times = []
        for _ in range(max(repeat, 10)):
            t = time.perf_counter()
            exe.run(*args)
            times.append(time.perf_counter() - t)
        return min(times)
    finally:
        for entry in exe.vm.kernels:
            del entry.launch


def vm_report(exe: nimble.Executable, args: list, repeat: int) -> str:
    vm = exe.vm
    vm.storage.track_live = True
    vm.storage.reset_stats()
    profile = vm.start_profile()
    t = time.perf_counter()
    for _ in range(repeat):
        exe.run(*args)
    total = time.perf_counter() - t
    in_kernels = sum(sum(v) for v in profile.values())
    per_instruction = (total - in_kernels) / max(vm.steps, 1) * 1e6
    stats = vm.storage.stats
    vm.profile, vm.max_steps = None, None
    static = sum(p.data["static_naive"].value.data for p in exe.plans)
    planned = sum(p.data["static_planned"].value.data for p in exe.plans)
    dyn = sum(p.data["dynamic_naive"].value.data for p in exe.plans)
    dyn_planned = sum(p.data["dynamic_planned"].value.data for p in exe.plans)
    alone = vm_alone(exe, args, repeat) / max(vm.steps // repeat, 1) * 1e6
    return (f"VM {per_instruction:.2f} us/instruction outside kernels, {alone:.2f} with kernels skipped "
            f"({vm.steps // repeat} instructions/run); "
            f"memory: peak {stats.peak_bytes / 1e6:.2f} MB live vs {stats.requested_bytes / repeat / 1e6:.2f} MB "
            f"allocated per run; planned: static {static / 1e6:.2f} -> {planned / 1e6:.2f} MB, "
            f"dynamic storages {dyn} -> {dyn_planned}")


def lstm(hidden: int, steps: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    inputs = hidden
    exe = through_bytecode(lstm_source(hidden, inputs), "lstm")
    xs = rng.standard_normal((steps, 1, inputs)).astype(np.float32)
    h0 = np.zeros((1, hidden), np.float32)
    w = (rng.standard_normal((4 * hidden, inputs + hidden)) * 0.05).astype(np.float32)
    b = (rng.standard_normal(4 * hidden) * 0.05).astype(np.float32)
    args = [xs, h0, h0.copy(), w, b]
    fns = {"nimble": lambda: exe.run(*args)}
    if torch is not None:
        model = torch.nn.LSTM(inputs, hidden)
        # PyTorch's gate order is (i, f, g, o); Nimble's example splits (i, f, o, u).
        i, f, o, u = np.split(w, 4)
        ib, fb, ob, ub = np.split(b, 4)
        model.weight_ih_l0.copy_(torch.from_numpy(np.concatenate([i, f, u, o])[:, :inputs]))
        model.weight_hh_l0.copy_(torch.from_numpy(np.concatenate([i, f, u, o])[:, inputs:]))
        model.bias_ih_l0.copy_(torch.from_numpy(np.concatenate([ib, fb, ub, ob])))
        model.bias_hh_l0.zero_()
        x = torch.from_numpy(xs)
        expected = model(x)[1][0][0].numpy()
        np.testing.assert_allclose(exe.run(*args)[0], expected, rtol=1e-3, atol=1e-4)
        fns["pytorch"] = lambda: model(x)
    print(report(f"LSTM h{hidden} T={steps:<4}", median_times(fns, repeat)), flush=True)
    print("    " + vm_report(exe, args, max(3, repeat // 4)), flush=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def random_tree(rng, nodes: int):
    """A random binary tree with about `nodes` nodes."""
    x = rng.standard_normal((1, 64)).astype(np.float32)
    if nodes <= 1:
        return AdtValue("Leaf", (x,))
    left = int(rng.integers(0, nodes - 1)) | 1
    return AdtValue("Node", (x, random_tree(rng, left), random_tree(rng, max(1, nodes - 1 - left))))


def count(t) -> int:
    return 1 if t.constructor == "Leaf" else 1 + count(t.fields[1]) + count(t.fields[2])


def tree_lstm(nodes: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    with open(os.path.join(EXAMPLES, "tree_lstm.nb")) as f:
        exe = through_bytecode(f.read(), "tree_lstm")
    tree = random_tree(rng, nodes)
    shapes = [(450, 64), (450, 150), (450,), (150, 64), (150, 150), (150,)]
    params = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    fns = {"nimble": lambda: exe.run(tree, *params)}
    if torch is not None:
        w_iou, u_iou, b_iou, w_f, u_f, b_f = (torch.from_numpy(p) for p in params)

        def node(t):
            x = torch.from_numpy(t.fields[0])
            if t.constructor == "Leaf":
                i, o, u = torch.split(x @ w_iou.T + b_iou, 150, dim=1)
                c = torch.sigmoid(i) * torch.tanh(u)
                return torch.sigmoid(o) * torch.tanh(c), c
            hl, cl = node(t.fields[1])
            hr, cr = node(t.fields[2])
            i, o, u = torch.split(x @ w_iou.T + b_iou + (hl + hr) @ u_iou.T, 150, dim=1)
            wx = x @ w_f.T + b_f
            c = (torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(wx + hl @ u_f.T) * cl
                 + torch.sigmoid(wx + hr @ u_f.T) * cr)
            return torch.sigmoid(o) * torch.tanh(c), c

        np.testing.assert_allclose(exe.run(tree, *params)[0], node(tree)[0].numpy(), rtol=1e-3, atol=1e-4)
        fns["pytorch"] = lambda: node(tree)
    print(report(f"Tree-LSTM {count(tree)} nodes h150", median_times(fns, repeat)), flush=True)
    print("    " + vm_report(exe, [tree, *params], max(3, repeat // 4)), flush=True)


def bert_source(layers: int, hidden: int) -> str:
    """The BERT example's encoder at another depth and width (heads of 64, FFN 4x)."""
    heads, ff = hidden // 64, 4 * hidden
    weights = (f"%wq: f32[{hidden}, {hidden}], %bq: f32[{hidden}], %wk: f32[{hidden}, {hidden}], %bk: f32[{hidden}], "
               f"%wv: f32[{hidden}, {hidden}], %bv: f32[{hidden}], %wo: f32[{hidden}, {hidden}], %bo: f32[{hidden}], "
               f"%g1: f32[{hidden}], %e1: f32[{hidden}], %w1: f32[{ff}, {hidden}], %b1: f32[{ff}], "
               f"%w2: f32[{hidden}, {ff}], %b2: f32[{hidden}], %g2: f32[{hidden}], %e2: f32[{hidden}]")
    names = "%wq, %bq, %wk, %bk, %wv, %bv, %wo, %bo, %g1, %e1, %w1, %b1, %w2, %b2, %g2, %e2"
    calls = "%x"
    for _ in range(layers):
        calls = f"@layer({calls}, {names})"
    return f"""
def @layer(%x: f32[s, {hidden}], {weights}) -> f32[s, {hidden}] {{
  let %q = transpose(reshape(dense(%x, %wq, %bq), [-1, {heads}, 64]), [1, 0, 2])
  let %k = transpose(reshape(dense(%x, %wk, %bk), [-1, {heads}, 64]), [1, 2, 0])
  let %v = transpose(reshape(dense(%x, %wv, %bv), [-1, {heads}, 64]), [1, 0, 2])
  let %p = softmax(%q @ %k * 0.125, axis=-1)
  let %context = reshape(transpose(%p @ %v, [1, 0, 2]), [-1, {hidden}])
  let %a = layer_norm(%x + dense(%context, %wo, %bo), %g1, %e1)
  let %f = dense(gelu(dense(%a, %w1, %b1)), %w2, %b2)
  layer_norm(%a + %f, %g2, %e2)
}}

def @main(%x: f32[s, {hidden}], {weights}) -> f32[s, {hidden}] {{
  {calls}
}}
"""


def bert(layers: int, hidden: int, lengths: list[int], repeat: int) -> None:
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    exe = through_bytecode(bert_source(layers, hidden), "bert")
    compile_s = time.perf_counter() - t
    ff = 4 * hidden
    shapes = [(hidden, hidden), (hidden,)] * 4 + [(hidden,), (hidden,), (ff, hidden), (ff,), (hidden, ff), (hidden,),
                                                  (hidden,), (hidden,)]
    params = [(rng.standard_normal(sh) * 0.05).astype(np.float32) for sh in shapes]
    params[8] += 1.0  # layer-norm scales near 1
    params[14] += 1.0
    for seq in lengths:
        x = rng.standard_normal((seq, hidden)).astype(np.float32)
        fns = {"nimble": lambda: exe.run(x, *params)}
        if torch is not None:
            tp = [torch.from_numpy(p) for p in params]
            heads = hidden // 64

            def layer(h):
                wq, bq, wk, bk, wv, bv, wo, bo, g1, e1, w1, b1, w2, b2, g2, e2 = tp
                q = (h @ wq.T + bq).reshape(-1, heads, 64).transpose(0, 1)
                k = (h @ wk.T + bk).reshape(-1, heads, 64).permute(1, 2, 0)
                v = (h @ wv.T + bv).reshape(-1, heads, 64).transpose(0, 1)
                ctx = (torch.softmax(q @ k * 0.125, dim=-1) @ v).transpose(0, 1).reshape(-1, hidden)
                a = torch.nn.functional.layer_norm(h + ctx @ wo.T + bo, (hidden,), g1, e1)
                f = torch.nn.functional.gelu(a @ w1.T + b1) @ w2.T + b2
                return torch.nn.functional.layer_norm(a + f, (hidden,), g2, e2)

            def model():
                h = torch.from_numpy(x)
                for _ in range(layers):
                    h = layer(h)
                return h

            np.testing.assert_allclose(exe.run(x, *params)[0], model().numpy(), rtol=1e-3, atol=1e-3)
            fns["pytorch"] = model
        line = report(f"BERT {layers}x{hidden} S={seq:<4}", median_times(fns, repeat))
        print(line + f"  (compile {compile_s:.1f} s)", flush=True)
    print("    " + vm_report(exe, [x, *params], max(3, repeat // 4)), flush=True)


RESNET_SHAPES = [(64, 3, 7, 7), (64,)] + [(64, 64, 3, 3), (64,)] * 4
for _cin, _cout in ((64, 128), (128, 256), (256, 512)):
    RESNET_SHAPES += [(_cout, _cin, 3, 3), (_cout,), (_cout, _cout, 3, 3), (_cout,), (_cout, _cin, 1, 1), (_cout,)]
    RESNET_SHAPES += [(_cout, _cout, 3, 3), (_cout,)] * 2
RESNET_SHAPES += [(1000, 512), (1000,)]


def resnet18(size: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    with open(os.path.join(EXAMPLES, "resnet18.nb")) as f:
        exe = through_bytecode(f.read(), "resnet18")
    compile_s = time.perf_counter() - t
    image = rng.standard_normal((1, 3, size, size)).astype(np.float32)
    params = [(rng.standard_normal(sh) * np.sqrt(2 / max(1, np.prod(sh[1:])))).astype(np.float32) for sh in RESNET_SHAPES]
    fns = {"nimble": lambda: exe.run(image, *params)}
    if torch is not None:
        F = torch.nn.functional
        p = [torch.from_numpy(a) for a in params]

        def block(x, w1, b1, w2, b2):
            return F.relu(F.conv2d(F.relu(F.conv2d(x, w1, b1, padding=1)), w2, b2, padding=1) + x)

        def down(x, w1, b1, w2, b2, wp, bp):
            y = F.relu(F.conv2d(x, w1, b1, stride=2, padding=1))
            return F.relu(F.conv2d(y, w2, b2, padding=1) + F.conv2d(x, wp, bp, stride=2))

        def model():
            x = F.max_pool2d(F.relu(F.conv2d(torch.from_numpy(image), p[0], p[1], stride=2, padding=3)), 3, 2, 1)
            x = block(block(x, *p[2:6]), *p[6:10])
            at = 10
            for _ in range(3):
                x = block(down(x, *p[at:at + 6]), *p[at + 6:at + 10])
                at += 10
            return x.mean(dim=(2, 3)) @ p[at].T + p[at + 1]

        expected = model().numpy()
        got = exe.run(image, *params)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * float(np.abs(expected).max()))
        fns["pytorch"] = model
    line = report(f"ResNet-18 1x3x{size}x{size}", median_times(fns, repeat))
    print(line + f"  (compile {compile_s:.1f} s)", flush=True)
    print("    " + vm_report(exe, [image, *params], max(3, repeat // 4)), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    repeat = 5 if args.quick else 40
    print(f"{machine()}; threads {THREADS}; pytorch {'not installed' if torch is None else torch.__version__}", flush=True)
    for hidden, steps in ([(256, 25)] if args.quick else [(256, 25), (256, 100), (1024, 25), (1024, 100)]):
        lstm(hidden, steps, repeat)
    tree_lstm(47, repeat)
    for layers, hidden in ([(2, 256)] if args.quick else [(4, 256), (2, 768)]):
        bert(layers, hidden, [32] if args.quick else [32, 128], repeat)
    resnet18(64 if args.quick else 224, max(3, repeat // 4))


if __name__ == "__main__":
    main()
