"""Conversions between levels and to target formats, one module per conversion."""
