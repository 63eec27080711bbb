"""Transformations that stay inside one level, one module per pass."""
