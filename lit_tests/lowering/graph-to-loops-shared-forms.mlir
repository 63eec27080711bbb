// RUN: nimble-opt %s --split-input-file -p lower-graph-to-loops | filecheck %s

// Layers that differ only in a size they reduce over share one kernel (four or more
// of them): the size is `?` in it, read from the buffers at run time.

// CHECK-LABEL: func.func @reduced_widths
// CHECK: %[[A:[A-Za-z0-9_$.-]+]] = graph.fused
// CHECK: graph.dense {{.*}} : (tensor<?x40xf32>, tensor<32x40xf32>) -> tensor<?x32xf32>
// CHECK: } attributes {nimble.kernel = @[[K:[A-Za-z0-9_]+]]}
// CHECK: %[[B:[A-Za-z0-9_$.-]+]] = graph.fused
// CHECK: graph.dense {{.*}} : (tensor<?x24xf32>, tensor<32x24xf32>) -> tensor<?x32xf32>
// CHECK: } attributes {nimble.kernel = @[[K]]}
// CHECK: } attributes {nimble.kernel = @[[K]]}
// CHECK: } attributes {nimble.kernel = @[[K]]}
// CHECK: func.return %[[A]], %[[B]]
// CHECK: loop.kernel @[[K]](%{{.*}}: memref<?x?xf32>, %{{.*}}: memref<32x?xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK-NOT: func.func @reduced_widths_dense_1
func.func @reduced_widths(%x1: tensor<?x40xf32>, %w1: tensor<32x40xf32>, %x2: tensor<?x24xf32>, %w2: tensor<32x24xf32>,
                          %x3: tensor<?x56xf32>, %w3: tensor<32x56xf32>, %x4: tensor<?x72xf32>, %w4: tensor<32x72xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %a = graph.dense %x1, %w1 : (tensor<?x40xf32>, tensor<32x40xf32>) -> tensor<?x32xf32>
  %b = graph.dense %x2, %w2 : (tensor<?x24xf32>, tensor<32x24xf32>) -> tensor<?x32xf32>
  %c = graph.dense %x3, %w3 : (tensor<?x56xf32>, tensor<32x56xf32>) -> tensor<?x32xf32>
  %d = graph.dense %x4, %w4 : (tensor<?x72xf32>, tensor<32x72xf32>) -> tensor<?x32xf32>
  func.return %a, %b, %c, %d : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Three are too few: what a dynamic size costs at run time is not worth two kernels.

// CHECK-LABEL: func.func @three_widths
// CHECK: } attributes {nimble.kernel = @[[K0:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K1:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K2:[A-Za-z0-9_]+]]}
// CHECK: loop.kernel @[[K0]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<32x40xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K1]](%{{.*}}: memref<?x24xf32>, %{{.*}}: memref<32x24xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K2]](%{{.*}}: memref<?x56xf32>, %{{.*}}: memref<32x56xf32>, %{{.*}}: memref<?x32xf32>)
func.func @three_widths(%x1: tensor<?x40xf32>, %w1: tensor<32x40xf32>, %x2: tensor<?x24xf32>, %w2: tensor<32x24xf32>,
                        %x3: tensor<?x56xf32>, %w3: tensor<32x56xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %a = graph.dense %x1, %w1 : (tensor<?x40xf32>, tensor<32x40xf32>) -> tensor<?x32xf32>
  %b = graph.dense %x2, %w2 : (tensor<?x24xf32>, tensor<32x24xf32>) -> tensor<?x32xf32>
  %c = graph.dense %x3, %w3 : (tensor<?x56xf32>, tensor<32x56xf32>) -> tensor<?x32xf32>
  func.return %a, %b, %c : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Sizes of the outputs stay static: layers of other output widths get kernels of their own.

// CHECK-LABEL: func.func @output_widths
// CHECK: } attributes {nimble.kernel = @[[K0:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K1:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K2:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K3:[A-Za-z0-9_]+]]}
// CHECK: loop.kernel @[[K0]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<32x40xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K1]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<48x40xf32>, %{{.*}}: memref<?x48xf32>)
// CHECK: loop.kernel @[[K2]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<64x40xf32>, %{{.*}}: memref<?x64xf32>)
// CHECK: loop.kernel @[[K3]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<80x40xf32>, %{{.*}}: memref<?x80xf32>)
func.func @output_widths(%x0: tensor<?x40xf32>, %w0: tensor<32x40xf32>, %x1: tensor<?x40xf32>, %w1: tensor<48x40xf32>, %x2: tensor<?x40xf32>, %w2: tensor<64x40xf32>, %x3: tensor<?x40xf32>, %w3: tensor<80x40xf32>)
    -> (tensor<?x32xf32>, tensor<?x48xf32>, tensor<?x64xf32>, tensor<?x80xf32>) {
  %r0 = graph.dense %x0, %w0 : (tensor<?x40xf32>, tensor<32x40xf32>) -> tensor<?x32xf32>
  %r1 = graph.dense %x1, %w1 : (tensor<?x40xf32>, tensor<48x40xf32>) -> tensor<?x48xf32>
  %r2 = graph.dense %x2, %w2 : (tensor<?x40xf32>, tensor<64x40xf32>) -> tensor<?x64xf32>
  %r3 = graph.dense %x3, %w3 : (tensor<?x40xf32>, tensor<80x40xf32>) -> tensor<?x80xf32>
  func.return %r0, %r1, %r2, %r3 : tensor<?x32xf32>, tensor<?x48xf32>, tensor<?x64xf32>, tensor<?x80xf32>
}

// -----

// Small sizes (16 and under: windows, taps a kernel unrolls) stay static.

// CHECK-LABEL: func.func @small_widths
// CHECK: } attributes {nimble.kernel = @[[K0:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K1:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K2:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K3:[A-Za-z0-9_]+]]}
// CHECK: loop.kernel @[[K0]](%{{.*}}: memref<?x8xf32>, %{{.*}}: memref<32x8xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K1]](%{{.*}}: memref<?x12xf32>, %{{.*}}: memref<32x12xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K2]](%{{.*}}: memref<?x14xf32>, %{{.*}}: memref<32x14xf32>, %{{.*}}: memref<?x32xf32>)
// CHECK: loop.kernel @[[K3]](%{{.*}}: memref<?x16xf32>, %{{.*}}: memref<32x16xf32>, %{{.*}}: memref<?x32xf32>)
func.func @small_widths(%x0: tensor<?x8xf32>, %w0: tensor<32x8xf32>, %x1: tensor<?x12xf32>, %w1: tensor<32x12xf32>, %x2: tensor<?x14xf32>, %w2: tensor<32x14xf32>, %x3: tensor<?x16xf32>, %w3: tensor<32x16xf32>)
    -> (tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  %r0 = graph.dense %x0, %w0 : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %r1 = graph.dense %x1, %w1 : (tensor<?x12xf32>, tensor<32x12xf32>) -> tensor<?x32xf32>
  %r2 = graph.dense %x2, %w2 : (tensor<?x14xf32>, tensor<32x14xf32>) -> tensor<?x32xf32>
  %r3 = graph.dense %x3, %w3 : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
  func.return %r0, %r1, %r2, %r3 : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// A broadcast that the shared form would have to check at run time (the bias's `?`
// against the sum's) keeps the groups apart.

// CHECK-LABEL: func.func @stretch
// CHECK: } attributes {nimble.kernel = @[[K0:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K1:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K2:[A-Za-z0-9_]+]]}
// CHECK: } attributes {nimble.kernel = @[[K3:[A-Za-z0-9_]+]]}
// CHECK: loop.kernel @[[K0]](%{{.*}}: memref<?x40xf32>, %{{.*}}: memref<40xf32>, %{{.*}}: memref<?xf32>)
// CHECK: loop.kernel @[[K1]](%{{.*}}: memref<?x24xf32>, %{{.*}}: memref<24xf32>, %{{.*}}: memref<?xf32>)
// CHECK: loop.kernel @[[K2]](%{{.*}}: memref<?x56xf32>, %{{.*}}: memref<56xf32>, %{{.*}}: memref<?xf32>)
// CHECK: loop.kernel @[[K3]](%{{.*}}: memref<?x72xf32>, %{{.*}}: memref<72xf32>, %{{.*}}: memref<?xf32>)
func.func @stretch(%x0: tensor<?x40xf32>, %b0: tensor<40xf32>, %x1: tensor<?x24xf32>, %b1: tensor<24xf32>, %x2: tensor<?x56xf32>, %b2: tensor<56xf32>, %x3: tensor<?x72xf32>, %b3: tensor<72xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %r0 = graph.fused (%x = %x0, %b = %b0) : (tensor<?x40xf32>, tensor<40xf32>) -> tensor<?xf32> {
    %s = graph.add %x, %b : (tensor<?x40xf32>, tensor<40xf32>) -> tensor<?x40xf32>
    %r = graph.reduce_sum %s {axes = array<i64: 1>} : tensor<?x40xf32> -> tensor<?xf32>
    graph.yield %r : tensor<?xf32>
  }
  %r1 = graph.fused (%x = %x1, %b = %b1) : (tensor<?x24xf32>, tensor<24xf32>) -> tensor<?xf32> {
    %s = graph.add %x, %b : (tensor<?x24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
    %r = graph.reduce_sum %s {axes = array<i64: 1>} : tensor<?x24xf32> -> tensor<?xf32>
    graph.yield %r : tensor<?xf32>
  }
  %r2 = graph.fused (%x = %x2, %b = %b2) : (tensor<?x56xf32>, tensor<56xf32>) -> tensor<?xf32> {
    %s = graph.add %x, %b : (tensor<?x56xf32>, tensor<56xf32>) -> tensor<?x56xf32>
    %r = graph.reduce_sum %s {axes = array<i64: 1>} : tensor<?x56xf32> -> tensor<?xf32>
    graph.yield %r : tensor<?xf32>
  }
  %r3 = graph.fused (%x = %x3, %b = %b3) : (tensor<?x72xf32>, tensor<72xf32>) -> tensor<?xf32> {
    %s = graph.add %x, %b : (tensor<?x72xf32>, tensor<72xf32>) -> tensor<?x72xf32>
    %r = graph.reduce_sum %s {axes = array<i64: 1>} : tensor<?x72xf32> -> tensor<?xf32>
    graph.yield %r : tensor<?xf32>
  }
  func.return %r0, %r1, %r2, %r3 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
