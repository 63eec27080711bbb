"""Nimble: a compiler for dynamic neural networks."""
