"""A `.nbc` from someone else: its object code is covered by a SHA-256 digest, checked
structurally before LLVM's loader sees it (runtime/elf_check.py), and not loaded at all
with `trust_object_code=False` (the kernels are compiled from the IR the file holds)."""

from __future__ import annotations

import hashlib
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nimble
from nimble.runtime.bytecode import HEADER, BytecodeError, decode, encode
from nimble.runtime.elf_check import EHDR, RELA, SHDR, SYM, ElfError, check_object

MLP = """func.func @main(%x: tensor<?x16xf32>, %w: tensor<16x8xf32>) -> tensor<?x8xf32> {
  %y = graph.matmul %x, %w : (tensor<?x16xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %r = graph.relu %y : tensor<?x8xf32> -> tensor<?x8xf32>
  %s = graph.softmax %r {axis = 1 : i64} : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %s : tensor<?x8xf32>
}"""


@pytest.fixture(scope="module")
def module_bytes():
    return nimble.compile(MLP).to_bytes()


def _args(n: int = 5):
    rng = np.random.default_rng(n)
    return [rng.standard_normal((n, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)]


def _rehashed(data: bytes | bytearray) -> bytes:
    magic, version, sections, producer, _ = HEADER.unpack_from(data)
    body = bytes(data[HEADER.size:])
    return HEADER.pack(magic, version, sections, producer, hashlib.sha256(body).digest()) + body


def test_object_code_is_covered_by_the_digest(module_bytes):
    blob = decode(module_bytes).object_code[0]
    at = module_bytes.index(blob) + len(blob) // 2
    flipped = module_bytes[:at] + bytes([module_bytes[at] ^ 0x40]) + module_bytes[at + 1:]
    with pytest.raises(BytecodeError, match="SHA-256 digest does not match"):
        nimble.load(flipped)


def test_nimbles_own_objects_pass_the_structural_check(module_bytes):
    for blob in decode(module_bytes).object_code:
        check_object(blob)


@pytest.mark.parametrize(("field", "message"), [
    ("machine", "object code for machine"),
    ("shoff", "section header table is outside"),
    ("symbol name", "name is past the end of its string table"),
    ("relocation offset", "past its section"),
    ("relocation symbol", "names symbol"),
    ("section size", "outside the object"),
    ("relocated file symbol", "of type 4"),  # (RuntimeDyld: "Unresolved symbol type!", an abort)
    ("symbol binding", "binding 9"),
])
def test_what_the_structural_check_refuses(module_bytes, field, message):
    # The largest object with relocations (which objects have any depends on the CPU's
    # code: with AVX2 the largest holds none).
    data, sections = max((_sections_of(blob) for blob in decode(module_bytes).object_code),
                         key=lambda o: (any(s[1] == 4 for s in o[1]), len(o[0])))
    shoff = EHDR.unpack_from(data)[6]
    symtab = next(s for s in sections if s[1] == 2)
    rela = next(s for s in sections if s[1] == 4)
    if field == "machine":
        struct.pack_into("<H", data, 18, 183)
    elif field == "shoff":
        struct.pack_into("<Q", data, 40, len(data))
    elif field == "symbol name":
        struct.pack_into("<I", data, symtab[4] + SYM.size, 1 << 30)
    elif field == "relocation offset":
        struct.pack_into("<Q", data, rela[4], 1 << 40)
    elif field == "relocation symbol":
        _, info, _ = RELA.unpack_from(data, rela[4])
        struct.pack_into("<Q", data, rela[4] + 8, (1 << 31) << 32 | (info & 0xFFFFFFFF))
    elif field == "relocated file symbol":
        _, info, _ = RELA.unpack_from(data, rela[4])
        at = symtab[4] + (info >> 32) * SYM.size + 4
        data[at] = data[at] & 0xF0 | 4  # STT_FILE
    elif field == "symbol binding":
        at = symtab[4] + SYM.size + 4
        data[at] = 9 << 4 | data[at] & 0xF
    elif field == "section size":
        struct.pack_into("<Q", data, shoff + SHDR.size * sections.index(symtab) + 32, 1 << 40)
    with pytest.raises(ElfError, match=message):
        check_object(bytes(data))


def _sections_of(blob: bytes) -> tuple[bytearray, list[tuple]]:
    data = bytearray(blob)
    header = EHDR.unpack_from(data)
    shoff, shnum = header[6], header[12]
    return data, [SHDR.unpack_from(data, shoff + i * SHDR.size) for i in range(shnum)]


def test_mutated_object_metadata_is_refused_or_loads_without_a_crash(module_bytes, tmp_path):
    """Random bit flips and bytes in the objects' ELF header, section headers, symbol,
    string and relocation tables (digest recomputed, as a hostile writer would): each
    load is a BytecodeError or a module; never a crash of the process (run apart, so
    that one would fail this test rather than end the run)."""
    script = textwrap.dedent("""
        import hashlib, sys
        import numpy as np
        import nimble
        from nimble.runtime.bytecode import HEADER, BytecodeError, decode
        from nimble.runtime.elf_check import EHDR, SHDR
        data = bytes.fromhex(sys.stdin.read())
        ranges = []
        for blob in decode(data).object_code:
            base = data.index(blob)
            header = EHDR.unpack_from(blob)
            shoff, shnum = header[6], header[12]
            ranges.append((base, base + EHDR.size))
            ranges.append((base + shoff, base + shoff + shnum * SHDR.size))
            for i in range(shnum):
                _, kind, _, _, offset, size, *_ = SHDR.unpack_from(blob, shoff + i * SHDR.size)
                if kind in (2, 3, 4):
                    ranges.append((base + offset, base + offset + size))
        rng = np.random.default_rng(0)
        outcomes = {"refused": 0, "loaded": 0}
        for trial in range(400):
            mutated = bytearray(data)
            start, end = ranges[int(rng.integers(len(ranges)))]
            for _ in range(int(rng.integers(1, 4))):
                at = int(rng.integers(start, end))
                if trial % 2:
                    mutated[at] ^= 1 << int(rng.integers(0, 8))
                else:
                    mutated[at] = int(rng.integers(0, 256))
            magic, version, sections, producer, _ = HEADER.unpack_from(mutated)
            body = bytes(mutated[HEADER.size:])
            mutated = HEADER.pack(magic, version, sections, producer, hashlib.sha256(body).digest()) + body
            try:
                nimble.load(mutated)
                outcomes["loaded"] += 1
            except BytecodeError:
                outcomes["refused"] += 1
        print(outcomes)
    """)
    result = subprocess.run([sys.executable, "-c", script], input=module_bytes.hex(), capture_output=True, text=True,
                            timeout=600, cwd=tmp_path)  # (not the checkout: its `nimble/` would shadow the package)
    assert result.returncode == 0, result.stderr[-3000:]
    outcomes = eval(result.stdout.strip().splitlines()[-1])  # (our own script's dict)
    assert outcomes["refused"] > 100 and outcomes["loaded"] > 20, outcomes


def test_untrusted_loading_compiles_from_the_ir_and_never_loads_the_object_code(module_bytes):
    program = decode(module_bytes)
    expected = nimble.load(module_bytes).run(*_args())
    program.object_code = [b"\xcc" * len(blob) for blob in program.object_code]  # int3 all over
    hostile = encode(program)
    with pytest.raises(BytecodeError, match="does not hold ELF object code LLVM may load"):
        nimble.load(hostile)
    exe = nimble.load(hostile, trust_object_code=False)
    for got, want in zip(exe.run(*_args()), expected):
        np.testing.assert_array_equal(got, want)
    program.cpu_kernels = ""
    with pytest.raises(BytecodeError, match="holds no loop-level IR to compile its kernels from"):
        nimble.load(encode(program), trust_object_code=False)


def _with_plans(data: bytes, change) -> bytes:
    """The module of `data` with its OpenCL launch plans changed by `change`."""
    import dataclasses

    program = decode(data)
    program.opencl_kernels = [change(dataclasses, k) for k in program.opencl_kernels]
    return encode(program)


@pytest.mark.parametrize("change, message", [
    (lambda dc, k: dc.replace(k, nodes=k.nodes + (("arith.addi", len(k.nodes), 0),)), "do not precede it"),
    (lambda dc, k: dc.replace(k, nodes=k.nodes + (("shape", 99),)), "holds"),
    (lambda dc, k: dc.replace(k, nodes=k.nodes + (("print", 0),)), "unknown kind"),
    (lambda dc, k: dc.replace(k, phases=tuple(dc.replace(p, grid=((0, 0),)) for p in k.phases)), "range|lower"),
])
def test_malformed_opencl_launch_plans_are_refused_when_read(change, message):
    """A plan's nodes refer only to earlier nodes and to arguments the kernel has: a
    file breaking that is refused by `decode`, before anything runs."""
    pytest.importorskip("pyopencl")
    data = nimble.compile(MLP, target="opencl").to_bytes()
    with pytest.raises(BytecodeError, match=message):
        decode(_with_plans(data, change))


def test_a_plan_naming_a_kernel_the_program_lacks_is_refused_when_loaded():
    pytest.importorskip("pyopencl")
    data = nimble.compile(MLP, target="opencl").to_bytes()
    renamed = _with_plans(data, lambda dc, k: dc.replace(k, phases=tuple(dc.replace(p, name=p.name + "_x")
                                                                          for p in k.phases)))
    with pytest.raises(BytecodeError, match="has no kernel"):
        nimble.load(renamed)
