"""The kernel builder of the graph-to-loops conversions (`lower-graph-to-loops`,
`lower-rnn-to-kernels`, the spatial target's recurrences): `kernel_builder` builds a
fusion group's `loop.kernel` from each op's index rule (`index_rules`, with the
contraction, indexed, window, grouped-conv, RoIAlign and Winograd rules in modules of
their own, `kernel_parts` the pieces they share, `scalar` the scalar bodies),
`shared_forms` the kernels one function shares, `pad_rows` the padded weight rows,
`symbols` fresh symbol names."""
