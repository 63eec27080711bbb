"""ONNX models → graph IR: `import_onnx(path_or_model)`.

The graph's inputs become the parameters of `@main` (initializers excluded): a
`dim_value` is a static dim, a `dim_param` or unknown dim is `?`, and dims sharing a
`dim_param` name are tied (a `dynshape.assert` at entry, like named dims in `.nb`).
Initializers and `Constant` nodes become `graph.constant`s (the bytecode keeps them in
its constant section). Each node is converted by the entry of `CONVERTERS` for its op
type (one function per op, or per family of ops, reading ONNX attributes with their
defaults); an op with no converter whose schema defines it as a function (Attention,
the losses) comes in as the nodes of its body (`functions.py`); inputs that ONNX passes
as tensors but the graph dialect takes as attributes (a reshape's shape, slice bounds,
axes) must be constants. Before anything is built,
every node is checked: an unsupported op type, or a model above the opsets this
importer knows, is one `OnnxImportError` listing every problem with the nodes it is in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from nimble.dialects import arith, dynshape, graph, vm
from nimble.dialects.discardable import SOURCE_ATTR
from nimble.frontend.attributes import to_property
from nimble.frontend.onnx import functions
from nimble.frontend.onnx.common import (
    MIN_OPSET,
    NeedsConstant,
    OnnxImportError,
    dense,
    dtype_of,
    onnx_package,
    tensor_type,
)
from nimble.frontend.onnx.ops import CONVERTERS, DIM_INPUTS
from nimble.frontend.onnx.shapes import SHAPE_CONVERTERS, Sym, materialize

# ---------------------------------------------------------------------------------------
# The importer


FOLD_ELEMENTS = 1 << 16
"""Largest inputs (together) and outputs (each) of a node computed at import from constants
(Swin's shifted-window masks: ScatterND of 49 x 49 updates into a 56 x 56 map)."""
NOT_FOLDED = frozenset({"Constant", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli"})
"""Nodes never computed at import: constants have their converter, random ops differ per run."""


class Importer:
    """Builds `@main` from an ONNX graph, one node at a time."""

    def __init__(self, model: Any):
        self.model = model
        self.values: dict[str, SSAValue] = {}
        self.constants: dict[str, np.ndarray] = {}  # values known at import time
        self.shapes: dict[str, Sym] = {}  # int64 tensors that are shapes or dims (`Shape` and friends)
        self.block: Block | None = None
        self.node: Any = None
        self.opset = opset_of(model)

    # -- building ---------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def op(self, cls: type[Operation], operands: Sequence[SSAValue], element: Attribute | None = None,
           **props: Any) -> SSAValue | list[SSAValue]:
        """A graph op with inferred result types; keyword properties are Python values
        (or attributes) encoded as the op declares them."""
        try:
            properties = {k: v if isinstance(v, Attribute) else to_property(cls, k, v) for k, v in props.items()
                          if v is not None}
            types = cls.result_types_for(list(operands), properties, element)
            op = cls.create(operands=list(operands), result_types=types, properties=properties)
            op.verify()
        except (VerifyException, ValueError, KeyError) as e:
            raise OnnxImportError(f"{self.where()}: {e}") from None
        self.emit(op)
        return op.results[0] if len(op.results) == 1 else list(op.results)

    def const(self, array: np.ndarray) -> SSAValue:
        array = np.asarray(array)
        return self.emit(graph.ConstantOp(dense(array))).results[0]

    def known(self, name: str, array: np.ndarray) -> SSAValue:
        """Value `name` is `array`, known at import time: a constant, remembered for
        the converters that need values at compile time."""
        self.constants[name] = np.asarray(array)
        self.values[name] = self.const(self.constants[name])
        return self.values[name]

    def index(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    def static(self, name: str, what: str) -> np.ndarray:
        """The value of input `name`, which the graph dialect needs at compile time."""
        if name not in self.constants:
            raise NeedsConstant(f"{self.where()}: {what} must be a constant (an initializer or a Constant node)", name)
        return self.constants[name]

    def where(self) -> str:
        n = self.node
        if n is None:
            return "model"
        return f"node '{n.name or n.output[0]}' ({n.op_type})"

    # -- the graph ---------------------------------------------------------------------

    def run(self) -> ModuleOp:
        g = self.model.graph
        initializers = {t.name for t in g.initializer}
        inputs = [i for i in g.input if i.name not in initializers]
        named: dict[str, list[tuple[int, int]]] = {}
        types = [tensor_type(i.type, f"input '{i.name}'", named, k) for k, i in enumerate(inputs)]
        self.block = Block(arg_types=types)
        for i, arg in zip(inputs, self.block.args):
            self.values[i.name] = arg
            arg.name_hint = _hint(i.name)
        self.tie_named_dims(named)
        self.nodes(g.node, g.initializer)
        results = []
        for o in g.output:
            results.append(self.output(o.name))
        self.block.add_op(func.ReturnOp(*results))
        fn = func.FuncOp("main", FunctionType.from_lists(types, [r.type for r in results]), Region(self.block))
        fn.attributes[vm.RESULT_NAMES] = ArrayAttr([StringAttr(o.name) for o in g.output])
        return ModuleOp([fn])

    def output(self, name: str) -> SSAValue:
        if name in self.shapes and name not in self.values:
            self.values[name] = materialize(self, self.shapes[name])
        if name not in self.values:
            raise OnnxImportError(f"graph output '{name}' is not computed by any node")
        return self.values[name]

    def subgraph(self, g: Any, what: str, block: Block | None = None, inputs: Sequence[SSAValue] = (),
                 shapes: dict[int, Sym] | None = None) -> tuple[Block, list[SSAValue]]:
        """A subgraph (a branch, a loop body) imported into `block` (a new one by default):
        its inputs are `inputs` (input k also a shape value `shapes[k]` if given); it sees
        every value of the enclosing scopes by name; its own names stay inside. Returns
        the block (not terminated) and its outputs."""
        if len(g.input) != len(inputs):
            raise OnnxImportError(f"{self.where()}: {what} takes {len(g.input)} inputs, expected {len(inputs)}")
        saved = (self.block, self.values, self.constants, self.shapes, self.node)
        self.block, self.values, self.constants, self.shapes = block or Block(), dict(self.values), \
            dict(self.constants), dict(self.shapes)
        for k, (i, value) in enumerate(zip(g.input, inputs)):
            self.values[i.name] = value
            self.constants.pop(i.name, None)
            self.shapes.pop(i.name, None)
            if shapes and k in shapes:
                self.shapes[i.name] = shapes[k]
        try:
            self.nodes(g.node, g.initializer)
            self.node = saved[4]
            return self.block, [self.output(o.name) for o in g.output]
        finally:
            self.block, self.values, self.constants, self.shapes, self.node = saved

    def nodes(self, nodes: Any, initializers: Any = ()) -> None:
        """A graph's initializers (constants) and nodes, into the current block. What the
        checker lets through but a node's converter cannot read (an attribute of another
        type than its op's schema says, an initializer whose data does not fill its
        shape, an element type onnx does not know) is an OnnxImportError naming it."""
        numpy_helper = onnx_package().numpy_helper
        for t in initializers:
            try:
                self.constants[t.name] = numpy_helper.to_array(t)
            except (ValueError, TypeError, KeyError) as e:
                raise OnnxImportError(f"initializer '{t.name}': cannot read its data: {e}") from None
            self.values[t.name] = self.const(self.constants[t.name])
        for node in nodes:
            self.node = node
            try:
                self._node(node)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
                raise OnnxImportError(f"{self.where()}: cannot convert it ({type(e).__name__}: {e})") from None
        self.node = None

    def _node(self, node: Any) -> None:
        """One node into the current block (`nodes`)."""
        folded = self.fold(node)
        if folded is not None:  # computed here from constants (a fixed-shape export's shapes)
            for name, array in zip(node.output, folded):
                if name:
                    self.known(name, array)
            return
        attrs = _attributes(node)
        symbolic = SHAPE_CONVERTERS.get(node.op_type)
        result = symbolic(self, node, attrs) if symbolic is not None else None
        if result is not None:  # a shape computation, followed symbolically
            self.shapes[node.output[0]] = result
            if all(isinstance(d, int) for d in result.items):  # every dim known: a constant too (for
                # the ops after it that take constants or are folded: torch's Pad computes its pads
                # from the static dims of an input whose batch is dynamic)
                self.constants[node.output[0]] = np.array(result.items[0] if result.scalar else result.items,
                                                          dtype=result.dtype)
            return
        if node.output[0] in self.values:  # a tensor op on a shape, built by its shape converter
            return
        if node.op_type not in CONVERTERS and node.op_type not in SHAPE_CONVERTERS \
                and functions.is_function(node.op_type, self.opset):
            self.function(node)
            return
        if node.op_type not in CONVERTERS:
            raise OnnxImportError(f"{self.where()}: needs its shape input as a constant or a computed shape")
        for k, x in enumerate(node.input):
            if x in self.shapes and x not in self.values and k not in DIM_INPUTS.get(node.op_type, ()):
                # A shape value used as data (GPT-2's past length added to positions).
                self.values[x] = materialize(self, self.shapes[x])
        outputs = CONVERTERS[node.op_type](self, node, [self.values.get(x) if x else None for x in node.input],
                                           attrs)
        for name, value in zip(node.output, outputs):
            if name:
                self.values[name] = value

    def function(self, node: Any) -> None:
        """A function op (`functions`): the nodes of its body, in its place."""
        for x in node.input:
            if x in self.shapes and x not in self.values:
                self.values[x] = materialize(self, self.shapes[x])
        types = [functions.type_proto(self.values.get(x) if x else None) for x in node.input]
        try:
            nodes = functions.body(node, self.opset, types)
        except OnnxImportError as e:
            raise OnnxImportError(f"{self.where()}: {e}") from None
        for inner in nodes:
            self.node = inner
            self._node(inner)
        self.node = node

    def fold(self, node: Any) -> list[np.ndarray] | None:
        """The outputs of a node whose inputs are all known constants, computed now by
        onnx's reference evaluator (at the model's opsets), when inputs and outputs are
        small (`FOLD_ELEMENTS`): the shape arithmetic an exporter writes with every dim
        fixed (BERT's `Expand` to `Where(Equal(ConstantOfShape(..) * -1, ..), ..)`).
        None when it does not apply or the evaluator fails (the converter then says why)."""
        names = [x for x in node.input if x]
        if node.op_type == "CastLike" and names[0] in self.constants and names[1] in self.values:
            return [self.constants[names[0]].astype(dtype_of(self.values[names[1]]))]  # (only the type of
            # the second input counts: an Attention body's -inf cast like a computed mask)
        if not names or node.op_type in NOT_FOLDED or node.domain not in ("", "ai.onnx") \
                or any(a.g.ByteSize() or len(a.graphs) for a in node.attribute) \
                or not all(x in self.constants for x in names) \
                or sum(self.constants[x].size for x in names) > FOLD_ELEMENTS:
            return None
        onnx = onnx_package()
        helper = onnx.helper
        try:
            inputs = [helper.make_tensor_value_info(x, helper.np_dtype_to_tensor_dtype(self.constants[x].dtype),
                                                    self.constants[x].shape) for x in dict.fromkeys(names)]
            outputs = [helper.make_empty_tensor_value_info(o) for o in node.output if o]
            model = helper.make_model(helper.make_graph([node], "fold", inputs, outputs),
                                      opset_imports=list(self.model.opset_import))
            from onnx.reference import ReferenceEvaluator

            results = [np.asarray(r) for r in ReferenceEvaluator(model).run(None, {x: self.constants[x] for x in names})]
        except Exception:  # noqa: BLE001 (whatever the evaluator cannot do, the converter handles or reports)
            return None
        return results if all(r.size <= FOLD_ELEMENTS for r in results) else None

    def tie_named_dims(self, named: dict[str, list[tuple[int, int]]]) -> None:
        """Dims that share a `dim_param` must agree at run time."""
        for name, places in named.items():
            (p0, a0), *rest = places
            first = self.emit(dynshape.DimOp(self.block.args[p0], a0)).result
            for p, a in rest:
                other = self.emit(dynshape.DimOp(self.block.args[p], a)).result
                same = self.emit(arith.CmpiOp(first, other, "eq")).result
                self.emit(dynshape.AssertOp(same, f"dims named '{name}' differ", [first, other]))


def _hint(name: str) -> str | None:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else None


def _attributes(node: Any) -> dict[str, Any]:
    helper = onnx_package().helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


# ---------------------------------------------------------------------------------------
# Entry point


def load_model(source: str | os.PathLike[str] | Any) -> Any:
    onnx = onnx_package()
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        return onnx.load(os.fspath(source))
    except Exception as e:  # noqa: BLE001 (protobuf reports a bad file in many ways)
        raise OnnxImportError(f"{source}: not an ONNX model ({type(e).__name__}: {e})") from None


def opset_of(model: Any) -> int:
    """The model's version of the default operator set (`MIN_OPSET` when it has none)."""
    return max((e.version for e in model.opset_import if e.domain in ("", "ai.onnx")), default=MIN_OPSET)


def upgraded(model: Any) -> Any:
    """A model of an opset below `MIN_OPSET` converted up to it by onnx's version
    converter (the converters here follow opset 13 and later)."""
    onnx = onnx_package()
    version = opset_of(model)
    if version >= MIN_OPSET:
        return model
    try:
        return onnx.version_converter.convert_version(model, MIN_OPSET)
    except Exception as e:  # noqa: BLE001 (the converter fails in many ways)
        raise OnnxImportError(f"opset {version} is below {MIN_OPSET} and onnx's converter could not upgrade the "
                              f"model ({type(e).__name__}: {e}); re-export it with opset >= {MIN_OPSET}") from None


_OLD_SEMANTICS = {("Scan", 8)}
"""(op type, opset) pairs whose semantics differ from the converter's (Scan-8 has a batch axis)."""


def check_supported(model: Any) -> None:
    """One error listing every unsupported op type (with the nodes using it) and opset."""
    problems = []
    version = 0
    for entry in model.opset_import:
        if entry.domain not in ("", "ai.onnx"):
            problems.append(f"operator set domain '{entry.domain}' is not supported")
        else:
            version = max(version, entry.version)
    unsupported: dict[str, list[str]] = {}

    def visit(nodes: Any, where: str) -> None:
        for i, node in enumerate(nodes):
            name = node.name or f"#{i} -> {', '.join(node.output)}"
            if (node.op_type, version) in _OLD_SEMANTICS:
                unsupported.setdefault(f"{node.op_type}' at opset '{version}", []).append(where + name)
            elif node.domain not in ("", "ai.onnx") or (node.op_type not in CONVERTERS
                                                        and node.op_type not in SHAPE_CONVERTERS
                                                        and not functions.is_function(node.op_type, version)):
                unsupported.setdefault(node.op_type, []).append(where + name)
            for attr in node.attribute:
                for g in subgraphs(attr):
                    visit(g.node, f"{where}{name}/{attr.name}/")

    visit(model.graph.node, "")
    for op_type, nodes in sorted(unsupported.items()):
        shown = ", ".join(nodes[:5]) + (f" and {len(nodes) - 5} more" if len(nodes) > 5 else "")
        problems.append(f"unsupported op type '{op_type}' used by {len(nodes)} node(s): {shown}")
    if problems:
        raise OnnxImportError("cannot import the model:\n  " + "\n  ".join(problems))


def subgraphs(attr: Any) -> list[Any]:
    """The graphs an attribute holds (a branch's, a loop's body; none for others)."""
    return [attr.g] if attr.HasField("g") else list(attr.graphs)


def _check_text(graph: Any) -> None:
    """Every name in `graph` (and its subgraphs) is text: protobuf hands a string field
    that is not UTF-8 over as bytes, which the checker and the importer cannot use."""
    def text(value: Any, what: str) -> None:
        if isinstance(value, bytes):
            raise OnnxImportError(f"{what} {value[:40]!r} is not UTF-8 text")

    for v in [*graph.input, *graph.output, *graph.value_info, *graph.initializer]:
        text(v.name, "the name")
    for v in [*graph.input, *graph.output, *graph.value_info]:
        if v.type.HasField("tensor_type"):
            for d in v.type.tensor_type.shape.dim:
                text(d.dim_param, "the dim name")
    for node in graph.node:
        for value in [node.name, node.op_type, node.domain, *node.input, *node.output]:
            text(value, f"in node {node.name!r}: the name")
        for attr in node.attribute:
            text(attr.name, "the attribute name")
            for g in subgraphs(attr):
                _check_text(g)


def check_valid(model: Any, source: str | os.PathLike[str] | Any) -> None:
    """What ONNX Runtime refuses is refused here too, before anything is built: a model
    that onnx's checker rejects (an input no node or initializer defines, a cycle, a name
    defined twice, no graph: an empty file), an opset newer than the installed onnx
    defines, a negative dim."""
    onnx = onnx_package()
    _check_text(model.graph)
    try:  # (a path: the checker reads models over 2 GB, and external data, itself)
        onnx.checker.check_model(model if isinstance(source, onnx.ModelProto) else os.fspath(source))
    except onnx.checker.ValidationError as e:
        raise OnnxImportError(f"not a valid ONNX model: {str(e).strip().splitlines()[0]}") from None
    except Exception as e:  # noqa: BLE001 (the checker meets hostile bytes in other ways: a name not UTF-8)
        raise OnnxImportError(f"not a valid ONNX model: {type(e).__name__}: {str(e).strip()[:200]}") from None
    newest = onnx.defs.onnx_opset_version()
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx") and entry.version > newest:
            raise OnnxImportError(f"opset {entry.version} is newer than the newest this onnx defines ({newest})")
    graph_ = model.graph
    for value in [*graph_.input, *graph_.output, *graph_.value_info]:
        dims = value.type.tensor_type.shape.dim if value.type.HasField("tensor_type") else []
        for axis, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value < 0:
                raise OnnxImportError(f"'{value.name}' has a negative dim ({dim.dim_value} at axis {axis})")


def import_onnx(source: str | os.PathLike[str] | Any) -> ModuleOp:
    """The graph IR of an ONNX model (a path or a `ModelProto`): one function `@main`."""
    model = load_model(source)
    check_valid(model, source)
    check_supported(model)
    model = upgraded(model)
    try:
        module = Importer(model).run()
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:  # (what the checker let through)
        raise OnnxImportError(f"cannot import the model ({type(e).__name__}: {e})") from None
    try:
        module.verify()
    except VerifyException as e:
        raise OnnxImportError(f"the imported module does not verify: {e}") from None
    module.attributes[SOURCE_ATTR] = StringAttr("onnx")
    return module
