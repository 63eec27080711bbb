"""A machine-code fast path for kernel launches with the shapes of the previous one.

A checked launch from Python (`KernelEntry.launch`) reads every argument's shape, dtype,
strides and data pointer, a few microseconds for a kernel of a dozen tensors: more than
the kernel itself at batch 1 (a Tree-LSTM node's kernel runs in ~5 us). Most launches
repeat the shapes of the one before, so each kernel keeps a *launch spec* of its last
checked launch (a monomorphic inline cache) and this function, JIT-compiled once per
process, does the whole launch in one ctypes call:

    int nimble_launch(void (*kernel)(i64 *), i64 *spec, list inputs, list outputs)

It copies the spec's slot template (dims and scalars already filled) onto its stack,
and for each tensor argument checks, from the list and array structs, that the
object is exactly a numpy array with the spec's dtype (the same descriptor object), rank,
dims and strides (and writable, for outputs), and writes its data pointer into the
slots; then it calls the kernel and returns 0. (Shape and index arguments are in the
template: the caller compares them with the spec's first, `kernels.same_statics`.)
Anything else returns 1 before the kernel runs and the caller takes the checked Python
path, which raises the precise error or installs a new spec. For a launch split
between worker threads the function called is `workers.nimble_split` and the slots
start with its header (the kernel, the chunks, the workers): it makes every chunk's
slots and runs them, as `Workers.run` does from Python (BERT 4 x 256, S = 128, 2
threads, 36 split launches a run: 6.42 -> 6.08 ms median; ResNet-18 22.91 -> 22.70;
same process, alternating). The launch spec:

    [slots, tensors, ndarray type, inputs, outputs, template[slots]...,
     per tensor: output?, index in its list, slot, descr, rank, writable flag, dims..., strides...]

The struct offsets (CPython's list and object headers, numpy's `PyArrayObject_fields`)
are checked against Python's own view of sample objects before the function is built;
where any differs, `LAUNCH` is None and every launch takes the Python path.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from llvmlite import ir

from nimble.runtime.native_ir import I32, I64, P8, P64, Emitter, module
from nimble.runtime.pointers import data_pointer

WRITEABLE = 0x0400  # NPY_ARRAY_WRITEABLE
WORD = ctypes.sizeof(ctypes.c_void_p)
HEADER = object.__basicsize__  # refcount and type pointer
TYPE = HEADER - WORD
LIST_SIZE, LIST_ITEMS = HEADER, HEADER + WORD
# numpy's array struct after the header: data, nd (int), dimensions, strides, base, descr, flags (int).
DATA, NDIM, DIMS, STRIDES, DESCR, FLAGS = (HEADER + k * WORD for k in (0, 1, 2, 3, 5, 6))


def _read(address: int, ctype: type) -> int:
    return ctype.from_address(address).value or 0


def _layouts_match() -> bool:
    """Whether the offsets above read what Python reports, on arrays of several kinds."""
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    frozen = np.zeros((2, 3), np.int64)
    frozen.flags.writeable = False
    samples = [base, base[1:], base[:, 2:], base.T, np.zeros(0), frozen, np.ones((3, 1, 2), np.float16)]
    items = _read(id(samples) + LIST_ITEMS, ctypes.c_void_p)
    if _read(id(samples) + LIST_SIZE, ctypes.c_ssize_t) != len(samples):
        return False
    for k, a in enumerate(samples):
        at = id(a)
        dims = _read(at + DIMS, ctypes.c_void_p)
        strides = _read(at + STRIDES, ctypes.c_void_p)
        writable = bool(_read(at + FLAGS, ctypes.c_int) & WRITEABLE)
        if (_read(items + k * WORD, ctypes.c_void_p) != at or _read(at + TYPE, ctypes.c_void_p) != id(np.ndarray)
                or _read(at + DATA, ctypes.c_void_p) != data_pointer(a) or _read(at + NDIM, ctypes.c_int) != a.ndim
                or _read(at + DESCR, ctypes.c_void_p) != id(a.dtype) or writable != a.flags.writeable
                or any(_read(dims + WORD * i, ctypes.c_ssize_t) != d for i, d in enumerate(a.shape))
                or any(_read(strides + WORD * i, ctypes.c_ssize_t) != s for i, s in enumerate(a.strides))):
            return False
    return True


def source() -> str:
    """`nimble_launch(kernel, spec, inputs, outputs)`: checks each array against the spec,
    fills the kernel's argument slots, calls the kernel; 1 where an array does not match."""
    m = module()
    e = Emitter(m, "nimble_launch", I32, [("kernel", P8), ("spec", P64), ("inputs", P8), ("outputs", P8)])
    b, spec, fail = e.b, e.arg["spec"], e.block("fail")
    slot_count, tensors, array_type, inputs, outputs = (e.load_word(spec, k) for k in range(5))
    sizes = [b.icmp_signed("==", e.field(e.arg[name], LIST_SIZE, I64), n)
             for name, n in (("inputs", inputs), ("outputs", outputs))]
    _check(e, b.and_(*sizes), fail, "copy")
    slots = b.alloca(I64, slot_count)
    slots.align = 64
    template = e.word(spec, 5)
    e.copy_words(slots, template, slot_count)

    def tensor(_i: ir.Value, record: ir.Value) -> ir.Value:
        rank = _tensor(e, record, slots, array_type, fail)
        return b.add(b.shl(rank, I64(1)), I64(6))

    e.each_record(b.gep(template, [slot_count]), tensors, tensor, "tensor")
    e.run_chunk(e.arg["kernel"], slots)
    b.ret(I32(0))
    e.enter(fail)
    b.ret(I32(1))
    return str(m)


