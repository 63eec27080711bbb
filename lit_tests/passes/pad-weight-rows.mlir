// RUN: nimble-opt %s --split-input-file -p pad-weight-rows | filecheck %s

// A constant dense weight whose rows are 512 floats (2 KiB: they alias in L1) is passed
// padded to 528; the group reads the logical 16 x 512 through a slice.
// CHECK-LABEL: func.func @padded
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x512xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{.*}}> : tensor<16x528xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A:[A-Za-z0-9_$.-]+]] = %[[X]], %[[B:[A-Za-z0-9_$.-]+]] = %[[P]]) : (tensor<?x512xf32>, tensor<16x528xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.slice %[[B]][:16, :512] : tensor<16x528xf32> -> tensor<16x512xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[A]], %[[S]] : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: %[[R:[A-Za-z0-9_$.-]+]] = graph.relu %[[D]] : tensor<?x16xf32> -> tensor<?x16xf32>
// CHECK-NEXT: graph.yield %[[R]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]] : tensor<?x16xf32>
func.func @padded(%x: tensor<?x512xf32>) -> tensor<?x16xf32> {
  %w = graph.constant dense<1.0> : tensor<16x512xf32>
  %y = graph.fused (%a = %x, %b = %w) : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32> {
    %d = graph.dense %a, %b : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32>
    %r = graph.relu %d : tensor<?x16xf32> -> tensor<?x16xf32>
    graph.yield %r : tensor<?x16xf32>
  }
  func.return %y : tensor<?x16xf32>
}

// -----

