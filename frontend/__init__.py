"""Front ends: the text format (lark) and the ONNX importer."""
