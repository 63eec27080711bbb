"""Interfaces that let generic code (interpreter, passes) use an op without knowing it.

Semantics stay with the op: an op that has a numpy meaning implements `HasReference`,
an op whose result dims follow from its operands implements `HasShapeFunction`
(see `shape_functions.py`). Generic code tests `isinstance(op, Interface)`, never names.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from xdsl.ir import Attribute, Region, SSAValue

if TYPE_CHECKING:
    from nimble.dialects.shape_functions import DimAlgebra


class FusionKind(enum.Enum):
    """How an op combines with others into one loop nest (TVM's op patterns)."""

    ELEMENTWISE = 0  # one output element from the same-index input elements (with broadcasting)
    INJECTIVE = 1  # each output element is one input element (reshape, transpose, slice, ...)
    REDUCTION = 2  # reduces along axes; takes elementwise prologues and epilogues
    OUT_FUSABLE = 3  # heavy compute (dense, matmul, conv) whose consumers can join it
    OPAQUE = 4  # fuses with nothing (data-dependent sizes, constants, control flow)
    PERMUTE = 5  # injective, but reorders axes (transpose): joins what injective ops join,
    # except a heavy producer, whose output nest it would make strided along the axis the
    # kernel vectorises (BERT's attention: matmul + transpose ran at ~5 GF/s)
    VIEW = 6  # injective and free on a contiguous buffer (reshape, squeeze): joins what
    # injective ops join, except a heavy producer: alone it is a view of the producer's
    # output, fused it would make the heavy nest iterate the new shape (BERT's
    # dense + reshape to heads ran at ~16 GF/s, the dense alone at ~55)


class EvalContext(abc.ABC):
    """What an op's reference semantics may ask of the interpreter running it."""

    @abc.abstractmethod
    def run_region(self, region: Region, args: Sequence[Any]) -> list[Any]:
        """Run the single block of `region` with `args`; return its terminator's operands."""

    @abc.abstractmethod
    def call(self, callee: str, args: Sequence[Any]) -> list[Any]:
        """Call the function `callee` of the module being interpreted."""

    @abc.abstractmethod
    def load_external(self, file: str, key: str) -> Any:
        """Load array `key` of the `.npz` file `file` (relative to the module's folder)."""


class HasReference(abc.ABC):
    """An op with reference semantics on numpy arrays and Python scalars."""

    @abc.abstractmethod
    def evaluate(self, ctx: EvalContext, args: Sequence[Any]) -> Sequence[Any]:
        """The values of the results, given the values of the operands."""


class HasShapeFunction(abc.ABC):
    """An op whose result dims are a function of its operands' dims (and index values).

    One function serves three uses: static type inference (dims are `int | None`),
    verification (a static conflict raises), and reification as shape IR (dims are SSA
    index values, conflicts become `dynshape.assert`).
    """

    DATA_DEPENDENT: ClassVar[bool] = False
    """True when the true result size is only known after the op runs (e.g. nms); the
    shape function then gives an upper bound."""

    @abc.abstractmethod
    def shape_function(self, k: DimAlgebra) -> list[list[Any]]:
        """The dims of each result, computed with the operations of `k`."""


class InfersResultTypes(abc.ABC):
    """An op that can be built from operands and properties alone: builders (the text
    frontend, passes) ask the op class for its result types instead of knowing them."""

    POSITIONAL_PROPERTIES: ClassVar[tuple[str, ...]] = ()
    """Properties the text format accepts as positional literals, in order
    (e.g. `reshape(%x, [-1, 4])`, `dynshape.dim(%x, 0)`)."""

    @classmethod
    @abc.abstractmethod
    def result_types_for(cls, operands: Sequence[SSAValue], properties: dict[str, Attribute]) -> list[Attribute]:
        """The result types of this op on these operands; VerifyException if invalid."""


class PlainForm(abc.ABC):
    """A `Data` attribute whose value is nested tuples of ints, strings and None
    (`plain`), and back (`from_plain`, ValueError for a value that is not one): the
    binary IR form (runtime/ir_binary.py) writes it so, instead of as text to parse."""

    @abc.abstractmethod
    def plain(self) -> Any: ...

    @classmethod
    @abc.abstractmethod
    def from_plain(cls, value: Any) -> Attribute: ...
