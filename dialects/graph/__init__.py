"""The `graph` dialect: tensor operators with ONNX-like semantics, control flow, tuples
and algebraic data types. Types are builtin `tensor<...>`, where `?` is the *Any* dim."""

from xdsl.ir import Dialect

from nimble.dialects.graph.adt import AdtOp, AdtType, AdtValue, ConstructOp, ConstructorOp, MatchOp
from nimble.dialects.graph.base import GraphOp
from nimble.dialects.graph.control import (
    ConditionOp,
    GetItemOp,
    IfOp,
    MakeTupleOp,
    WhileOp,
    YieldOp,
)
from nimble.dialects.graph.creation import (
    GraphConstantMaterialization,
    ArangeOp,
    ConstantOp,
    ExternalConstantOp,
    FromElementsOp,
    FullOp,
    ZerosOp,
)
from nimble.dialects.graph.elementwise import (
    BINARY_OPS,
    COMPARISON_OPS,
    UNARY_OPS,
    AbsOp,
    AddOp,
    AndOp,
    CastOp,
    CeilOp,
    ClipOp,
    CosOp,
    DivOp,
    EqualOp,
    ErfOp,
    ExpOp,
    FloorOp,
    GeluOp,
    GreaterOp,
    LessOp,
    LogOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    ReluOp,
    RoundOp,
    RsqrtOp,
    SigmoidOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
    WhereOp,
)
from nimble.dialects.graph.power import PowOp
from nimble.dialects.graph.float_class import FLOAT_CLASS_OPS, IsInfOp, IsNanOp
from nimble.dialects.graph.fusion import FusedOp
from nimble.dialects.graph.layout import (
    BroadcastToOp,
    ConcatOp,
    DynamicReshapeOp,
    GatherElementsOp,
    GatherOp,
    ReshapeOp,
    SplitOp,
    SqueezeOp,
    TransposeOp,
    UnsqueezeOp,
)
from nimble.dialects.graph.linalg import DenseOp, EinsumOp, MatmulOp
from nimble.dialects.graph.nn import (
    AvgPool2dOp,
    BatchNormOp,
    Conv2dOp,
    GlobalAvgPool2dOp,
    LayerNormOp,
    MaxPool2dOp,
    SoftmaxOp,
)
from nimble.dialects.graph.reduce import (
    ArgmaxOp,
    CumProdOp,
    CumSumOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceProdOp,
    ReduceSumOp,
    RunningOp,
)
from nimble.dialects.graph.indexed import INDEXED_OPS, GatherNDOp, OneHotOp, ScatterElementsOp, ScatterNDOp
from nimble.dialects.graph.slice import SliceOp
from nimble.dialects.graph.trigonometry import (
    TRIGONOMETRIC_OPS,
    AcoshOp,
    AcosOp,
    AsinhOp,
    AsinOp,
    AtanhOp,
    AtanOp,
    CoshOp,
    SinhOp,
    TanOp,
)
from nimble.dialects.graph.vision import NmsOp, RoiAlignOp

OPERATIONS = [
    *BINARY_OPS, PowOp, *COMPARISON_OPS, WhereOp, *UNARY_OPS, *TRIGONOMETRIC_OPS, *FLOAT_CLASS_OPS,
    ClipOp, CastOp,
    MatmulOp, DenseOp, EinsumOp,
    Conv2dOp, MaxPool2dOp, AvgPool2dOp, GlobalAvgPool2dOp, BatchNormOp, LayerNormOp, SoftmaxOp,
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp, ArgmaxOp, CumSumOp, CumProdOp,
    ReshapeOp, DynamicReshapeOp, TransposeOp, ConcatOp, SplitOp, SliceOp, GatherOp, GatherElementsOp,
    BroadcastToOp, SqueezeOp, UnsqueezeOp, *INDEXED_OPS,
    ConstantOp, ExternalConstantOp, ZerosOp, FullOp, ArangeOp, FromElementsOp,
    NmsOp, RoiAlignOp,
    IfOp, WhileOp, YieldOp, ConditionOp, MakeTupleOp, GetItemOp,
    AdtOp, ConstructorOp, ConstructOp, MatchOp,
    FusedOp,
]

Graph = Dialect("graph", OPERATIONS, [AdtType], [GraphConstantMaterialization()])
