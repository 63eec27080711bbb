"""ONNX models → graph IR (`import_onnx`); see `importer` for what the import does."""

from nimble.frontend.onnx.common import NeedsConstant, OnnxImportError
from nimble.frontend.onnx.importer import Importer, check_supported, import_onnx, load_model
from nimble.frontend.onnx.ops import CONVERTERS
from nimble.frontend.onnx.shapes import SHAPE_CONVERTERS

__all__ = ["CONVERTERS", "SHAPE_CONVERTERS", "Importer", "NeedsConstant", "OnnxImportError", "check_supported",
           "import_onnx", "load_model"]
