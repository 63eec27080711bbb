"""The Nimble bytecode module: a `Program` in memory, one binary file on disk.

The compiler collects a `lower-to-vm` module into a `Program`
(`lowering/vm/vm_program.py`); `encode` writes it with the kernels' object code, `decode`
reads it back. The byte layout is documented in docs/bytecode.md. `decode` checks the
whole file before anything runs (magic, version, SHA-256 digest, section bounds, every
count against the bytes left) and `validate` every index an instruction holds
(registers, jump targets, functions, kernels, host functions, constants, constructors,
dtypes, devices) and the arities of calls and kernel launches: a truncated, corrupted
or hostile file is a `BytecodeError`, never a crash. The kernels' object code is checked
structurally before LLVM loads it (`elf_check`); what the code does is not checked:
`nimble.load(..., trust_object_code=False)` compiles the kernels again from the
loop-level IR the file also holds.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp

from nimble.dialects import vm
from nimble.dialects.device import Device
from nimble.errors import InputError
from nimble.runtime import ir_binary, opencl_plan
from nimble.runtime.allocator import aligned
from nimble.runtime.opencl_plan import ClKernel

MAGIC = b"NIMBLEVM"
FORMAT_VERSION = 12
HEADER = struct.Struct("<8sII16s32s")  # magic, version, sections, producer, SHA-256 of the rest
SECTION = struct.Struct("<IIQQ")  # kind, reserved, offset, length
ALIGN = 64
MAX_REGS = 1 << 20
MAX_RANK = 32
MAX_DIM = 1 << 48
"""The largest static dim a module may declare (no memory holds more elements)."""

S_STRINGS, S_CONSTANTS, S_CONSTRUCTORS, S_HOST, S_KERNELS, S_FUNCTIONS = range(1, 7)
SECTION_NAMES = {S_STRINGS: "strings", S_CONSTANTS: "constants", S_CONSTRUCTORS: "constructors",
                 S_HOST: "host functions", S_KERNELS: "kernels", S_FUNCTIONS: "functions"}

K = vm.Kind
_INDEX_KINDS = (K.FUNC, K.KERNEL, K.HOST, K.CONST, K.CTOR, K.STR)


class BytecodeError(InputError):
    """A bytecode module is malformed; the message says what and where."""


@dataclass
class Function:
    name: str
    num_regs: int
    params: list[int]
    num_results: int
    code: list[tuple[int, tuple[Any, ...]]]  # (opcode, field values); symbols as table indices


@dataclass
class Kernel:
    name: str
    group: int  # host function holding its fusion group
    parallel: bool
    variant: bool  # the no-stretch variant: valid only when no `?` dim is stretched
    work: int  # reduction steps per output element
    abi: list[tuple[str, tuple[int, ...]] | None] = field(default_factory=list)
    """The compiled arguments: (dtype, dims with -1 for `?`) per buffer, None per index.
    The VM checks it against the group's types: the shapes a launch is checked with are
    the shapes the machine code was compiled for."""
    device: str = Device.CPU  # `cpu`: in the object code; `opencl`: in `Program.opencl_program`
    code: int = 0  # a CPU kernel's object in `Program.object_code`


@dataclass
class Program:
    functions: list[Function]
    constants: list[np.ndarray]
    kernels: list[Kernel]
    hosts: list[str]  # host function names (in `host_module`)
    host_module: ModuleOp = field(compare=False, repr=False)
    """The host functions, kernel groups, the VM functions' source signatures and ADT
    declarations (saved in binary form, `runtime/ir_binary.py`: loading parses no text)."""
    constructors: list[tuple[str, int]]  # (name, tag within its ADT)
    strings: list[str] = field(default_factory=list)  # fatal messages
    object_code: list[bytes] = field(default_factory=list)
    """ELF objects holding the CPU kernels (each kernel names its own: `Kernel.code`)."""
    producer: str = ""
    opencl_program: str = ""
    """The OpenCL C source of the kernels on an OpenCL device, built when the module loads."""
    opencl_kernels: list[ClKernel] = field(default_factory=list)
    """How to launch each of them (`runtime/opencl_plan.py`)."""
    cpu: str = ""
    """The CPU the object code was compiled for (`runtime/cpu_target.py`: LLVM's name)."""
    cpu_features: str = ""
    """Its feature overrides (the full list for a host's own)."""
    cpu_kernels: str = ""
    """An MLIR module of the loop-level CPU kernels the object code was compiled from: a
    host that cannot run that code compiles its own from it (`nimble.load`)."""

    def function_index(self, name: str) -> int:
        for i, f in enumerate(self.functions):
            if f.name == name:
                return i
        raise KeyError(name)


# ---------------------------------------------------------------------------------------
# Validation (shared by both ways a program is made)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise BytecodeError(message)


def validate(p: Program) -> None:
    """Check every index and arity a program holds (see the module docstring)."""
    limits = {K.FUNC: len(p.functions), K.KERNEL: len(p.kernels), K.HOST: len(p.hosts), K.CONST: len(p.constants),
              K.CTOR: len(p.constructors), K.STR: len(p.strings)}
    names = {K.DTYPE: vm.DTYPES, K.DEVICE: vm.VM_DEVICES}
    for k in p.kernels:
        _check(0 <= k.group < len(p.hosts), f"kernel '{k.name}': host function index {k.group} out of range")
        _check(k.device in vm.VM_DEVICES, f"kernel '{k.name}': unknown device '{k.device}'")
    for f in p.functions:
        where = f"function '{f.name}'"
        _check(0 < f.num_regs <= MAX_REGS, f"{where}: register count {f.num_regs} out of range")
        _check(all(0 <= r < f.num_regs for r in f.params), f"{where}: parameter register out of range")
        _check(len(f.code) > 0, f"{where}: no instructions")
        for pc, (opcode, values) in enumerate(f.code):
            at = f"{where} instruction {pc}"
            _check(0 <= opcode < len(vm.INSTRUCTIONS), f"{at}: unknown opcode {opcode}")
            mnemonic, _, fields = vm.INSTRUCTIONS[opcode]
            _check(len(values) == len(fields), f"{at} ({mnemonic}): {len(values)} fields, expected {len(fields)}")
            for (name, kind), value in zip(fields, values):
                what = f"{at} ({mnemonic}) field '{name}'"
                if kind == K.REG:
                    _check(0 <= value < f.num_regs, f"{what}: register r{value} out of range (function has {f.num_regs})")
                elif kind == K.REGS:
                    _check(all(0 <= r < f.num_regs for r in value), f"{what}: register out of range (function has {f.num_regs})")
                elif kind == K.TARGET:
                    _check(0 <= value < len(f.code), f"{what}: jump target {value} outside the function")
                elif kind in limits:
                    _check(0 <= value < limits[kind], f"{what}: {kind.value} index {value} out of range ({limits[kind]} defined)")
                elif kind in names:
                    _check(value in names[kind], f"{what}: unknown {kind.value} '{value}'")
            _check_arity(p, mnemonic, dict(zip((n for n, _ in fields), values)), at)
        _check(vm.INSTRUCTIONS[f.code[-1][0]][0] in vm.TERMINATORS, f"{where}: the last instruction falls through")
    for i, c in enumerate(p.constants):
        _check(c.dtype in _DTYPES, f"constant {i}: unsupported dtype {c.dtype}")


def _check_arity(p: Program, mnemonic: str, v: dict[str, Any], at: str) -> None:
    if mnemonic in ("invoke", "alloc_closure"):
        callee = p.functions[v["callee"]]
        if mnemonic == "invoke":
            _check(len(v["args"]) == len(callee.params), f"{at}: '{callee.name}' takes {len(callee.params)} arguments, "
                   f"got {len(v['args'])}")
            _check(len(v["dsts"]) == callee.num_results, f"{at}: '{callee.name}' returns {callee.num_results} values, "
                   f"{len(v['dsts'])} expected")
        else:
            _check(len(v["captured"]) <= len(callee.params), f"{at}: captures more values than '{callee.name}' takes")
    elif mnemonic == "alloc_tensor":
        _check(v["offset"] >= 0 and len(v["shape"]) <= MAX_RANK and all(d >= 0 for d in v["shape"]),
               f"{at}: negative offset or dim, or rank above {MAX_RANK}")
    elif mnemonic == "alloc_tensor_reg":
        _check(len(v["dims"]) <= MAX_RANK, f"{at}: rank above {MAX_RANK}")
    elif mnemonic == "alloc_storage":
        a = v["alignment"]
        _check(0 < a <= 1 << 16 and a & (a - 1) == 0, f"{at}: alignment {a} is not a power of two up to 65536")
    elif mnemonic == "cmp":
        _check(0 <= v["predicate"] < len(vm.CMP_PREDICATES), f"{at}: unknown comparison predicate {v['predicate']}")


DTYPE_OF_CODE = [np.dtype(n) for n in ("float32", "float64", "float16", "int64", "int32", "int8", "bool", "int64")]
"""The numpy dtype of each VM dtype code (a code is the name's position in `vm.DTYPES`)."""
_DTYPES: dict[np.dtype, int] = {}
for _code, _dtype in enumerate(DTYPE_OF_CODE):
    _DTYPES.setdefault(_dtype, _code)


def dtype_of(name: str) -> np.dtype:
    return DTYPE_OF_CODE[vm.DTYPES.index(name)]


# ---------------------------------------------------------------------------------------
# Encoding


class _Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def put(self, fmt: str, *values: Any) -> None:
        self.raw(struct.pack("<" + fmt, *values))

    def raw(self, data: bytes) -> None:
        self.parts.append(data)
        self.size += len(data)

    def pad(self, align: int = ALIGN) -> None:
        self.raw(b"\0" * (-self.size % align))

    def bytes(self) -> bytes:
        return b"".join(self.parts)


def _encode_field(w: _Writer, kind: K, value: Any) -> None:
    if kind == K.IMM:
        w.put("q", value)
    elif kind == K.REGS:
        w.put("H", len(value))
        w.put(f"{len(value)}I", *value)
    elif kind == K.IMMS:
        w.put("H", len(value))
        w.put(f"{len(value)}q", *value)
    elif kind == K.DTYPE:
        w.put("B", vm.DTYPES.index(value))
    elif kind == K.DEVICE:
        w.put("B", vm.VM_DEVICES.index(value))
    else:
        w.put("I", value)


def _strings(values: Sequence[str]) -> bytes:
    w = _Writer()
    w.put("I", len(values))
    for s in values:
        data = s.encode()
        w.put("I", len(data))
        w.raw(data)
    return w.bytes()


def _encode_sections(p: Program) -> dict[int, bytes]:
    consts = _Writer()
    consts.put("I", len(p.constants))
    table_size = 4 + sum(4 + 8 * c.ndim + 16 for c in p.constants)
    data_at = table_size + (-table_size % ALIGN)
    blobs = []
    for c in p.constants:
        consts.put("BBH", _DTYPES[c.dtype], c.ndim, 0)
        consts.put(f"{c.ndim}q", *c.shape)
        consts.put("QQ", data_at, c.nbytes)
        blobs.append((data_at, c.tobytes()))
        data_at += c.nbytes + (-c.nbytes % ALIGN)
    consts.pad()
    for at, blob in blobs:
        assert consts.size == at
        consts.raw(blob)
        consts.pad()
    ctors = _Writer()
    ctors.put("I", len(p.constructors))
    for name, tag in p.constructors:
        ctors.raw(_strings([name])[4:])
        ctors.put("I", tag)
    kernels = _Writer()
    kernels.put("I", len(p.object_code))
    for blob in p.object_code:
        kernels.put("Q", len(blob))
        kernels.raw(blob)
    kernels.raw(_strings([p.cpu, p.cpu_features])[4:])
    kernels.put("I", len(p.kernels))
    for k in p.kernels:
        kernels.raw(_strings([k.name])[4:])
        kernels.put("IBBHQI", k.group, k.parallel, k.variant, vm.VM_DEVICES.index(k.device), k.work, k.code)
        kernels.put("H", len(k.abi))
        for arg in k.abi:
            if arg is None:
                kernels.put("BBH", 0, 0, 0)
            else:
                kernels.put("BBH", 1, vm.DTYPES.index(arg[0]), len(arg[1]))
                kernels.put(f"{len(arg[1])}q", *arg[1])
    kernels.raw(_strings([p.opencl_program, opencl_plan.to_json(p.opencl_kernels), p.cpu_kernels])[4:])
    try:
        host = _strings(p.hosts) + ir_binary.encode(p.host_module, _context())
    except ir_binary.IRBinaryError as e:
        raise BytecodeError(f"host functions: {e}") from None
    functions = _Writer()
    functions.put("I", len(p.functions))
    for f in p.functions:
        functions.raw(_strings([f.name])[4:])
        functions.put("III", f.num_regs, f.num_results, len(f.params))
        functions.put(f"{len(f.params)}I", *f.params)
        functions.put("I", len(f.code))
        for opcode, values in f.code:
            functions.put("B", opcode)
            for (_, kind), value in zip(vm.INSTRUCTIONS[opcode][2], values):
                _encode_field(functions, kind, value)
    return {S_STRINGS: _strings(p.strings), S_CONSTANTS: consts.bytes(), S_CONSTRUCTORS: ctors.bytes(),
            S_HOST: host, S_KERNELS: kernels.bytes(), S_FUNCTIONS: functions.bytes()}


def encode(p: Program) -> bytes:
    """The bytecode file of a program (docs/bytecode.md)."""
    sections = _encode_sections(p)
    body = _Writer()
    start = HEADER.size + SECTION.size * len(sections)
    start += -start % ALIGN
    table = _Writer()
    offset = start
    for kind, data in sections.items():
        table.raw(SECTION.pack(kind, 0, offset, len(data)))
        body.raw(data)
        body.pad()
        offset = start + body.size
    head = table.bytes() + b"\0" * (start - HEADER.size - table.size) + body.bytes()
    producer = p.producer.encode()[:16].ljust(16, b"\0")
    return HEADER.pack(MAGIC, FORMAT_VERSION, len(sections), producer, hashlib.sha256(head).digest()) + head


# ---------------------------------------------------------------------------------------
# Decoding


class _Reader:
    """Bounds-checked reads from one section."""

    def __init__(self, data: memoryview, what: str):
        self.data = data
        self.pos = 0
        self.what = what

    def get(self, fmt: str) -> tuple[Any, ...]:
        s = struct.Struct("<" + fmt)
        if self.pos + s.size > len(self.data):
            raise BytecodeError(f"{self.what} section truncated at byte {self.pos} (needs {s.size} more)")
        values = s.unpack_from(self.data, self.pos)
        self.pos += s.size
        return values

    def one(self, fmt: str) -> Any:
        return self.get(fmt)[0]

    def count(self, min_size: int, what: str) -> int:
        n = self.one("I")
        if n * min_size > len(self.data) - self.pos:
            raise BytecodeError(f"{self.what} section: {n} {what} cannot fit in {len(self.data) - self.pos} bytes")
        return n

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise BytecodeError(f"{self.what} section truncated at byte {self.pos} (needs {n} more)")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def string(self) -> str:
        try:
            return self.raw(self.one("I")).decode()
        except UnicodeDecodeError:
            raise BytecodeError(f"{self.what} section: a string is not UTF-8 at byte {self.pos}") from None

    def strings(self) -> list[str]:
        return [self.string() for _ in range(self.count(4, "strings"))]


def _decode_field(r: _Reader, kind: K) -> Any:
    if kind == K.IMM:
        return r.one("q")
    if kind == K.REGS:
        n = r.one("H")
        return list(r.get(f"{n}I"))
    if kind == K.IMMS:
        n = r.one("H")
        return list(r.get(f"{n}q"))
    if kind in (K.DTYPE, K.DEVICE):
        code = r.one("B")
        names = vm.DTYPES if kind == K.DTYPE else vm.VM_DEVICES
        if code >= len(names):
            raise BytecodeError(f"{r.what} section: unknown {kind.value} code {code} at byte {r.pos - 1}")
        return names[code]
    return r.one("I")


@cache
def _context() -> Context:
    from nimble.registry import make_context

    return make_context()


def decode_host_module(data: bytes) -> ModuleOp:
    """The host functions' module from its binary form, verified (BytecodeError if the
    bytes are not one, or the module does not verify)."""
    from nimble.diagnostics import verify_module

    try:
        module = ir_binary.decode(data, _context())
    except ir_binary.IRBinaryError as e:
        raise BytecodeError(f"host functions section: {e}") from None
    if not isinstance(module, ModuleOp):
        raise BytecodeError(f"host functions section holds a '{module.name}' op, not a module")
    try:
        errors = verify_module(module)
    except Exception as e:  # an op built without what its verifier reads (a missing property)
        raise BytecodeError(f"host functions section does not verify: {type(e).__name__}: {e}") from None
    if errors:
        raise BytecodeError("host functions section does not verify: " + errors[0].format())
    return module


def _sections(data: bytes) -> dict[int, memoryview]:
    if len(data) < HEADER.size:
        raise BytecodeError(f"not a Nimble bytecode module: {len(data)} bytes is shorter than the header")
    magic, version, count, _producer, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise BytecodeError("not a Nimble bytecode module (bad magic)")
    if version != FORMAT_VERSION:
        raise BytecodeError(f"bytecode format version {version} is not supported (this Nimble reads {FORMAT_VERSION})")
    if not hmac.compare_digest(hashlib.sha256(memoryview(data)[HEADER.size:]).digest(), digest):
        raise BytecodeError("bytecode module is corrupted (its SHA-256 digest does not match)")
    if count != len(SECTION_NAMES):
        raise BytecodeError(f"bytecode module has {count} sections, expected {len(SECTION_NAMES)}")
    view = memoryview(data)
    sections: dict[int, memoryview] = {}
    for i in range(count):
        at = HEADER.size + i * SECTION.size
        if at + SECTION.size > len(data):
            raise BytecodeError("section table truncated")
        kind, reserved, offset, length = SECTION.unpack_from(data, at)
        if kind not in SECTION_NAMES or kind in sections or reserved:
            raise BytecodeError(f"section table entry {i}: unknown or repeated section kind {kind} (or reserved "
                                f"field {reserved}, not 0)")
        if offset + length > len(data) or offset < HEADER.size + count * SECTION.size:
            raise BytecodeError(f"{SECTION_NAMES[kind]} section [{offset}, {offset + length}) is outside the file")
        sections[kind] = view[offset:offset + length]
    return sections


def decode(data: bytes) -> Program:
    """Read and validate a bytecode module (BytecodeError if anything is wrong)."""
    s = _sections(data)
    producer = HEADER.unpack_from(data)[3].rstrip(b"\0").decode(errors="replace")
    strings = _Reader(s[S_STRINGS], "strings").strings()
    r = _Reader(s[S_CONSTANTS], "constants")
    constants = []
    for i in range(r.count(20, "constants")):
        code, rank, _ = r.get("BBH")
        if code >= len(DTYPE_OF_CODE) or rank > MAX_RANK:
            raise BytecodeError(f"constant {i}: unknown dtype code {code} or rank {rank} above {MAX_RANK}")
        shape = r.get(f"{rank}q")
        at, nbytes = r.get("QQ")
        dtype = DTYPE_OF_CODE[code]
        if any(d < 0 for d in shape) or int(np.prod(shape, dtype=object)) * dtype.itemsize != nbytes:
            raise BytecodeError(f"constant {i}: shape {list(shape)} of {dtype} does not hold {nbytes} bytes")
        if at + nbytes > len(s[S_CONSTANTS]):
            raise BytecodeError(f"constant {i}: data [{at}, {at + nbytes}) outside the constants section")
        array = np.frombuffer(s[S_CONSTANTS], dtype, int(np.prod(shape)), at).reshape(shape)
        constants.append(aligned(array))
    r = _Reader(s[S_CONSTRUCTORS], "constructors")
    constructors = [(r.string(), r.one("I")) for _ in range(r.count(8, "constructors"))]
    r = _Reader(s[S_HOST], "host functions")
    hosts = r.strings()
    host_module = decode_host_module(bytes(s[S_HOST][r.pos:]))
    r = _Reader(s[S_KERNELS], "kernels")
    object_code = [r.raw(r.one("Q")) for _ in range(r.count(8, "objects"))]
    cpu, cpu_features = r.string(), r.string()
    kernels = []
    for _ in range(r.count(28, "kernels")):
        name = r.string()
        group, parallel, variant, device_code, work, held_in = r.get("IBBHQI")
        if device_code >= len(vm.VM_DEVICES):
            raise BytecodeError(f"kernel '{name}': unknown device code {device_code}")
        if device_code == vm.VM_DEVICES.index(Device.CPU) and held_in >= len(object_code):
            raise BytecodeError(f"kernel '{name}': object {held_in} is not in the kernels section")
        abi: list[tuple[str, tuple[int, ...]] | None] = []
        for _ in range(r.one("H")):
            kind, code, rank = r.get("BBH")
            if kind == 0:
                abi.append(None)
                continue
            if kind != 1 or code >= len(vm.DTYPES) or rank > MAX_RANK:
                raise BytecodeError(f"kernel '{name}': bad argument descriptor at byte {r.pos - 4}")
            dims = tuple(r.get(f"{rank}q"))
            if any(d != DYNAMIC_INDEX and not 0 <= d <= MAX_DIM for d in dims):
                raise BytecodeError(f"kernel '{name}': argument dims {list(dims)} are neither sizes nor ?")
            abi.append((vm.DTYPES[code], dims))
        kernels.append(Kernel(name, group, bool(parallel), bool(variant), work, abi, vm.VM_DEVICES[device_code],
                              held_in))
    opencl_program, opencl_plans, cpu_kernels = r.string(), r.string(), r.string()
    try:
        opencl_kernels = opencl_plan.from_json(opencl_plans)
    except ValueError as e:
        raise BytecodeError(str(e)) from None
    r = _Reader(s[S_FUNCTIONS], "functions")
    functions = []
    for _ in range(r.count(20, "functions")):
        name = r.string()
        num_regs, num_results, num_params = r.get("III")
        params = list(r.get(f"{num_params}I"))  # a count beyond the section is a truncation error
        code = []
        for _ in range(r.count(1, "instructions")):
            opcode = r.one("B")
            if opcode >= len(vm.INSTRUCTIONS):
                raise BytecodeError(f"function '{name}': unknown opcode {opcode} at byte {r.pos - 1}")
            code.append((opcode, tuple(_decode_field(r, kind) for _, kind in vm.INSTRUCTIONS[opcode][2])))
        functions.append(Function(name, num_regs, params, num_results, code))
    program = Program(functions, constants, kernels, hosts, host_module, constructors, strings, object_code, producer,
                      opencl_program=opencl_program, opencl_kernels=opencl_kernels, cpu=cpu,
                      cpu_features=cpu_features, cpu_kernels=cpu_kernels)
    validate(program)
    return program
