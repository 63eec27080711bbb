// RUN: nimble-opt %s -p 'lower-rnn-to-spatial{weights=int8},canonicalize,cse' | filecheck %s --check-prefix=INT8
// RUN: nimble-opt %s -p 'lower-rnn-to-spatial{weights=bf16},canonicalize,cse' | filecheck %s --check-prefix=BF16

// Weight precision is a type in the program: the on-chip copy of the matrix holds i8
// (one f32 scale per row, max |w_row| / 127, round to nearest) or bf16 (round to nearest
// even); reads inside the step widen to f32 (i8 times its row's scale, read once per row
// outside the reduction); the bias vector stays f32.

// INT8-LABEL: loop.kernel @rnn_rnn_0
// INT8: %[[W:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4x6xi8>
// INT8-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4xf32>
// INT8: combine(max)
// INT8: math.absf
// INT8: %[[SCALE:[A-Za-z0-9_$.-]+]] = arith.select
// INT8-NEXT: memref.store %[[SCALE]], %[[S]]
// INT8: math.floor
// INT8: arith.fptosi %{{[A-Za-z0-9_$.-]+}} : f32 to i32
// INT8-NEXT: %[[Q:[A-Za-z0-9_$.-]+]] = arith.trunci %{{[A-Za-z0-9_$.-]+}} : i32 to i8
// INT8-NEXT: memref.store %[[Q]], %[[W]]
// INT8: loop.alloc sram : memref<4xf32>
// INT8: scf.for
// INT8: %[[ROW:[A-Za-z0-9_$.-]+]] = memref.load %[[S]]
// INT8-NEXT: loop.reduce
// INT8: %[[QW:[A-Za-z0-9_$.-]+]] = memref.load %[[W]]
// INT8-NEXT: %[[FW:[A-Za-z0-9_$.-]+]] = arith.sitofp %[[QW]] : i8 to f32
// INT8-NEXT: arith.mulf %[[FW]], %[[ROW]] : f32

// BF16-LABEL: loop.kernel @rnn_rnn_0
// BF16: %[[W:[A-Za-z0-9_$.-]+]] = loop.alloc sram : memref<4x6xbf16>
// BF16: %[[T:[A-Za-z0-9_$.-]+]] = arith.truncf %{{[A-Za-z0-9_$.-]+}} : f32 to bf16
// BF16-NEXT: memref.store %[[T]], %[[W]]
// BF16: loop.alloc sram : memref<4xf32>
// BF16: scf.for
// BF16: %[[QW:[A-Za-z0-9_$.-]+]] = memref.load %[[W]]
// BF16-NEXT: arith.extf %[[QW]] : bf16 to f32
func.func @rnn(%xs: tensor<?x?x2xf32>, %h0: tensor<?x4xf32>, %w: tensor<4x6xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = dynshape.dim %xs, 1 : tensor<?x?x2xf32>
  %1 = dynshape.dim %h0, 0 : tensor<?x4xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  dynshape.assert %2, "dim 0 of %h0 must equal dim 1 of %xs (both are 'n')" dims(%1, %0) {nimble.named_dim = "n"}
  %steps = dynshape.dim %xs, 0 : tensor<?x?x2xf32>
  %3 = arith.constant 0 : index
  %i, %h = graph.while (%i_1 = %3, %h_1 = %h0) : (index, tensor<?x4xf32>) -> (index, tensor<?x4xf32>) {
    %4 = arith.cmpi slt, %i_1, %steps : index
    graph.condition %4 : i1
  } do {
  ^bb0(%i_2: index, %h_2: tensor<?x4xf32>):
    %5 = arith.constant 1 : index
    %6 = arith.addi %i_2, %5 : index
    %7 = graph.fused (%xs_1 = %xs, %i_3 = %i_2, %8 = %6, %h_3 = %h_2) : (tensor<?x?x2xf32>, index, index, tensor<?x4xf32>) -> tensor<?x6xf32> {
      %9 = graph.slice %xs_1[%i_3:%8, :, :] : tensor<?x?x2xf32> -> tensor<?x?x2xf32>
      %10 = graph.squeeze %9 [0] : tensor<?x?x2xf32> -> tensor<?x2xf32>
      %11 = graph.concat %10, %h_3 {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x4xf32>) -> tensor<?x6xf32>
      graph.yield %11 : tensor<?x6xf32>
    }
    %8 = graph.fused (%9 = %7, %w_1 = %w, %b_1 = %b) : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32> {
      %10 = graph.dense %9, %w_1, %b_1 : (tensor<?x6xf32>, tensor<4x6xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      %11 = graph.tanh %10 : tensor<?x4xf32> -> tensor<?x4xf32>
      graph.yield %11 : tensor<?x4xf32>
    }
    graph.yield %6, %8 : index, tensor<?x4xf32>
  }
  func.return %h : tensor<?x4xf32>
}
