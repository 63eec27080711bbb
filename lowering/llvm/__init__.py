"""The LLVM backend: loop-level kernels lowered to xdsl's `llvm` dialect (`loops_to_llvm`)."""
