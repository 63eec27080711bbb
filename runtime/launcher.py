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


def _field(name: str, base: str, offset: int, ty: str) -> str:
    """`%name = load ty` from byte `offset` of the object at `%base`."""
    return (f"  %{name}.p = getelementptr i8, i8* %{base}, i64 {offset}\n"
            f"  %{name}.q = bitcast i8* %{name}.p to {ty}*\n"
            f"  %{name} = load {ty}, {ty}* %{name}.q\n")


def _spec(name: str, base: str, index: int | str) -> str:
    """`%name = base[index]` of an i64 array."""
    return (f"  %{name}.p = getelementptr i64, i64* %{base}, i64 {index}\n"
            f"  %{name} = load i64, i64* %{name}.p\n")


def _source() -> str:
    """`nimble_launch(kernel, spec, inputs, outputs)`: checks each array against the spec,
    fills the kernel's argument slots, calls the kernel; 1 where an array does not match."""
    return _entry_blocks() + _tensor_blocks() + _exit_blocks()


def _entry_blocks() -> str:
    """The argument lists' sizes checked, the slots copied from the spec's template, and
    the loop over the spec's tensor records."""
    return f"""
declare void @llvm.memcpy.p0i8.p0i8.i64(i8*, i8*, i64, i1)

define i32 @nimble_launch(void (i64*)* %kernel, i64* %spec, i8* %inputs, i8* %outputs) {{
entry:
{_spec("nslots", "spec", 0)}{_spec("ntensors", "spec", 1)}{_spec("arraytype", "spec", 2)}\
{_spec("nin", "spec", 3)}{_spec("nout", "spec", 4)}\
{_field("insize", "inputs", LIST_SIZE, "i64")}{_field("outsize", "outputs", LIST_SIZE, "i64")}\
  %inok = icmp eq i64 %insize, %nin
  %outok = icmp eq i64 %outsize, %nout
  %sizesok = and i1 %inok, %outok
  br i1 %sizesok, label %copy, label %fail
copy:
  %slots = alloca i64, i64 %nslots, align 64
  %template = getelementptr i64, i64* %spec, i64 5
  %to = bitcast i64* %slots to i8*
  %from = bitcast i64* %template to i8*
  %bytes = shl i64 %nslots, 3
  call void @llvm.memcpy.p0i8.p0i8.i64(i8* %to, i8* %from, i64 %bytes, i1 false)
  %first = getelementptr i64, i64* %template, i64 %nslots
  br label %loop
loop:
  %i = phi i64 [0, %copy], [%inext, %next]
  %rec = phi i64* [%first, %copy], [%recnext, %next]
  %done = icmp eq i64 %i, %ntensors
  br i1 %done, label %call, label %tensor
"""


def _tensor_blocks() -> str:
    """One tensor record: the array's type, dtype, rank and flags, then each axis's dim
    and stride checked, its data pointer stored in its slot."""
    return f"""tensor:
{_spec("isout", "rec", 0)}{_spec("index", "rec", 1)}\
  %out = icmp ne i64 %isout, 0
  %list = select i1 %out, i8* %outputs, i8* %inputs
{_field("items", "list", LIST_ITEMS, "i8**")}\
  %objp = getelementptr i8*, i8** %items, i64 %index
  %obj = load i8*, i8** %objp
{_field("type", "obj", TYPE, "i64")}{_field("descr", "obj", DESCR, "i64")}\
{_field("ndim32", "obj", NDIM, "i32")}{_field("flags32", "obj", FLAGS, "i32")}\
{_spec("wantdescr", "rec", 3)}{_spec("rank", "rec", 4)}{_spec("wantflags", "rec", 5)}\
  %ndim = sext i32 %ndim32 to i64
  %flags = zext i32 %flags32 to i64
  %hasflags = and i64 %flags, %wantflags
  %istype = icmp eq i64 %type, %arraytype
  %isdescr = icmp eq i64 %descr, %wantdescr
  %isrank = icmp eq i64 %ndim, %rank
  %isflags = icmp eq i64 %hasflags, %wantflags
  %ok1 = and i1 %istype, %isdescr
  %ok2 = and i1 %isrank, %isflags
  %ok = and i1 %ok1, %ok2
  br i1 %ok, label %array, label %fail
array:
{_field("dims", "obj", DIMS, "i64*")}{_field("strides", "obj", STRIDES, "i64*")}\
  %want = getelementptr i64, i64* %rec, i64 6
  br label %axes
axes:
  %j = phi i64 [0, %array], [%jnext, %axis]
  %axesdone = icmp eq i64 %j, %rank
  br i1 %axesdone, label %store, label %axis
axis:
{_spec("dim", "dims", "%j")}{_spec("stride", "strides", "%j")}{_spec("wantdim", "want", "%j")}\
  %k = add i64 %j, %rank
{_spec("wantstride", "want", "%k")}\
  %samedim = icmp eq i64 %dim, %wantdim
  %samestride = icmp eq i64 %stride, %wantstride
  %same = and i1 %samedim, %samestride
  %jnext = add i64 %j, 1
  br i1 %same, label %axes, label %fail
store:
{_spec("slot", "rec", 2)}{_field("data", "obj", DATA, "i64")}\
  %dst = getelementptr i64, i64* %slots, i64 %slot
  store i64 %data, i64* %dst
  br label %next
next:
  %inext = add i64 %i, 1
  %twice = shl i64 %rank, 1
  %size = add i64 %twice, 6
  %recnext = getelementptr i64, i64* %rec, i64 %size
  br label %loop
"""


def _exit_blocks() -> str:
    """The kernel called on the slots (0), or a mismatch (1)."""
    return """call:
  call void %kernel(i64* %slots)
  ret i32 0
fail:
  ret i32 1
}
"""


def _build():
    """The JIT-compiled launcher as a ctypes function, or None where the layouts differ."""
    from nimble.runtime.llvm_jit import support_engine

    if WORD != 8 or not _layouts_match():
        return None
    engine = support_engine(_source())
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
