"""The loop-level transformations the loop passes are made of: the register-tiling
engine (`tile_emitter`: widened and jammed copies of a body; `register_tile`: a tile's
copies with their reductions jammed), used by `tile-vectorize` and by the OpenCL
backend's tiles, with its strategies (`row_lanes`, `transpose_tiles`, `pack_panels`,
`reduction_strips`); `nest_splits` (schedule-loops' run-time cuts of a nest) and
`index_set_split` (split-index-sets, and the spatial target's recurrences)."""