def _tensor(e: Emitter, record: ir.Value, slots: ir.Value, array_type: ir.Value, fail: ir.Block) -> ir.Value:
    """One tensor record: the array's type, dtype, rank and flags, then each axis's dim
    and stride checked, its data pointer stored in its slot; returns the rank."""
    b = e.b
    is_output, index, slot, descr, rank, flags = (e.load_word(record, k) for k in range(6))
    items = e.field(b.select(b.icmp_signed("!=", is_output, I64(0)), e.arg["outputs"], e.arg["inputs"]),
                    LIST_ITEMS, P8.as_pointer())
    array = b.load(b.gep(items, [index]))
    same = [b.icmp_signed("==", e.field(array, TYPE, I64), array_type),
            b.icmp_signed("==", e.field(array, DESCR, I64), descr),
            b.icmp_signed("==", b.sext(e.field(array, NDIM, I32), I64), rank),
            b.icmp_signed("==", b.and_(b.zext(e.field(array, FLAGS, I32), I64), flags), flags)]
    _check(e, b.and_(b.and_(same[0], same[1]), b.and_(same[2], same[3])), fail, "array")
    dims, strides = e.field(array, DIMS, P64), e.field(array, STRIDES, P64)
    want = e.word(record, 6)

    def axis(j: ir.Value) -> None:
        same_dim = b.icmp_signed("==", e.load_word(dims, j), e.load_word(want, j))
        same_stride = b.icmp_signed("==", e.load_word(strides, j), e.load_word(want, b.add(j, rank)))
        _check(e, b.and_(same_dim, same_stride), fail, "axis.ok")

    e.each(0, rank, axis, "axis")
    b.store(e.field(array, DATA, I64), b.gep(slots, [slot]))
    return rank


def _check(e: Emitter, condition: ir.Value, fail: ir.Block, name: str) -> None:
    """Continue where `condition` holds, else go to `fail`."""
    ok = e.block(name)
    e.b.cbranch(condition, ok, fail)
    e.enter(ok)


def _build():
    """The JIT-compiled launcher as a ctypes function, or None where the layouts differ."""
    from nimble.runtime.llvm_jit import support_engine

    if WORD != 8 or not _layouts_match():
        return None
    engine = support_engine(source())
    address = engine.get_function_address("nimble_launch")
    signature = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.py_object, ctypes.py_object)
    function = signature(address)
    function.engine = engine  # the machine code lives as long as the function
    return function


LAUNCH = _build()


def launch_spec(template: np.ndarray, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray],
                input_slots: Sequence[tuple[int, int]], output_slots: Sequence[int]) -> LaunchSpec:
    """The spec of a launch on these arrays (checked already): `template` the slot array
    with every dim and scalar filled in, `input_slots` pairs (slot, input index) of the
    tensor inputs, `output_slots` the slot of each output."""
    records: list[int] = []
    tensors = [(0, i, slot, inputs[i], 0) for slot, i in input_slots]
    tensors += [(1, i, slot, out, WRITEABLE) for i, (slot, out) in enumerate(zip(output_slots, outputs))]
    for is_output, index, slot, a, flags in tensors:
        records += [is_output, index, slot, id(a.dtype), a.ndim, flags, *a.shape, *a.strides]
    spec = np.array([len(template), len(tensors), id(np.ndarray), len(inputs), len(outputs), *template, *records],
                    dtype=np.int64)
    return LaunchSpec(spec, ctypes.c_void_p(data_pointer(spec)), [a.dtype for *_, a, _ in tensors])


class LaunchSpec(NamedTuple):
    array: np.ndarray
    address: ctypes.c_void_p
    dtypes: list[np.dtype]
    """The descriptors whose addresses the spec holds, alive as long as it is (an address
    of a freed one could be reused by another)."""
