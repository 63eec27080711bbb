"""Nimble's dialects, one module (or package) each: graph, shape (more to come: loop,
device, vm). `nimble.registry` lists them for the tools and the Python API."""
