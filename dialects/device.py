"""The `device` dialect: where tensors live and how kernels are launched on them.

After `manifest-alloc` every kernel output is explicit storage: `device.alloc_storage`
(bytes, alignment, device) and a `device.alloc_tensor` view into it at an offset with a
possibly dynamic shape; `device.launch` runs a kernel on its inputs and writes its
outputs (destination passing, as in the Relay VM). `plan-memory` then makes storages
shared and adds `device.kill` at last uses; `lower-to-vm` turns each op into one VM
instruction.

```
%bytes = arith.muli %n, %c512 : index
%s = device.alloc_storage %bytes align 64 on "cpu"
%h = device.alloc_tensor %s[%c0] (%n) : tensor<?x128xf32>
device.launch @cell_dense_0 (%x, %w) outs (%h) : (tensor<?x64xf32>, tensor<512x64xf32>) -> (tensor<?x128xf32>)
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from nimble.dialects.discardable import declare


class Device(StrEnum):
    """Where a value lives and a kernel runs, as the IR spells it (`on "cpu"`,
    `nimble.device = "opencl"`): the one definition of the device names (members compare
    equal to the strings)."""

    CPU = "cpu"
    OPENCL = "opencl"
    SPATIAL = "spatial"
    """The simulated spatial accelerator: its programs are kernels, not a place for values."""


DEVICES = (Device.CPU, Device.OPENCL)
"""Devices a value can live on."""
HOST_FUNCTION = declare("device.host_function", StringAttr)
"""Marks a `func.func` that runs on the host by its reference semantics (a CPU
fallback op, or a kernel's fusion group: `device.group_of` names the kernel)."""
GROUP_OF = declare("device.group_of", ArrayAttr)
"""On a host function holding a kernel's fusion group: the kernels it checks shapes for."""
NATIVE_KERNEL = declare("device.native_kernel", SymbolRefAttr)
"""On a host function outlining one op that is not a loop nest (`graph.nms`): the kernel
that implements the op on the CPU (`lowering/vm/native_kernels.py`), which the VM calls."""
PLACEMENT = declare("device.placement", StringAttr)
"""On a graph op: the device the user pinned it to (`let %y = ... on cpu` in `.nb`); on a
fusion group or an op outside groups: the device `place-devices` chose."""
MEMORY_PLAN = declare("device.memory_plan", DictionaryAttr)
"""On a host function: its storages' sizes and the values placed in each (`plan-memory`)."""


def placement_of(op: Operation) -> str | None:
    """The device an op is pinned to or placed on (`PLACEMENT`), if any."""
    attr = op.attributes.get(PLACEMENT)
    return attr.data if isinstance(attr, StringAttr) else None


def pinned_devices(ops: Iterable[Operation]) -> set[str]:
    """The devices some of `ops` are pinned to."""
    return {d for d in map(placement_of, ops) if d is not None}
ALIGNMENT = 64
"""Default storage alignment in bytes: one cache line, one AVX-512 vector."""


def _error(op: IRDLOperation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}' op {message}")


@irdl_attr_definition
class StorageType(ParametrizedAttribute, TypeAttribute):
    """A block of device memory that tensors are views into: `!device.storage`."""

    name = "device.storage"


def _check_device(op: IRDLOperation, device: StringAttr) -> None:
    if device.data not in DEVICES:
        raise _error(op, f"unknown device '{device.data}' (known: {', '.join(DEVICES)})")


@irdl_op_definition
class AllocStorageOp(IRDLOperation):
    """Allocate `size` bytes on a device.

    Example: `%s = device.alloc_storage %size align 64 on "cpu"`
    """

    name = "device.alloc_storage"
    size = operand_def(IndexType)
    alignment = prop_def(IntegerAttr[I64])
    device = prop_def(StringAttr)
    result = result_def(StorageType)
    assembly_format = "$size `align` $alignment `on` $device attr-dict"

    def __init__(self, size: SSAValue, device: str = Device.CPU, alignment: int = ALIGNMENT):
        super().__init__(operands=[size], result_types=[StorageType()],
                         properties={"alignment": IntegerAttr(alignment, 64), "device": StringAttr(device)})

    def verify_(self) -> None:
        _check_device(self, self.device)
        a = self.alignment.value.data
        if a <= 0 or a & (a - 1):
            raise _error(self, f"alignment must be a power of two, got {a}")


@irdl_op_definition
class AllocTensorOp(IRDLOperation):
    """A tensor view into `storage` at byte `offset`; one index operand per `?` dim.

    Example: `%t = device.alloc_tensor %s[%offset] (%n) : tensor<?x128xf32>`
    """

    name = "device.alloc_tensor"
    storage = operand_def(StorageType)
    offset = operand_def(IndexType)
    dynamic_dims = var_operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "$storage `[` $offset `]` `(` $dynamic_dims `)` attr-dict `:` type($result)"

    def __init__(self, storage: SSAValue, offset: SSAValue, dynamic_dims: Sequence[SSAValue], type: TensorType):
        super().__init__(operands=[storage, offset, dynamic_dims], result_types=[type])

    def verify_(self) -> None:
        unknown = sum(1 for d in self.result.type.get_shape() if d < 0)
        if unknown != len(self.dynamic_dims):
            raise _error(self, f"has {len(self.dynamic_dims)} dim operands for {unknown} '?' dims of {self.result.type}")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A tensor viewing the memory of another at byte `offset` (no copy): a slice along
    the leading axis, a squeeze or a reshape of a contiguous tensor.

    Example: `%row = device.view %xs[%offset] (%n) : tensor<?x?x64xf32> -> tensor<?x64xf32>`
    """

    name = "device.view"
    source = operand_def(TensorType)
    offset = operand_def(IndexType)
    dynamic_dims = var_operand_def(IndexType)
    result = result_def(TensorType)
    assembly_format = "$source `[` $offset `]` `(` $dynamic_dims `)` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, offset: SSAValue, dynamic_dims: Sequence[SSAValue], type: TensorType):
        super().__init__(operands=[source, offset, dynamic_dims], result_types=[type])

    def verify_(self) -> None:
        unknown = sum(1 for d in self.result.type.get_shape() if d < 0)
        if unknown != len(self.dynamic_dims):
            raise _error(self, f"has {len(self.dynamic_dims)} dim operands for {unknown} '?' dims of {self.result.type}")
        if self.source.type.get_element_type() != self.result.type.get_element_type():
            raise _error(self, "views a tensor with another element type")


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run kernel `@kernel` on `inputs`, writing `outputs` (allocated by the caller).

    With `variants` and as many `conditions`, the first variant whose condition is true
    runs instead (kernels specialised for the shapes of a call: where no `?` dim is
    broadcast, where a conv's sizes ask for its Winograd form).

    Example: `device.launch @k(%x, %w) outs(%y) variants [@k_ns] if %c on "cpu" :
    (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>`
    """

    name = "device.launch"
    kernel = prop_def(SymbolRefAttr)
    variants = opt_prop_def(ArrayAttr[SymbolRefAttr])
    device = prop_def(StringAttr)
    inputs = var_operand_def()
    outputs = var_operand_def(TensorType)
    conditions = var_operand_def(i1)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$kernel `(` $inputs `)` `outs` `(` $outputs `)` (`variants` $variants^ `if` $conditions)? "
        "`on` $device attr-dict `:` functional-type($inputs, $outputs)"
    )

    def __init__(self, kernel: str, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue], device: str = Device.CPU,
                 variants: Sequence[tuple[str, SSAValue]] = ()):
        properties: dict[str, Attribute] = {"kernel": SymbolRefAttr(kernel), "device": StringAttr(device)}
        if variants:
            properties["variants"] = ArrayAttr([SymbolRefAttr(name) for name, _ in variants])
        super().__init__(operands=[inputs, outputs, [c for _, c in variants]], properties=properties)

    @property
    def choices(self) -> list[tuple[str, SSAValue]]:
        """(variant kernel, its condition), in the order they are tried."""
        names = [] if self.variants is None else [v.root_reference.data for v in self.variants.data]
        return list(zip(names, self.conditions))

    def verify_(self) -> None:
        _check_device(self, self.device)
        count = 0 if self.variants is None else len(self.variants.data)
        if count != len(self.conditions) or (self.variants is not None and not count):
            raise _error(self, f"needs one 'if' condition per variant kernel: {count} variants, "
                               f"{len(self.conditions)} conditions")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """Copy a tensor to another device.

    Example: `%y = device.copy %x from "cpu" to "opencl" : tensor<?xf32> -> tensor<?xf32>`."""

    name = "device.copy"
    source = operand_def(TensorType)
    src_device = prop_def(StringAttr)
    dst_device = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$source `from` $src_device `to` $dst_device attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, src_device: str, dst_device: str):
        super().__init__(operands=[source], result_types=[source.type],
                         properties={"src_device": StringAttr(src_device), "dst_device": StringAttr(dst_device)})

    def verify_(self) -> None:
        _check_device(self, self.src_device)
        _check_device(self, self.dst_device)
        if self.source.type != self.result.type:
            raise _error(self, f"copies {self.source.type} into {self.result.type}")


@irdl_op_definition
class KillOp(IRDLOperation):
    """The last use of a storage or tensor: its memory may be reused from here on.

    Example: `device.kill %s : !device.storage`
    """

    name = "device.kill"
    value = operand_def()
    assembly_format = "$value attr-dict `:` type($value)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value])


DeviceDialect = Dialect("device", [AllocStorageOp, AllocTensorOp, ViewOp, LaunchOp, CopyOp, KillOp], [StorageType])
