"""Parsing speed of the .nb frontend on a generated 10,000-line model.

Reports lines/s for the lark parse alone, for parse + IR building (+ verification),
and, as a reference measured in the same run, xdsl's own MLIR parser on the same
program printed as MLIR.

    python benchmarks/parse_speed.py [--lines 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from nimble.frontend import parse_nb
from nimble.frontend.parse import grammar
from nimble.parser import parse_mlir
from nimble.registry import make_context

BLOCK = """def @cell{i}(%x: f32[n, 64], %h: f32[n, 64], %c: f32[n, 64], %w: f32[256, 128], %b: f32[256]) -> (f32[n, 64], f32[n, 64]) {{
  let %g = dense(concat(%x, %h, axis=1), %w, %b)
  let %i, %f, %o, %u = split(%g, axis=1, num=4)
  let %c2 = sigmoid(%f) * %c + sigmoid(%i) * tanh(%u)
  let %h2 = sigmoid(%o) * tanh(%c2)
  let %s = softmax(%h2 @ transpose(%h2, [1, 0]) * 0.125, axis=-1)
  (layer_norm(%h2 + %s @ %h2, %b[0:64]), %c2)
}}
"""


def generate(lines: int) -> str:
    per_block = BLOCK.count("\n")
    return "".join(BLOCK.format(i=i) for i in range(max(1, lines // per_block)))


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lines", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    text = generate(args.lines)
    n = text.count("\n")
    grammar()  # build the LALR tables once, outside the timings
    module = parse_nb(text, "bench.nb")
    mlir = str(module)
    mlir_lines = mlir.count("\n")
    ctx = make_context()
    t_lark = best_of(args.repeat, lambda: grammar().parse(text))
    t_nb = best_of(args.repeat, lambda: parse_nb(text, "bench.nb"))
    t_mlir = best_of(args.repeat, lambda: parse_mlir(ctx, mlir, "bench.mlir"))
    ops = sum(1 for _ in module.walk())
    print(f"program: {n} .nb lines -> {ops} ops ({mlir_lines} MLIR lines)")
    print(f"lark parse only        : {t_lark:7.3f} s  {n / t_lark:9.0f} lines/s")
    print(f".nb parse + build IR   : {t_nb:7.3f} s  {n / t_nb:9.0f} lines/s  {ops / t_nb:8.0f} ops/s")
    print(f"xdsl MLIR parse (ref)  : {t_mlir:7.3f} s  {mlir_lines / t_mlir:9.0f} lines/s  {ops / t_mlir:8.0f} ops/s")
    print(f"ratio, ops/s .nb vs xdsl MLIR parser: {t_mlir / t_nb:.2f}x")


if __name__ == "__main__":
    main()
