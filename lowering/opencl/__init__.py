"""The OpenCL backend: loop-level kernels → OpenCL C (`to_opencl`: the OpenCL `Flavor` of the
C-family emitter in `c_emitter`, with its work-group phases in `c_groups` and register tiles
in `c_tiles`); `runtime/opencl.py` builds and launches the programs."""