// One constant feeding two groups: one padded constant for both, the original erased.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x1024xf32>, %[[Z:[A-Za-z0-9_$.-]+]]: tensor<?x1024xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
// CHECK-NEXT: %[[P:[A-Za-z0-9_$.-]+]] = graph.constant dense<{{.*}}> : tensor<32x1040xf32>
// CHECK-NEXT: %[[Y:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A:[A-Za-z0-9_$.-]+]] = %[[X]], %[[B:[A-Za-z0-9_$.-]+]] = %[[P]]) : (tensor<?x1024xf32>, tensor<32x1040xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[S:[A-Za-z0-9_$.-]+]] = graph.slice %[[B]][:32, :1024] : tensor<32x1040xf32> -> tensor<32x1024xf32>
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[A]], %[[S]] : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: graph.yield %[[D]] : tensor<?x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = graph.fused (%[[C:[A-Za-z0-9_$.-]+]] = %[[Z]], %[[E:[A-Za-z0-9_$.-]+]] = %[[P]]) : (tensor<?x1024xf32>, tensor<32x1040xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT: %[[T:[A-Za-z0-9_$.-]+]] = graph.slice %[[E]][:32, :1024] : tensor<32x1040xf32> -> tensor<32x1024xf32>
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = graph.dense %[[C]], %[[T]] : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32>
// CHECK-NEXT: graph.yield %[[F]] : tensor<?x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[Y]], %[[V]] : tensor<?x32xf32>, tensor<?x32xf32>
func.func @shared(%x: tensor<?x1024xf32>, %z: tensor<?x1024xf32>) -> (tensor<?x32xf32>, tensor<?x32xf32>) {
  %w = graph.constant dense<2.0> : tensor<32x1024xf32>
  %y = graph.fused (%a = %x, %b = %w) : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32> {
    %d = graph.dense %a, %b : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32>
    graph.yield %d : tensor<?x32xf32>
  }
  %v = graph.fused (%c = %z, %e = %w) : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32> {
    %f = graph.dense %c, %e : (tensor<?x1024xf32>, tensor<32x1024xf32>) -> tensor<?x32xf32>
    graph.yield %f : tensor<?x32xf32>
  }
  func.return %y, %v : tensor<?x32xf32>, tensor<?x32xf32>
}

// -----

// Left as they are: rows that do not alias (500 floats), too few rows (8), a constant
// the group reads other than as a dense weight, and a weight passed as a parameter.
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: (%[[X:[A-Za-z0-9_$.-]+]]: tensor<?x500xf32>, %[[Y:[A-Za-z0-9_$.-]+]]: tensor<?x512xf32>, %[[Q:[A-Za-z0-9_$.-]+]]: tensor<16x512xf32>) -> (tensor<?x16xf32>, tensor<?x8xf32>, tensor<16x512xf32>, tensor<?x16xf32>) {
// CHECK-NEXT: %[[W:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<16x500xf32>
// CHECK-NEXT: %[[V:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<8x512xf32>
// CHECK-NEXT: %[[U:[A-Za-z0-9_$.-]+]] = graph.constant dense<1.000000e+00> : tensor<16x512xf32>
// CHECK-NEXT: %[[A:[A-Za-z0-9_$.-]+]] = graph.fused (%[[A0:[A-Za-z0-9_$.-]+]] = %[[X]], %[[A1:[A-Za-z0-9_$.-]+]] = %[[W]]) : (tensor<?x500xf32>, tensor<16x500xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[D:[A-Za-z0-9_$.-]+]] = graph.dense %[[A0]], %[[A1]] : (tensor<?x500xf32>, tensor<16x500xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: graph.yield %[[D]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[B:[A-Za-z0-9_$.-]+]] = graph.fused (%[[B0:[A-Za-z0-9_$.-]+]] = %[[Y]], %[[B1:[A-Za-z0-9_$.-]+]] = %[[V]]) : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[E:[A-Za-z0-9_$.-]+]] = graph.dense %[[B0]], %[[B1]] : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: graph.yield %[[E]] : tensor<?x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[C:[A-Za-z0-9_$.-]+]] = graph.fused (%[[C0:[A-Za-z0-9_$.-]+]] = %[[U]]) : (tensor<16x512xf32>) -> tensor<16x512xf32> {
// CHECK-NEXT: %[[F:[A-Za-z0-9_$.-]+]] = graph.relu %[[C0]] : tensor<16x512xf32> -> tensor<16x512xf32>
// CHECK-NEXT: graph.yield %[[F]] : tensor<16x512xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %[[G:[A-Za-z0-9_$.-]+]] = graph.fused (%[[G0:[A-Za-z0-9_$.-]+]] = %[[Y]], %[[G1:[A-Za-z0-9_$.-]+]] = %[[Q]]) : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: %[[H:[A-Za-z0-9_$.-]+]] = graph.dense %[[G0]], %[[G1]] : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: graph.yield %[[H]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: func.return %[[A]], %[[B]], %[[C]], %[[G]] : tensor<?x16xf32>, tensor<?x8xf32>, tensor<16x512xf32>, tensor<?x16xf32>
func.func @left_alone(%x: tensor<?x500xf32>, %y: tensor<?x512xf32>, %q: tensor<16x512xf32>) -> (tensor<?x16xf32>, tensor<?x8xf32>, tensor<16x512xf32>, tensor<?x16xf32>) {
  %w = graph.constant dense<1.0> : tensor<16x500xf32>
  %v = graph.constant dense<1.0> : tensor<8x512xf32>
  %u = graph.constant dense<1.0> : tensor<16x512xf32>
  %a = graph.fused (%a0 = %x, %a1 = %w) : (tensor<?x500xf32>, tensor<16x500xf32>) -> tensor<?x16xf32> {
    %d = graph.dense %a0, %a1 : (tensor<?x500xf32>, tensor<16x500xf32>) -> tensor<?x16xf32>
    graph.yield %d : tensor<?x16xf32>
  }
  %b = graph.fused (%b0 = %y, %b1 = %v) : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32> {
    %e = graph.dense %b0, %b1 : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32>
    graph.yield %e : tensor<?x8xf32>
  }
  %c = graph.fused (%c0 = %u) : (tensor<16x512xf32>) -> tensor<16x512xf32> {
    %f = graph.relu %c0 : tensor<16x512xf32> -> tensor<16x512xf32>
    graph.yield %f : tensor<16x512xf32>
  }
  %g = graph.fused (%g0 = %y, %g1 = %q) : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32> {
    %h = graph.dense %g0, %g1 : (tensor<?x512xf32>, tensor<16x512xf32>) -> tensor<?x16xf32>
    graph.yield %h : tensor<?x16xf32>
  }
  func.return %a, %b, %c, %g : tensor<?x16xf32>, tensor<?x8xf32>, tensor<16x512xf32>, tensor<?x16xf32>
}
