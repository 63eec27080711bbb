"""The VM target: `to_vm` lowers host functions to the VM dialect (`lower-to-vm`, with
the CPU vision kernels of `native_kernels`), `vm_program` turns the lowered module into
the bytecode `Program` that `runtime/` saves, loads and runs."""
