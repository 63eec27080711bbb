"""Front ends: the `.nb` text format (lark grammar + IR builder); ONNX comes later."""

from nimble.frontend.parse import parse_nb

__all__ = ["parse_nb"]
