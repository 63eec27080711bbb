// RUN: nimble-opt %s --split-input-file -p widen-halves | filecheck %s

// A chain of computing ops on halves: computed on f32, rounded once where it ends.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x8xf16>, %[[W:[A-Za-z0-9_$.-]+]]: tensor<8x4xf16>) -> tensor<?x4xf16> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.cast %[[X]] : tensor<?x8xf16> -> tensor<?x8xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.tanh %[[V0]] : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.cast %[[W]] : tensor<8x4xf16> -> tensor<8x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.matmul %[[V1]], %[[V2]] : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_$.-]+]] = graph.add %[[V3]], %[[V3]] : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[Z:[A-Za-z0-9_$.-]+]] = graph.cast %[[V4]] : tensor<?x4xf32> -> tensor<?x4xf16>
// CHECK-NEXT: func.return %[[Z]] : tensor<?x4xf16>
// CHECK-NEXT: }
func.func @chain(%x: tensor<?x8xf16>, %w: tensor<8x4xf16>) -> tensor<?x4xf16> {
  %t = graph.tanh %x : tensor<?x8xf16> -> tensor<?x8xf16>
  %y = graph.matmul %t, %w : (tensor<?x8xf16>, tensor<8x4xf16>) -> tensor<?x4xf16>
  %z = graph.add %y, %y : (tensor<?x4xf16>, tensor<?x4xf16>) -> tensor<?x4xf16>
  func.return %z : tensor<?x4xf16>
}

// -----

// An op that moves elements computed on f32 moves f32; one that moves an input's
// halves moves halves.
// CHECK-LABEL: func.func @moves
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<2x8xf16>) -> (tensor<8x2xf16>, tensor<4x4xf16>) {
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.transpose %[[X]] [1, 0] : tensor<2x8xf16> -> tensor<8x2xf16>
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.cast %[[X]] : tensor<2x8xf16> -> tensor<2x8xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.exp %[[V0]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_$.-]+]] = graph.reshape %[[V1]] [4, 4] : tensor<2x8xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_$.-]+]] = graph.sqrt %[[V2]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.cast %[[V3]] : tensor<4x4xf32> -> tensor<4x4xf16>
// CHECK-NEXT: func.return %[[T]], %[[S]] : tensor<8x2xf16>, tensor<4x4xf16>
// CHECK-NEXT: }
func.func @moves(%x: tensor<2x8xf16>) -> (tensor<8x2xf16>, tensor<4x4xf16>) {
  %t = graph.transpose %x [1, 0] : tensor<2x8xf16> -> tensor<8x2xf16>
  %e = graph.exp %x : tensor<2x8xf16> -> tensor<2x8xf16>
  %r = graph.reshape %e [4, 4] : tensor<2x8xf16> -> tensor<4x4xf16>
  %s = graph.sqrt %r : tensor<4x4xf16> -> tensor<4x4xf16>
  func.return %t, %s : tensor<8x2xf16>, tensor<4x4xf16>
}

// -----

// The program's own casts: its rounding to f16 stays; its widening of a value computed
// here takes the f32 value.
// CHECK-LABEL: func.func @program_casts
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<4xf32>, %[[H:[A-Za-z0-9_$.-]+]]: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.cast %[[X]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT: %[[V0:[A-Za-z0-9_$.-]+]] = graph.cast %[[R]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.neg %[[V0]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_$.-]+]] = graph.cast %[[H]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = graph.exp %[[V1]] : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT: func.return %[[W]], %[[F]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
func.func @program_casts(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = graph.cast %x : tensor<4xf32> -> tensor<4xf16>
  %n = graph.neg %r : tensor<4xf16> -> tensor<4xf16>
  %w = graph.cast %n : tensor<4xf16> -> tensor<4xf32>
  %e = graph.exp %h : tensor<4xf16> -> tensor<4xf16>
  %f = graph.cast %e : tensor<4xf16> -> tensor<4xf32>
  func.return %w, %f : tensor<4xf32>, tensor<4xf32>
}
