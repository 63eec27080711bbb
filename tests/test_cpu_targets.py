"""CPU targets: the description of a CPU, the `#nimble.cpu` attribute that carries it on
a module, schedules that follow it, and code compiled for one CPU run or refused on
another."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import VectorType, f32
from xdsl.passes import PassPipeline

import nimble
from nimble.api import parse
from nimble.dialects import loop
from nimble.compile import run_stages
from nimble.dialects.target import CpuAttr, set_target, target_of
from nimble.registry import all_passes, make_context
from nimble.runtime import cpu_target
from nimble.runtime.bytecode import decode, encode
from nimble.runtime.cpu_target import TargetError, TargetWarning

MATMUL = """func.func @main(%a: tensor<?x96xf32>, %b: tensor<96x40xf32>) -> tensor<?x40xf32> {
  %c = graph.matmul %a, %b : (tensor<?x96xf32>, tensor<96x40xf32>) -> tensor<?x40xf32>
  %d = graph.tanh %c : tensor<?x40xf32> -> tensor<?x40xf32>
  func.return %d : tensor<?x40xf32>
}"""


@pytest.mark.parametrize("name,lanes,registers,masks,isa", [
    ("skylake-avx512", 16, 32, True, "x86-64-v4"),
    ("znver4", 16, 32, True, "x86-64-v4"),
    ("haswell", 8, 16, False, "x86-64-v3"),
    ("znver3", 8, 16, False, "x86-64-v3"),
    ("sandybridge", 8, 16, False, "avx"),
    ("x86-64-v2", 4, 16, False, "x86-64-v2"),
])
def test_named_cpus(name, lanes, registers, masks, isa):
    t = cpu_target.named(name)
    assert (t.lanes(32), t.lanes(64), t.vector_registers, t.masks, t.isa) == (lanes, lanes // 2, registers, masks, isa)
    assert t.fma == (isa in ("x86-64-v3", "x86-64-v4"))


def test_feature_overrides():
    t = cpu_target.named("skylake-avx512", "-avx512f")
    assert (t.lanes(32), t.vector_registers, t.masks) == (8, 16, False)
    assert cpu_target.named("haswell", "-fma").fma is False
    assert cpu_target.named("x86-64-v2", "+avx,+avx2").lanes(32) == 8
    # Features that build on one turned off go with it: the code then runs on AVX2 alone.
    assert cpu_target.named("skylake-avx512", "-avx512f").missing_on(cpu_target.named("haswell")) == []
    assert cpu_target.named("haswell", "-avx").enabled.isdisjoint({"avx2", "fma", "f16c"})


@pytest.mark.parametrize("cpu,features,message", [
    ("pentium4", "", "unknown CPU 'pentium4'"),
    ("haswell", "avx2", "must be '+name' or '-name'"),
    ("haswell", "+", "must be '+name' or '-name'"),
])
def test_bad_targets_are_errors(cpu, features, message):
    with pytest.raises(TargetError, match=re.escape(message)):
        cpu_target.resolve(cpu, features)


def test_host_reads_this_machine():
    t = cpu_target.host()
    assert t.cpu and t.features and t.lanes(32) in (4, 8, 16) and t.l1d > 0 and t.l2 > 0
    assert cpu_target.resolve("host") is t
    assert t.missing_on(t) == []


def test_default_is_the_variable_or_the_host(monkeypatch):
    monkeypatch.delenv(cpu_target.DEFAULT_VARIABLE, raising=False)
    assert cpu_target.default() is cpu_target.host()
    monkeypatch.setenv(cpu_target.DEFAULT_VARIABLE, "znver3:-fma")
    assert (cpu_target.default().cpu, cpu_target.default().fma) == ("znver3", False)
    monkeypatch.setenv(cpu_target.DEFAULT_VARIABLE, "i486")
    with pytest.raises(TargetError, match=r"\$NIMBLE_CPU: unknown CPU 'i486'"):
        cpu_target.default()


@pytest.mark.parametrize("text", [
    '#nimble.cpu<"haswell">',
    '#nimble.cpu<"skylake-avx512", features = "-avx512f,+fma">',
    '#nimble.cpu<"znver3", l1d = 65536, l2 = 1048576, l3 = 33554432, cores = 8>',
])
def test_attribute_round_trips(text):
    module = parse(f"builtin.module attributes {{nimble.target = {text}}} {{\n}}")
    assert str(module.attributes["nimble.target"]) == text
    t = target_of(module)
    assert isinstance(module.attributes["nimble.target"], CpuAttr) and t.cpu == text.split('"')[1]


def test_attribute_with_an_unknown_cpu_is_a_located_error():
    with pytest.raises(Exception, match="unknown CPU 'pentium'") as e:
        parse('builtin.module attributes {nimble.target = #nimble.cpu<"pentium">} {\n}')
    assert "^" in str(e.value)


def _vector_widths(exe: nimble.Executable) -> set[int]:
    """The f32 vector widths of the compiled kernels' values."""
    return {r.type.get_shape()[0] for k in loop.kernels_of(exe.module) for op in k.walk() for r in op.results
            if isinstance(r.type, VectorType) and r.type.element_type == f32}


@pytest.mark.parametrize("cpu,lanes", [("skylake-avx512", 16), ("haswell", 8), ("x86-64-v2", 4)])
def test_compile_vectorises_for_the_cpu_asked(cpu, lanes):
    exe = nimble.compile(MATMUL, cpu=cpu)
    assert exe.code.cpu.cpu == cpu and target_of(exe.module).cpu == cpu
    assert max(_vector_widths(exe)) == lanes


