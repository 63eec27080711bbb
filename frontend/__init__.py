"""Front ends: the `.nb` text format (lark grammar + IR builder) and ONNX (`onnx/`).

`parse_nb` is imported when first used: importing `nimble.frontend.errors` (what the
CLIs catch) does not load lark."""

from typing import Any

__all__ = ["parse_nb"]


def __getattr__(name: str) -> Any:
    if name == "parse_nb":
        from nimble.frontend.parse import parse_nb

        return parse_nb
    raise AttributeError(f"module 'nimble.frontend' has no attribute '{name}'")
