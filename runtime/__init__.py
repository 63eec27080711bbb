"""The bytecode format, the VM, kernel loaders and the spatial simulator."""