@pytest.mark.parametrize("cpu", ["haswell", "znver3", "x86-64-v2", "host"])
@pytest.mark.parametrize("rows", [1, 7, 13, 64])
def test_code_for_smaller_isas_runs_here(cpu, rows, rng):
    exe = nimble.compile(MATMUL, cpu=cpu)
    a = rng.standard_normal((rows, 96)).astype(np.float32)
    b = rng.standard_normal((96, 40)).astype(np.float32)
    np.testing.assert_allclose(exe(a, b), np.tanh(a @ b), rtol=2e-5, atol=2e-5)


def test_saved_code_says_its_cpu_and_is_compiled_again_where_it_cannot_run(tmp_path, monkeypatch, rng):
    exe = nimble.compile(MATMUL, cpu="haswell")
    path = tmp_path / "m.nbc"
    exe.save(path)
    program = decode(path.read_bytes())
    assert (program.cpu, program.cpu_features) == ("haswell", "")
    a, b = rng.standard_normal((5, 96)).astype(np.float32), rng.standard_normal((96, 40)).astype(np.float32)
    loaded = nimble.load(path)
    np.testing.assert_allclose(loaded(a, b), np.tanh(a @ b), rtol=2e-5, atol=2e-5)
    assert loaded.code.cpu.cpu == "haswell" and loaded.code.from_cache == []
    # On an SSE4.2-only machine the AVX2 code must not load (it would die on an illegal
    # instruction): the kernels are compiled again from the loop-level IR the file holds,
    # for the host, with one warning saying why.
    monkeypatch.setattr(cpu_target, "host", lambda: cpu_target.named("x86-64-v2"))
    with pytest.warns(TargetWarning, match=r"compiled for haswell .* uses avx, avx2, .*fma.* which this CPU"):
        again = nimble.load(path)
    assert again.code.cpu.cpu == "x86-64-v2" and sorted(again.code.compiled) == sorted(loaded.code.compiled)
    np.testing.assert_allclose(again(a, b), np.tanh(a @ b), rtol=2e-5, atol=2e-5)
    # A file without that IR is refused: the error says what is missing.
    program.cpu_kernels = ""
    path.write_bytes(encode(program))
    with pytest.raises(TargetError, match=r"compiled for haswell .* uses avx, avx2, .*fma.* which this CPU"):
        nimble.load(path)


def test_compiled_for_a_cpu_the_host_lacks_runs_nowhere_here(monkeypatch, rng):
    monkeypatch.setattr(cpu_target, "host", lambda: cpu_target.named("x86-64-v2"))
    exe = nimble.compile(MATMUL, cpu="skylake-avx512")
    a, b = rng.standard_normal((5, 96)).astype(np.float32), rng.standard_normal((96, 40)).astype(np.float32)
    with pytest.raises(Exception, match="uses .*avx512f.* which this CPU"):
        exe(a, b)


def test_cli_compiles_for_a_named_cpu(tmp_path, capsys):
    from nimble.run_cli import compile_main, main

    source = tmp_path / "m.mlir"
    source.write_text(MATMUL)
    assert compile_main([str(source), "-o", str(tmp_path / "m.nbc"), "--cpu", "znver3"]) == 0
    assert "CPU code for znver3 (x86-64-v3, 256-bit vectors, 16 registers)" in capsys.readouterr().out
    assert main([str(tmp_path / "m.nbc"), "--dim", "3"]) == 0
    assert main([str(source), "--cpu", "i386"]) == 1
    assert "unknown CPU 'i386'" in capsys.readouterr().err


AVX2_HERE = not cpu_target.named("haswell").missing_on(cpu_target.host())


@pytest.mark.skipif(not AVX2_HERE, reason="this host cannot run AVX2 code")
@pytest.mark.parametrize("cpu", ["haswell", "x86-64-v2"])
@pytest.mark.parametrize("k", [1, 33])
def test_panels_of_several_narrow_tiles_at_every_edge(cpu, k, rng):
    """With 8 (4) lanes a register tile is 16 (8) columns wide and a packed panel holds
    four (eight) of them: columns in whole panels, whole tiles after them, and the rest,
    for static and run-time column counts, match the reference."""
    static = f"""func.func @main(%a: tensor<?x{k}xf32>, %b: tensor<{k}x200xf32>) -> tensor<?x200xf32> {{
  %c = graph.matmul %a, %b : (tensor<?x{k}xf32>, tensor<{k}x200xf32>) -> tensor<?x200xf32>
  func.return %c : tensor<?x200xf32>
}}"""
    dynamic = static.replace("x200xf32", "x?xf32")
    schedule = parse(dynamic)
    set_target(schedule, cpu_target.named(cpu))
    run_stages(schedule, ["graph"])
    PassPipeline.parse_spec(all_passes(), "lower-graph-to-loops,canonicalize,cse,schedule-loops").apply(
        make_context(), schedule)
    assert "pack, panel = 64" in str(schedule)
    exe_static, exe_dynamic = nimble.compile(static, cpu=cpu), nimble.compile(dynamic, cpu=cpu)
    for m in (1, 6, 7, 13):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, 200)).astype(np.float32)
        np.testing.assert_allclose(exe_static(a, b), a @ b, rtol=1e-4, atol=1e-4)
        for n in (1, 15, 16, 17, 63, 64, 65, 80, 100, 129, 200):
            np.testing.assert_allclose(exe_dynamic(a, b[:, :n].copy()), a @ b[:, :n], rtol=1e-4, atol=1e-4)
