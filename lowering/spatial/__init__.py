"""The spatial target: recurrences as programs for the simulated spatial accelerator
(the RNN-serving paper's loop-level IR with `par` factors, pipelining and mixed
precision). `rnn_to_spatial` lowers a recurrence's step (`lower-rnn-to-spatial`, with
`loops` fusing its loop nests and `weights` placing its weights on chip), `dse`
searches the design space (`spatial-dse`) on the accelerator's cycle and resource
model (`model`, which also runs the programs), `to_spatial` prints them as a
Spatial-like listing (`nimble-opt -t spatial`); `nimble.spatial` is the Python API."""
