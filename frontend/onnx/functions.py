"""ONNX function ops: a node whose op the importer has no converter for, but whose
schema defines it as a function of other ops (Attention, RMSNormalization,
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, RotaryEmbedding, ...), is imported
as the nodes of that function body, as ONNX Runtime does for a function op it has no
kernel for.

The body is the schema's function at the newest version not above the model's opset:
a fixed one (`get_function_with_opset_version`), or one built for this node
(`get_context_dependent_function_with_opset_version`, given the node with its
attributes' defaults filled in and its inputs' types). Its values are renamed apart
(`<first output>/<op type>/<name>`), its inputs and outputs become the node's, and an
attribute that refers to one of the function's (`ref_attr_name`) takes the node's value
or is left out (the body op's default applies); a subgraph's own names are renamed apart
as well.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nimble.dialects.graph.types import dims
from nimble.frontend.onnx.common import OnnxImportError, element_types, onnx_package


def _schema(op_type: str, opset: int) -> Any:
    defs = onnx_package().defs
    try:
        return defs.get_schema(op_type, opset, "")
    except defs.SchemaError:
        return None


def _newest(versions: list[int], opset: int) -> int | None:
    return max((v for v in versions if v <= opset), default=None)


def is_function(op_type: str, opset: int) -> bool:
    """Whether the schema of `op_type` at `opset` defines it as a function."""
    schema = _schema(op_type, opset)
    return schema is not None and (_newest(list(schema.function_opset_versions), opset) is not None
                                   or _newest(list(schema.context_dependent_function_opset_versions), opset)
                                   is not None)


def type_proto(value: SSAValue | None) -> Any:
    """The `TypeProto` of an imported value (an empty one for a missing input)."""
    onnx = onnx_package()
    t = onnx.TypeProto()
    if value is None:
        return t
    codes = {v: k for k, v in element_types().items()}
    assert isinstance(value.type, TensorType)
    t.tensor_type.elem_type = codes[value.type.element_type]
    t.tensor_type.shape.SetInParent()
    for d in dims(value.type):
        dim = t.tensor_type.shape.dim.add()
        if d is not None:
            dim.dim_value = d
    return t


def body(node: Any, opset: int, input_types: list[Any]) -> list[Any]:
    """The nodes that stand for `node` (a function op at `opset`), renamed apart;
    OnnxImportError when its function cannot be built or uses another domain's ops."""
    onnx = onnx_package()
    schema = _schema(node.op_type, opset)
    full = onnx.NodeProto()
    full.CopyFrom(node)
    given = {a.name for a in node.attribute}
    for name, attr in schema.attributes.items():
        if name not in given and attr.default_value.type != onnx.AttributeProto.UNDEFINED:
            full.attribute.append(attr.default_value)
    fixed = _newest(list(schema.function_opset_versions), opset)
    function = onnx.FunctionProto()
    try:
        if fixed is not None:
            function.ParseFromString(schema.get_function_with_opset_version(fixed))
        else:
            version = _newest(list(schema.context_dependent_function_opset_versions), opset)
            function.ParseFromString(schema.get_context_dependent_function_with_opset_version(
                version, full.SerializeToString(), [t.SerializeToString() for t in input_types]))
    except Exception as e:  # noqa: BLE001 (onnx's function builders fail in their own ways)
        raise OnnxImportError(f"its function body cannot be built ({type(e).__name__}: {e})") from None
    if not function.node:
        raise OnnxImportError("onnx gives no function body for it with these attributes and input types")
    return _renamed(full, function)


def _renamed(node: Any, function: Any) -> list[Any]:
    names = {name: node.input[k] if k < len(node.input) else "" for k, name in enumerate(function.input)}
    names.update({name: node.output[k] for k, name in enumerate(function.output)
                  if k < len(node.output) and node.output[k]})
    prefix = f"{node.output[0]}/{node.op_type}/"
    attributes = {a.name: a for a in node.attribute}

    def rename(name: str) -> str:
        return names.get(name, prefix + name if name else "")

    for inner in function.node:
        if inner.domain not in ("", "ai.onnx"):
            raise OnnxImportError(f"its function body uses {inner.op_type} of domain '{inner.domain}'")
    return [_node(inner, rename, attributes, prefix) for inner in function.node]


def _node(inner: Any, rename: Callable[[str], str], attributes: dict[str, Any], prefix: str) -> Any:
    """A body node with its values renamed and its attribute references resolved; in a
    subgraph (a Scan's body) the subgraph's own names are renamed apart too."""
    onnx = onnx_package()
    new = onnx.NodeProto()
    new.CopyFrom(inner)
    for field in ("input", "output", "attribute"):
        new.ClearField(field)
    new.input.extend(rename(x) for x in inner.input)
    new.output.extend(rename(x) for x in inner.output)
    new.name = prefix + (inner.name or inner.output[0])
    for attr in inner.attribute:
        if attr.ref_attr_name:
            if attr.ref_attr_name in attributes:
                given = new.attribute.add()
                given.CopyFrom(attributes[attr.ref_attr_name])
                given.name = attr.name
            continue
        copy = new.attribute.add()
        copy.CopyFrom(attr)
        for g in ([copy.g] if copy.HasField("g") else list(copy.graphs)):
            local = {v.name: prefix + v.name for v in [*g.input, *g.output, *g.initializer]}
            for v in [*g.input, *g.output, *g.initializer]:
                v.name = local[v.name]
            inner_nodes = [_node(n, lambda x, local=local: local.get(x) or rename(x), attributes, prefix)
                           for n in g.node]
            g.ClearField("node")
            g.node.extend(inner_nodes)
    return new
